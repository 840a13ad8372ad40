//! The OpenID Foundation conformance suite's Dynamic OP plan
//! (`oidcc-dynamic-certification-test-plan`) and Config OP plan
//! (`oidcc-config-certification-test-plan`, its discovery module alone), module by module, over
//! real HTTP against `axum_server` and `actix_server`. Clients register themselves (RFC 7591) as
//! the plan's `dynamic_client` variant does; the plan's `private_key_jwt` is used where a module
//! depends on it (`oidcc-server`, the `jwks_uri` and key rotation modules, the assertion
//! audience) and `client_secret_basic` elsewhere, where the client's authentication is not what
//! the module checks.
//!
//! | module | what it checks | test |
//! |---|---|---|
//! | `oidcc-discovery-endpoint-verification` (Config OP, Dynamic OP) | the discovery document: JSON; `issuer`; the Dynamic OP's response types and grant types; subject types; RS256; every endpoint and `jwks_uri` an https URL; a JWKS of keys with distinct `kid`s; `openid` among well-formed scopes; `claims_supported`; `code_challenge_methods_supported` | `oidcc_discovery_endpoint_verification` (the demo under an https issuer, as a deployment has) |
//! | `oidcc-idtoken-rs256` | a client registered for RS256 gets RS256 ID tokens with a `kid` | `oidcc_idtoken_rs256` |
//! | `oidcc-idtoken-unsigned` | `alg: none`, skipped when discovery does not list it | skipped by the suite: see `demo_oidf_basic.rs` |
//! | `oidcc-userinfo-rs256` | a client registered with `userinfo_signed_response_alg` RS256 gets a signed userinfo (`application/jwt`), and discovery lists RS256 for it | `oidcc_userinfo_rs256_*` |
//! | `oidcc-ensure-redirect-uri-in-authorization-request` | a client with two redirect URIs omits `redirect_uri`: an error page, no redirect | `oidcc_ensure_redirect_uri_in_authorization_request` |
//! | `oidcc-redirect-uri-query-OK` | a registered redirect URI with a query, sent exactly: success | `oidcc_redirect_uri_query_ok` |
//! | `oidcc-redirect-uri-query-mismatch` | the same with another query: an error page | `oidcc_redirect_uri_query_mismatch` |
//! | `oidcc-redirect-uri-query-added` | a query added to a registered URI without one: an error page | `oidcc_redirect_uri_query_added` |
//! | `oidcc-redirect-uri-regfrag` | registering a redirect URI with a fragment: `400` JSON, `invalid_redirect_uri` or `invalid_client_metadata` | `oidcc_redirect_uri_regfrag` |
//! | `oidcc-server` | registration, then the code flow with `private_key_jwt` at the token endpoint | `oidcc_server` |
//! | `oidcc-registration-logo-uri` | registering `logo_uri` succeeds and leads to a sign-in page (the suite asks for a screenshot showing the logo) | `oidcc_registration_logo_uri`: the automated part; the pages show no logo |
//! | `oidcc-registration-policy-uri` | likewise `policy_uri` (a link to it on the page) | `oidcc_registration_policy_uri`: likewise, no link shown |
//! | `oidcc-registration-tos-uri` | likewise `tos_uri` | `oidcc_registration_tos_uri`: likewise, no link shown |
//! | `oidcc-registration-jwks-uri` | a `private_key_jwt` client registered with `jwks_uri`: registration and the code flow | `oidcc_registration_jwks_uri_*` |
//! | `oidcc-registration-sector-uri` | `subject_type: pairwise` with a `sector_identifier_uri` listing the redirect URI: registered (skipped without pairwise in discovery) | `oidcc_registration_sector_uri_*` |
//! | `oidcc-registration-sector-bad` | a `sector_identifier_uri` not listing it: `400` `invalid_client_metadata` | `oidcc_registration_sector_bad_*` |
//! | `oidcc-server-rotate-keys` | an operator rotates the OP's keys during the test: the JWKS has a new key and keeps the old | does not apply over HTTP: the demo rotates keys by restart or by the host's call, not on a person's request; the JWKS publishes the current and previous keys (`demo_restart.rs`, `key_seam.rs`) |
//! | `oidcc-refresh-token-rp-key-rotation` | the client puts a new key with a new `kid` at its `jwks_uri` (the suite then waits 60 s): a refresh authenticated by the new key works | `oidcc_refresh_token_rp_key_rotation_*` (an 11 s wait instead of 60: an unknown `kid` fetches the set again 10 s after the last fetch) |
//! | `oidcc-request-uri-unsigned` | an unsigned request object by reference must be processed (Dynamic OP: `request_uri` is mandatory, OIDC Core §15.2) | does not apply by the contract: a `request_uri` that no pushed request made is `request_uri_not_supported` (see `oidcc_request_uri_unsigned_supported_correctly_or_rejected_as_unsupported` in `demo_oidf_basic.rs`); Dynamic OP certification needs it |
//! | `oidcc-request-uri-signed-rs256` | the same, signed RS256 | does not apply, as above |
//! | `oidcc-ensure-request-object-with-redirect-uri` | see the Basic OP plan | `demo_oidf_basic.rs` `oidcc_ensure_request_object_with_redirect_uri` |
//! | `oidcc-refresh-token` | see the Basic OP plan | `demo_oidf_basic.rs` `oidcc_refresh_token` |
//! | `oidcc-ensure-client-assertion-with-iss-aud-succeeds` | a client assertion whose `aud` is the issuer, not the token endpoint: accepted (or `invalid_client`) | `oidcc_ensure_client_assertion_with_iss_aud_succeeds` (accepted) |

