//! Bearer token validation for resource servers (RFC 6750): the grant behind a token, and
//! whether it carries the scope a resource needs.

use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::mint;
use crate::scope::Scope;
use crate::secret::AccessToken;
use crate::store::{AccessGrant, TokenIssuer};

/// Why a request to a protected resource was refused (RFC 6750 §3.1); `endpoint` renders it
/// into the challenge.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// No credentials, or another scheme: a bare challenge, no error code.
    NoCredentials,
    /// The token is unknown, expired or revoked.
    InvalidToken,
    /// `invalid_request` (a malformed header) or a store failure.
    Error(OAuthError),
    /// The token lacks this scope.
    InsufficientScope(Scope),
}

/// The grant behind `token`, checked to carry every token of `required`.
pub(crate) async fn check(
    store: &dyn TokenIssuer,
    token: &AccessToken,
    required: Option<&Scope>,
    now: UnixTime,
) -> Result<AccessGrant, Refusal> {
    let digest = token.digest();
    let grant = store
        .find_access_token(&digest, now)
        .await
        .map_err(|e| Refusal::Error(e.into()))?
        .ok_or(Refusal::InvalidToken)?;
    if let Some(required) = required {
        if !required.is_subset_of(&grant.authorization.scope) {
            return Err(Refusal::InsufficientScope(required.clone()));
        }
    }
    Ok(grant.with_jti(mint::jti(&digest)))
}
