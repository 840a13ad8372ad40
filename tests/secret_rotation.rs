//! Client secret rotation through the public API: the host's
//! `AuthorizationServer::rotate_client_secret`, and a self-registered client's RFC 7592 update
//! with `rotate_client_secret`. One test per rule.

mod common;

use std::time::Duration;

use common::*;
use grantor::*;
use grantor::{client::*, clock::*, settings::*};
use http::{Request, Response};
use serde_json::{Value, json};

const OVERLAP: Duration = Duration::from_secs(600);

async fn client_credentials(f: &Fixture, id: &str, secret: &str) -> Response<String> {
    f.token(Some(&basic(id, secret)), "grant_type=client_credentials")
        .await
}

async fn assert_authenticates(f: &Fixture, id: &str, secret: &str) {
    let response = client_credentials(f, id, secret).await;
    assert_eq!(response.status(), 200, "{}", response.body());
}

async fn assert_refused(f: &Fixture, id: &str, secret: &str) {
    let response = client_credentials(f, id, secret).await;
    assert_error(&response, 401, "invalid_client");
}

#[tokio::test]
async fn old_and_new_secrets_both_authenticate_within_the_overlap() {
    let f = fixture();
    let (id, old) = (f.fast_id.clone(), f.fast_secret.clone());
    let new = f.server.rotate_client_secret(&id, OVERLAP).await.unwrap();
    assert_ne!(new.expose_secret(), old);
    assert_eq!(new.expose_secret().len(), 43, "256 bits in base64url");
    assert_authenticates(&f, &id, new.expose_secret()).await;
    assert_authenticates(&f, &id, &old).await;
    f.clock.advance(OVERLAP - Duration::from_secs(1));
    assert_authenticates(&f, &id, &old).await;
    assert_refused(&f, &id, "neither-secret-of-this-client-at-all").await;
}

#[tokio::test]
async fn the_old_secret_is_refused_from_its_deadline_on() {
    let f = fixture();
    let (id, old) = (f.fast_id.clone(), f.fast_secret.clone());
    let new = f.server.rotate_client_secret(&id, OVERLAP).await.unwrap();
    f.clock.advance(OVERLAP);
    assert_refused(&f, &id, &old).await;
    assert_authenticates(&f, &id, new.expose_secret()).await;
    // The same at the other endpoints that authenticate clients.
    let revoke = f.revoke(Some(&basic(&id, &old)), "token=x").await;
    assert_error(&revoke, 401, "invalid_client");
    let introspect = f.introspect(Some(&basic(&id, &old)), "token=x").await;
    assert_error(&introspect, 401, "invalid_client");
}

#[tokio::test]
async fn a_zero_overlap_retires_the_old_secret_at_once() {
    let f = fixture();
    let (id, old) = (f.fast_id.clone(), f.fast_secret.clone());
    let new = f.server.rotate_client_secret(&id, Duration::ZERO).await;
    assert_refused(&f, &id, &old).await;
    assert_authenticates(&f, &id, new.unwrap().expose_secret()).await;
}

#[tokio::test]
async fn a_second_rotation_keeps_only_the_secret_it_replaced() {
    let f = fixture();
    let (id, first) = (f.fast_id.clone(), f.fast_secret.clone());
    let second = f.server.rotate_client_secret(&id, OVERLAP).await.unwrap();
    let third = f.server.rotate_client_secret(&id, OVERLAP).await.unwrap();
    assert_refused(&f, &id, &first).await;
    assert_authenticates(&f, &id, second.expose_secret()).await;
    assert_authenticates(&f, &id, third.expose_secret()).await;
}

#[tokio::test]
async fn a_chosen_argon2id_secret_keeps_working_through_the_overlap() {
    let f = fixture();
    let new = f
        .server
        .rotate_client_secret("demo-client", OVERLAP)
        .await
        .unwrap();
    assert_authenticates(&f, "demo-client", "demo-secret").await;
    assert_authenticates(&f, "demo-client", new.expose_secret()).await;
    assert_refused(&f, "demo-client", "wrong-secret").await;
    f.clock.advance(OVERLAP);
    assert_refused(&f, "demo-client", "demo-secret").await;
}

