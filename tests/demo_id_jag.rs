//! The demo as an enterprise's identity provider, over real HTTP against `axum_server` and
//! `actix_server`: Alice signs in with `openid email` at `plain-client` through the sign-in
//! page, and `service-client` trades her ID token by token exchange for an Identity Assertion
//! JWT Authorization Grant (draft-ietf-oauth-identity-assertion-authz-grant) aimed at another
//! authorization server, verified with nothing but `/.well-known/jwks.json`. The ID token of a
//! self-registered client is not the service's to exchange.

mod demo;
#[path = "demo/openid.rs"]
mod openid;

use demo::Server;
use demo::http::*;
use openid::{Mode, authorize, code_request, redeem, verified_by};
use serde_json::{Value, json};

each_framework! {
    service_client_trades_alices_id_token_for_an_id_jag_signed_with_the_published_keys => issued;
    the_id_token_of_a_self_registered_client_is_not_the_services_to_exchange => self_registered;
}

const SERVICE: (&str, &str) = ("service-client", "service-secret");
const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The other authorization server, and the MCP server it guards.
const OTHER_AS: &str = "https://as.example/";
const MCP: &str = "https://mcp.example/mcp";

/// Alice's ID token from `client`, signed in with `openid email` through the pages.
async fn alices_id_token(base: &str, client: (&str, &str)) -> String {
    let http = browser();
    let request = code_request(client.0, "openid email");
    let response = authorize(&http, base, &request, Mode::Query, ALICE).await;
    let tokens = redeem(base, client, &response["code"]).await;
    tokens["id_token"].as_str().expect("an ID token").to_owned()
}

/// `service-client` asks for an ID-JAG for `id_token`, aimed at [`OTHER_AS`] and [`MCP`].
async fn exchange(base: &str, id_token: &str) -> Reply {
    let pairs = [
        ("grant_type", GRANT),
        ("requested_token_type", ID_JAG),
        ("subject_token", id_token),
        ("subject_token_type", ID_TOKEN),
        ("audience", OTHER_AS),
        ("resource", MCP),
        ("scope", "files.read"),
    ];
    token(base, Some(SERVICE), &pairs).await
}

async fn issued(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = metadata_document(base).await;
    assert!(strings(&metadata["grant_types_supported"]).contains(&GRANT.to_owned()));
    assert_eq!(
        metadata["identity_chaining_requested_token_types_supported"],
        json!([ID_JAG])
    );
    let id_token = alices_id_token(base, PLAIN).await;
    let reply = exchange(base, &id_token).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let body = reply.json();
    assert_eq!(body["issued_token_type"], ID_JAG, "{body}");
    assert_eq!(body["token_type"], "N_A", "{body}");
    assert_eq!(body["scope"], "files.read");
    assert!(body.get("refresh_token").is_none(), "{body}");
    let lifetime = body["expires_in"].as_u64().expect("expires_in");
    assert!(0 < lifetime && lifetime <= 300, "{body}");
    // Verified as the other server would: the published keys, the issuer, its own `aud`.
    let id_jag = body["access_token"].as_str().unwrap();
    let (header, claims) = verified_by(base, base, id_jag, OTHER_AS).await;
    assert_eq!(header["typ"], "oauth-id-jag+jwt");
    assert_eq!(header["alg"], "RS256");
    let (_, alice) = verified_by(base, base, &id_token, PLAIN.0).await;
    assert_eq!(claims["sub"], alice["sub"]);
    assert_eq!(claims["client_id"], SERVICE.0);
    assert_eq!(claims["resource"], MCP);
    assert_eq!(claims["scope"], "files.read");
    assert_eq!(claims["email"], ALICE.0);
    assert_eq!(claims["jti"], body["jti"]);
    let (iat, exp) = (claims["iat"].as_u64(), claims["exp"].as_u64());
    assert!(exp.unwrap() - iat.unwrap() <= 300, "{claims}");
    // Another client may not ask (only the service was agreed token exchange).
    let pairs = [
        ("grant_type", GRANT),
        ("requested_token_type", ID_JAG),
        ("subject_token", id_token.as_str()),
        ("subject_token_type", ID_TOKEN),
        ("audience", OTHER_AS),
    ];
    let refused = token(base, Some(PLAIN), &pairs).await;
    assert_oauth_error(&refused, 400, "unauthorized_client");
    // The grant is no ID token: it cannot be exchanged again.
    assert_oauth_error(&exchange(base, id_jag).await, 400, "invalid_grant");
}

async fn self_registered(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = json!({
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code"],
        "scope": "openid email",
    });
    let registered: Value = register(base, &metadata).await;
    let id = registered["client_id"].as_str().unwrap();
    let secret = registered["client_secret"].as_str().unwrap();
    let id_token = alices_id_token(base, (id, secret)).await;
    let (status, description) = status_and_description(&exchange(base, &id_token).await);
    assert_eq!(status, 400);
    assert!(description.contains("another client"), "{description}");
}
