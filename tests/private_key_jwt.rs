//! `private_key_jwt` client authentication (RFC 7523 §2.2, RFC 7521 §4.2) through the public
//! API: one test per rule, at the token, revocation and introspection endpoints.

mod common;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use grantor::client_assertion::{ASSERTION_TYPE, ClientKeyResolver, MAX_ASSERTION_BYTES};
use grantor::store::StoreError;
use grantor::{client::*, settings::*};
use http::Response;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use keys::{ProofKey, unsigned};
use proptest::prelude::*;
use serde_json::{Value, json};

const CLIENT: &str = "jwt-client";
const OTHER: &str = "other-jwt-client";
const TOKEN_URL: &str = "http://127.0.0.1:8080/api/oauth/token";

/// The client's keys: one per algorithm, each with a `kid`.
fn client_keys() -> Vec<(&'static str, ProofKey)> {
    vec![
        ("es", ProofKey::es256(1)),
        ("ed", ProofKey::eddsa(2)),
        ("rs", ProofKey::rsa(Algorithm::RS256)),
        ("ps", ProofKey::rsa(Algorithm::PS256)),
    ]
}

fn jwks(keys: &[(&str, ProofKey)]) -> String {
    let keys: Vec<Value> = keys
        .iter()
        .map(|(kid, key)| {
            let mut jwk = serde_json::to_value(&key.jwk).unwrap();
            jwk["kid"] = json!(kid);
            jwk
        })
        .collect();
    json!({ "keys": keys }).to_string()
}

fn keyed_client(id: &str, keys: &[(&str, ProofKey)]) -> Client {
    Client::private_key_jwt(id, ClientKeys::jwks(&jwks(keys)).unwrap())
        .grant_types([GrantType::ClientCredentials])
        .scopes("profile")
        .build()
        .unwrap()
}

fn setup() -> Fixture {
    let f = fixture();
    f.register(keyed_client(CLIENT, &client_keys()));
    f.register(keyed_client(OTHER, &[("other", ProofKey::es256(7))]));
    f
}

fn now() -> u64 {
    START
}