mod demo;
#[path = "demo/documents.rs"]
mod documents;
#[path = "dpop_proofs/mod.rs"]
mod keys;
#[path = "demo/openid.rs"]
mod openid;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use demo::Server;
use demo::http::*;
use documents::DocumentServer;
use jsonwebtoken::Algorithm;
use keys::ProofKey;
use openid::*;
use serde_json::{Value, json};

each_framework! {
    oidcc_discovery_endpoint_verification => discovery_verification;
    oidcc_idtoken_rs256 => idtoken_rs256;
    oidcc_ensure_redirect_uri_in_authorization_request => redirect_uri_missing;
    oidcc_redirect_uri_query_ok => redirect_uri_query_ok;
    oidcc_redirect_uri_query_mismatch => redirect_uri_query_mismatch;
    oidcc_redirect_uri_query_added => redirect_uri_query_added;
    oidcc_redirect_uri_regfrag => redirect_uri_regfrag;
    oidcc_server => server_test;
    oidcc_registration_logo_uri => logo_uri;
    oidcc_registration_policy_uri => policy_uri;
    oidcc_registration_tos_uri => tos_uri;
    oidcc_ensure_client_assertion_with_iss_aud_succeeds => assertion_with_issuer_audience;
}

/// Modules that need documents served over https (a key set, a sector document) or a
/// registered algorithm, each with a server of its own.
mod own_server {
    use super::*;

    #[tokio::test]
    async fn oidcc_registration_jwks_uri_axum() {
        jwks_uri("axum").await;
    }

    #[tokio::test]
    async fn oidcc_registration_jwks_uri_actix() {
        jwks_uri("actix").await;
    }

    #[tokio::test]
    async fn oidcc_refresh_token_rp_key_rotation_axum() {
        rp_key_rotation("axum").await;
    }

    #[tokio::test]
    async fn oidcc_refresh_token_rp_key_rotation_actix() {
        rp_key_rotation("actix").await;
    }

    #[tokio::test]
    async fn oidcc_userinfo_rs256_axum() {
        userinfo_rs256("axum").await;
    }

    #[tokio::test]
    async fn oidcc_userinfo_rs256_actix() {
        userinfo_rs256("actix").await;
    }

    #[tokio::test]
    async fn oidcc_registration_sector_uri_axum() {
        sector_uri("axum").await;
    }

    #[tokio::test]
    async fn oidcc_registration_sector_uri_actix() {
        sector_uri("actix").await;
    }

