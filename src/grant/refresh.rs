//! The refresh token grant (RFC 6749 §6): the refresh token rotates on every use; presenting a
//! rotated one revokes its whole family (RFC 9700 §4.14.2); the scope may only narrow.

use super::TokenResponse;
use crate::client::Client;
use crate::clock::UnixTime;
use crate::endpoint::form::Form;
use crate::error::OAuthError;
use crate::scope::Scope;
use crate::secret::RefreshToken;
use crate::server::Inner;
use crate::store::{Authorization, Family, Rotation};

pub(crate) async fn exchange(
    inner: &Inner,
    client: &Client,
    form: &Form<'_>,
    now: UnixTime,
) -> Result<TokenResponse, OAuthError> {
    let token = form
        .get("refresh_token")
        .map(RefreshToken::hashed)
        .ok_or_else(|| OAuthError::invalid_request("refresh_token is missing"))?;
    let grant = inner
        .tokens
        .find_refresh_token(&token.digest(), now)
        .await?
        .ok_or_else(invalid_token)?;
    if grant.authorization.client_id != *client.id() {
        return Err(invalid_token());
    }
    if grant.rotated {
        super::revoke_after_replay(inner, grant.family).await?;
        return Err(reused());
    }
    let granted = &grant.authorization.scope;
    let access_scope = match form.get("scope") {
        None => granted.clone(),
        Some(requested) if requested == granted.as_str() => granted.clone(),
        Some(requested) => {
            let requested = Scope::parse(requested)
                .map_err(|_| OAuthError::invalid_scope("the scope is malformed (RFC 6749 §3.3)"))?;
            if !requested.is_subset_of(granted) {
                return Err(OAuthError::invalid_scope(
                    "the requested scope exceeds the scope originally granted",
                ));
            }
            requested
        }
    };
    let authorization = Authorization::new(
        grant.authorization.client_id,
        grant.authorization.user,
        access_scope,
    );
    let family = Family::Existing(grant.family);
    let (tokens, successor) = super::mint_tokens(inner, family, authorization, true, now)?;
    match inner
        .tokens
        .rotate_refresh_token(&token.digest(), successor)
        .await?
    {
        Rotation::Rotated => Ok(tokens),
        Rotation::Reused { family } => {
            super::revoke_after_replay(inner, family).await?;
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
