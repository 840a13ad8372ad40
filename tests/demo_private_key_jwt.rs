//! `private_key_jwt` client authentication (RFC 7523 §2.2) on the demo servers over real HTTP,
//! against `axum_server` and `actix_server`: a client registers itself with its public keys
//! (RFC 7591 `jwks`), signs Alice in, and authenticates with a signed assertion at every
//! endpoint that authenticates clients: PAR, token, introspection and revocation.

mod demo;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use demo::Server;
use demo::http::*;
use keys::ProofKey;
use serde_json::json;

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

each_framework! {
    a_self_registered_key_client_authenticates_with_assertions_at_every_endpoint => key_client;
}

/// An assertion of `client` for `aud`, signed by `key`, with a fresh `jti`.
fn assertion(key: &ProofKey, client: &str, aud: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({
        "iss": client, "sub": client, "aud": aud, "iat": now, "exp": now + 60,
        "jti": format!("demo-jti-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
    });
    key.sign_with(&claims, |header| {
        header.typ = Some("JWT".to_owned());
        header.jwk = None;
        header.kid = Some("k1".to_owned());
    })
}

async fn key_client(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = metadata_document(base).await;
    let methods = strings(&metadata["token_endpoint_auth_methods_supported"]);
    assert!(
        methods.iter().any(|m| m == "private_key_jwt"),
        "{methods:?}"
    );

    let key = ProofKey::es256(42);
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    jwk["kid"] = json!("k1");
    let registration = json!({
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": [jwk]},
        "scope": "profile",
    });
    let client = register(base, &registration).await;
    assert_eq!(client["token_endpoint_auth_method"], "private_key_jwt");
    assert!(client.get("client_secret").is_none(), "no secret: {client}");
    let id = client["client_id"].as_str().unwrap().to_owned();
    let http = browser();
    let signed = |aud: &str| assertion(&key, &id, aud);

    // PAR, authenticated by assertion, then the sign-in and approval pages by reference.
    let par = post_form(
        &http,
        &format!("{base}/api/oauth/par"),
        None,
        &[
            ("client_assertion_type", ASSERTION_TYPE),
            (
                "client_assertion",
                &signed(&format!("{base}/api/oauth/par")),
            ),
            ("response_type", "code"),
            ("redirect_uri", CALLBACK),
            ("state", "key-state"),
        ],
    )
    .await;
    assert_eq!(par.status, 201, "{}", par.body);
    let request_uri = par.json()["request_uri"].as_str().unwrap().to_owned();
    let params = [("client_id", id.as_str()), ("request_uri", &request_uri)];
    let approval = sign_in_via_authorize(&http, base, &params, ALICE).await;
    let query = callback_query(&decide(&http, base, &approval, "approve").await);
    assert_eq!(query["state"], "key-state");

    // The token endpoint: the issuer as the audience.
    let assertion_for_token = signed(base);
    let exchange = [
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion_for_token.as_str()),
        ("grant_type", "authorization_code"),
        ("code", query["code"].as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let tokens = assert_tokens(&token(base, None, &exchange).await);
    let access = access_token(&tokens).to_owned();
    // The same assertion again: replayed.
    let again = token(
        base,
        None,
        &[
            ("client_assertion_type", ASSERTION_TYPE),
            ("client_assertion", assertion_for_token.as_str()),
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ],
    )
    .await;
    assert_oauth_error(&again, 401, "invalid_client");
    // Another key, and no authentication at all.
    let stranger = assertion(&ProofKey::es256(43), &id, base);
    let forged = token(
        base,
        None,
        &[
            ("client_assertion_type", ASSERTION_TYPE),
            ("client_assertion", stranger.as_str()),
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ],
    )
    .await;
    assert_oauth_error(&forged, 401, "invalid_client");
    let anonymous = token(
        base,
        None,
        &[
            ("client_id", id.as_str()),
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ],
    )
    .await;
    assert_oauth_error(&anonymous, 401, "invalid_client");

    // Introspection and revocation, each with its own URL as the audience.
    let introspection = post_form(
        &http,
        &format!("{base}/api/oauth/introspect"),
        None,
        &[
            ("client_assertion_type", ASSERTION_TYPE),
            (
                "client_assertion",
                &signed(&format!("{base}/api/oauth/introspect")),
            ),
            ("token", &access),
        ],
    )
    .await;
    assert_eq!(introspection.status, 200, "{}", introspection.body);
    let introspected = introspection.json();
    assert_eq!(introspected["active"], true, "{introspected}");
    assert_eq!(introspected["client_id"], id.as_str());
    let revocation = post_form(
        &http,
        &format!("{base}/api/oauth/revoke"),
        None,
        &[
            ("client_assertion_type", ASSERTION_TYPE),
            (
                "client_assertion",
                &signed(&format!("{base}/api/oauth/revoke")),
            ),
            ("token", &access),
        ],
    )
    .await;
    assert_eq!(revocation.status, 200, "{}", revocation.body);
    assert_eq!(me(base, Some(&access)).await.status, 401);
}
