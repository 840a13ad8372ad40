//! The refresh token grant (RFC 6749 §6): the refresh token rotates on every use; presenting a
//! rotated one revokes its whole family (RFC 9700 §4.14.2); the scope may only narrow.

use super::{Issued, Issuer, checks};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::secret::RefreshToken;
use crate::store::{Authorization, Rotation};

pub(crate) async fn exchange(
    issuer: Issuer<'_>,
    client: &Client,
    token: &RefreshToken,
    scope: Option<&str>,
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    let digest = token.digest();
    let grant = issuer
        .store
        .find_refresh_token(&digest, now)
        .await?
        .ok_or_else(invalid_token)?;
    if grant.authorization.client_id != *client.id() {
        return Err(invalid_token());
    }
    if grant.rotated {
        issuer.revoke_after_replay(grant.family).await?;
        return Err(reused());
    }
    let access_scope = checks::narrow_scope(scope, &grant.authorization.scope)?;
    let Authorization {
        client_id, user, ..
    } = grant.authorization;
    let authorization = Authorization::new(client_id, user, access_scope);
    let (issued, successor) = issuer.mint(Some(grant.family), authorization, true, now)?;
    match issuer
        .store
        .rotate_refresh_token(&digest, successor)
        .await?
    {
        Rotation::Rotated => Ok(issued),
        Rotation::Reused { family } => {
            issuer.revoke_after_replay(family).await?;
            Err(reused())
        }
        _ => Err(invalid_token()),
    }
}

fn invalid_token() -> OAuthError {
    OAuthError::invalid_grant("the refresh token is invalid, expired or revoked")
}

fn reused() -> OAuthError {
    OAuthError::invalid_grant("the refresh token was already used; its grant is revoked")
}
