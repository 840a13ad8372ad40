//! Pairwise subjects at registration (OIDC Core §8.1, OIDC Registration §2, §5): which sector a
//! client that asks for `subject_type: pairwise` belongs to, and, when it names a
//! `sector_identifier_uri`, the document there listing every redirect URI it registers.
//!
//! The document is fetched through the outbound seam at registration and at each update that
//! names one, never per request: at most [`MAX_SECTOR_DOCUMENT_BYTES`] within
//! [`ClientIdDocuments::FETCH_TIMEOUT`], `https` only, never from a private or special
//! address, and each fetch counted against the registration rate limit before it is made.

use crate::error::OAuthError;
use crate::outbound::{FetchError, Outbound, OutboundGet};
use crate::registration::MAX_SECTOR_DOCUMENT_BYTES;
use crate::settings::ClientIdDocuments;
use crate::subject::{host_of, sector_of_redirect_uris};

/// A pairwise client's sector, settled: the host its subjects are computed for, and the
/// `sector_identifier_uri` it was taken from, whose document is still to be checked.
#[derive(Debug)]
pub(super) struct Sector {
    pub(super) host: String,
    pub(super) uri: Option<String>,
}

/// What the server offers: pairwise subjects (a secret is set), and fetches (an outbound seam).
#[derive(Debug, Clone, Copy)]
pub(super) struct Offered {
    pub(super) pairwise: bool,
    pub(super) fetches: bool,
}

/// The sector of a registration asking for `pairwise` subjects, with `sector_identifier_uri`
/// if it named one, for `redirect_uris` (already settled): the URI's host, else the one host
/// of the redirect URIs (several need a `sector_identifier_uri`, Core §8.1). `None` for
/// public subjects.
pub(super) fn settle(
    offered: Offered,
    pairwise: bool,
    sector_identifier_uri: Option<String>,
    redirect_uris: &[String],
) -> Result<Option<Sector>, OAuthError> {
    let refuse = |why: &'static str| Err(OAuthError::invalid_client_metadata(why));
    match (pairwise, sector_identifier_uri) {
        (false, None) => Ok(None),
        (false, Some(_)) => refuse("sector_identifier_uri goes with subject_type pairwise"),
        (true, _) if !offered.pairwise => {
            refuse("subject_type pairwise is not offered by this server; register public")
        }
        (true, None) => match sector_of_redirect_uris(redirect_uris) {
            Ok(host) => Ok(Some(Sector { host, uri: None })),
            Err(why) => refuse(why),
        },
        (true, Some(_)) if !offered.fetches => refuse(
            "this server does not fetch sector_identifier_uri documents; register redirect \
             URIs on one host instead",
        ),
        (true, Some(uri)) => match https_host(&uri) {
            Some(host) => Ok(Some(Sector {
                host,
                uri: Some(uri),
            })),
            None => refuse(
                "sector_identifier_uri must be an https URL without user information or a \
                 fragment (OIDC Registration section 5)",
            ),
        },
    }
}

/// The host of `uri` if it is an `https` URL without user information or a fragment.
fn https_host(uri: &str) -> Option<String> {
    let parsed = url::Url::parse(uri).ok()?;
    let plain = parsed.scheme() == "https"
        && parsed.fragment().is_none()
        && parsed.username().is_empty()
        && parsed.password().is_none();
    host_of(uri).filter(|_| plain)
}

/// OIDC Registration §5: the document at `sector`'s `sector_identifier_uri`, fetched through
/// `outbound`, is a JSON array of URIs holding every one of `redirect_uris`. Nothing to do for
/// a sector taken from the redirect URIs.
pub(super) async fn verify(
    outbound: Option<&dyn Outbound>,
    sector: &Sector,
    redirect_uris: &[String],
) -> Result<(), OAuthError> {
    let Some(uri) = &sector.uri else {
        return Ok(());
    };
    let unread = || {
        OAuthError::invalid_client_metadata(
            "the sector_identifier_uri document could not be read (OIDC Registration section 5)",
        )
    };
    let outbound = outbound.ok_or_else(unread)?;
    let get = OutboundGet::new(
        uri.as_str(),
        MAX_SECTOR_DOCUMENT_BYTES,
        ClientIdDocuments::FETCH_TIMEOUT,
    )
    .counted_as("sector_identifier");
    let fetched = outbound.get(get).await.map_err(|error: FetchError| {
        // What the refusal does not say (it is no oracle of what a URL answers), for the logs.
        tracing::debug!(
            ?error,
            "a sector_identifier_uri document could not be fetched"
        );
        unread()
    })?;
    lists_every(&fetched.body, redirect_uris)
}

