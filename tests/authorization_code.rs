//! The authorization code grant at the token endpoint (RFC 6749 §4.1.3), with PKCE (RFC 7636).

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use http::Response;

fn exchange(code: &str) -> String {
    format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}")
}

fn with_verifier(code: &str, verifier: &str) -> String {
    format!("{}&code_verifier={verifier}", exchange(code))
}

fn pkce() -> String {
    format!("&code_challenge={CHALLENGE}&code_challenge_method=S256")
}

fn public_body(body: &str) -> String {
    format!("{body}&client_id=public-client")
}

fn tokens(response: &Response<String>) -> serde_json::Value {
    assert_tokens(response)
}

fn keys(body: &serde_json::Value) -> BTreeSet<&str> {
    body.as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn refresh(token: &serde_json::Value) -> String {
    format!(
        "grant_type=refresh_token&refresh_token={}",
        token["refresh_token"].as_str().unwrap()
    )
}

#[tokio::test]
async fn success_has_exactly_the_documented_fields() {
    let f = fixture();
    let code = f.code("demo-client", "").await;
    let body = tokens(&f.token(Some(&f.demo_basic()), &exchange(&code)).await);
    let expected = [
        "access_token",
        "token_type",
        "expires_in",
        "jti",
        "scope",
        "refresh_token",
    ];
    assert_eq!(keys(&body), expected.into_iter().collect());
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["expires_in"].as_u64(), Some(3600), "{body}");
    assert_scope(&body, "profile email");
    let (access, jti) = (body["access_token"].as_str().unwrap(), &body["jti"]);
    assert!(jti.is_string() && jti != access, "{body}");
    assert!(body["refresh_token"].as_str().is_some_and(|r| r != access));
    assert!(f.access_is_active(access).await);
}

#[tokio::test]
async fn refresh_token_only_for_clients_agreed_for_refresh() {
    let f = fixture();
    let code = f.code(&f.fast_id, "").await;
    let fast = tokens(&f.token(Some(&f.fast_basic()), &exchange(&code)).await);
    assert!(fast["refresh_token"].is_string(), "{fast}");
    assert_scope(&fast, "profile");

    let code = f.code("plain-client", "").await;
    let plain = basic("plain-client", "plain-secret");
    let body = tokens(&f.token(Some(&plain), &exchange(&code)).await);
    assert!(body.get("refresh_token").is_none(), "{body}");
    assert_eq!(keys(&body).len(), 5, "{body}");
}

