//! The wire: parsing requests into typed values ([`crate::request`]) and rendering outcomes
//! into responses. The only place grantor knows HTTP, JSON and form encoding. Parsing and
//! rendering are pure and synchronous; each endpoint's function reads, hands the typed request
//! to `grant`, and renders what it answers.

pub(crate) mod authorize;
pub(crate) mod basic;
pub(crate) mod bearer;
pub(crate) mod client_metadata;
pub(crate) mod device;
pub(crate) mod form;
pub(crate) mod introspect;
pub(crate) mod json;
pub(crate) mod metadata;
pub(crate) mod par;
pub(crate) mod parse;
pub(crate) mod registration;
pub(crate) mod render;
pub(crate) mod revoke;
pub(crate) mod span;
pub(crate) mod token;

use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, Request, StatusCode};

use crate::error::OAuthError;
use crate::server::Inner;
use form::{Form, FormError};

/// The absolute URL of an endpoint at `path`, as the metadata names it.
pub(crate) fn absolute_url(config: &crate::config::Config, path: &str) -> String {
    format!("{}{path}", config.issuer.trim_end_matches('/'))
}

/// The path an endpoint at `path` is served at, the path of its [`absolute_url`]: the
/// issuer's own path (none for an issuer that is an origin), then `path`.
pub(crate) fn served_path(config: &crate::config::Config, path: &str) -> String {
    format!("{}{path}", issuer_path(&config.issuer))
}

/// Where the metadata document is served (RFC 8414 §3.1): the well-known name, then the
/// issuer's own path (`/.well-known/oauth-authorization-server/tenant` for the issuer
/// `https://host/tenant`). For the framework glue.
#[cfg(any(feature = "axum", feature = "actix"))]
pub(crate) fn metadata_path(config: &crate::config::Config) -> String {
    format!(
        "/.well-known/oauth-authorization-server{}",
        issuer_path(&config.issuer)
    )
}

/// The path of an issuer (checked at build: a URL with no query or fragment), without its
/// trailing `/`: empty for `https://host` and `https://host/`.
fn issuer_path(issuer: &str) -> &str {
    let after_scheme = issuer.split_once("://").map_or(issuer, |(_, rest)| rest);
    after_scheme
        .find('/')
        .map_or("", |start| after_scheme[start..].trim_end_matches('/'))
}

/// Whether a `Content-Type` is `application/x-www-form-urlencoded`, parameters (such as
/// `charset`) allowed.
pub(crate) fn is_form_content_type(value: Option<&HeaderValue>) -> bool {
    const FORM: &[u8] = b"application/x-www-form-urlencoded";
    let Some(value) = value else {
        return false;
    };
    // The value nearly every client sends, checked without splitting.
    if value.as_bytes().eq_ignore_ascii_case(FORM) {
        return true;
    }
    let Ok(value) = value.to_str() else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

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
    if !is_form_content_type(request.headers().get(CONTENT_TYPE)) {
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

/// The 413 `invalid_request` answer for a body over the server's limit.
pub(crate) fn payload_too_large(inner: &Inner) -> http::Response<String> {
    let error = OAuthError::invalid_request("the request is larger than this server accepts")
        .with_status(StatusCode::PAYLOAD_TOO_LARGE);
    let mut response = render::error(&error, &inner.config.basic_challenge);
    // The rest of the body is unread: the connection cannot carry another request (RFC 9112
    // §9.6), and saying so keeps a client from sending its next one on it.
    response.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    response
}

/// The JWKS document of the access-token signing keys (RFC 7517 §5), cacheable for five
/// minutes; 404 without JWT access tokens, 503 when the keys cannot be read.
#[cfg(feature = "jwt")]
pub(crate) async fn jwks(inner: &Inner) -> http::Response<String> {
    let Some(jwt) = &inner.jwt else {
        let mut response = http::Response::new(String::new());
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    };
    match jwt.jwks(inner.clock.now()).await {
        Ok(document) => {
            let mut response = render::json_text(StatusCode::OK, document);
            let headers = response.headers_mut();
            headers.remove(http::header::PRAGMA);
            headers.insert(
                http::header::CACHE_CONTROL,
                http::HeaderValue::from_static("public, max-age=300"),
            );
            response
        }
        Err(error) => render::error(&error.into(), &inner.config.basic_challenge),
    }
}

#[cfg(test)]
mod tests {
    use super::issuer_path;

    #[test]
    fn an_issuers_path_is_what_follows_its_authority_without_the_trailing_slash() {
        assert_eq!(issuer_path("https://auth.example"), "");
        assert_eq!(issuer_path("https://auth.example/"), "");
        assert_eq!(issuer_path("http://127.0.0.1:8080"), "");
        assert_eq!(issuer_path("https://host/tenant"), "/tenant");
        assert_eq!(issuer_path("https://host:8443/realms/one/"), "/realms/one");
    }
}
