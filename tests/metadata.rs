//! RFC 8414 metadata: built from the configuration, every endpoint absolute, only what is
//! really accepted.

mod common;

use common::*;
use grantor::Scope;
use grantor::settings::EndpointPaths;

#[tokio::test]
async fn metadata_describes_the_server_as_configured() {
    let scopes = Scope::parse("profile email admin").unwrap();
    let f = fixture_with(|b| b.scopes_supported(&scopes));
    let response = f.server.metadata();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let m = json(&response);
    assert_eq!(m["issuer"], ISSUER);
    assert_eq!(
        m["authorization_endpoint"],
        "http://127.0.0.1:8080/api/oauth/authorize"
    );
    assert_eq!(m["token_endpoint"], "http://127.0.0.1:8080/api/oauth/token");
    assert_eq!(
        m["revocation_endpoint"],
        "http://127.0.0.1:8080/api/oauth/revoke"
    );
    assert_eq!(
        m["introspection_endpoint"],
        "http://127.0.0.1:8080/api/oauth/introspect"
    );
    assert_eq!(
        m["response_types_supported"],
        serde_json::json!(["code", "token"])
    );
    assert_eq!(
        m["grant_types_supported"],
        serde_json::json!([
            "authorization_code",
            "implicit",
            "password",
            "refresh_token",
            "client_credentials"
        ])
    );
    assert_eq!(
        m["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    // `private_key_jwt` (RFC 7523) where the feature is built.
    let keys = cfg!(feature = "private-key-jwt");
    // `client_secret_post` for the clients registered for it (RFC 6749 §2.3.1).
    let auth = if keys {
        serde_json::json!([
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
            "none"
        ])
    } else {
        serde_json::json!(["client_secret_basic", "client_secret_post", "none"])
    };
    assert_eq!(m["token_endpoint_auth_methods_supported"], auth);
    assert_eq!(m["revocation_endpoint_auth_methods_supported"], auth);
    // Introspection needs an authenticated client (RFC 7662 §2.1): never `none`.
    let authenticated = if keys {
        serde_json::json!([
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt"
        ])
    } else {
        serde_json::json!(["client_secret_basic", "client_secret_post"])
    };
    assert_eq!(
        m["introspection_endpoint_auth_methods_supported"],
        authenticated
    );
    assert_eq!(
        m["scopes_supported"],
        serde_json::json!(["admin", "email", "profile"])
    );
    assert_eq!(m["authorization_response_iss_parameter_supported"], true);
}

#[tokio::test]
async fn metadata_follows_paths_pkce_and_issuer_settings() {
    let paths = EndpointPaths {
        token: "/oauth2/token".to_owned(),
        ..EndpointPaths::default()
    };
    let f = fixture_with(|b| {
        b.issuer("https://auth.example/tenant/")
            .endpoints(paths)
            .pkce_policy(grantor::settings::PkcePolicy::PlainAllowed)
    });
    let m = json(&f.server.metadata());
    assert_eq!(m["issuer"], "https://auth.example/tenant/");
    assert_eq!(
        m["token_endpoint"],
        "https://auth.example/tenant/oauth2/token"
    );
    assert_eq!(
        m["code_challenge_methods_supported"],
        serde_json::json!(["S256", "plain"])
    );
    assert!(m.get("scopes_supported").is_none());
}

#[test]
fn endpoint_paths_must_be_absolute_paths() {
    let bad = EndpointPaths {
        revocation: "revoke?x=1".to_owned(),
        ..EndpointPaths::default()
    };
    let built = grantor::AuthorizationServer::builder()
        .issuer(ISSUER)
        .endpoints(bad)
        .build();
    assert_eq!(built.unwrap_err(), grantor::ConfigError::EndpointPath);
}

#[tokio::test]
async fn registration_endpoint_is_listed_only_with_a_registration_policy() {
    let f = fixture();
    assert!(
        json(&f.server.metadata())
            .get("registration_endpoint")
            .is_none()
    );
    let paths = EndpointPaths {
        registration: "/connect/register".to_owned(),
        ..EndpointPaths::default()
    };
    let f = fixture_with(|b| {
        b.issuer("https://auth.example/tenant/")
            .endpoints(paths)
            .registration(grantor::settings::RegistrationPolicy::new())
    });
    let m = json(&f.server.metadata());
    assert_eq!(
        m["registration_endpoint"],
        "https://auth.example/tenant/connect/register"
    );
    let bad = EndpointPaths {
        registration: "register".to_owned(),
        ..EndpointPaths::default()
    };
    let built = grantor::AuthorizationServer::builder()
        .issuer(ISSUER)
        .endpoints(bad)
        .build();
    assert_eq!(built.unwrap_err(), grantor::ConfigError::EndpointPath);
}