    #[tokio::test]
    async fn oidcc_registration_sector_bad_axum() {
        sector_bad("axum").await;
    }

    #[tokio::test]
    async fn oidcc_registration_sector_bad_actix() {
        sector_bad("actix").await;
    }
}

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The issuer a deployment would have: https (the demo serves plain HTTP on loopback).
const HTTPS_ISSUER: &str = "https://op.example";

/// This binary's shared server of `framework`.
fn shared(framework: &str) -> &'static Server {
    Server::shared(framework, &[])
}

/// Registers a `client_secret_basic` client with `metadata` added: its id and secret.
async fn registered(base: &str, metadata: Value) -> (String, String) {
    let mut request = json!({"redirect_uris": [CALLBACK], "client_name": "oidf dynamic"});
    request
        .as_object_mut()
        .unwrap()
        .extend(metadata.as_object().unwrap().clone());
    let client = register(base, &request).await;
    (
        client["client_id"].as_str().unwrap().to_owned(),
        client["client_secret"].as_str().unwrap().to_owned(),
    )
}

/// A code for `client_id` at `redirect_uri` (its query kept), Alice signing in and approving.
async fn code_at(base: &str, client_id: &str, redirect_uri: &str) -> String {
    let mut params = code_request(client_id, "openid");
    params.retain(|(name, _)| *name != "redirect_uri");
    params.push(("redirect_uri", redirect_uri));
    let http = browser();
    let first = get(&http, &authorize_url(base, &params)).await;
    let answer = through_pages(&http, base, first, ALICE).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    let location = answer.location().expect("a Location");
    let separator = if redirect_uri.contains('?') { '&' } else { '?' };
    assert!(
        location.starts_with(&format!("{redirect_uri}{separator}")),
        "{location}"
    );
    let query: std::collections::HashMap<String, String> = url::Url::parse(location)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    assert_eq!(query["state"], "oidf-state", "{query:?}");
    query["code"].clone()
}

async fn discovery_verification(framework: &str) {
    let server = Server::shared(framework, &["--issuer", HTTPS_ISSUER]);
    let document = discovery(&server.base).await;
    assert_eq!(document["issuer"], HTTPS_ISSUER);
    // OIDC Discovery §3 for a Dynamic OP: these response types, as sets of words.
    let response_types: Vec<Vec<String>> = strings(&document["response_types_supported"])
        .iter()
        .map(|types| {
            let mut words: Vec<String> = types.split(' ').map(str::to_owned).collect();
            words.sort();
            words
        })
        .collect();
    for required in [vec!["code"], vec!["id_token"], vec!["id_token", "token"]] {
        assert!(
            response_types.contains(&required.iter().map(|w| (*w).to_owned()).collect()),
            "{required:?}"
        );
    }
    let subjects = strings(&document["subject_types_supported"]);
    assert!(
        subjects.iter().any(|s| s == "public" || s == "pairwise"),
        "{subjects:?}"
    );
    assert!(strings(&document["id_token_signing_alg_values_supported"]).contains(&"RS256".into()));
    if let Some(algorithms) = document.get("userinfo_signing_alg_values_supported") {
        assert!(algorithms.is_array(), "{document}");
    }
    if let Some(algorithms) = document.get("request_object_signing_alg_values_supported") {
        assert!(strings(algorithms).contains(&"RS256".into()), "{document}");
    }
    let grants = strings(&document["grant_types_supported"]);
    for grant in ["authorization_code", "implicit"] {
        assert!(grants.contains(&grant.to_owned()), "{grant}: {grants:?}");
    }
    let scopes = strings(&document["scopes_supported"]);
    assert!(scopes.contains(&"openid".to_owned()), "{scopes:?}");
    for scope in &scopes {
        // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
        assert!(
            !scope.is_empty()
                && scope
                    .chars()
                    .all(|c| matches!(c, '\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e')),
            "{scope:?}"
        );
    }
    assert!(document["claims_supported"].is_array(), "{document}");
    assert!(document["code_challenge_methods_supported"].is_array());
    for (member, value) in document.as_object().unwrap() {
        if member.ends_with("_endpoint") || member == "jwks_uri" {
            let url = url::Url::parse(value.as_str().unwrap()).expect(member);
            assert_eq!(url.scheme(), "https", "{member}: {value}");
        }
    }
    // The JWKS, fetched where the demo serves it: public signing keys with distinct ids.
    let jwks = get(
        &browser(),
        &format!("{}/.well-known/jwks.json", server.base),
    )
    .await;
    assert_eq!(jwks.status, 200);
    assert_content_type(&jwks, "application/json");
    let keys = jwks.json()["keys"].as_array().unwrap().clone();
    let mut kids: Vec<&str> = keys
        .iter()
        .map(|k| k["kid"].as_str().expect("a kid"))
        .collect();
    kids.sort_unstable();
    kids.dedup();
    assert_eq!(kids.len(), keys.len(), "distinct kids: {keys:?}");
    for key in &keys {
        assert!(key.get("d").is_none(), "no private part: {key}");
    }
    server.assert_alive_and_calm();
}

