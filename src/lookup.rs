//! Finding a presented token of either kind, with `token_type_hint` (RFC 7009 §2.1, RFC 7662
//! §2.1) deciding only where to look first.

use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::secret::{AccessToken, RefreshToken};
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
/// unknown hint is ignored, as RFC 7009 §2.1 allows.
pub(crate) async fn find(
    inner: &Inner,
    token: &str,
    hint: Option<&str>,
    now: UnixTime,
) -> Result<Option<Found>, OAuthError> {
    let refresh_first = hint == Some("refresh_token");
    for kind in [refresh_first, !refresh_first] {
        let found = if kind {
            let token = RefreshToken::new(token);
            inner
                .tokens
                .find_refresh_token(&token, now)
                .await?
                .map(Found::Refresh)
        } else {
            let token = AccessToken::new(token);
            inner
                .tokens
                .find_access_token(&token, now)
                .await?
                .map(Found::Access)
        };
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}