#[tokio::test]
async fn the_store_keeps_both_verifiers_and_never_the_secret() {
    use grantor::store::ClientStore as _;
    let f = fixture();
    let new = f
        .server
        .rotate_client_secret(&f.fast_id, OVERLAP)
        .await
        .unwrap();
    let client = f.store.find_client(&f.fast_id).await.unwrap().unwrap();
    let (retiring, until) = client.retiring_secret().expect("a retiring secret");
    assert_eq!(until, UnixTime::from_secs(START).plus(OVERLAP));
    let expected = SecretVerifier::digest(&ClientSecret::new(f.fast_secret.clone())).unwrap();
    assert_eq!(retiring, &expected);
    let current = client.secret().unwrap().to_stored();
    assert!(current.starts_with("sha256:"), "a digest verifier");
    let debug = format!("{client:?}");
    assert!(!debug.contains(new.expose_secret()), "{debug}");
    assert!(!debug.contains(&f.fast_secret), "{debug}");
}

#[tokio::test]
async fn the_new_secret_is_never_in_debug_output() {
    let f = fixture();
    let new = f
        .server
        .rotate_client_secret(&f.fast_id, OVERLAP)
        .await
        .unwrap();
    let shown = format!("{new:?} {:?}", Ok::<_, SecretRotationError>(&new));
    assert!(!shown.contains(new.expose_secret()), "{shown}");
}

#[tokio::test]
async fn rotating_an_unknown_client_is_refused() {
    let f = fixture();
    let refused = f.server.rotate_client_secret("nobody", OVERLAP).await;
    assert!(matches!(refused, Err(SecretRotationError::UnknownClient)));
}

#[tokio::test]
async fn rotating_a_public_client_is_refused_and_changes_nothing() {
    use grantor::store::ClientStore as _;
    let f = fixture();
    let refused = f
        .server
        .rotate_client_secret("public-client", OVERLAP)
        .await;
    assert!(matches!(refused, Err(SecretRotationError::PublicClient)));
    let client = f.store.find_client("public-client").await.unwrap().unwrap();
    assert!(client.is_public() && client.retiring_secret().is_none());
}

#[tokio::test]
async fn a_server_without_a_client_registry_cannot_rotate() {
    let f = fixture();
    let store = std::sync::Arc::new(f.store.clone());
    let server = AuthorizationServer::builder()
        .issuer(ISSUER)
        .clients(store.clone())
        .users(store.clone())
        .tokens(store)
        .single_node()
        .build()
        .unwrap();
    let refused = server.rotate_client_secret(&f.fast_id, OVERLAP).await;
    assert!(matches!(refused, Err(SecretRotationError::NoRegistry)));
}

#[test]
fn a_public_client_cannot_be_built_with_a_retiring_secret() {
    let verifier = ClientCredentials::generate().unwrap().verifier;
    let built = Client::public("p")
        .retiring_secret(verifier, UnixTime::from_secs(START))
        .build();
    assert_eq!(built.unwrap_err(), ClientError::PublicRetiringSecret);
}

// ---------------------------------------------------------------------------------------------
// RFC 7592 §2.2: a self-registered client asks for a new secret in an update.

const REGISTER: &str = "/api/oauth/register";

fn open(policy: RegistrationPolicy) -> Fixture {
    fixture_with(|b| {
        b.scopes_supported(&Scope::parse("profile email").unwrap())
            .registration(policy)
    })
}

fn json_request(method: &str, path: &str, token: Option<&str>, body: &Value) -> Request<String> {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json");
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    builder.body(body.to_string()).unwrap()
}

/// Registers a confidential client that may use client credentials.
async fn register_confidential(f: &Fixture) -> Value {
    let metadata = json!({"grant_types": ["client_credentials"], "scope": "profile"});
    let response = f
        .server
        .register(&json_request("POST", REGISTER, None, &metadata))
        .await;
    assert_eq!(response.status(), 201, "{}", response.body());
    json(&response)
}

