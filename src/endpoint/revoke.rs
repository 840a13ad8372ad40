//! Token revocation (RFC 7009): a client revokes its own access or refresh token.

use http::{Request, Response, StatusCode};

use super::render;
use crate::error::OAuthError;
use crate::lookup::{self, Found};
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
    let query = lookup::read_query(inner, request).await?;
    let own = query.client.id().as_str();
    // RFC 7009 §2.2: an unknown token answers 200 all the same; so does another client's, which
    // a client may not revoke (and must not learn exists).
    let Some(found) = query.found.filter(|found| found.client_id() == own) else {
        return Ok(());
    };
    match found {
        Found::Access(_) => inner.tokens.revoke_access_token(&query.token.digest()).await?,
        // RFC 7009 §2.1: revoking a refresh token revokes the grant it came from and the
        // access tokens issued under it.
        Found::Refresh(grant) => inner.tokens.revoke_family(grant.family).await?,
    }
    Ok(())
}
