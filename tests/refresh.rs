//! The refresh token grant (RFC 6749 §6): rotation, reuse detection (RFC 9700 §4.14.2), scope.

mod common;

use std::time::Duration;

use common::*;
use http::Response;
use serde_json::Value;

fn tokens(response: &Response<String>) -> Value {
    let body = assert_tokens(response);
    assert_eq!(body["expires_in"].as_u64(), Some(3600), "{body}");
    assert!(body["refresh_token"].is_string(), "{body}");
    body
}

fn access(body: &Value) -> &str {
    body["access_token"].as_str().unwrap()
}

fn refresh_body(body: &Value) -> String {
    format!(
        "grant_type=refresh_token&refresh_token={}",
        body["refresh_token"].as_str().unwrap()
    )
}

fn refresh_with_scope(body: &Value, scope: &str) -> String {
    format!("{}&scope={scope}", refresh_body(body))
}

/// Demo-client tokens from the authorization code flow, Alice approving `extra`.
async fn demo_tokens(f: &Fixture, extra: &str) -> Value {
    let code = f.code("demo-client", extra).await;
    let body = format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
    tokens(&f.token(Some(&f.demo_basic()), &body).await)
}

/// Fast-client tokens (digest verifier, cheap to authenticate) from the password grant.
async fn fast_tokens(f: &Fixture) -> Value {
    let body = format!("grant_type=password&username={ALICE}&password={ALICE_PASSWORD}");
    tokens(&f.token(Some(&f.fast_basic()), &body).await)
}

#[tokio::test]
async fn refresh_rotates_the_refresh_token() {
    let f = fixture();
    let first = demo_tokens(&f, "").await;
    let second = tokens(&f.token(Some(&f.demo_basic()), &refresh_body(&first)).await);
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    assert_ne!(second["access_token"], first["access_token"]);
    assert_ne!(second["jti"], first["jti"]);
    assert!(f.access_is_active(access(&second)).await);
    let third = tokens(&f.token(Some(&f.demo_basic()), &refresh_body(&second)).await);
    assert_ne!(third["refresh_token"], second["refresh_token"]);
}

#[tokio::test]
async fn refresh_reuse_revokes_the_family() {
    let f = fixture();
    let first = demo_tokens(&f, "").await;
    let second = tokens(&f.token(Some(&f.demo_basic()), &refresh_body(&first)).await);

    let reuse = f.token(Some(&f.demo_basic()), &refresh_body(&first)).await;
    assert_error(&reuse, 400, "invalid_grant");
    assert!(!f.access_is_active(access(&first)).await);
    assert!(
        !f.access_is_active(access(&second)).await,
        "reuse must revoke the newest access token"
    );
    let newest = f.token(Some(&f.demo_basic()), &refresh_body(&second)).await;
    assert_error(&newest, 400, "invalid_grant");
}

#[tokio::test]
async fn scope_may_narrow() {
    let f = fixture();
    let first = demo_tokens(&f, "").await;
    assert_scope(&first, "profile email");
    let response = f
        .token(
            Some(&f.demo_basic()),
            &refresh_with_scope(&first, "profile"),
        )
        .await;
    let narrowed = tokens(&response);
    assert_scope(&narrowed, "profile");
    let both = refresh_with_scope(&narrowed, "email%20profile");
    assert_scope(
        &tokens(&f.token(Some(&f.demo_basic()), &both).await),
        "profile email",
    );
}

#[tokio::test]
async fn omitted_scope_keeps_the_original() {
    let f = fixture();
    let first = demo_tokens(&f, "&scope=email").await;
    assert_scope(&first, "email");
    let second = tokens(&f.token(Some(&f.demo_basic()), &refresh_body(&first)).await);
    assert_scope(&second, "email");
}

#[tokio::test]
async fn scope_cannot_widen() {
    let f = fixture();
    let first = demo_tokens(&f, "&scope=email").await;
    for scope in ["admin", "profile", "email%20profile", "email%20admin"] {
        let response = f
            .token(Some(&f.demo_basic()), &refresh_with_scope(&first, scope))
            .await;
        assert_error(&response, 400, "invalid_scope");
    }
    // A refused widening neither spends nor revokes the refresh token.
    assert!(f.access_is_active(access(&first)).await);
    let response = f.token(Some(&f.demo_basic()), &refresh_body(&first)).await;
    assert_scope(&tokens(&response), "email");
}