async fn idtoken_rs256(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let (id, secret) = registered(base, json!({"id_token_signed_response_alg": "RS256"})).await;
    let code = code_at(base, &id, CALLBACK).await;
    let tokens = redeem(base, (&id, &secret), &code).await;
    let (header, claims) = verified(base, tokens["id_token"].as_str().unwrap(), &id).await;
    assert_eq!(header["alg"], "RS256");
    assert!(header["kid"].is_string(), "{header}");
    assert_eq!(claims["nonce"], "oidf-nonce");
    server.assert_alive_and_calm();
}

async fn userinfo_rs256(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let algorithms = strings(&discovery(base).await["userinfo_signing_alg_values_supported"]);
    assert!(algorithms.contains(&"RS256".to_owned()), "{algorithms:?}");
    let (id, secret) = registered(base, json!({"userinfo_signed_response_alg": "RS256"})).await;
    let code = code_at(base, &id, CALLBACK).await;
    let tokens = redeem(base, (&id, &secret), &code).await;
    let reply = send(
        browser()
            .get(format!("{base}/api/oauth/userinfo"))
            .bearer_auth(access_token(&tokens)),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, "application/jwt");
    let (header, claims) = verified(base, &reply.body, &id).await;
    assert_eq!(header["alg"], "RS256");
    assert!(claims.get("nonce").is_none(), "{claims}");
    server.assert_alive_and_calm();
}

/// The authorization request of a registered client at `redirect_uri` (`None`: without one).
async fn refused_redirect(base: &str, client_id: &str, redirect_uri: Option<&str>) {
    let mut params = code_request(client_id, "openid");
    params.retain(|(name, _)| *name != "redirect_uri");
    params.extend(redirect_uri.map(|uri| ("redirect_uri", uri)));
    assert_error_page(&get(&browser(), &authorize_url(base, &params)).await);
}

const OTHER_CALLBACK: &str = "http://localhost:8081/callback";
const QUERY_CALLBACK: &str = "http://127.0.0.1:8081/callback?foo=bar";

async fn redirect_uri_missing(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let (id, _) = registered(base, json!({"redirect_uris": [CALLBACK, OTHER_CALLBACK]})).await;
    refused_redirect(base, &id, None).await;
    server.assert_alive_and_calm();
}

async fn redirect_uri_query_ok(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let (id, secret) = registered(base, json!({"redirect_uris": [QUERY_CALLBACK]})).await;
    let code = code_at(base, &id, QUERY_CALLBACK).await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", QUERY_CALLBACK),
    ];
    let tokens = assert_tokens(&token(base, Some((&id, &secret)), &pairs).await);
    verified(base, tokens["id_token"].as_str().unwrap(), &id).await;
    server.assert_alive_and_calm();
}

async fn redirect_uri_query_mismatch(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let (id, _) = registered(base, json!({"redirect_uris": [QUERY_CALLBACK]})).await;
    refused_redirect(base, &id, Some("http://127.0.0.1:8081/callback?foo=baz")).await;
    server.assert_alive_and_calm();
}

