//! The checks of the grants that need no store: pure functions of the request and what was
//! granted, unit-tested here.

use crate::client::{Client, GrantType};
use crate::error::OAuthError;
use crate::oidc::OPENID;
use crate::scope::Scope;
use crate::settings::Profile;
use crate::store::{CodeGrant, JwkThumbprint};

/// Whether the administrator agreed `grant` with `client` (RFC 6749 §5.2 `unauthorized_client`).
pub(crate) fn agreed(client: &Client, grant: GrantType) -> Result<(), OAuthError> {
    if client.allows(grant) {
        Ok(())
    } else {
        Err(OAuthError::unauthorized_client(
            "the client is not allowed this grant_type",
        ))
    }
}

/// Whether the server's profile offers `grant` at all: OAuth 2.1 (and FAPI 2.0 with it) drops
/// the implicit and password grants (draft-ietf-oauth-v2-1 §10.1, §10.4), whatever a client was
/// agreed.
pub(crate) fn offered(profile: Profile, grant: GrantType) -> bool {
    !(profile.is_oauth21() && matches!(grant, GrantType::Implicit | GrantType::Password))
}

/// Under FAPI 2.0, whether `client` may take part at all: only confidential clients that
/// authenticate with `private_key_jwt` or mutual TLS (FAPI 2.0 Security Profile §5.3.2.1).
pub(crate) fn fapi2_client(profile: Profile, client: &Client) -> Result<(), OAuthError> {
    if !profile.is_fapi2() || client.authenticates_by_key() {
        return Ok(());
    }
    Err(OAuthError::invalid_client(
        "FAPI 2.0 takes only confidential clients that authenticate with private_key_jwt or \
         mutual TLS",
    ))
}

/// The scope a request gets (RFC 6749 §3.3): the requested one if the client may have all of
/// it, the client's default when none is requested.
pub(crate) fn resolve_scope(requested: Option<&str>, client: &Client) -> Result<Scope, OAuthError> {
    let Some(requested) = requested else {
        return Ok(client.default_scope().clone());
    };
    // Most requests name the client's default or full scope as registered: share it.
    for registered in [client.default_scope(), client.scopes()] {
        if requested == registered.as_str() {
            return Ok(registered.clone());
        }
    }
    let scope = Scope::parse(requested)
        .map_err(|_| OAuthError::invalid_scope("the scope is malformed (RFC 6749 section 3.3)"))?;
    if !scope.is_subset_of(client.scopes()) {
        return Err(OAuthError::invalid_scope(
            "the requested scope exceeds what the client may be granted",
        ));
    }
    Ok(scope)
}

/// The requested scope, and whether it makes an OpenID Connect request. With OpenID Connect
/// `served`, `openid` is taken from every client (it asks for the user's identity, which the
/// sign-in shows anyway); the rest of the scope must be the client's as ever.
pub(crate) fn resolve_openid_scope(
    requested: Option<&str>,
    client: &Client,
    served: bool,
) -> Result<(Scope, bool), OAuthError> {
    let asks_openid = requested.is_some_and(|scope| scope.split(' ').any(|token| token == OPENID));
    if !served || !asks_openid || client.scopes().contains(OPENID) {
        let scope = resolve_scope(requested, client)?;
        let openid = served && scope.contains(OPENID);
        return Ok((scope, openid));
    }
    let rest: Vec<&str> = requested
        .unwrap_or_default()
        .split(' ')
        .filter(|token| !token.is_empty() && *token != OPENID)
        .collect();
    let rest = resolve_scope(Some(&rest.join(" ")), client)?;
    let scope = Scope::from_tokens(std::iter::once(OPENID).chain(rest.iter()))
        .map_err(|_| OAuthError::invalid_scope("the scope is malformed (RFC 6749 section 3.3)"))?;
    Ok((scope, true))
}

/// The scope of a refreshed access token (RFC 6749 §6): the granted one, or a narrower one the
/// request names; never wider.
pub(crate) fn narrow_scope(requested: Option<&str>, granted: &Scope) -> Result<Scope, OAuthError> {
    match requested {
        None => Ok(granted.clone()),
        Some(requested) if requested == granted.as_str() => Ok(granted.clone()),
        Some(requested) => {
            let requested = Scope::parse(requested).map_err(|_| {
                OAuthError::invalid_scope("the scope is malformed (RFC 6749 section 3.3)")
            })?;
            if !requested.is_subset_of(granted) {
                return Err(OAuthError::invalid_scope(
                    "the requested scope exceeds the scope originally granted",
                ));
            }
            Ok(requested)
        }
    }
}