/// Claims a good assertion of `client` carries, with a fresh `jti`.
fn claims(client: &str, aud: &str) -> Value {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let jti = format!("jti-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    json!({"iss": client, "sub": client, "aud": aud, "exp": now() + 60, "iat": now(), "jti": jti})
}

/// `claims` signed by `key` with `kid`, as a client signs an assertion (`typ: JWT`).
fn sign(key: &ProofKey, kid: Option<&str>, claims: &Value) -> String {
    key.sign_with(claims, |header| {
        header.typ = Some("JWT".to_owned());
        header.jwk = None;
        header.kid = kid.map(str::to_owned);
    })
}

fn es256() -> ProofKey {
    ProofKey::es256(1)
}

fn good() -> String {
    sign(&es256(), Some("es"), &claims(CLIENT, TOKEN_URL))
}

fn form(assertion: &str, extra: &str) -> String {
    format!("client_assertion_type={ASSERTION_TYPE}&client_assertion={assertion}{extra}")
}

async fn token_with(f: &Fixture, assertion: &str) -> Response<String> {
    f.token(None, &form(assertion, "&grant_type=client_credentials"))
        .await
}

/// Refused with `invalid_client` 401 and `description`; the assertion is never echoed.
async fn assert_refused(f: &Fixture, assertion: &str, description: &str) {
    let response = token_with(f, assertion).await;
    assert_error(&response, 401, "invalid_client");
    assert_eq!(json(&response)["error_description"], description);
    assert!(!response.body().contains(assertion));
}

#[tokio::test]
async fn a_good_assertion_authenticates_at_the_token_endpoint_with_every_algorithm() {
    let f = setup();
    for (kid, key) in client_keys() {
        for named in [Some(kid), None] {
            let response = token_with(&f, &sign(&key, named, &claims(CLIENT, TOKEN_URL))).await;
            let body = assert_tokens(&response);
            assert_scope(&body, "profile");
        }
    }
}

#[tokio::test]
async fn a_good_assertion_authenticates_at_revocation_and_introspection() {
    let f = setup();
    let tokens = assert_tokens(&token_with(&f, &good()).await);
    let access = tokens["access_token"].as_str().unwrap();
    for aud in [
        ISSUER,
        TOKEN_URL,
        "http://127.0.0.1:8080/api/oauth/introspect",
    ] {
        let assertion = sign(&es256(), Some("es"), &claims(CLIENT, aud));
        let response = f
            .introspect(None, &form(&assertion, &format!("&token={access}")))
            .await;
        assert_eq!(response.status(), 200, "{}", response.body());
        assert_eq!(json(&response)["active"], true, "aud {aud}");
    }
    let assertion = sign(
        &es256(),
        Some("es"),
        &claims(CLIENT, "http://127.0.0.1:8080/api/oauth/revoke"),
    );
    let response = f
        .revoke(None, &form(&assertion, &format!("&token={access}")))
        .await;
    assert_eq!(response.status(), 200, "{}", response.body());
    assert!(!f.access_is_active(access).await, "revoked");
    // The revocation endpoint's URL is no audience at the introspection endpoint.
    let assertion = sign(
        &es256(),
        Some("es"),
        &claims(CLIENT, "http://127.0.0.1:8080/api/oauth/revoke"),
    );
    let response = f.introspect(None, &form(&assertion, "&token=x")).await;
    assert_error(&response, 401, "invalid_client");
}

#[tokio::test]
async fn a_replayed_assertion_is_refused() {
    let f = setup();
    let assertion = good();
    assert_tokens(&token_with(&f, &assertion).await);
    assert_refused(&f, &assertion, "the client assertion was used before").await;
    let response = f.revoke(None, &form(&assertion, "&token=x")).await;
    assert_error(&response, 401, "invalid_client");
}

#[tokio::test]
async fn an_unregistered_or_foreign_key_is_refused() {
    let f = setup();
    let bad = "the client assertion is not signed by a key of this client";
    let stranger = ProofKey::es256(9);
    assert_refused(&f, &sign(&stranger, None, &claims(CLIENT, TOKEN_URL)), bad).await;
    assert_refused(
        &f,
        &sign(&stranger, Some("es"), &claims(CLIENT, TOKEN_URL)),
        bad,
    )
    .await;
    // Another client's registered key, under its own kid or the client's.
    let foreign = ProofKey::es256(7);
    for kid in [Some("other"), Some("es"), None] {
        assert_refused(&f, &sign(&foreign, kid, &claims(CLIENT, TOKEN_URL)), bad).await;
    }
    // The other client's own assertion still works.
    assert_tokens(&token_with(&f, &sign(&foreign, None, &claims(OTHER, TOKEN_URL))).await);
}

#[tokio::test]
async fn none_and_hmac_algorithms_are_refused() {
    let f = setup();
    let unsupported =
        "the client assertion's alg is not an asymmetric algorithm this server verifies";
    let none = unsigned(
        &json!({"alg": "none", "kid": "es"}),
        &claims(CLIENT, TOKEN_URL),
    );
    assert_refused(&f, &none, unsupported).await;
    let hmac = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims(CLIENT, TOKEN_URL),
        &EncodingKey::from_secret(b"a shared secret"),
    )
    .unwrap();
    assert_refused(&f, &hmac, unsupported).await;
}

#[tokio::test]
async fn expired_or_too_long_lived_assertions_are_refused() {
    let f = setup();
    let mut expired = claims(CLIENT, TOKEN_URL);
    expired["exp"] = json!(now() - 31);
    assert_refused(
        &f,
        &sign(&es256(), None, &expired),
        "the client assertion has expired",
    )
    .await;
    let mut far = claims(CLIENT, TOKEN_URL);
    far["exp"] = json!(now() + 3600);
    let too_long = "the client assertion's exp is too far in the future";
    assert_refused(&f, &sign(&es256(), None, &far), too_long).await;
    let mut no_exp = claims(CLIENT, TOKEN_URL);
    no_exp.as_object_mut().unwrap().remove("exp");
    assert_refused(
        &f,
        &sign(&es256(), None, &no_exp),
        "the client assertion has no exp",
    )
    .await;
    // Within the clock skew, and past it once the server's clock moves.
    let mut just = claims(CLIENT, TOKEN_URL);
    just["exp"] = json!(now() - 5);
    assert_tokens(&token_with(&f, &sign(&es256(), None, &just)).await);
    let assertion = good();
    f.clock.advance(std::time::Duration::from_secs(120));
    assert_refused(&f, &assertion, "the client assertion has expired").await;
}

