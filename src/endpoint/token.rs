//! The token endpoint (RFC 6749 §3.2): `POST`, form-encoded, client authenticated, then one
//! grant by `grant_type`; token JSON (RFC 6749 §5.1) or an RFC 6749 §5.2 error.

use http::{Request, Response, StatusCode};

use super::{json, parse, render};
use crate::grant;
use crate::server::Inner;

pub(crate) async fn token<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Response<String> {
    let issued = match super::read_post_form(inner, request) {
        Ok(form) => {
            let max = inner.config.limits.max_param;
            match parse::client_auth(request.headers(), &form, max) {
                Ok(auth) => {
                    let token_request = parse::token_request(&form);
                    let now = inner.clock.now();
                    grant::token(&inner.token_grants(), auth, token_request, now).await
                }
                Err(error) => Err(error),
            }
        }
        Err(error) => Err(error),
    };
    match issued {
        Ok(issued) => render::json_text(StatusCode::OK, json::token_response(&issued)),
        Err(error) => render::error(&error, &inner.config.basic_challenge),
    }
}
