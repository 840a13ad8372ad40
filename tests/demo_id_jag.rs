//! The demo as an enterprise's identity provider, over real HTTP against `axum_server` and
//! `actix_server`: Alice signs in with `openid email` at `plain-client` through the sign-in
//! page, and `service-client` trades her ID token by token exchange for an Identity Assertion
//! JWT Authorization Grant (draft-ietf-oauth-identity-assertion-authz-grant) aimed at another
//! authorization server, verified with nothing but `/.well-known/jwks.json`. The ID token of a
//! self-registered client is not the service's to exchange. A second demo, started with
//! `--trust-issuer` naming the first, redeems the grant with the JWT-bearer grant (RFC 7523)
//! for an access token for Alice, once; a demo that trusts no one refuses it.

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
    an_id_jag_of_one_demo_is_redeemed_at_another_that_trusts_it => redeemed;
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

/// `service-client` asks `idp` for an ID-JAG for `id_token`, aimed at `audience`'s
/// `resource`: the grant's text.
async fn id_jag_for(idp: &str, id_token: &str, audience: &str, resource: &str) -> String {
    let pairs = [
        ("grant_type", GRANT),
        ("requested_token_type", ID_JAG),
        ("subject_token", id_token),
        ("subject_token_type", ID_TOKEN),
        ("audience", audience),
        ("resource", resource),
        ("scope", "profile email"),
    ];
    let reply = token(idp, Some(SERVICE), &pairs).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()["access_token"].as_str().unwrap().to_owned()
}

/// `service-client` presents `assertion` at `base` with the JWT-bearer grant.
async fn present(base: &str, assertion: &str) -> Reply {
    let pairs = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
        ("assertion", assertion),
        ("scope", "profile"),
    ];
    token(base, Some(SERVICE), &pairs).await
}

async fn redeemed(framework: &str) {
    let idp = Server::start(framework);
    let trusted = format!("{}={}/.well-known/jwks.json", idp.base, idp.base);
    let args = [
        "--trust-issuer",
        trusted.as_str(),
        "--fetch-allow-loopback",
        "1",
    ];
    let mcp_as = Server::start_with_args(framework, "memory", &args);
    let metadata = metadata_document(&mcp_as.base).await;
    assert_eq!(
        metadata["authorization_grant_profiles_supported"],
        json!(["urn:ietf:params:oauth:grant-profile:id-jag"])
    );
    let id_token = alices_id_token(&idp.base, PLAIN).await;
    let api = format!("{}/api", mcp_as.base);
    let grant = id_jag_for(&idp.base, &id_token, &mcp_as.base, &api).await;
    let reply = present(&mcp_as.base, &grant).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let tokens = reply.json();
    assert_eq!(
        tokens["scope"], "profile",
        "what was asked, within the grant's scope"
    );
    assert!(tokens.get("refresh_token").is_none(), "{tokens}");
    let me_there = me(&mcp_as.base, tokens["access_token"].as_str()).await;
    assert_eq!(me_there.status, 200, "{}", me_there.body);
    assert_eq!(me_there.json()["email"], ALICE.0);
    // Once only.
    assert_oauth_error(&present(&mcp_as.base, &grant).await, 400, "invalid_grant");
    // A resource the second demo does not serve.
    let elsewhere = id_jag_for(&idp.base, &id_token, &mcp_as.base, MCP).await;
    assert_oauth_error(
        &present(&mcp_as.base, &elsewhere).await,
        400,
        "invalid_target",
    );
    // Aimed at another server.
    let misaimed = id_jag_for(&idp.base, &id_token, OTHER_AS, &api).await;
    assert_oauth_error(
        &present(&mcp_as.base, &misaimed).await,
        400,
        "invalid_grant",
    );
    // A demo that trusts no one: the grant is not offered.
    let stranger = Server::start(framework);
    let fresh = id_jag_for(&idp.base, &id_token, &stranger.base, &api).await;
    let (status, _) = status_and_description(&present(&stranger.base, &fresh).await);
    assert_eq!(status, 400);
    idp.assert_alive_and_calm();
    mcp_as.assert_alive_and_calm();
}
