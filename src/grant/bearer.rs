//! Bearer token validation for resource servers (RFC 6750): the grant behind a token, and
//! whether it carries the scope a resource needs.

use crate::audience::Audience;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
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

/// What a protected resource asks of a token: that it is meant for `audience` (RFC 8707, RFC
/// 9068 §4: a resource server states which audience it serves) and carries every token of
/// `required`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Demand<'a> {
    pub(crate) audience: &'a str,
    /// The audience of tokens whose store kept none.
    pub(crate) default: &'a Audience,
    pub(crate) required: Option<&'a Scope>,
}

/// The grant behind `token`, checked against what the resource demands.
pub(crate) async fn check(
    store: &dyn TokenIssuer,
    token: &AccessToken,
    demand: Demand<'_>,
    now: UnixTime,
) -> Result<AccessGrant, Refusal> {
    let digest = token.digest();
    let grant = store
        .find_access_token(&digest, now)
        .await
        .map_err(|e| Refusal::Error(e.into()))?
        .ok_or(Refusal::InvalidToken)?;
    let audience = grant.authorization.audience.or(demand.default);
    if !audience.contains(demand.audience) {
        return Err(Refusal::Error(OAuthError::new(
            ErrorCode::InvalidToken,
            "the access token is not meant for this resource (its audience differs)",
        )));
    }
    if let Some(required) = demand.required {
        if !required.is_subset_of(&grant.authorization.scope) {
            return Err(Refusal::InsufficientScope(required.clone()));
        }
    }
    Ok(grant.with_jti(mint::jti(&digest)))
}
