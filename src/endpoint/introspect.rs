//! Token introspection (RFC 7662): what an access or refresh token is, for an authenticated
//! client; anything it may not see is exactly `{"active":false}`.

use http::{Request, Response, StatusCode};

use super::{json, parse, render};
use crate::error::OAuthError;
use crate::grant::lookup::{self, Found};
use crate::server::Inner;

pub(crate) async fn introspect<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Response<String> {
    match handle(inner, request).await {
        Ok(Some(found)) => render::json_text(
            StatusCode::OK,
            json::introspection(
                &found,
                &inner.config.issuer,
                &inner.config.resources.default,
            ),
        ),
        Ok(None) => render::json_text(StatusCode::OK, r#"{"active":false}"#.to_owned()),
        Err(error) => render::error(&error, &inner.config.basic_challenge),
    }
}

async fn handle<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Result<Option<Found>, OAuthError> {
    let form = super::read_post_form(inner, request)?;
    let auth = parse::client_auth(request.headers(), &form, inner.config.limits.max_param)?;
    let client = inner
        .authenticator(&inner.config.endpoints.introspection)
        .authenticate(&auth)
        .await?;
    let query = parse::token_query(&form)?;
    let audience = &inner.config.resources.default;
    lookup::introspect(&*inner.tokens, &client, audience, &query, inner.clock.now()).await
}
