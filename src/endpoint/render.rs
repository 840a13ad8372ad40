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

/// A signed JWT answer (`application/jwt`, OIDC Core §5.3.2), never stored.
pub(crate) fn jwt(status: StatusCode, jwt: String) -> Response<String> {
    let mut response = json_text(status, jwt);
    response.headers_mut().insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("application/jwt"),
    );
    response
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
    mark(&mut response, error.code());
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

/// Marks `response` as answering the error `code`, for the endpoint call's count
/// (`span.rs`): the code grantor chose, never text from the request.
pub(crate) fn mark(response: &mut Response<String>, code: ErrorCode) {
    response.extensions_mut().insert(code);
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

/// The script of a [`form_post`] page: it submits the page's one form.
const FORM_POST_SCRIPT: &str = "document.forms[0].submit()";

/// An authorization response in Form Post Response Mode (OAuth 2.0 Form Post Response Mode
/// §2): an HTML page whose form the browser posts to `action` (the registered redirect URI)
/// by itself, with `pairs` as hidden inputs, and a button for a browser without scripts. The
/// answer never enters a URL; the page is sent with `Cache-Control: no-store`, may not be
/// framed, and runs no script but its own (a hash in its `Content-Security-Policy`).
pub(crate) fn form_post<'a>(
    action: &str,
    pairs: impl Iterator<Item = (&'a str, &'a str)>,
) -> Response<String> {
    let mut body = String::with_capacity(512);
    body.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Returning to the application</title></head><body>\
         <form method=\"post\" action=\"",
    );
    push_escaped(&mut body, action);
    body.push_str("\">");
    for (name, value) in pairs {
        body.push_str("<input type=\"hidden\" name=\"");
        push_escaped(&mut body, name);
        body.push_str("\" value=\"");
        push_escaped(&mut body, value);
        body.push_str("\">");
    }
    body.push_str("<noscript><button type=\"submit\">Continue</button></noscript></form><script>");
    body.push_str(FORM_POST_SCRIPT);
    body.push_str("</script></body></html>\n");
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, NO_STORE);
    headers.insert(PRAGMA, NO_CACHE);
    headers.insert(
        http::header::X_FRAME_OPTIONS,
        HeaderValue::from_static("DENY"),
    );
    headers.insert(
        http::header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    let policy = format!(
        "default-src 'none'; script-src '{}'; frame-ancestors 'none'",
        script_hash()
    );
    if let Ok(policy) = HeaderValue::try_from(policy) {
        headers.insert(http::header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

/// `sha256-` and the base64 SHA-256 of [`FORM_POST_SCRIPT`], as CSP names a script.
fn script_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| {
        use base64::Engine as _;
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(FORM_POST_SCRIPT.as_bytes());
        format!(
            "sha256-{}",
            base64::engine::general_purpose::STANDARD.encode(digest)
        )
    })
}

/// `text` escaped for an HTML attribute value or text.
fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}