async fn redirect_uri_query_added(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let (id, _) = registered(base, json!({})).await;
    refused_redirect(base, &id, Some(QUERY_CALLBACK)).await;
    server.assert_alive_and_calm();
}

async fn redirect_uri_regfrag(framework: &str) {
    let server = shared(framework);
    let reply = send(
        browser()
            .post(format!("{}/api/oauth/register", server.base))
            .header("content-type", "application/json")
            .body(json!({"redirect_uris": [format!("{CALLBACK}#fragment")]}).to_string()),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_content_type(&reply, "application/json");
    let error = reply.json()["error"].as_str().unwrap().to_owned();
    assert!(
        ["invalid_redirect_uri", "invalid_client_metadata"].contains(&error.as_str()),
        "{error}"
    );
    server.assert_alive_and_calm();
}

/// A client assertion of `client` for `aud`, signed by `key` under `kid`, with a fresh `jti`.
fn assertion(key: &ProofKey, kid: &str, client: &str, aud: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({
        "iss": client, "sub": client, "aud": aud, "iat": now, "exp": now + 60,
        "jti": format!("oidf-jti-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
    });
    key.sign_with(&claims, |header| {
        header.typ = Some("JWT".to_owned());
        header.jwk = None;
        header.kid = Some(kid.to_owned());
    })
}

/// `key`'s public JWK under `kid`.
fn public_jwk(key: &ProofKey, kid: &str) -> Value {
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    jwk["kid"] = json!(kid);
    jwk
}

/// A token request of a `private_key_jwt` client: `pairs` and an assertion for `aud`.
async fn with_assertion(base: &str, pairs: &[(&str, &str)], signed: &str) -> Reply {
    let mut pairs = pairs.to_vec();
    pairs.extend([
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", signed),
    ]);
    token(base, None, &pairs).await
}

/// Registers a `private_key_jwt` client with `keys` added to `metadata`: its id.
async fn key_client(base: &str, metadata: Value) -> String {
    let mut request = json!({
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "private_key_jwt",
        "client_name": "oidf private_key_jwt",
    });
    request
        .as_object_mut()
        .unwrap()
        .extend(metadata.as_object().unwrap().clone());
    let client = register(base, &request).await;
    assert_eq!(client["token_endpoint_auth_method"], "private_key_jwt");
    client["client_id"].as_str().unwrap().to_owned()
}

/// The code flow of a `private_key_jwt` client whose assertion goes to `aud`: the tokens.
async fn key_flow(base: &str, client_id: &str, key: &ProofKey, kid: &str, aud: &str) -> Value {
    let code = code_at(base, client_id, CALLBACK).await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let tokens =
        assert_tokens(&with_assertion(base, &pairs, &assertion(key, kid, client_id, aud)).await);
    let (_, claims) = verified(base, tokens["id_token"].as_str().unwrap(), client_id).await;
    assert_eq!(claims["nonce"], "oidf-nonce");
    assert_eq!(
        userinfo(base, access_token(&tokens)).await["sub"],
        claims["sub"]
    );
    tokens
}

async fn server_test(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let key = ProofKey::rsa(Algorithm::RS256);
    let id = key_client(base, json!({"jwks": {"keys": [public_jwk(&key, "rs-1")]}})).await;
    key_flow(base, &id, &key, "rs-1", &format!("{base}/api/oauth/token")).await;
    server.assert_alive_and_calm();
}

async fn assertion_with_issuer_audience(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let key = ProofKey::es256(61);
    let id = key_client(base, json!({"jwks": {"keys": [public_jwk(&key, "es-1")]}})).await;
    key_flow(base, &id, &key, "es-1", base).await;
    server.assert_alive_and_calm();
}

/// Registration with a URI for the pages succeeds, and the flow runs through them.
async fn page_uri(framework: &str, member: &str) {
    let server = shared(framework);
    let base = &server.base;
    let (id, secret) = registered(base, json!({member: "https://rp.example/oidf"})).await;
    let code = code_at(base, &id, CALLBACK).await;
    redeem(base, (&id, &secret), &code).await;
    server.assert_alive_and_calm();
}

async fn logo_uri(framework: &str) {
    page_uri(framework, "logo_uri").await;
}

async fn policy_uri(framework: &str) {
    page_uri(framework, "policy_uri").await;
}

async fn tos_uri(framework: &str) {
    page_uri(framework, "tos_uri").await;
}

async fn jwks_uri(framework: &str) {
    let documents = DocumentServer::start(framework).await;
    let server = documents.demo(framework);
    let base = &server.base;
    let key = ProofKey::es256(62);
    let jwks = json!({"keys": [public_jwk(&key, "uri-1")]});
    documents.serve("/jwks.json", 200, &jwks.to_string());
    let id = key_client(base, json!({"jwks_uri": documents.url("/jwks.json")})).await;
    key_flow(base, &id, &key, "uri-1", &format!("{base}/api/oauth/token")).await;
    assert!(documents.requests("/jwks.json") >= 1);
    server.assert_alive_and_calm();
}

async fn rp_key_rotation(framework: &str) {
    let documents = DocumentServer::start(framework).await;
    let server = documents.demo(framework);
    let base = &server.base;
    let old = ProofKey::es256(63);
    documents.serve(
        "/jwks.json",
        200,
        &json!({"keys": [public_jwk(&old, "old")]}).to_string(),
    );
    let id = key_client(base, json!({"jwks_uri": documents.url("/jwks.json")})).await;
    let endpoint = format!("{base}/api/oauth/token");
    let tokens = key_flow(base, &id, &old, "old", &endpoint).await;
    let refresh = tokens["refresh_token"].as_str().expect("a refresh token");
    // The client rotates: a new key under a new kid replaces the old one at its jwks_uri. The
    // suite waits 60 s; the server fetches a set again for an unknown kid once 10 s have
    // passed since its last fetch (a flood of unknown kids costs one fetch per 10 s).
    tokio::time::sleep(std::time::Duration::from_secs(11)).await;
    let new = ProofKey::es256(64);
    documents.serve(
        "/jwks.json",
        200,
        &json!({"keys": [public_jwk(&new, "new")]}).to_string(),
    );
    let pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let reply = with_assertion(base, &pairs, &assertion(&new, "new", &id, &endpoint)).await;
    let refreshed = assert_tokens(&reply);
    verified(base, refreshed["id_token"].as_str().unwrap(), &id).await;
    server.assert_alive_and_calm();
}

/// Registers a pairwise client whose sector document lists `listed`: the reply.
async fn sector_registration(documents: &DocumentServer, base: &str, listed: &[&str]) -> Reply {
    documents.serve("/sector.json", 200, &json!(listed).to_string());
    send(
        browser()
            .post(format!("{base}/api/oauth/register"))
            .header("content-type", "application/json")
            .body(
                json!({
                    "redirect_uris": [CALLBACK],
                    "subject_type": "pairwise",
                    "sector_identifier_uri": documents.url("/sector.json"),
                })
                .to_string(),
            ),
    )
    .await
}

async fn sector_uri(framework: &str) {
    let documents = DocumentServer::start(framework).await;
    let server = documents.demo(framework);
    assert!(
        strings(&discovery(&server.base).await["subject_types_supported"])
            .contains(&"pairwise".to_owned())
    );
    let reply = sector_registration(&documents, &server.base, &[CALLBACK, OTHER_CALLBACK]).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.json()["subject_type"], "pairwise");
    server.assert_alive_and_calm();
}

async fn sector_bad(framework: &str) {
    let documents = DocumentServer::start(framework).await;
    let server = documents.demo(framework);
    assert!(
        strings(&discovery(&server.base).await["subject_types_supported"])
            .contains(&"pairwise".to_owned())
    );
    let reply = sector_registration(&documents, &server.base, &[OTHER_CALLBACK]).await;
    assert_oauth_error(&reply, 400, "invalid_client_metadata");
    server.assert_alive_and_calm();
}