/// Whether `document` is a JSON array of strings holding each of `redirect_uris`, exactly.
fn lists_every(document: &[u8], redirect_uris: &[String]) -> Result<(), OAuthError> {
    let listed: Vec<String> = serde_json::from_slice(document).map_err(|_| {
        OAuthError::invalid_client_metadata(
            "the sector_identifier_uri document is not a JSON array of URIs \
             (OIDC Registration section 5)",
        )
    })?;
    if !redirect_uris.iter().all(|uri| listed.contains(uri)) {
        return Err(OAuthError::invalid_client_metadata(
            "the sector_identifier_uri document does not list every redirect URI \
             (OIDC Registration section 5)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    const BOTH: Offered = Offered {
        pairwise: true,
        fetches: true,
    };

    fn uris(list: &[&str]) -> Vec<String> {
        list.iter().map(|uri| (*uri).to_owned()).collect()
    }

    fn refusal(result: Result<Option<Sector>, OAuthError>) -> String {
        let error = result.unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidClientMetadata);
        error.description().to_owned()
    }

    #[test]
    fn the_sector_is_the_uris_host_else_the_redirect_uris_one_host() {
        let one = uris(&["https://app.example/cb"]);
        assert!(settle(BOTH, false, None, &one).unwrap().is_none());
        let from_redirects = settle(BOTH, true, None, &one).unwrap().unwrap();
        assert_eq!(from_redirects.host, "app.example");
        assert_eq!(from_redirects.uri, None);
        let two_hosts = uris(&["https://app.example/cb", "https://other.example/cb"]);
        assert!(refusal(settle(BOTH, true, None, &two_hosts)).contains("several hosts"));
        let sector_uri = Some("https://Sector.example/uris.json".to_owned());
        let named = settle(BOTH, true, sector_uri, &two_hosts).unwrap().unwrap();
        assert_eq!(named.host, "sector.example");
    }

    #[test]
    fn pairwise_needs_a_secret_and_a_sector_uri_needs_pairwise_https_and_fetches() {
        let one = uris(&["https://app.example/cb"]);
        let sector_uri = || Some("https://sector.example/uris.json".to_owned());
        let no_secret = Offered {
            pairwise: false,
            fetches: true,
        };
        assert!(refusal(settle(no_secret, true, None, &one)).contains("not offered"));
        assert!(refusal(settle(BOTH, false, sector_uri(), &one)).contains("goes with"));
        let no_fetches = Offered {
            pairwise: true,
            fetches: false,
        };
        assert!(refusal(settle(no_fetches, true, sector_uri(), &one)).contains("fetch"));
        for bad in [
            "http://sector.example/uris.json",
            "https://sector.example/uris.json#x",
            "https://user@sector.example/uris.json",
            "sector.example/uris.json",
        ] {
            let why = refusal(settle(BOTH, true, Some(bad.to_owned()), &one));
            assert!(why.contains("https URL"), "{bad}: {why}");
        }
    }

    #[test]
    fn the_document_lists_every_redirect_uri_exactly() {
        let registered = uris(&["https://a.example/cb", "https://b.example/cb"]);
        let all = br#"["https://a.example/cb","https://b.example/cb","https://c.example/cb"]"#;
        assert!(lists_every(all, &registered).is_ok());
        let missing = lists_every(br#"["https://a.example/cb"]"#, &registered).unwrap_err();
        assert!(missing.description().contains("every redirect URI"));
        let other_case = lists_every(
            br#"["https://A.example/cb","https://b.example/cb"]"#,
            &registered,
        );
        assert!(other_case.is_err());
        for not_a_list in [&b"{}"[..], b"[1]", b"", b"\"https://a.example/cb\""] {
            let refused = lists_every(not_a_list, &registered).unwrap_err();
            assert!(refused.description().contains("JSON array"));
        }
    }
}
