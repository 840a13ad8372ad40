//! Token revocation (RFC 7009): a client revokes its own access or refresh token; the answer
//! is `200 {}` whether or not there was such a token (RFC 7009 §2.2).

use http::{Request, Response, StatusCode};

use super::{parse, render};
use crate::error::OAuthError;
use crate::grant::lookup;
use crate::server::Inner;

pub(crate) async fn revoke<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Response<String> {
    match handle(inner, request).await {
        Ok(()) => render::json_text(StatusCode::OK, "{}".to_owned()),
        Err(error) => render::error(&error, &inner.config.basic_challenge),
    }
}

async fn handle<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Result<(), OAuthError> {
    let form = super::read_post_form(inner, request)?;
    let auth = parse::client_auth(request.headers(), &form, inner.config.limits.max_param)?;
    let client = inner
        .authenticator(&inner.config.endpoints.revocation)
        .authenticate(&auth)
        .await?;
    let query = parse::token_query(&form)?;
    let now = inner.clock.now();
    lookup::revoke(&*inner.tokens, &*inner.events, &client, &query, now).await
}
