//! Responses: JSON answers that no cache keeps, RFC 6749 §5.2 errors, redirects.

use http::header::{
    ALLOW, CACHE_CONTROL, CONTENT_TYPE, LOCATION, PRAGMA, RETRY_AFTER, WWW_AUTHENTICATE,
};
use http::{HeaderValue, Response, StatusCode};
use serde::Serialize;

use crate::error::{ErrorCode, OAuthError};

const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
const POST: HeaderValue = HeaderValue::from_static("POST");
/// How long a client waits before trying again after a 503 (the store was unavailable: a
/// database restarting or failing over, a full pool): a second, then it may retry.
const RETRY_SOON: HeaderValue = HeaderValue::from_static("1");

/// A JSON response that no cache keeps (RFC 6749 §5.1).
pub(crate) fn json(status: StatusCode, body: &impl Serialize) -> Response<String> {
    // Serializing plain structs of strings and integers cannot fail; the fallback keeps this
    // total all the same.
    let body =
        serde_json::to_string(body).unwrap_or_else(|_| r#"{"error":"server_error"}"#.to_owned());
    json_text(status, body)
}

/// A JSON response from text already serialized.
pub(crate) fn json_text(status: StatusCode, body: String) -> Response<String> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, JSON);
    headers.insert(CACHE_CONTROL, NO_STORE);
    headers.insert(PRAGMA, NO_CACHE);
    response
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'static str,
    error_description: &'a str,
}

/// An RFC 6749 §5.2 error. `invalid_client` carries a Basic challenge for `realm`.
pub(crate) fn error(error: &OAuthError, realm: &HeaderValue) -> Response<String> {
    log(error);
    // The endpoint call's span (`span.rs`), if there is one.
    tracing::Span::current().record("outcome", error.code().as_str());
    let body = ErrorBody {
        error: error.code().as_str(),
        error_description: error.description(),
    };
    let mut response = json(error.status(), &body);
    if error.code() == ErrorCode::InvalidClient {
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, realm.clone());
    }
    if error.status() == StatusCode::METHOD_NOT_ALLOWED {
        // Only the POST-only endpoints answer 405 themselves.
        response.headers_mut().insert(ALLOW, POST);
    }
    retry_after(&mut response);
    response
}

/// A 503 says when to try again (RFC 9110 §10.2.3).
pub(crate) fn retry_after(response: &mut Response<String>) {
    if response.status() == StatusCode::SERVICE_UNAVAILABLE {
        response.headers_mut().insert(RETRY_AFTER, RETRY_SOON);
    }
}

/// A `303 See Other` to `location`: 303 so that a redirect answering the host's sign-in POST is
/// followed with a GET (RFC 9700 §4.12).
pub(crate) fn redirect(location: String) -> Result<Response<String>, OAuthError> {
    // From a `String` whose length is its capacity, the header takes the buffer as it is.
    let mut location = HeaderValue::try_from(location).map_err(|_| {
        OAuthError::new(
            ErrorCode::ServerError,
            "the redirect URI cannot be sent in a Location header",
        )
    })?;
    // It carries a code, a token or the client's `state`: HTTP/2 and HTTP/3 encoders keep it
    // out of their compression tables, and `Debug` of the header value shows `Sensitive`.
    location.set_sensitive(true);
    let mut response = Response::new(String::new());
    *response.status_mut() = StatusCode::SEE_OTHER;
    let headers = response.headers_mut();
    headers.insert(LOCATION, location);
    headers.insert(CACHE_CONTROL, NO_STORE);
    Ok(response)
}

/// Hands a server-side failure's cause to the host's logs. Client mistakes are not logged.
pub(crate) fn log(error: &OAuthError) {
    if let Some(source) = std::error::Error::source(error) {
        tracing::error!(code = %error.code(), cause = %source, "grantor: store failure");
    }
}

/// An empty 404: what the server does not serve.
pub(crate) fn not_found() -> Response<String> {
    let mut response = Response::new(String::new());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// A public document (server or resource metadata): its JSON `body`, cacheable for an hour
/// rather than `no-store`.
pub(crate) fn public_document(body: String) -> Response<String> {
    let mut response = json_text(StatusCode::OK, body);
    let headers = response.headers_mut();
    headers.remove(http::header::PRAGMA);
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("public, max-age=3600"),
    );
    response
}
