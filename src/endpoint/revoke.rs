//! Token revocation (RFC 7009): a client revokes its own access or refresh token.

use http::{Request, Response, StatusCode};

use super::render;
use crate::error::OAuthError;
use crate::grant::client_auth;
use crate::lookup::{self, Found};
use crate::secret::AccessToken;
use crate::server::Inner;

pub(crate) async fn revoke<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Response<String> {
    match handle(inner, request).await {
        Ok(()) => render::json(StatusCode::OK, &serde_json::Map::new()),
        Err(error) => render::error(&error, &inner.config.basic_challenge),
    }
}

async fn handle<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Result<(), OAuthError> {
    let form = super::read_post_form(inner, request)?;
    let client = client_auth::authenticate(inner, request.headers(), &form).await?;
    let token = form
        .get("token")
        .ok_or_else(|| OAuthError::invalid_request("token is missing"))?;
    let now = inner.clock.now();
    let Some(found) = lookup::find(inner, token, form.get("token_type_hint"), now).await? else {
        // RFC 7009 §2.2: an unknown (or already invalid) token answers 200 all the same.
        return Ok(());
    };
    if found.client_id() != client.id().as_str() {
        // A client may revoke only its own tokens; saying so would confirm the token exists.
        return Ok(());
    }
    match found {
        Found::Access(_) => {
            inner
                .tokens
                .revoke_access_token(&AccessToken::new(token))
                .await?
        }
        // RFC 7009 §2.1: revoking a refresh token revokes the grant it came from and the
        // access tokens issued under it.
        Found::Refresh(grant) => inner.tokens.revoke_family(grant.family).await?,
    }
    Ok(())
}
