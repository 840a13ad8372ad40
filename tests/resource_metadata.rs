//! Protected resource metadata (RFC 9728) through the public API: a document for each resource
//! the server knows at the well-known URL its identifier gives (§3.1), served by the server, the
//! tower layer and both glues, and named by every challenge of that resource (§5.1).

mod common;

use common::*;
use grantor::Scope;
use http::Request;

const API: &str = "http://127.0.0.1:8080/api";
const API_METADATA: &str = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/api";
const FILES: &str = "https://files.example/";
const FILES_METADATA: &str = "https://files.example/.well-known/oauth-protected-resource";

fn resources_fixture() -> Fixture {
    fixture_with(|b| {
        b.default_audience(API)
            .resources([FILES, "urn:example:ledger"])
            .scopes_supported(&Scope::parse("profile email").unwrap())
    })
}

fn document(response: &http::Response<String>) -> serde_json::Value {
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(response.headers()["content-type"], "application/json");
    json(response)
}

#[tokio::test]
async fn each_known_resource_has_a_document_at_its_well_known_url() {
    let f = resources_fixture();
    let api = document(&f.server.protected_resource_metadata(API));
    assert_eq!(api["resource"], API);
    assert_eq!(api["authorization_servers"], serde_json::json!([ISSUER]));
    let scopes = api["scopes_supported"]
        .as_array()
        .expect("scopes_supported");
    assert!(
        scopes.contains(&"profile".into()) && scopes.contains(&"email".into()),
        "{api}"
    );
    assert_eq!(
        api["bearer_methods_supported"],
        serde_json::json!(["header"])
    );
    assert!(
        api.get("dpop_signing_alg_values_supported").is_none(),
        "{api}"
    );
    assert_eq!(f.server.resource_metadata_url(API), Some(API_METADATA));
    assert_eq!(
        document(&f.server.protected_resource_metadata(FILES))["resource"],
        FILES
    );
    assert_eq!(f.server.resource_metadata_url(FILES), Some(FILES_METADATA));
    // Another spelling of a known resource finds its document, which names it as registered.
    let spelled = f
        .server
        .protected_resource_metadata("HTTP://127.0.0.1:8080/api");
    assert_eq!(document(&spelled)["resource"], API);
    // A URN has no well-known URL; an unknown resource has no document.
    assert_eq!(f.server.resource_metadata_url("urn:example:ledger"), None);
    let unknown = f
        .server
        .protected_resource_metadata("https://elsewhere.example/");
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        f.server.resource_metadata_url("http://127.0.0.1:8080/api/"),
        None
    );
}

/// An MCP client registers itself, then reads the resource's document to learn which scopes to
/// ask for: a scope the registration policy grants is there though the host listed none.
#[tokio::test]
async fn the_document_lists_the_scopes_a_self_registered_client_may_be_granted() {
    let policy = grantor::settings::RegistrationPolicy::new()
        .scope(&Scope::parse("openid mcp:tools profile").unwrap());
    let f = fixture_with(|b| {
        b.default_audience(API)
            .scopes_supported(&Scope::parse("profile email").unwrap())
            .registration(policy)
    });
    let api = document(&f.server.protected_resource_metadata(API));
    assert_eq!(
        api["scopes_supported"],
        serde_json::json!(["email", "profile", "mcp:tools"]),
        "the host's first, then the registrable ones, openid left out"
    );
    let policy =
        grantor::settings::RegistrationPolicy::new().scope(&Scope::parse("mcp:tools").unwrap());
    let f = fixture_with(|b| b.default_audience(API).registration(policy));
    let api = document(&f.server.protected_resource_metadata(API));
    assert_eq!(api["scopes_supported"], serde_json::json!(["mcp:tools"]));
}

#[cfg(feature = "dpop")]
#[tokio::test]
async fn with_dpop_the_document_lists_the_proof_algorithms() {
    let f = fixture_with(|b| b.default_audience(API).dpop(grantor::dpop::Dpop::new()));
    let api = document(&f.server.protected_resource_metadata(API));
    assert_eq!(
        api["dpop_signing_alg_values_supported"],
        serde_json::json!(grantor::dpop::ALGORITHMS)
    );
}

