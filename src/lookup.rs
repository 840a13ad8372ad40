//! Finding a presented token of either kind, with `token_type_hint` (RFC 7009 §2.1, RFC 7662
//! §2.1) deciding only where to look first.

use std::sync::Arc;

use http::Request;

use crate::client::Client;
use crate::clock::UnixTime;
use crate::endpoint::read_post_form;
use crate::error::OAuthError;
use crate::grant::client_auth;
use crate::mint;
use crate::secret::AccessToken;
use crate::server::Inner;
use crate::store::{AccessGrant, RefreshGrant};

/// A token found in the issuer.
pub(crate) enum Found {
    /// An active access token.
    Access(AccessGrant),
    /// A refresh token: current, or rotated (see [`RefreshGrant::rotated`]).
    Refresh(RefreshGrant),
}

impl Found {
    pub(crate) fn client_id(&self) -> &str {
        match self {
            Self::Access(grant) => grant.authorization.client_id.as_str(),
            Self::Refresh(grant) => grant.authorization.client_id.as_str(),
        }
    }
}

/// Looks `token` up as an access token and as a refresh token, the hinted kind first. An
/// unknown hint is ignored, as RFC 7009 §2.1 allows. The digest is computed once for both.
async fn find(
    inner: &Inner,
    token: &AccessToken,
    hint: Option<&str>,
    now: UnixTime,
) -> Result<Option<Found>, OAuthError> {
    let refresh_first = hint == Some("refresh_token");
    for kind in [refresh_first, !refresh_first] {
        let found = if kind {
            inner
                .tokens
                .find_refresh_token(&token.digest(), now)
                .await?
                .map(Found::Refresh)
        } else {
            inner
                .tokens
                .find_access_token(&token.digest(), now)
                .await?
                .map(|grant| Found::Access(grant.with_jti(mint::jti(&token.digest()))))
        };
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// A revocation or introspection request (RFC 7009 §2.1, RFC 7662 §2.1): read, its client
/// authenticated, its token looked up.
pub(crate) struct TokenQuery {
    pub(crate) client: Arc<Client>,
    /// The presented token, as an access token (its digest computed once).
    pub(crate) token: AccessToken,
    pub(crate) found: Option<Found>,
}

pub(crate) async fn read_query<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Result<TokenQuery, OAuthError> {
    let form = read_post_form(inner, request)?;
    let client = client_auth::authenticate(inner, request.headers(), &form).await?;
    let token = form
        .get("token")
        .map(AccessToken::hashed)
        .ok_or_else(|| OAuthError::invalid_request("token is missing"))?;
    let now = inner.clock.now();
    let found = find(inner, &token, form.get("token_type_hint"), now).await?;
    Ok(TokenQuery {
        client,
        token,
        found,
    })
}
