//! Refresh retries (a lost answer) and the absolute family lifetime, through the token
//! endpoint: within the grace window a retry leaves exactly one live pair; past it, from another
//! client, or with no window, reuse revokes the family (RFC 9700 §4.14.2); a family dies at its
//! absolute lifetime however often it is refreshed, and no refresh token outlives it; a family
//! left unused for the refresh token lifetime (the idle, sliding one) dies then.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

const GRACE: Duration = Duration::from_secs(30);

fn refresh_body(body: &Value) -> String {
    format!(
        "grant_type=refresh_token&refresh_token={}",
        body["refresh_token"].as_str().unwrap()
    )
}

fn access(body: &Value) -> &str {
    body["access_token"].as_str().unwrap()
}

async fn refresh(f: &Fixture, body: &Value) -> http::Response<String> {
    f.token(Some(&f.fast_basic()), &refresh_body(body)).await
}

async fn refresh_is_live(f: &Fixture, body: &Value) -> bool {
    let token = body["refresh_token"].as_str().unwrap();
    let response = f
        .introspect(Some(&f.fast_basic()), &format!("token={token}"))
        .await;
    json(&response)["active"] == true
}

#[tokio::test]
async fn a_retry_within_the_grace_window_rotates_again_and_leaves_one_live_pair() {
    let f = fixture_with(|b| b.refresh_grace(GRACE));
    let first = f.fast_tokens().await;
    // The answer to this refresh is lost on its way to the client.
    let lost = assert_tokens(&refresh(&f, &first).await);
    f.clock.advance(Duration::from_secs(10));
    let retried = assert_tokens(&refresh(&f, &first).await);
    assert_ne!(retried["refresh_token"], lost["refresh_token"]);
    // Exactly one pair lives: the retry's.
    assert!(
        !f.access_is_active(access(&lost)).await,
        "the lost access token lives"
    );
    assert!(
        !refresh_is_live(&f, &lost).await,
        "the lost refresh token lives"
    );
    assert!(f.access_is_active(access(&retried)).await);
    assert!(refresh_is_live(&f, &retried).await);
    // The retry's refresh token carries on as usual.
    let next = assert_tokens(&refresh(&f, &retried).await);
    assert!(f.access_is_active(access(&next)).await);
}

#[tokio::test]
async fn presenting_the_lost_refresh_token_is_reuse_and_revokes_the_family() {
    let f = fixture_with(|b| b.refresh_grace(GRACE));
    let first = f.fast_tokens().await;
    let lost = assert_tokens(&refresh(&f, &first).await);
    let retried = assert_tokens(&refresh(&f, &first).await);
    // Someone who intercepted the lost answer presents its refresh token.
    assert_error(&refresh(&f, &lost).await, 400, "invalid_grant");
    assert!(
        !f.access_is_active(access(&retried)).await,
        "the family survived"
    );
}

#[tokio::test]
async fn a_retry_after_the_grace_window_revokes_the_family() {
    let f = fixture_with(|b| b.refresh_grace(GRACE));
    let first = f.fast_tokens().await;
    let second = assert_tokens(&refresh(&f, &first).await);
    f.clock.advance(GRACE + Duration::from_secs(1));
    assert_error(&refresh(&f, &first).await, 400, "invalid_grant");
    assert!(
        !f.access_is_active(access(&second)).await,
        "the family survived"
    );
    assert_error(&refresh(&f, &second).await, 400, "invalid_grant");
}

#[tokio::test]
async fn a_retry_from_another_client_revokes_the_family() {
    let f = fixture_with(|b| b.refresh_grace(GRACE));
    let first = f.fast_tokens().await;
    let second = assert_tokens(&refresh(&f, &first).await);
    let stolen = f.token(Some(&f.demo_basic()), &refresh_body(&first)).await;
    assert_error(&stolen, 400, "invalid_grant");
    assert!(
        !f.access_is_active(access(&second)).await,
        "the family survived"
    );
}

#[tokio::test]
async fn with_no_grace_window_any_reuse_revokes_the_family() {
    let f = fixture();
    let first = f.fast_tokens().await;
    let second = assert_tokens(&refresh(&f, &first).await);
    assert_error(&refresh(&f, &first).await, 400, "invalid_grant");
    assert!(
        !f.access_is_active(access(&second)).await,
        "the family survived"
    );
}

#[tokio::test]
async fn the_family_dies_at_its_absolute_lifetime_even_if_refreshed_daily() {
    let day = Duration::from_secs(86_400);
    let f = fixture_with(|b| b.family_lifetime(10 * day));
    let mut current = f.fast_tokens().await;
    for _ in 0..9 {
        f.clock.advance(day);
        current = assert_tokens(&refresh(&f, &current).await);
    }
    f.clock.advance(day);
    assert_error(&refresh(&f, &current).await, 400, "invalid_grant");
}

#[tokio::test]
async fn an_idle_family_dies_at_the_refresh_token_lifetime_and_a_used_one_lives_on() {
    let day = Duration::from_secs(86_400);
    // The idle (sliding) lifetime is 2 days, the absolute one 30.
    let f = fixture_with(|b| b.refresh_token_lifetime(2 * day).family_lifetime(30 * day));
    let mut current = f.fast_tokens().await;
    for _ in 0..5 {
        f.clock.advance(day + day / 2);
        current = assert_tokens(&refresh(&f, &current).await);
    }
    // Used every day and a half, the family outlived its idle lifetime three times over; left
    // alone for longer than it, it is gone.
    f.clock.advance(2 * day + Duration::from_secs(1));
    assert_error(&refresh(&f, &current).await, 400, "invalid_grant");
}

#[tokio::test]
async fn refresh_tokens_never_outlive_their_family() {
    let day = Duration::from_secs(86_400);
    // Refresh tokens live 30 days; the family 40.
    let f = fixture_with(|b| b.family_lifetime(40 * day));
    let first = f.fast_tokens().await;
    let exp = |body: &Value| {
        let f = &f;
        let token = body["refresh_token"].as_str().unwrap().to_owned();
        async move {
            let response = f
                .introspect(Some(&f.fast_basic()), &format!("token={token}"))
                .await;
            json(&response)["exp"].as_u64().unwrap()
        }
    };
    assert_eq!(exp(&first).await, START + 30 * 86_400);
    f.clock.advance(25 * day);
    let later = assert_tokens(&refresh(&f, &first).await);
    assert_eq!(
        exp(&later).await,
        START + 40 * 86_400,
        "capped at the family's end"
    );
}

#[test]
fn a_grace_window_over_ten_minutes_is_refused() {
    let build = |grace: Duration| {
        grantor::AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(grantor::MemoryStore::new())
            .refresh_grace(grace)
            .build()
    };
    assert!(build(grantor::settings::MAX_REFRESH_GRACE).is_ok());
    let refused = build(grantor::settings::MAX_REFRESH_GRACE + Duration::from_secs(1));
    assert!(matches!(refused, Err(grantor::ConfigError::RefreshGrace)));
}