#[tokio::test]
async fn an_assertion_from_the_future_is_refused() {
    let f = setup();
    for claim in ["nbf", "iat"] {
        let mut early = claims(CLIENT, TOKEN_URL);
        early[claim] = json!(now() + 120);
        assert_refused(
            &f,
            &sign(&es256(), None, &early),
            "the client assertion is not valid yet",
        )
        .await;
    }
}

#[tokio::test]
async fn a_wrong_audience_is_refused() {
    let f = setup();
    let wrong = "the client assertion's aud does not name this server";
    for aud in [
        json!("https://other.example"),
        json!([]),
        json!(["https://a.example"]),
        json!(1),
    ] {
        let mut claims = claims(CLIENT, TOKEN_URL);
        claims["aud"] = aud;
        assert_refused(&f, &sign(&es256(), None, &claims), wrong).await;
    }
    let mut listed = claims(CLIENT, TOKEN_URL);
    listed["aud"] = json!(["https://other.example", ISSUER]);
    assert_tokens(&token_with(&f, &sign(&es256(), None, &listed)).await);
}

#[tokio::test]
async fn iss_must_equal_sub_and_the_client_id() {
    let f = setup();
    let mut claims = claims(CLIENT, TOKEN_URL);
    claims["iss"] = json!(OTHER);
    let refused = "the client assertion's iss and sub must both be the client id";
    assert_refused(&f, &sign(&es256(), None, &claims), refused).await;
    claims.as_object_mut().unwrap().remove("iss");
    assert_refused(&f, &sign(&es256(), None, &claims), refused).await;
}

#[tokio::test]
async fn a_missing_or_huge_jti_is_refused() {
    let f = setup();
    let refused = "the client assertion needs a jti of at most 256 bytes";
    for jti in [
        None,
        Some(json!("")),
        Some(json!("j".repeat(257))),
        Some(json!(5)),
    ] {
        let mut claims = claims(CLIENT, TOKEN_URL);
        match jti {
            Some(jti) => claims["jti"] = jti,
            None => drop(claims.as_object_mut().unwrap().remove("jti")),
        }
        let response = token_with(&f, &sign(&es256(), None, &claims)).await;
        assert_error(&response, 401, "invalid_client");
        let description = json(&response)["error_description"].clone();
        assert!(
            description == refused
                || description == "the client assertion is not a well-formed JWT",
            "{description}"
        );
    }
}

#[tokio::test]
async fn a_client_id_in_the_body_must_be_the_assertions_sub() {
    let f = setup();
    let body = form(
        &good(),
        &format!("&grant_type=client_credentials&client_id={OTHER}"),
    );
    assert_error(&f.token(None, &body).await, 401, "invalid_client");
    let body = form(
        &good(),
        &format!("&grant_type=client_credentials&client_id={CLIENT}"),
    );
    assert_tokens(&f.token(None, &body).await);
}

#[tokio::test]
async fn two_authentication_methods_at_once_are_invalid_request() {
    let f = setup();
    let basic = f.fast_basic();
    let body = form(&good(), "&grant_type=client_credentials");
    assert_error(&f.token(Some(&basic), &body).await, 400, "invalid_request");
    let half = format!("client_assertion={}&grant_type=client_credentials", good());
    assert_error(&f.token(None, &half).await, 400, "invalid_request");
    let wrong_type = "client_assertion_type=urn:other&client_assertion=x.y.z";
    assert_error(&f.token(None, wrong_type).await, 401, "invalid_client");
}

#[tokio::test]
async fn a_keyed_client_cannot_use_basic_or_client_id_alone() {
    let f = setup();
    let empty = f
        .token(Some(&basic(CLIENT, "")), "grant_type=client_credentials")
        .await;
    assert_error(&empty, 401, "invalid_client");
    let alone = f
        .token(
            None,
            &format!("grant_type=client_credentials&client_id={CLIENT}"),
        )
        .await;
    assert_error(&alone, 401, "invalid_client");
    // And a client with a secret cannot use an assertion.
    let fast = f.fast_id.clone();
    let assertion = sign(&es256(), None, &claims(&fast, TOKEN_URL));
    let refused = "this client does not authenticate with a client assertion";
    assert_refused(&f, &assertion, refused).await;
}

