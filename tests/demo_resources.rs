//! Resource indicators (RFC 8707) and JWT access tokens (RFC 9068) over real HTTP, against
//! `axum_server` and `actix_server`: the demo's two resources, `invalid_target` for any other,
//! `/api/me` refusing a token of another audience, another spelling of a resource (RFC 3986
//! §6.2.2) answered with the registered one, and with `--access-tokens jwt` a token that
//! verifies with nothing but the published JWKS.

mod demo;

use demo::Server;
use demo::http::*;

each_framework! {
    a_token_for_the_other_resource_is_refused_by_the_api_and_unknown_ones_are_invalid_target => resources;
    a_jwt_access_token_verifies_with_the_jwks_alone_and_opens_the_api => jwt;
    another_spelling_of_a_demo_resource_gets_its_registered_aud => spellings;
    the_api_has_protected_resource_metadata_and_its_challenges_name_it => resource_metadata;
}

const OTHER: &str = "https://resource.example/";

async fn client_credentials(base: &str, resource: Option<&str>) -> Reply {
    let mut pairs = vec![("grant_type", "client_credentials")];
    pairs.extend(resource.map(|r| ("resource", r)));
    token(base, Some(DEMO), &pairs).await
}

async fn resources(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let api = format!("{base}/api");
    let default = assert_tokens(&client_credentials(base, None).await);
    assert_eq!(introspect(base, access_token(&default)).await["aud"], api);
    assert_eq!(me(base, Some(access_token(&default))).await.status, 200);
    let named = assert_tokens(&client_credentials(base, Some(&api)).await);
    assert_eq!(me(base, Some(access_token(&named))).await.status, 200);
    let other = assert_tokens(&client_credentials(base, Some(OTHER)).await);
    assert_eq!(introspect(base, access_token(&other)).await["aud"], OTHER);
    let refused = me(base, Some(access_token(&other))).await;
    assert_eq!(refused.status, 401);
    let challenge = refused.header("www-authenticate").unwrap_or_default();
    assert!(challenge.contains("invalid_token"), "{challenge}");
    for unknown in [
        "https://unknown.example/",
        "relative",
        "https://resource.example/#f",
    ] {
        let reply = client_credentials(base, Some(unknown)).await;
        assert_oauth_error(&reply, 400, "invalid_target");
    }
    server.assert_alive_and_calm();
}

async fn spellings(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let api = format!("{base}/api");
    // The API with its scheme in capitals and `a` percent-encoded; the other resource with its
    // host in capitals, the default port and no path.
    let port = base.rsplit(':').next().expect("the demo's port");
    let api_spelled = format!("HTTP://127.0.0.1:{port}/%61pi");
    let named = assert_tokens(&client_credentials(base, Some(&api_spelled)).await);
    assert_eq!(introspect(base, access_token(&named)).await["aud"], api);
    assert_eq!(me(base, Some(access_token(&named))).await.status, 200);
    let other =
        assert_tokens(&client_credentials(base, Some("HTTPS://RESOURCE.EXAMPLE:443")).await);
    assert_eq!(introspect(base, access_token(&other)).await["aud"], OTHER);
    // A path keeps its trailing slash: `{issuer}/api/` is not the API.
    let reply = client_credentials(base, Some(&format!("{api}/"))).await;
    assert_oauth_error(&reply, 400, "invalid_target");
    server.assert_alive_and_calm();
}

async fn jwt(framework: &str) {
    let server = Server::start_with_args(framework, "memory", &["--access-tokens", "jwt"]);
    let base = &server.base;
    let metadata = get(
        &browser(),
        &format!("{base}/.well-known/oauth-authorization-server"),
    )
    .await
    .json();
    let jwks_uri = metadata["jwks_uri"].as_str().expect("jwks_uri").to_owned();
    assert_eq!(jwks_uri, format!("{base}/.well-known/jwks.json"));
    let jwks = get(&browser(), &jwks_uri).await;
    assert_eq!(jwks.status, 200);
    assert_content_type(&jwks, "application/json");
    let tokens = password_grant(base, DEMO, ALICE, "profile").await;
    let access = access_token(&tokens);
    assert_eq!(access.split('.').count(), 3, "a compact JWS");
    let verifier =
        grantor::jwt::JwtVerifier::from_jwks(base.as_str(), format!("{base}/api"), &jwks.body)
            .unwrap();
    let now = grantor::clock::UnixTime::from(std::time::SystemTime::now());
    let verified = verifier.verify(access, now).unwrap();
    assert_eq!(verified.scope.as_str(), "profile");
    assert_eq!(verified.client_id.as_str(), "demo-client");
    let me = me(base, Some(access)).await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(me.json()["email"], ALICE.0);
    server.assert_alive_and_calm();
}

/// RFC 9728 (examples/README.md part 3): the API's metadata at its well-known URL, listed in the
/// server's metadata, and named by every 401 of `/api/me`.
async fn resource_metadata(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let url = format!("{base}/.well-known/oauth-protected-resource/api");
    let reply = get(&browser(), &url).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, "application/json");
    let document = reply.json();
    assert_eq!(document["resource"], format!("{base}/api"), "{document}");
    assert_eq!(document["authorization_servers"], serde_json::json!([base]));
    let scopes = strings(&document["scopes_supported"]);
    assert!(scopes.contains(&"profile".to_owned()) && scopes.contains(&"email".to_owned()));
    assert_eq!(
        document["bearer_methods_supported"],
        serde_json::json!(["header"])
    );
    let metadata = metadata_document(base).await;
    let protected = strings(&metadata["protected_resources"]);
    assert!(protected.contains(&format!("{base}/api")), "{metadata}");
    // Every 401 of the API names the document, without a token and with a bad one.
    let named = format!("resource_metadata=\"{url}\"");
    for token in [None, Some("no-such-token")] {
        let refused = me(base, token).await;
        assert_eq!(refused.status, 401);
        let challenges: Vec<&str> = refused
            .headers
            .get_all("www-authenticate")
            .iter()
            .map(|value| value.to_str().unwrap())
            .collect();
        assert!(!challenges.is_empty());
        for challenge in challenges {
            assert!(challenge.contains(&named), "{challenge}");
        }
    }
    server.assert_alive_and_calm();
}
