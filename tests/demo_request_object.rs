//! Request objects (RFC 9101, OIDC Core §6.1) on the demo servers over real HTTP, against
//! `axum_server` and `actix_server`: a client registers itself with its public keys (RFC 7591
//! `jwks`) and `request_object_signing_alg`, and Alice signs in through an authorization
//! request whose parameters are in a request object the client signed.

mod demo;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use std::time::{SystemTime, UNIX_EPOCH};

use demo::Server;
use demo::http::*;
use keys::{ProofKey, unsigned};
use serde_json::{Value, json};

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

each_framework! {
    a_signed_request_object_completes_a_code_flow => signed_object;
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `claims` signed by `key` as the client's key `k1`.
fn sign(key: &ProofKey, typ: &str, claims: &Value) -> String {
    key.sign_with(claims, |header| {
        header.typ = Some(typ.to_owned());
        header.jwk = None;
        header.kid = Some("k1".to_owned());
    })
}

async fn signed_object(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let discovery = get(
        &browser(),
        &format!("{base}/.well-known/openid-configuration"),
    )
    .await
    .json();
    assert_eq!(discovery["request_parameter_supported"], true);
    assert_eq!(discovery["request_uri_parameter_supported"], false);
    let metadata = metadata_document(base).await;
    assert_eq!(
        metadata["request_object_signing_alg_values_supported"],
        json!(["RS256", "PS256", "ES256", "EdDSA"])
    );

    let key = ProofKey::es256(42);
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    jwk["kid"] = json!("k1");
    let registration = json!({
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": [jwk]},
        "request_object_signing_alg": "ES256",
        "scope": "openid profile",
    });
    let client = register(base, &registration).await;
    assert_eq!(client["request_object_signing_alg"], "ES256");
    let id = client["client_id"].as_str().unwrap().to_owned();
    let object = |claims: Value| {
        let mut base_claims = json!({
            "iss": id, "aud": base, "iat": now(), "exp": now() + 300,
            "client_id": id, "response_type": "code", "redirect_uri": CALLBACK,
            "scope": "openid profile", "state": "signed-state", "nonce": "signed-nonce",
        });
        for (name, value) in claims.as_object().unwrap() {
            base_claims[name] = value.clone();
        }
        base_claims
    };
    let http = browser();

    // An unsigned object is refused at the redirect URI sent beside it.
    let none = unsigned(&json!({"alg": "none"}), &object(json!({})));
    let beside = [
        ("client_id", id.as_str()),
        ("response_type", "code"),
        ("redirect_uri", CALLBACK),
        ("state", "outside"),
    ];
    let with = |request: &str| {
        let mut params = beside.to_vec();
        params.push(("request", request));
        authorize_url(base, &params)
    };
    let refused = callback_query(&get(&http, &with(&none)).await);
    assert_eq!(refused["error"], "invalid_request_object", "{refused:?}");
    assert_eq!(refused["state"], "outside");
    // So is one for another audience, which its signature does not save.
    let elsewhere = sign(
        &key,
        "oauth-authz-req+jwt",
        &object(json!({"aud": "https://else.example"})),
    );
    let refused = callback_query(&get(&http, &with(&elsewhere)).await);
    assert_eq!(refused["error"], "invalid_request_object", "{refused:?}");

    // A signed object: its state and nonce, not the ones beside it, come back.
    let signed = sign(
        &key,
        "oauth-authz-req+jwt",
        &object(json!({"jti": "demo-object-1"})),
    );
    let params = [
        ("client_id", id.as_str()),
        ("response_type", "code"),
        ("scope", "openid"),
        ("state", "outside"),
        ("request", signed.as_str()),
    ];
    let approval = sign_in_via_authorize(&http, base, &params, ALICE).await;
    let query = callback_query(&decide(&http, base, &approval, "approve").await);
    assert_eq!(query["state"], "signed-state");
    let assertion = sign(
        &key,
        "JWT",
        &json!({"iss": id, "sub": id, "aud": base, "iat": now(), "exp": now() + 60,
                "jti": "demo-assertion-1"}),
    );
    let tokens = assert_tokens(
        &token(
            base,
            None,
            &[
                ("client_assertion_type", ASSERTION_TYPE),
                ("client_assertion", assertion.as_str()),
                ("grant_type", "authorization_code"),
                ("code", query["code"].as_str()),
                ("redirect_uri", CALLBACK),
            ],
        )
        .await,
    );
    let id_token = tokens["id_token"].as_str().expect("an ID token");
    let payload = id_token.split('.').nth(1).unwrap();
    let claims: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["nonce"], "signed-nonce");

    // The same object again: its jti is spent.
    let replayed = callback_query(&get(&http, &with(&signed)).await);
    assert_eq!(replayed["error"], "invalid_request_object", "{replayed:?}");
    assert_eq!(replayed["state"], "signed-state");
    server.assert_alive_and_calm();
}