#[tokio::test]
async fn the_metadata_lists_private_key_jwt_and_its_algorithms() {
    let f = fixture();
    let metadata = json(&f.server.metadata());
    let algs = json!(["ES256", "EdDSA", "RS256", "PS256"]);
    for endpoint in [
        "token_endpoint",
        "revocation_endpoint",
        "introspection_endpoint",
    ] {
        let methods = metadata[format!("{endpoint}_auth_methods_supported")].clone();
        assert!(
            methods
                .as_array()
                .unwrap()
                .contains(&json!("private_key_jwt")),
            "{endpoint}"
        );
        assert_eq!(
            metadata[format!("{endpoint}_auth_signing_alg_values_supported")],
            algs
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Registration (RFC 7591 §2): `jwks`, and `jwks_uri` through the host's resolver.

struct Resolver(String);

#[async_trait::async_trait]
impl ClientKeyResolver for Resolver {
    async fn resolve(&self, _client: &ClientId, uri: &str) -> Result<String, StoreError> {
        assert_eq!(uri, "https://app.example/jwks.json");
        Ok(self.0.clone())
    }
}

async fn register(f: &Fixture, metadata: Value) -> Response<String> {
    let request = http::Request::post("/api/oauth/register")
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .unwrap();
    f.server.register(&request).await
}

fn keyed_metadata(keys: Value) -> Value {
    let mut metadata = json!({
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "private_key_jwt",
    });
    for (name, value) in keys.as_object().unwrap() {
        metadata[name] = value.clone();
    }
    metadata
}

#[tokio::test]
async fn a_client_registers_its_jwks_and_authenticates_with_it() {
    let f = fixture_with(|b| b.registration(RegistrationPolicy::new()));
    let set: Value = serde_json::from_str(&jwks(&[("es", es256())])).unwrap();
    let response = register(&f, keyed_metadata(json!({ "jwks": set }))).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let client = json(&response);
    assert_eq!(client["token_endpoint_auth_method"], "private_key_jwt");
    assert_eq!(client["jwks"], set);
    assert!(client.get("client_secret").is_none());
    let id = client["client_id"].as_str().unwrap();
    let assertion = sign(&es256(), None, &claims(id, ISSUER));
    let response = f.introspect(None, &form(&assertion, "&token=x")).await;
    assert_eq!(response.status(), 200, "{}", response.body());
}

#[tokio::test]
async fn jwks_uri_needs_a_resolver_and_works_with_one() {
    let metadata = keyed_metadata(json!({"jwks_uri": "https://app.example/jwks.json"}));
    let f = fixture_with(|b| b.registration(RegistrationPolicy::new()));
    assert_error(
        &register(&f, metadata.clone()).await,
        400,
        "invalid_client_metadata",
    );
    let resolver = Arc::new(Resolver(jwks(&[("es", es256())])));
    let f = fixture_with(|b| {
        b.registration(RegistrationPolicy::new())
            .client_key_resolver(resolver)
    });
    let response = register(&f, metadata).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let client = json(&response);
    assert_eq!(client["jwks_uri"], "https://app.example/jwks.json");
    let id = client["client_id"].as_str().unwrap();
    let assertion = sign(&es256(), Some("es"), &claims(id, ISSUER));
    let response = f.revoke(None, &form(&assertion, "&token=x")).await;
    assert_eq!(response.status(), 200, "{}", response.body());
}

#[tokio::test]
async fn bad_keys_at_registration_are_invalid_client_metadata() {
    let f = fixture_with(|b| b.registration(RegistrationPolicy::new()));
    let set: Value = serde_json::from_str(&jwks(&[("es", es256())])).unwrap();
    for keys in [
        json!({}),
        json!({"jwks": {"keys": []}}),
        json!({"jwks": "not an object"}),
        json!({"jwks": {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}}),
        json!({"jwks_uri": "http://app.example/jwks.json"}),
        json!({"jwks": set, "jwks_uri": "https://app.example/jwks.json"}),
    ] {
        let response = register(&f, keyed_metadata(keys.clone())).await;
        assert_error(&response, 400, "invalid_client_metadata");
    }
    let secret_with_keys = json!({"redirect_uris": [REDIRECT], "jwks": set});
    assert_error(
        &register(&f, secret_with_keys).await,
        400,
        "invalid_client_metadata",
    );
}

// ---------------------------------------------------------------------------------------------
// Garbage never panics, never reaches a 5xx, never authenticates.

fn garbage() -> impl Strategy<Value = String> {
    let part = "[A-Za-z0-9_=+/-]{0,60}";
    prop_oneof![
        ".{0,200}",
        (part, part, part).prop_map(|(a, b, c)| format!("{a}.{b}.{c}")),
        (any::<Vec<u8>>(), any::<Vec<u8>>()).prop_map(|(header, claims)| {
            use base64::Engine as _;
            let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
            format!("{}.{}.{}", b64(&header), b64(&claims), b64(b"sig"))
        }),
        (0usize..4).prop_map(|kind| {
            let claims = claims(CLIENT, TOKEN_URL);
            let header = [
                json!({"alg": "ES256"}),
                json!({"alg": "EdDSA", "kid": 1}),
                json!({"alg": "RS256", "kid": "rs"}),
                json!({"alg": "none"}),
            ][kind]
                .clone();
            unsigned(&header, &claims)
        }),
        Just("a".repeat(MAX_ASSERTION_BYTES + 1)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn garbage_assertions_never_panic_and_never_authenticate(assertion in garbage()) {
        let f = setup();
        let encoded: String = url::form_urlencoded::byte_serialize(assertion.as_bytes()).collect();
        let body = form(&encoded, "&grant_type=client_credentials");
        let response = at_once(f.token(None, &body));
        prop_assert!(matches!(response.status().as_u16(), 400 | 401), "{}", response.body());
    }
}

#[tokio::test]
async fn a_good_assertion_authenticates_at_the_par_and_device_authorization_endpoints() {
    let f = fixture_with(|b| {
        b.pushed_requests(grantor::settings::PushedRequests::new())
            .device_flow(grantor::settings::DeviceFlow::new())
    });
    f.register(
        Client::private_key_jwt(CLIENT, ClientKeys::jwks(&jwks(&client_keys())).unwrap())
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode, GrantType::DeviceCode])
            .scopes("profile")
            .build()
            .unwrap(),
    );
    let par = "http://127.0.0.1:8080/api/oauth/par";
    let device = "http://127.0.0.1:8080/api/oauth/device_authorization";
    for aud in [ISSUER, TOKEN_URL, par] {
        let assertion = sign(&es256(), Some("es"), &claims(CLIENT, aud));
        let body = form(
            &assertion,
            &format!("&response_type=code&redirect_uri={REDIRECT_ENCODED}"),
        );
        let response = f.server.par(&post("/api/oauth/par", None, &body)).await;
        assert_eq!(response.status(), 201, "aud {aud}: {}", response.body());
    }
    for aud in [ISSUER, TOKEN_URL, device] {
        let assertion = sign(&es256(), Some("es"), &claims(CLIENT, aud));
        let body = form(&assertion, "&scope=profile");
        let response = f
            .server
            .device_authorization(&post("/api/oauth/device_authorization", None, &body))
            .await;
        assert_eq!(response.status(), 200, "aud {aud}: {}", response.body());
    }
    // One endpoint's URL is no audience at another, and an assertion serves once.
    let assertion = sign(&es256(), Some("es"), &claims(CLIENT, device));
    let body = form(
        &assertion,
        &format!("&response_type=code&redirect_uri={REDIRECT_ENCODED}"),
    );
    let response = f.server.par(&post("/api/oauth/par", None, &body)).await;
    assert_error(&response, 401, "invalid_client");
    let assertion = sign(&es256(), Some("es"), &claims(CLIENT, par));
    let body = form(
        &assertion,
        &format!("&response_type=code&redirect_uri={REDIRECT_ENCODED}"),
    );
    assert_eq!(
        f.server
            .par(&post("/api/oauth/par", None, &body))
            .await
            .status(),
        201
    );
    assert_error(
        &f.server.par(&post("/api/oauth/par", None, &body)).await,
        401,
        "invalid_client",
    );
}

/// Introspection with an assertion of `client` signed by `key` (no `kid`): the status.
async fn introspect_as(f: &Fixture, client: &str, key: &ProofKey) -> u16 {
    let assertion = sign(key, None, &claims(client, ISSUER));
    let response = f.introspect(None, &form(&assertion, "&token=x")).await;
    response.status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_spends_its_own_assertion_budget_and_self_registered_ones_share_one() {
    use grantor::client_assertion::{ASSERTIONS_PER_CLIENT, ASSERTIONS_SELF_REGISTERED};
    let f = Arc::new(fixture_with(|b| b.registration(RegistrationPolicy::new())));
    let admin_key = ProofKey::eddsa(3);
    f.register(keyed_client(CLIENT, &[("ed", ProofKey::eddsa(3))]));
    let key = ProofKey::eddsa(9);
    let set: Value = serde_json::from_str(&jwks(&[("ed", ProofKey::eddsa(9))])).unwrap();
    let mut registered = Vec::new();
    for _ in 0..3 {
        let response = register(&f, keyed_metadata(json!({ "jwks": set }))).await;
        assert_eq!(response.status(), 201, "{}", response.body());
        registered.push(json(&response)["client_id"].as_str().unwrap().to_owned());
    }
    // The first self-registered client spends its whole budget, from two tasks.
    let spend = |client: String, count: u32| {
        let (f, key) = (f.clone(), ProofKey::eddsa(9));
        tokio::spawn(async move {
            for _ in 0..count {
                assert_eq!(introspect_as(&f, &client, &key).await, 200);
            }
        })
    };
    let half = ASSERTIONS_PER_CLIENT / 2;
    let (a, b) = (
        spend(registered[0].clone(), half),
        spend(registered[0].clone(), ASSERTIONS_PER_CLIENT - half),
    );
    a.await.unwrap();
    b.await.unwrap();
    let response = {
        let assertion = sign(&key, None, &claims(&registered[0], ISSUER));
        f.introspect(None, &form(&assertion, "&token=x")).await
    };
    assert_error(&response, 429, "temporarily_unavailable");
    assert_eq!(
        json(&response)["error_description"],
        "too many client assertions by this client; try again later"
    );
    // Another self-registered client has a budget of its own, until all of them together
    // have spent theirs.
    let rest = ASSERTIONS_SELF_REGISTERED - ASSERTIONS_PER_CLIENT;
    spend(registered[1].clone(), rest).await.unwrap();
    let response = {
        let assertion = sign(&key, None, &claims(&registered[2], ISSUER));
        f.introspect(None, &form(&assertion, "&token=x")).await
    };
    assert_error(&response, 429, "temporarily_unavailable");
    assert_eq!(
        json(&response)["error_description"],
        "too many client assertions by self-registered clients; try again later"
    );
    // The administrator's client never shares their budget.
    assert_eq!(introspect_as(&f, CLIENT, &admin_key).await, 200);
    // The budgets count per window: once it has passed, each may send again.
    let window = grantor::client_assertion::ASSERTION_WINDOW;
    f.clock.advance(window);
    let later = now() + window.as_secs();
    let client = &registered[2];
    let claims = json!({"iss": client, "sub": client, "aud": ISSUER, "exp": later + 60,
        "iat": later, "jti": "after-the-window"});
    let response = f
        .introspect(None, &form(&sign(&key, None, &claims), "&token=x"))
        .await;
    assert_eq!(response.status(), 200, "{}", response.body());
}

#[tokio::test]
async fn without_kid_a_client_with_several_keys_for_the_alg_is_refused_unchecked() {
    let f = fixture();
    let keys = [("one", ProofKey::es256(11)), ("two", ProofKey::es256(12))];
    f.register(keyed_client(CLIENT, &keys));
    let claims_now = claims(CLIENT, TOKEN_URL);
    assert_refused(
        &f,
        &sign(&keys[1].1, None, &claims_now),
        "the client assertion must name its key with kid: this client has several keys for its alg",
    )
    .await;
    let named = sign(&keys[1].1, Some("two"), &claims(CLIENT, TOKEN_URL));
    assert_eq!(token_with(&f, &named).await.status(), 200);
}

#[tokio::test]
async fn forged_assertions_cannot_lock_a_client_out() {
    // A client id is no secret: whoever sends forged assertions in its name must not be able
    // to refuse the client its own good ones.
    let f = setup();
    let stranger = ProofKey::es256(99);
    for _ in 0..50 {
        let forged = sign(&stranger, Some("es"), &claims(CLIENT, TOKEN_URL));
        assert_refused(
            &f,
            &forged,
            "the client assertion is not signed by a key of this client",
        )
        .await;
    }
    assert_eq!(token_with(&f, &good()).await.status(), 200);
}
