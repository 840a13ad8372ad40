//! The wire: parsing requests into typed values and rendering outcomes into responses. Pure and
//! synchronous except where an endpoint hands over to the grant logic.

pub(crate) mod basic;
pub(crate) mod form;
pub(crate) mod introspect;
pub(crate) mod render;
pub(crate) mod revoke;
pub(crate) mod token;

use http::header::CONTENT_TYPE;
use http::{Method, Request, StatusCode};

use crate::error::OAuthError;
use crate::grant;
use crate::server::Inner;
use form::{Form, FormError};

/// The checks every `POST`-only, form-encoded endpoint (token, revocation, introspection) makes
/// before anything is looked up: method, Content-Type, size, encoding, repeated parameters.
pub(crate) fn read_post_form<'r, B: AsRef<[u8]>>(
    inner: &Inner,
    request: &'r Request<B>,
) -> Result<Form<'r>, OAuthError> {
    if request.method() != Method::POST {
        return Err(
            OAuthError::invalid_request("this endpoint accepts POST only")
                .with_status(StatusCode::METHOD_NOT_ALLOWED),
        );
    }
    if !grant::is_form_content_type(request.headers().get(CONTENT_TYPE)) {
        return Err(OAuthError::invalid_request(
            "Content-Type must be application/x-www-form-urlencoded",
        ));
    }
    let form = form::parse(request.body().as_ref(), inner.config.limits).map_err(|e| {
        let error = OAuthError::invalid_request(e.description());
        if e == FormError::TooLarge {
            error.with_status(StatusCode::PAYLOAD_TOO_LARGE)
        } else {
            error
        }
    })?;
    if let Some(name) = form.repeated() {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    Ok(form)
}
