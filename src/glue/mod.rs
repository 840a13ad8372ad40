//! What the framework glue shares: the scope an extractor requires.

use crate::scope::Scope;

/// The scope a [`ScopedBearer`](crate::axum::ScopedBearer) extractor requires, as a type (one
/// per set of handlers): `const SCOPE: &str = "profile email";`.
pub trait RequiredScope: Send + Sync + 'static {
    /// Space-separated scope tokens (RFC 6749 §3.3), all of which the token must carry.
    const SCOPE: &'static str;
}

/// `R::SCOPE` parsed; a malformed one is the host's mistake, answered 500 rather than let
/// through.
fn required_scope<R: RequiredScope, E: From<http::Response<String>>>() -> Result<Scope, E> {
    Scope::parse(R::SCOPE).map_err(|_| {
        let mut response = http::Response::new(
            r#"{"error":"server_error","error_description":"the handler's required scope is malformed"}"#
                .to_owned(),
        );
        *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        E::from(response)
    })
}

#[cfg(feature = "axum")]
pub mod axum;

#[cfg(feature = "actix")]
pub mod actix;
