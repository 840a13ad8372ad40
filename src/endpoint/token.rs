//! The token endpoint (RFC 6749 §3.2): `POST`, form-encoded, client authenticated, then one
//! grant by `grant_type`; token JSON (RFC 6749 §5.1) or an RFC 6749 §5.2 error.

use http::{Request, Response, StatusCode};

use super::{json, parse, render};
use crate::error::OAuthError;
use crate::grant::{self, Issued};
use crate::server::Inner;

pub(crate) async fn token<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Response<String> {
    match handle(inner, request).await {
        Ok(issued) => render::json_text(StatusCode::OK, json::token_response(&issued)),
        Err(error) => render::error(&error, &inner.config.basic_challenge),
    }
}

/// Reads the request and hands it to the grant. Each step's result is bound at once (`?`), so
/// no parse result is kept twice in this future while the grant runs.
async fn handle<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Result<Issued, OAuthError> {
    let form = super::read_post_form(inner, request)?;
    let auth = parse::client_auth(request.headers(), &form, inner.config.limits.max_param)?;
    let token_request = parse::token_request(&form);
    let grants = inner.token_grants();
    grant::token(&grants, &auth, &token_request, inner.clock.now()).await
}