#[tokio::test]
async fn refresh_token_of_another_client_is_invalid_grant() {
    let f = fixture();
    let first = demo_tokens(&f, "").await;
    let response = f.token(Some(&f.fast_basic()), &refresh_body(&first)).await;
    assert_error(&response, 400, "invalid_grant");
    // Not a reuse: the owner's family is intact.
    assert!(f.access_is_active(access(&first)).await);
    let second = tokens(&f.token(Some(&f.demo_basic()), &refresh_body(&first)).await);
    assert!(f.access_is_active(access(&second)).await);
}

#[tokio::test]
async fn rotated_refresh_token_of_another_client_revokes_the_family() {
    let f = fixture();
    let first = demo_tokens(&f, "").await;
    let second = tokens(&f.token(Some(&f.demo_basic()), &refresh_body(&first)).await);
    // A rotated token in another client's hands has leaked: reuse (RFC 9700 §4.14.2).
    let response = f.token(Some(&f.fast_basic()), &refresh_body(&first)).await;
    assert_error(&response, 400, "invalid_grant");
    assert!(!f.access_is_active(access(&second)).await);
    let after = f.token(Some(&f.demo_basic()), &refresh_body(&second)).await;
    assert_error(&after, 400, "invalid_grant");
}

#[tokio::test]
async fn refresh_token_expires_after_30_days() {
    let f = fixture();
    let first = fast_tokens(&f).await;
    f.clock.advance(Duration::from_secs(30 * 24 * 3600 + 1));
    let response = f.token(Some(&f.fast_basic()), &refresh_body(&first)).await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn refresh_token_is_valid_just_before_30_days() {
    let f = fixture();
    let first = fast_tokens(&f).await;
    f.clock.advance(Duration::from_secs(30 * 24 * 3600 - 1));
    tokens(&f.token(Some(&f.fast_basic()), &refresh_body(&first)).await);
}

#[tokio::test]
async fn access_token_expires_but_refresh_still_works() {
    let f = fixture();
    let first = demo_tokens(&f, "").await;
    f.clock.advance(Duration::from_secs(3599));
    assert!(f.access_is_active(access(&first)).await);
    f.clock.advance(Duration::from_secs(1));
    assert!(!f.access_is_active(access(&first)).await);
    let second = tokens(&f.token(Some(&f.demo_basic()), &refresh_body(&first)).await);
    assert!(f.access_is_active(access(&second)).await);
    f.clock.advance(Duration::from_secs(3600));
    assert!(!f.access_is_active(access(&second)).await);
}

#[tokio::test]
async fn unknown_refresh_token_is_invalid_grant() {
    let f = fixture();
    let body = "grant_type=refresh_token&refresh_token=not-a-token";
    assert_error(
        &f.token(Some(&f.fast_basic()), body).await,
        400,
        "invalid_grant",
    );
}

#[tokio::test]
async fn missing_refresh_token_is_invalid_request() {
    let f = fixture();
    for body in [
        "grant_type=refresh_token",
        "grant_type=refresh_token&refresh_token=",
    ] {
        assert_error(
            &f.token(Some(&f.fast_basic()), body).await,
            400,
            "invalid_request",
        );
    }
}

#[tokio::test]
async fn access_token_is_not_a_refresh_token() {
    let f = fixture();
    let first = fast_tokens(&f).await;
    let body = format!("grant_type=refresh_token&refresh_token={}", access(&first));
    assert_error(
        &f.token(Some(&f.fast_basic()), &body).await,
        400,
        "invalid_grant",
    );
    tokens(&f.token(Some(&f.fast_basic()), &refresh_body(&first)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_refreshes_rotate_once() {
    let f = fixture();
    let first = fast_tokens(&f).await;
    let responses = race_token(&f.server, &f.fast_basic(), &refresh_body(&first), 50).await;
    let mut winners = Vec::new();
    for response in responses {
        if response.status() == 200 {
            winners.push(json(&response));
        } else {
            assert_error(&response, 400, "invalid_grant");
        }
    }
    assert!(winners.len() <= 1, "{winners:?}");
    // Every loser presented a rotated token: reuse, so the whole family is revoked.
    assert!(!f.access_is_active(access(&first)).await);
    for winner in &winners {
        assert!(!f.access_is_active(access(winner)).await);
        let response = f.token(Some(&f.fast_basic()), &refresh_body(winner)).await;
        assert_error(&response, 400, "invalid_grant");
    }
}