#[tokio::test]
async fn code_is_single_use() {
    let f = fixture();
    let code = f.code("demo-client", "").await;
    let first = tokens(&f.token(Some(&f.demo_basic()), &exchange(&code)).await);
    let access = first["access_token"].as_str().unwrap();
    assert!(f.access_is_active(access).await);

    let second = f.token(Some(&f.demo_basic()), &exchange(&code)).await;
    assert_error(&second, 400, "invalid_grant");
    assert!(
        !f.access_is_active(access).await,
        "a replayed code must revoke the access token it was exchanged for"
    );
    let response = f.token(Some(&f.demo_basic()), &refresh(&first)).await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn code_replay_revokes_tokens_refreshed_from_it() {
    let f = fixture();
    let code = f.code("demo-client", "").await;
    let first = tokens(&f.token(Some(&f.demo_basic()), &exchange(&code)).await);
    let refreshed = tokens(&f.token(Some(&f.demo_basic()), &refresh(&first)).await);
    let access = refreshed["access_token"].as_str().unwrap();
    assert!(f.access_is_active(access).await);
    let replay = f.token(Some(&f.demo_basic()), &exchange(&code)).await;
    assert_error(&replay, 400, "invalid_grant");
    assert!(!f.access_is_active(access).await);
    let response = f.token(Some(&f.demo_basic()), &refresh(&refreshed)).await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn late_code_replay_still_revokes() {
    let f = fixture();
    let code = f.code(&f.fast_id, "").await;
    let first = tokens(&f.token(Some(&f.fast_basic()), &exchange(&code)).await);
    let access = first["access_token"].as_str().unwrap();
    f.clock.advance(Duration::from_secs(600));
    assert!(f.access_is_active(access).await);
    let replay = f.token(Some(&f.fast_basic()), &exchange(&code)).await;
    assert_error(&replay, 400, "invalid_grant");
    assert!(!f.access_is_active(access).await);
}

#[tokio::test]
async fn code_expires_after_60_seconds() {
    let f = fixture();
    let code = f.code(&f.fast_id, "").await;
    f.clock.advance(Duration::from_secs(61));
    let response = f.token(Some(&f.fast_basic()), &exchange(&code)).await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn code_is_valid_just_before_60_seconds() {
    let f = fixture();
    let code = f.code(&f.fast_id, "").await;
    f.clock.advance(Duration::from_secs(59));
    tokens(&f.token(Some(&f.fast_basic()), &exchange(&code)).await);
}

#[tokio::test]
async fn code_lifetime_is_configurable() {
    let f = fixture_with(|b| b.code_lifetime(Duration::from_secs(300)));
    let code = f.code(&f.fast_id, "").await;
    f.clock.advance(Duration::from_secs(299));
    tokens(&f.token(Some(&f.fast_basic()), &exchange(&code)).await);

    let code = f.code(&f.fast_id, "").await;
    f.clock.advance(Duration::from_secs(301));
    let response = f.token(Some(&f.fast_basic()), &exchange(&code)).await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn code_of_another_client_is_invalid_grant_and_burnt() {
    let f = fixture();
    let code = f.code("demo-client", "").await;
    let response = f.token(Some(&f.fast_basic()), &exchange(&code)).await;
    assert_error(&response, 400, "invalid_grant");
    let response = f.token(Some(&f.demo_basic()), &exchange(&code)).await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn redirect_uri_must_match() {
    let f = fixture();
    let code = f.code(&f.fast_id, "").await;
    let other = format!("grant_type=authorization_code&code={code}&redirect_uri={OTHER_REDIRECT}");
    let response = f.token(Some(&f.fast_basic()), &other).await;
    assert_error(&response, 400, "invalid_grant");
    // A mismatched redirect_uri spends the code.
    let response = f.token(Some(&f.fast_basic()), &exchange(&code)).await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn missing_redirect_uri_is_invalid_request() {
    let f = fixture();
    let code = f.code(&f.fast_id, "").await;
    let body = format!("grant_type=authorization_code&code={code}");
    let response = f.token(Some(&f.fast_basic()), &body).await;
    assert_error(&response, 400, "invalid_request");
    // Refused before the code was looked at: it still works.
    tokens(&f.token(Some(&f.fast_basic()), &exchange(&code)).await);
}

#[tokio::test]
async fn unknown_code_is_invalid_grant() {
    let f = fixture();
    let response = f
        .token(Some(&f.fast_basic()), &exchange("not-a-code"))
        .await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn missing_code_is_invalid_request() {
    let f = fixture();
    let body = format!("grant_type=authorization_code&redirect_uri={REDIRECT_ENCODED}");
    let response = f.token(Some(&f.fast_basic()), &body).await;
    assert_error(&response, 400, "invalid_request");
    let response = f.token(Some(&f.fast_basic()), &exchange("")).await;
    assert_error(&response, 400, "invalid_request");
}

#[tokio::test]
async fn public_client_redeems_with_the_right_verifier() {
    let f = fixture();
    let code = f.code("public-client", &pkce()).await;
    let body = public_body(&with_verifier(&code, VERIFIER));
    let body = tokens(&f.token(None, &body).await);
    assert!(body.get("refresh_token").is_none(), "{body}");
    assert_scope(&body, "profile email");
    assert!(
        f.access_is_active(body["access_token"].as_str().unwrap())
            .await
    );
}

#[tokio::test]
async fn wrong_verifier_is_invalid_grant() {
    let f = fixture();
    let code = f.code("public-client", &pkce()).await;
    let wrong = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK";
    let response = f
        .token(None, &public_body(&with_verifier(&code, wrong)))
        .await;
    assert_error(&response, 400, "invalid_grant");
    // The code is spent: the right verifier no longer helps.
    let response = f
        .token(None, &public_body(&with_verifier(&code, VERIFIER)))
        .await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn missing_verifier_is_invalid_grant_when_a_challenge_was_sent() {
    let f = fixture();
    let code = f.code("public-client", &pkce()).await;
    let response = f.token(None, &public_body(&exchange(&code))).await;
    assert_error(&response, 400, "invalid_grant");

    let code = f.code("demo-client", &pkce()).await;
    let response = f.token(Some(&f.demo_basic()), &exchange(&code)).await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn confidential_client_with_pkce_redeems_with_the_verifier() {
    let f = fixture();
    let code = f.code("demo-client", &pkce()).await;
    let response = f
        .token(Some(&f.demo_basic()), &with_verifier(&code, VERIFIER))
        .await;
    assert!(tokens(&response)["refresh_token"].is_string());
}

#[tokio::test]
async fn verifier_without_challenge_is_invalid_grant() {
    let f = fixture();
    let code = f.code(&f.fast_id, "").await;
    let response = f
        .token(Some(&f.fast_basic()), &with_verifier(&code, VERIFIER))
        .await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn malformed_verifier_is_invalid_request() {
    let f = fixture();
    let code = f.code("public-client", &pkce()).await;
    let short = &VERIFIER[..42];
    let bad_char = format!("{}%2B", &VERIFIER[..42]);
    let long = "a".repeat(129);
    for verifier in [short, bad_char.as_str(), long.as_str()] {
        let response = f
            .token(None, &public_body(&with_verifier(&code, verifier)))
            .await;
        assert_error(&response, 400, "invalid_request");
    }
    // Refused before the code was looked at: it still works.
    let response = f
        .token(None, &public_body(&with_verifier(&code, VERIFIER)))
        .await;
    tokens(&response);
}

#[tokio::test]
async fn scope_requested_at_authorize_is_the_token_scope() {
    let f = fixture();
    let code = f.code("demo-client", "&scope=email").await;
    let body = tokens(&f.token(Some(&f.demo_basic()), &exchange(&code)).await);
    assert_scope(&body, "email");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_redemptions_of_one_code_yield_one_token() {
    let f = fixture();
    let code = f.code(&f.fast_id, "").await;
    let responses = race_token(&f.server, &f.fast_basic(), &exchange(&code), 200).await;
    let mut winners = Vec::new();
    for response in responses {
        if response.status() == 200 {
            winners.push(json(&response));
        } else {
            assert_error(&response, 400, "invalid_grant");
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    let access = winners[0]["access_token"].as_str().unwrap();
    assert!(
        !f.access_is_active(access).await,
        "the replays must revoke the winner's access token"
    );
    let response = f.token(Some(&f.fast_basic()), &refresh(&winners[0])).await;
    assert_error(&response, 400, "invalid_grant");
}
