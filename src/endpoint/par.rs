//! The pushed authorization request endpoint on the wire (RFC 9126 §2): `POST`, form-encoded,
//! the client authenticated as at the token endpoint; `201` with the `request_uri` (§2.2) or
//! an error in JSON (§2.3), never a redirect.

use http::{Request, Response, StatusCode};

use super::{parse, render};
use crate::error::OAuthError;
use crate::grant::pushed::Pushed;
use crate::server::Inner;

pub(crate) async fn par<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Response<String> {
    match handle(inner, request).await {
        Ok(pushed) => {
            let body = serde_json::json!({
                "request_uri": pushed.request_uri,
                "expires_in": pushed.expires_in,
            });
            render::json(StatusCode::CREATED, &body)
        }
        Err(error) => render::error(&error, &inner.config.basic_challenge),
    }
}

async fn handle<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Result<Pushed, OAuthError> {
    let Some(pushes) = inner.pushes() else {
        return Err(OAuthError::invalid_request(
            "this server does not take pushed authorization requests",
        )
        .with_status(StatusCode::NOT_FOUND));
    };
    let form = super::read_post_form(inner, request)?;
    let auth = parse::client_auth(request.headers(), &form, inner.config.limits.max_param)?;
    let client = inner
        .authenticator(&inner.config.endpoints.pushed_requests)
        .authenticate(&auth)
        .await?;
    let authorization = parse::authorization_request(&form);
    pushes
        .push(&client, &authorization, inner.clock.now())
        .await
}
