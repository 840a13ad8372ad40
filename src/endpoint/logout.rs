//! The end-session endpoint on the wire (OpenID Connect RP-Initiated Logout 1.0 §2): the
//! parameters from the query of a `GET` or the form of a `POST`.

use http::{Method, Request};

use super::form::{self, Form};
use super::is_form_content_type;
use crate::error::OAuthError;
use crate::grant::logout::LogoutRequest;
use crate::settings::Limits;

/// The request's parameters: the query of a `GET`, the form of a `POST`.
pub(crate) fn read<B: AsRef<[u8]>>(
    limits: Limits,
    request: &Request<B>,
) -> Result<Form<'_>, OAuthError> {
    let input = match *request.method() {
        Method::GET | Method::HEAD => request.uri().query().unwrap_or("").as_bytes(),
        Method::POST => {
            if !is_form_content_type(request.headers().get(http::header::CONTENT_TYPE)) {
                return Err(OAuthError::invalid_request(
                    "a POST to the end-session endpoint must be application/x-www-form-urlencoded",
                ));
            }
            request.body().as_ref()
        }
        _ => return Err(OAuthError::invalid_request("logout takes GET or POST")),
    };
    let form =
        form::parse(input, limits).map_err(|e| OAuthError::invalid_request(e.description()))?;
    if let Some(name) = form.repeated() {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    Ok(form)
}

/// The RP-Initiated Logout parameters of `form`.
pub(crate) fn request<'f>(form: &'f Form<'_>) -> LogoutRequest<'f> {
    LogoutRequest {
        id_token_hint: form.get("id_token_hint"),
        client_id: form.get("client_id"),
        post_logout_redirect_uri: form.get("post_logout_redirect_uri"),
        state: form.get("state"),
    }
}
