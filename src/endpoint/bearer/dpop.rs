//! `Authorization: DPoP` at a protected resource (RFC 9449 §7.1): a token bound to a key, and
//! a fresh proof of that key for this request whose `ath` is the token's hash, checked by the
//! server's [`ProofOfPossession`].

use super::{At, BearerRefusal, Presented, Scheme, refused};
use crate::endpoint::Wire;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::bearer::Refusal;
use crate::grant::proof::{AtResource, ProofOfPossession};
use crate::secret::AccessToken;
use crate::store::AccessGrant;

/// `grant` (found for `token`) if it is bound to the key of the request's proof, made for this
/// request at `resource` (the resource served).
pub(super) async fn check(
    wire: &Wire<'_>,
    at: &At,
    proofs: Option<&dyn ProofOfPossession>,
    request: Presented<'_>,
    resource: &str,
    token: &AccessToken,
    grant: AccessGrant,
) -> Result<AccessGrant, BearerRefusal> {
    let refuse = |refusal| refused(wire, at, refusal, Scheme::Dpop);
    let Some(proofs) = proofs else {
        return Err(refuse(Refusal::NoCredentials));
    };
    let Some(bound) = grant.binding.and_then(|binding| binding.jkt()) else {
        return Err(refuse(Refusal::Error(OAuthError::new(
            ErrorCode::InvalidToken,
            "the access token is not bound to a DPoP key: present it as a bearer token",
        ))));
    };
    proofs
        .at_resource(
            request.headers,
            AtResource {
                target: request.target,
                resource,
                token: token.expose_secret(),
                bound,
                account: grant
                    .authorization
                    .user
                    .as_ref()
                    .map_or(grant.authorization.client_id.as_str(), |user| {
                        user.id().as_str()
                    }),
            },
            wire.now,
        )
        .await
        .map_err(refuse)?;
    Ok(grant)
}
