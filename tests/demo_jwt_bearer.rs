//! The JWT-bearer grant (RFC 7523 §2.1) on the demo servers over real HTTP, against
//! `axum_server` and `actix_server`: the test plays an enterprise's identity provider, its key
//! set served over https (`--trust-issuer ISSUER=JWKS_URL`, `--fetch-ca-file`), and signs the
//! assertions itself, so that every rule can be broken: an ID-JAG for another client, one
//! expired, one too long-lived, one with an unknown key, one from an untrusted issuer, and a
//! replay are each `invalid_grant`; a good one is a token for Alice, once.

mod demo;
#[path = "demo/documents.rs"]
mod documents;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use demo::http::*;
use documents::DocumentServer;
use keys::ProofKey;
use serde_json::{Value, json};

each_framework! {
    every_rule_of_an_identity_assertion_is_refused_over_http => rules;
}

const SERVICE: (&str, &str) = ("service-client", "service-secret");
const GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A good ID-JAG's claims: from `issuer`, about Alice, for `service-client` at `base`'s API.
fn claims(issuer: &str, base: &str) -> Value {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    json!({
        "iss": issuer, "sub": "alice-at-the-enterprise", "email": ALICE.0, "aud": base,
        "client_id": SERVICE.0, "resource": format!("{base}/api"), "scope": "profile",
        "iat": now(), "exp": now() + 120,
        "jti": format!("demo-jag-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
    })
}

fn signed(key: &ProofKey, kid: &str, claims: &Value) -> String {
    key.sign_with(claims, |header| {
        header.typ = Some("oauth-id-jag+jwt".to_owned());
        header.jwk = None;
        header.kid = Some(kid.to_owned());
    })
}

/// A rule an assertion breaks, and how.
type Broken = (&'static str, fn(&mut Value));

async fn present(base: &str, assertion: &str) -> Reply {
    let pairs = [("grant_type", GRANT), ("assertion", assertion)];
    token(base, Some(SERVICE), &pairs).await
}

async fn rules(framework: &str) {
    let idp = DocumentServer::start(framework).await;
    let key = ProofKey::es256(71);
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    jwk["kid"] = json!("enterprise-1");
    idp.serve("/jwks.json", 200, &json!({ "keys": [jwk] }).to_string());
    let issuer = idp.url("");
    let trusted = format!("{issuer}={}", idp.url("/jwks.json"));
    let server = idp.demo_with(
        framework,
        &["--fetch-allow-loopback", "1", "--trust-issuer", &trusted],
    );
    let base = &server.base;

    let good = signed(&key, "enterprise-1", &claims(&issuer, base));
    let reply = present(base, &good).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let tokens = reply.json();
    assert_eq!(tokens["scope"], "profile");
    let me_there = me(base, tokens["access_token"].as_str()).await;
    assert_eq!(me_there.json()["email"], ALICE.0);
    assert_oauth_error(&present(base, &good).await, 400, "invalid_grant");

    let broken: [Broken; 5] = [
        ("issued for another client", |c| {
            c["client_id"] = json!("demo-client")
        }),
        ("expired", |c| c["exp"] = json!(now() - 120)),
        ("lives longer than five minutes", |c| {
            c["exp"] = json!(now() + 3_600)
        }),
        ("aimed at another server", |c| {
            c["aud"] = json!("https://elsewhere.example")
        }),
        ("from an untrusted issuer", |c| {
            c["iss"] = json!("https://stranger.example")
        }),
    ];
    for (why, edit) in broken {
        let mut claims = claims(&issuer, base);
        edit(&mut claims);
        let reply = present(base, &signed(&key, "enterprise-1", &claims)).await;
        assert_eq!(reply.status, 400, "{why}: {}", reply.body);
        assert_eq!(reply.json()["error"], "invalid_grant", "{why}");
    }
    // A key the issuer does not publish (its set is fetched again, once).
    let stranger = ProofKey::es256(72);
    let unknown = signed(&stranger, "enterprise-2", &claims(&issuer, base));
    assert_oauth_error(&present(base, &unknown).await, 400, "invalid_grant");
    // A resource the server does not serve.
    let mut elsewhere = claims(&issuer, base);
    elsewhere["resource"] = json!("https://mcp.example/");
    let reply = present(base, &signed(&key, "enterprise-1", &elsewhere)).await;
    assert_oauth_error(&reply, 400, "invalid_target");
    server.assert_alive_and_calm();
}
