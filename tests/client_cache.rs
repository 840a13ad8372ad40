//! `AuthorizationServerBuilder::cache_clients`: found clients are answered from memory for the
//! cache's time, changes through the server are seen at once, and unknown ids always reach the
//! store. One test per rule.

mod common;

use std::time::Duration;

use common::*;
use grantor::client::*;
use grantor::store::Admin as _;
use http::Response;

async fn client_credentials(f: &Fixture, id: &str, secret: &str) -> Response<String> {
    f.token(Some(&basic(id, secret)), "grant_type=client_credentials")
        .await
}

#[tokio::test]
async fn a_found_client_is_answered_from_the_cache_until_its_time_is_up() {
    // Long enough that a busy machine still sends the second request within it.
    let ttl = Duration::from_secs(2);
    let f = fixture_with(|b| b.cache_clients(ttl));
    let (id, secret) = (f.fast_id.clone(), f.fast_secret.clone());
    assert_eq!(client_credentials(&f, &id, &secret).await.status(), 200);

    // Removed past the server: the cached client still answers, for the cache's time only.
    assert!(f.store.remove_client(&id).await.unwrap());
    let cached = client_credentials(&f, &id, &secret).await;
    assert_eq!(cached.status(), 200, "{}", cached.body());
    tokio::time::sleep(ttl + Duration::from_millis(50)).await;
    let gone = client_credentials(&f, &id, &secret).await;
    assert_error(&gone, 401, "invalid_client");
}

#[tokio::test]
async fn without_the_cache_a_removed_client_is_refused_at_once() {
    let f = fixture();
    let (id, secret) = (f.fast_id.clone(), f.fast_secret.clone());
    assert_eq!(client_credentials(&f, &id, &secret).await.status(), 200);
    assert!(f.store.remove_client(&id).await.unwrap());
    assert_error(
        &client_credentials(&f, &id, &secret).await,
        401,
        "invalid_client",
    );
}

#[tokio::test]
async fn a_secret_rotated_through_the_server_works_at_once() {
    let f = fixture_with(|b| b.cache_clients(Duration::from_secs(3600)));
    let (id, old) = (f.fast_id.clone(), f.fast_secret.clone());
    assert_eq!(client_credentials(&f, &id, &old).await.status(), 200);
    let new = f
        .server
        .rotate_client_secret(&id, Duration::ZERO)
        .await
        .unwrap();
    let fresh = client_credentials(&f, &id, new.expose_secret()).await;
    assert_eq!(fresh.status(), 200, "{}", fresh.body());
    assert_error(
        &client_credentials(&f, &id, &old).await,
        401,
        "invalid_client",
    );
}

#[tokio::test]
async fn an_unknown_client_id_is_never_cached() {
    let f = fixture_with(|b| b.cache_clients(Duration::from_secs(3600)));
    let credentials = ClientCredentials::generate().unwrap();
    let secret = credentials.secret.expose_secret().to_owned();
    let refused = client_credentials(&f, "late-client", &secret).await;
    assert_error(&refused, 401, "invalid_client");

    // Registered past the server right after the miss: found on the next request.
    let client = Client::confidential("late-client", credentials.verifier)
        .grant_types([GrantType::ClientCredentials])
        .build()
        .unwrap();
    f.store.register_client(&client).await.unwrap();
    let found = client_credentials(&f, "late-client", &secret).await;
    assert_eq!(found.status(), 200, "{}", found.body());
}
