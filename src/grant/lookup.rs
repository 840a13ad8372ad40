//! Revocation (RFC 7009) and introspection (RFC 7662): find a presented token of either kind,
//! with `token_type_hint` deciding only where to look first, and decide what its client may do
//! with it; and the introspection answer signed, for a caller that asks (RFC 9701).

use serde_json::Value;

use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::events::{Event, EventKind, Events};
use crate::mint;
use crate::oidc::IdTokenSigner;
use crate::request::TokenQuery;
use crate::secret::AccessToken;
use crate::settings::Resources;
use crate::store::seam::TokenSeam;
use crate::store::{AccessGrant, Authorization, RefreshGrant, User};
use crate::token_format::AccessTokenFormat;

/// A token found in the store.
#[derive(Debug)]
pub(crate) enum Found {
    /// An active access token.
    Access(AccessGrant),
    /// A refresh token: current, or rotated (see [`RefreshGrant::rotated`]).
    Refresh(RefreshGrant),
}

impl Found {
    fn authorization(&self) -> &Authorization {
        match self {
            Self::Access(grant) => &grant.authorization,
            Self::Refresh(grant) => &grant.authorization,
        }
    }

    pub(crate) fn client_id(&self) -> &str {
        self.authorization().client_id.as_str()
    }
}

/// Why a token is looked up: to say what it is (introspection, which a store may answer from a
/// read replica: [`TokenIssuer::check_access_token`](crate::store::TokenIssuer::check_access_token)),
/// or to act on it (revocation, from the primary).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Check,
    Act,
}

/// Looks `token` up as an access token and as a refresh token, the hinted kind first. An
/// unknown hint is ignored, as RFC 7009 §2.1 allows. The digest is computed once for both.
async fn find(
    store: TokenSeam<'_>,
    token: &AccessToken,
    hint: Option<&str>,
    purpose: Purpose,
    now: UnixTime,
) -> Result<Option<Found>, OAuthError> {
    let digest = token.digest();
    let refresh_first = hint == Some("refresh_token");
    for refresh in [refresh_first, !refresh_first] {
        let found = if refresh {
            store
                .find_refresh_token(&digest, now)
                .await?
                .map(Found::Refresh)
        } else if purpose == Purpose::Check {
            store
                .check_access_token(&digest, now)
                .await?
                .map(Found::Access)
        } else {
            store
                .find_access_token(&digest, now)
                .await?
                .map(Found::Access)
        };
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// RFC 7662 §2.2: the token, if it is active and `client` may see it: a token issued to
/// `client` itself, or any token of an audience `client` serves as a resource server (§4:
/// anything else could be scanned for; a token without a kept audience has the default).
/// A token for a resource this server does not know is another issuer's (a node configured
/// with another issuer over the same store): not active here. Public clients cannot
/// introspect at all.
pub(crate) async fn introspect(
    store: TokenSeam<'_>,
    format: Option<&dyn AccessTokenFormat>,
    client: &Client,
    resources: &Resources,
    query: &TokenQuery<'_>,
    now: UnixTime,
) -> Result<Option<Found>, OAuthError> {
    if client.is_public() {
        return Err(OAuthError::invalid_client(
            "introspection needs client authentication (HTTP Basic)",
        ));
    }
    let found = find(store, &query.token, query.hint, Purpose::Check, now).await?;
    // Only introspection shows the `jti`: it is derived here, not for every lookup.
    let found = found.map(|found| match found {
        Found::Access(grant) => Found::Access(grant.with_jti(jti_of(format, &query.token))),
        refresh => refresh,
    });
    Ok(found.filter(|found| {
        // A rotated refresh token is no longer usable, so it is not active (RFC 7662 §2.2).
        let usable = !matches!(found, Found::Refresh(grant) if grant.rotated);
        let kept = &found.authorization().audience;
        let ours = resources.knows(kept);
        let audience = kept.or(&resources.default);
        let visible = found.client_id() == client.id().as_str()
            || audience.iter().any(|resource| client.serves(resource));
        usable && ours && visible
    }))
}

/// The `jti` of an access token found in the store: the one a self-contained token (a JWT)
/// carries, else derived from the opaque token as when it was minted.
fn jti_of(format: Option<&dyn AccessTokenFormat>, token: &AccessToken) -> crate::store::Jti {
    let text = token.expose_secret();
    format
        .filter(|format| format.recognizes(text))
        .and_then(|format| format.jti(text))
        .unwrap_or_else(|| mint::jti(&token.digest()))
}

/// RFC 7009 §2.1: revokes `client`'s own token. An unknown token, and another client's, are
/// left alone (the endpoint answers 200 all the same, RFC 7009 §2.2, so a client does not learn
/// another's token exists). What is revoked is reported to `events`.
pub(crate) async fn revoke(
    store: TokenSeam<'_>,
    format: Option<&dyn AccessTokenFormat>,
    events: &dyn Events,
    client: &Client,
    query: &TokenQuery<'_>,
    now: UnixTime,
) -> Result<(), OAuthError> {
    let found = find(store, &query.token, query.hint, Purpose::Act, now).await?;
    let own = client.id().as_str();
    let revoked = Event::new(EventKind::TokenRevoked, now).client(client.id());
    match found.filter(|found| found.client_id() == own) {
        Some(Found::Access(grant)) => {
            store.revoke_access_token(&query.token.digest()).await?;
            let user = grant.authorization.user.as_ref().map(User::id);
            events.record(&revoked.user(user).jti(&jti_of(format, &query.token)));
        }
        // Revoking a refresh token revokes the grant it came from and the access tokens issued
        // under it.
        Some(Found::Refresh(grant)) => {
            store.revoke_family(grant.family).await?;
            let user = grant.authorization.user.as_ref().map(User::id);
            events.record(&revoked.user(user).family(grant.family));
        }
        None => {}
    }
    Ok(())
}

/// The JOSE `typ` of a signed introspection answer (RFC 9701 §5), which keeps it from being
/// taken for any other JWT the server's keys sign.
pub(crate) const INTROSPECTION_TYP: &str = "token-introspection+jwt";

/// A signed introspection answer (RFC 9701 §5): `answer`, the RFC 7662 answer as it would be
/// sent as JSON (`{"active":false}` too), as the `token_introspection` claim, with `iss`, `aud`
/// the authenticated `caller` and `iat`, signed with the caller's
/// `introspection_signed_response_alg` (the signer's default when it registered none).
pub(crate) async fn signed_answer(
    signer: &dyn IdTokenSigner,
    issuer_id: &str,
    caller: &Client,
    answer: Value,
    now: UnixTime,
) -> Result<String, OAuthError> {
    let claims = serde_json::json!({
        "iss": issuer_id,
        "aud": caller.id().as_str(),
        "iat": now.as_secs(),
        "token_introspection": answer,
    });
    let algorithm = caller
        .introspection_signing_algorithm()
        .unwrap_or_else(|| signer.default_algorithm());
    // A client asks for these at will: they wait behind ID tokens (see `sign_at_will`).
    Ok(signer
        .sign_at_will(&claims, INTROSPECTION_TYP, algorithm, now)
        .await?)
}
