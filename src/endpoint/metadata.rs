//! Authorization server metadata (RFC 8414 §2), built from the configuration.

use http::{HeaderValue, Response, StatusCode};
use serde::Serialize;

use super::render;
use crate::config::Config;

#[derive(Serialize)]
struct Metadata<'a> {
    issuer: &'a str,
    authorization_endpoint: String,
    token_endpoint: String,
    revocation_endpoint: String,
    introspection_endpoint: String,
    response_types_supported: [&'static str; 2],
    response_modes_supported: [&'static str; 2],
    grant_types_supported: [&'static str; 5],
    code_challenge_methods_supported: Vec<&'static str>,
    token_endpoint_auth_methods_supported: [&'static str; 2],
    revocation_endpoint_auth_methods_supported: [&'static str; 2],
    introspection_endpoint_auth_methods_supported: [&'static str; 2],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    scopes_supported: &'a [String],
    authorization_response_iss_parameter_supported: bool,
}

/// The metadata document as `application/json`, cacheable for an hour.
pub(crate) fn document(config: &Config) -> Response<String> {
    let base = config.issuer.trim_end_matches('/');
    let url = |path: &str| format!("{base}{path}");
    let paths = &config.endpoints;
    let mut methods = vec!["S256"];
    if config.allow_plain_pkce {
        methods.push("plain");
    }
    // What is really accepted: HTTP Basic for confidential clients, `client_id` alone
    // (`none`) for public ones; never `client_secret_post`.
    let auth_methods = ["client_secret_basic", "none"];
    let metadata = Metadata {
        issuer: &config.issuer,
        authorization_endpoint: url(&paths.authorization),
        token_endpoint: url(&paths.token),
        revocation_endpoint: url(&paths.revocation),
        introspection_endpoint: url(&paths.introspection),
        response_types_supported: ["code", "token"],
        response_modes_supported: ["query", "fragment"],
        grant_types_supported: [
            "authorization_code",
            "implicit",
            "password",
            "refresh_token",
            "client_credentials",
        ],
        code_challenge_methods_supported: methods,
        token_endpoint_auth_methods_supported: auth_methods,
        revocation_endpoint_auth_methods_supported: auth_methods,
        introspection_endpoint_auth_methods_supported: auth_methods,
        scopes_supported: &config.scopes_supported,
        authorization_response_iss_parameter_supported: true,
    };
    let mut response = render::json(StatusCode::OK, &metadata);
    let headers = response.headers_mut();
    headers.remove(http::header::PRAGMA);
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}
