//! Self-registered clients nobody uses go (`RegistrationPolicy::idle_lifetime`): a client idle
//! for the lifetime is refused at its next token or authorization request and deleted with its
//! tokens, one in use lives on however old it is, an administrator's never expires, and
//! `forget_idle_clients` deletes those that never come back. On the memory store here; the
//! store contract checks every store's `ClientActivity`.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use grantor::events::EventKind;
use grantor::{Scope, client::*, settings::*};
use http::Request;
use serde_json::{Value, json};

const DAY: Duration = Duration::from_secs(86_400);
const REGISTER: &str = "/api/oauth/register";

/// The ids of the clients `client_expired` events name.
fn expired(kept: &KeptEvents) -> Vec<String> {
    kept.all()
        .iter()
        .filter(|e| e.kind == EventKind::ClientExpired)
        .filter_map(|e| e.client_id.as_ref().map(|id| id.as_str().to_owned()))
        .collect()
}

fn open(lifetime: Option<Duration>) -> (Fixture, Arc<KeptEvents>) {
    let kept = Arc::new(KeptEvents::default());
    let policy = RegistrationPolicy::new()
        .grant_types([GrantType::ClientCredentials])
        .scope(&Scope::parse("profile").unwrap())
        .idle_lifetime(lifetime);
    let events = kept.clone();
    let f = fixture_with(move |b| {
        b.scopes_supported(&Scope::parse("profile").unwrap())
            .registration(policy)
            .events(events)
    });
    (f, kept)
}

/// Registers a confidential client that may use client credentials: its id and secret.
async fn register(f: &Fixture) -> (String, String) {
    let metadata = json!({"grant_types": ["client_credentials"], "scope": "profile"});
    let request = Request::builder()
        .method("POST")
        .uri(REGISTER)
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .unwrap();
    let response = f.server.register(&request).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let client: Value = json(&response);
    (
        client["client_id"].as_str().unwrap().to_owned(),
        client["client_secret"].as_str().unwrap().to_owned(),
    )
}

async fn client_credentials(
    f: &Fixture,
    (id, secret): &(String, String),
) -> http::Response<String> {
    f.token(Some(&basic(id, secret)), "grant_type=client_credentials")
        .await
}

#[tokio::test]
async fn an_idle_client_is_refused_and_deleted_and_a_used_one_lives_on() {
    let (f, kept) = open(Some(30 * DAY));
    let (idle, busy) = (register(&f).await, register(&f).await);
    let token = json(&client_credentials(&f, &idle).await)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    // The busy client asks every 20 days: 60 days on, it still works.
    for _ in 0..3 {
        f.clock.advance(20 * DAY);
        let response = client_credentials(&f, &busy).await;
        assert_eq!(response.status(), 200, "{}", response.body());
    }
    // The other was last used 60 days ago: refused, deleted, its token dead.
    let refused = client_credentials(&f, &idle).await;
    assert_error(&refused, 401, "invalid_client");
    assert!(
        refused.body().contains("register again"),
        "{}",
        refused.body()
    );
    assert_eq!(expired(&kept), [idle.0.as_str()]);
    assert!(!f.access_is_active(&token).await, "its token died with it");
    let again = client_credentials(&f, &idle).await;
    assert_error(&again, 401, "invalid_client");
    assert_eq!(expired(&kept).len(), 1, "deleted once");
    // An administrator's client never expires.
    let fast = (f.fast_id.clone(), f.fast_secret.clone());
    assert_eq!(client_credentials(&f, &fast).await.status(), 200);
}

#[tokio::test]
async fn the_lifetime_counts_from_the_last_use_not_the_registration() {
    let (f, _) = open(Some(30 * DAY));
    let client = register(&f).await;
    f.clock.advance(29 * DAY);
    assert_eq!(client_credentials(&f, &client).await.status(), 200);
    f.clock.advance(29 * DAY);
    assert_eq!(client_credentials(&f, &client).await.status(), 200);
    f.clock.advance(30 * DAY);
    assert_error(
        &client_credentials(&f, &client).await,
        401,
        "invalid_client",
    );
}

#[tokio::test]
async fn forget_idle_clients_deletes_those_that_never_come_back() {
    let (f, kept) = open(Some(30 * DAY));
    let never = register(&f).await;
    f.clock.advance(20 * DAY);
    let used = register(&f).await;
    assert_eq!(f.server.forget_idle_clients().await.unwrap(), 0);
    f.clock.advance(15 * DAY);
    // 35 days after the first registration, 15 after the second.
    assert_eq!(f.server.forget_idle_clients().await.unwrap(), 1);
    assert_eq!(expired(&kept), [never.0.as_str()]);
    assert_error(&client_credentials(&f, &never).await, 401, "invalid_client");
    assert_eq!(client_credentials(&f, &used).await.status(), 200);
    assert_eq!(f.server.forget_idle_clients().await.unwrap(), 0);
}

#[tokio::test]
async fn without_a_lifetime_clients_are_kept_forever() {
    let (f, kept) = open(None);
    let client = register(&f).await;
    f.clock.advance(3_650 * DAY);
    assert_eq!(f.server.forget_idle_clients().await.unwrap(), 0);
    assert_eq!(client_credentials(&f, &client).await.status(), 200);
    assert!(expired(&kept).is_empty());
}

#[test]
fn a_host_registry_without_activity_is_refused_unless_expiry_is_off() {
    let store = Arc::new(grantor::MemoryStore::new());
    let build = |policy: RegistrationPolicy| {
        grantor::AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(grantor::MemoryStore::new())
            .clients(store.clone())
            .client_registry(store.clone())
            .registration(policy)
            .build()
    };
    assert!(matches!(
        build(RegistrationPolicy::new()),
        Err(grantor::ConfigError::NoClientActivity)
    ));
    assert!(build(RegistrationPolicy::new().idle_lifetime(None)).is_ok());
    let with_activity = grantor::AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(grantor::MemoryStore::new())
        .clients(store.clone())
        .client_registry(store.clone())
        .client_activity(store.clone())
        .registration(RegistrationPolicy::new())
        .build();
    assert!(with_activity.is_ok());
}