async fn update(f: &Fixture, client: &Value, extra: Value) -> Response<String> {
    let mut body = json!({
        "client_id": client["client_id"],
        "grant_types": ["client_credentials"],
        "scope": "profile",
    });
    for (key, value) in extra.as_object().unwrap() {
        body[key] = value.clone();
    }
    let path = format!("{REGISTER}/{}", client["client_id"].as_str().unwrap());
    let token = client["registration_access_token"].as_str();
    let request = json_request("PUT", &path, token, &body);
    f.server.client_configuration(&request).await
}

fn policy() -> RegistrationPolicy {
    RegistrationPolicy::new()
        .grant_types([GrantType::ClientCredentials])
        .scope(&Scope::parse("profile").unwrap())
        .secret_rotation_overlap(OVERLAP)
}

#[tokio::test]
async fn an_update_asking_for_rotation_answers_a_new_secret_and_both_work_in_the_overlap() {
    let f = open(policy());
    let client = register_confidential(&f).await;
    let id = client["client_id"].as_str().unwrap();
    let old = client["client_secret"].as_str().unwrap();
    let response = update(&f, &client, json!({"rotate_client_secret": true})).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let updated = json(&response);
    let new = updated["client_secret"].as_str().expect("a new secret");
    assert_ne!(new, old);
    assert_eq!(updated["client_secret_expires_at"], 0);
    assert_eq!(updated["token_endpoint_auth_method"], "client_secret_basic");
    assert_authenticates(&f, id, new).await;
    assert_authenticates(&f, id, old).await;
    f.clock.advance(OVERLAP);
    assert_refused(&f, id, old).await;
    assert_authenticates(&f, id, new).await;
}

#[tokio::test]
async fn an_update_without_rotation_keeps_the_secret_and_its_overlap() {
    let f = open(policy());
    let client = register_confidential(&f).await;
    let id = client["client_id"].as_str().unwrap();
    let old = client["client_secret"].as_str().unwrap();
    let rotated = json(&update(&f, &client, json!({"rotate_client_secret": true})).await);
    let new = rotated["client_secret"].as_str().unwrap();
    let plain = update(&f, &client, json!({"rotate_client_secret": false})).await;
    assert_eq!(plain.status(), 200, "{}", plain.body());
    assert!(json(&plain).get("client_secret").is_none(), "not re-issued");
    assert_authenticates(&f, id, old).await;
    assert_authenticates(&f, id, new).await;
}

#[tokio::test]
async fn the_default_overlap_is_a_day() {
    assert_eq!(DEFAULT_SECRET_ROTATION_OVERLAP, Duration::from_secs(86_400));
    let f = open(
        RegistrationPolicy::new()
            .grant_types([GrantType::ClientCredentials])
            .scope(&Scope::parse("profile").unwrap()),
    );
    let client = register_confidential(&f).await;
    let id = client["client_id"].as_str().unwrap();
    let old = client["client_secret"].as_str().unwrap();
    let response = update(&f, &client, json!({"rotate_client_secret": true})).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    f.clock
        .advance(DEFAULT_SECRET_ROTATION_OVERLAP - Duration::from_secs(1));
    assert_authenticates(&f, id, old).await;
    f.clock.advance(Duration::from_secs(1));
    assert_refused(&f, id, old).await;
}

#[tokio::test]
async fn a_public_client_cannot_ask_for_a_new_secret() {
    let f = open(RegistrationPolicy::new());
    let metadata = json!({
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    });
    let response = f
        .server
        .register(&json_request("POST", REGISTER, None, &metadata))
        .await;
    let client = json(&response);
    let path = format!("{REGISTER}/{}", client["client_id"].as_str().unwrap());
    let body = json!({
        "client_id": client["client_id"],
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "rotate_client_secret": true,
    });
    let token = client["registration_access_token"].as_str();
    let response = f
        .server
        .client_configuration(&json_request("PUT", &path, token, &body))
        .await;
    assert_error(&response, 400, "invalid_client_metadata");
}

#[tokio::test]
async fn rotate_client_secret_must_be_a_boolean() {
    let f = open(policy());
    let client = register_confidential(&f).await;
    let response = update(&f, &client, json!({"rotate_client_secret": "yes"})).await;
    assert_error(&response, 400, "invalid_client_metadata");
}