/// Whether a redeemed code may be exchanged by this request (RFC 6749 §4.1.3, RFC 7636 §4.6):
/// issued to `client`, for the same `redirect_uri`, and the PKCE verifier matching the
/// challenge exactly when the authorization request carried one.
pub(crate) fn code_binding(
    grant: &CodeGrant,
    client: &Client,
    redirect_uri: &str,
    verifier: Option<&str>,
) -> Result<(), OAuthError> {
    if grant.authorization.client_id != *client.id() {
        return Err(OAuthError::invalid_grant(
            "the authorization code was issued to another client",
        ));
    }
    if grant.redirect_uri != redirect_uri {
        return Err(OAuthError::invalid_grant(
            "redirect_uri does not match the authorization request",
        ));
    }
    match (&grant.code_challenge, verifier) {
        (Some(challenge), Some(verifier)) if challenge.verify(verifier) => Ok(()),
        (Some(_), Some(_)) => Err(OAuthError::invalid_grant(
            "code_verifier does not match the code_challenge",
        )),
        (Some(_), None) => Err(OAuthError::invalid_grant("code_verifier is missing")),
        // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a downgrade.
        (None, Some(_)) => Err(OAuthError::invalid_grant(
            "code_verifier was sent but the authorization request had no code_challenge",
        )),
        (None, None) => Ok(()),
    }
}

/// RFC 9449 §10: a code bound to a DPoP key is redeemed only with a proof of that key
/// (`presented`, the thumbprint of the token request's proof).
pub(crate) fn key_binding(
    grant: &CodeGrant,
    presented: Option<JwkThumbprint>,
) -> Result<(), OAuthError> {
    match (grant.dpop_jkt, presented) {
        (None, _) => Ok(()),
        (Some(bound), Some(presented)) if bound == presented => Ok(()),
        (Some(_), Some(_)) => Err(OAuthError::invalid_grant(
            "the DPoP proof's key is not the key the authorization code is bound to \
             (RFC 9449 section 10)",
        )),
        (Some(_), None) => Err(OAuthError::invalid_grant(
            "the authorization code is bound to a DPoP key: the token request needs a DPoP \
             proof of it (RFC 9449 section 10)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::UnixTime;
    use crate::error::ErrorCode;
    use crate::pkce::CodeChallenge;
    use crate::store::Authorization;

    /// RFC 7636 Appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn client(id: &str) -> Client {
        Client::public(id)
            .redirect_uri("https://app.example/cb")
            .grant_types([GrantType::AuthorizationCode])
            .scopes("profile email")
            .default_scope("profile")
            .build()
            .unwrap()
    }

    fn code(challenge: Option<&str>) -> CodeGrant {
        let challenge = challenge.map(|c| CodeChallenge::new(c, Some("S256"), false).unwrap());
        let authorization = Authorization::new(
            client("app").id().clone(),
            None,
            Scope::parse("profile").unwrap(),
        );
        let t = UnixTime::from_secs(1);
        CodeGrant::new(authorization, "https://app.example/cb", challenge, t, t)
    }

    fn code_of(result: Result<impl Sized, OAuthError>) -> Option<ErrorCode> {
        result.err().map(|e| e.code())
    }

    #[test]
    fn a_code_is_bound_to_its_client_redirect_uri_and_challenge() {
        let app = client("app");
        let cb = "https://app.example/cb";
        assert!(code_binding(&code(None), &app, cb, None).is_ok());
        assert!(code_binding(&code(Some(CHALLENGE)), &app, cb, Some(VERIFIER)).is_ok());
        let invalid = Some(ErrorCode::InvalidGrant);
        let other = client("other");
        assert_eq!(
            code_of(code_binding(&code(None), &other, cb, None)),
            invalid
        );
        let elsewhere = "https://app.example/other";
        assert_eq!(
            code_of(code_binding(&code(None), &app, elsewhere, None)),
            invalid
        );
        let pkce = code(Some(CHALLENGE));
        assert_eq!(code_of(code_binding(&pkce, &app, cb, None)), invalid);
        let wrong = Some("x".repeat(43));
        assert_eq!(
            code_of(code_binding(&pkce, &app, cb, wrong.as_deref())),
            invalid
        );
        // A verifier for a code issued without a challenge is a downgrade attempt.
        assert_eq!(
            code_of(code_binding(&code(None), &app, cb, Some(VERIFIER))),
            invalid
        );
    }

    #[test]
    fn scopes_resolve_to_the_default_or_a_subset_of_the_registration() {
        let app = client("app");
        assert_eq!(resolve_scope(None, &app).unwrap().as_str(), "profile");
        assert_eq!(
            resolve_scope(Some("email"), &app).unwrap().as_str(),
            "email"
        );
        let too_wide = resolve_scope(Some("email admin"), &app);
        assert_eq!(code_of(too_wide), Some(ErrorCode::InvalidScope));
        assert_eq!(
            code_of(resolve_scope(Some("\"q"), &app)),
            Some(ErrorCode::InvalidScope)
        );
    }

    #[test]
    fn a_refresh_may_narrow_the_scope_and_never_widen_it() {
        let granted = Scope::parse("email profile").unwrap();
        assert_eq!(narrow_scope(None, &granted).unwrap(), granted);
        assert_eq!(
            narrow_scope(Some("email"), &granted).unwrap().as_str(),
            "email"
        );
        let wider = narrow_scope(Some("email admin"), &granted);
        assert_eq!(code_of(wider), Some(ErrorCode::InvalidScope));
    }

    #[test]
    fn a_grant_must_be_agreed() {
        let app = client("app");
        assert!(agreed(&app, GrantType::AuthorizationCode).is_ok());
        let refused = agreed(&app, GrantType::Password);
        assert_eq!(code_of(refused), Some(ErrorCode::UnauthorizedClient));
    }
}