#[tokio::test]
async fn every_challenge_of_a_resource_names_its_metadata() {
    let f = resources_fixture();
    let named = |response: &http::Response<String>, url: &str| {
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.ends_with(&format!(", resource_metadata=\"{url}\"")),
            "{challenge}"
        );
    };
    let bare = Request::get("/api/me").body(()).unwrap();
    let refusal = f.server.bearer(&bare, None).await.unwrap_err();
    named(&refusal.into_response(), API_METADATA);
    let bad = Request::get("/api/me")
        .header("authorization", "Bearer no-such-token")
        .body(())
        .unwrap();
    let refusal = f.server.bearer(&bad, None).await.unwrap_err();
    named(&refusal.into_response(), API_METADATA);
    // Another resource's refusals name that resource's document.
    let refusal = f
        .server
        .bearer_for_audience(&bad, FILES, None)
        .await
        .unwrap_err();
    named(&refusal.into_response(), FILES_METADATA);
    // 403 insufficient_scope too.
    let tokens = f.fast_tokens().await;
    let token = tokens["access_token"].as_str().unwrap();
    let scoped = Request::get("/api/me")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap();
    let needed = Scope::parse("email").unwrap();
    let refusal = f.server.bearer(&scoped, Some(&needed)).await.unwrap_err();
    let response = refusal.into_response();
    assert_eq!(response.status(), 403);
    named(&response, API_METADATA);
}

#[cfg(feature = "tower")]
mod layer {
    use std::convert::Infallible;

    use grantor::layer::RequireBearer;
    use http::{Request, Response};
    use tower::{Layer, ServiceExt, service_fn};

    use super::*;

    async fn protected(_: Request<String>) -> Result<Response<String>, Infallible> {
        Ok(Response::new("the resource".to_owned()))
    }

    fn request(method: &str, path: &str) -> Request<String> {
        Request::builder()
            .method(method)
            .uri(path)
            .body(String::new())
            .unwrap()
    }

    #[tokio::test]
    async fn the_layer_serves_its_resources_document_without_a_token() {
        let f = resources_fixture();
        let guard = RequireBearer::new(f.server.clone());
        let service = guard.layer(service_fn(protected));
        let path = "/.well-known/oauth-protected-resource/api";
        let answer = service.clone().oneshot(request("GET", path)).await.unwrap();
        assert_eq!(document(&answer)["resource"], API);
        // Anything else there is the resource's, and needs a token.
        let posted = service
            .clone()
            .oneshot(request("POST", path))
            .await
            .unwrap();
        assert_eq!(posted.status(), 401);
        let other = "/.well-known/oauth-protected-resource/other";
        let other = service.oneshot(request("GET", other)).await.unwrap();
        assert_eq!(other.status(), 401);
        // A layer guarding another resource serves that resource's document.
        let files = RequireBearer::new(f.server.clone())
            .audience(FILES)
            .layer(service_fn(protected));
        let answer = files
            .oneshot(request("GET", "/.well-known/oauth-protected-resource"))
            .await
            .unwrap();
        assert_eq!(document(&answer)["resource"], FILES);
    }
}

#[cfg(feature = "axum")]
mod with_axum {
    use ::axum::body::Body;
    use http::Request;
    use tower::ServiceExt as _;

    use super::*;

    #[tokio::test]
    async fn the_axum_endpoints_serve_the_documents_of_the_issuers_origin() {
        let f = resources_fixture();
        let app: ::axum::Router = grantor::axum::endpoints(&f.server);
        let get = |path: &str| Request::get(path).body(Body::empty()).unwrap();
        let path = "/.well-known/oauth-protected-resource/api";
        let response = app.clone().oneshot(get(path)).await.unwrap();
        assert_eq!(response.status(), 200);
        let body = ::axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let document: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(document["resource"], API);
        // FILES lives on another origin: its document is its own to serve, not the issuer's
        // (a client checks that `resource` is the URL it derived the document's from).
        let root = "/.well-known/oauth-protected-resource";
        let response = app.oneshot(get(root)).await.unwrap();
        assert_eq!(response.status(), 404);
    }
}
