//! The resource owner password credentials grant (RFC 6749 §4.3).

mod common;

use common::*;
use http::Response;

fn password(username: &str, password: &str) -> String {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    format!(
        "grant_type=password&username={}&password={}",
        encode(username),
        encode(password)
    )
}

fn tokens(response: &Response<String>) -> serde_json::Value {
    let body = assert_tokens(response);
    assert_eq!(body["expires_in"].as_u64(), Some(3600), "{body}");
    body
}

fn plain_basic() -> String {
    basic("plain-client", "plain-secret")
}

#[tokio::test]
async fn right_credentials_get_tokens_with_refresh_for_demo_client() {
    let f = fixture();
    let response = f
        .token(Some(&f.demo_basic()), &password(ALICE, ALICE_PASSWORD))
        .await;
    let body = tokens(&response);
    assert!(body["refresh_token"].is_string(), "{body}");
    assert_scope(&body, "profile email");
    assert!(
        f.access_is_active(body["access_token"].as_str().unwrap())
            .await
    );
}

#[tokio::test]
async fn right_credentials_get_no_refresh_token_for_plain_client() {
    let f = fixture();
    let response = f
        .token(Some(&plain_basic()), &password(BOB, BOB_PASSWORD))
        .await;
    let body = tokens(&response);
    assert!(body.get("refresh_token").is_none(), "{body}");
    assert_scope(&body, "profile email");
}

#[tokio::test]
async fn fast_client_gets_its_default_scope() {
    let f = fixture();
    let response = f
        .token(Some(&f.fast_basic()), &password(ALICE, ALICE_PASSWORD))
        .await;
    let body = tokens(&response);
    assert_scope(&body, "profile");
    assert!(body["refresh_token"].is_string(), "{body}");
}

#[tokio::test]
async fn username_is_case_insensitive() {
    let f = fixture();
    for username in ["Alice@Example.com", "ALICE@EXAMPLE.COM"] {
        let response = f
            .token(Some(&f.demo_basic()), &password(username, ALICE_PASSWORD))
            .await;
        tokens(&response);
    }
}

#[tokio::test]
async fn password_is_case_sensitive() {
    let f = fixture();
    let response = f
        .token(Some(&f.demo_basic()), &password(ALICE, "ALICE-PASSWORD-1"))
        .await;
    assert_error(&response, 400, "invalid_grant");
}

#[tokio::test]
async fn wrong_password_and_unknown_user_fail_alike() {
    let f = fixture();
    let wrong = f
        .token(Some(&f.demo_basic()), &password(ALICE, BOB_PASSWORD))
        .await;
    let unknown = f
        .token(
            Some(&f.demo_basic()),
            &password("carol@example.com", ALICE_PASSWORD),
        )
        .await;
    let not_an_email = f
        .token(Some(&f.demo_basic()), &password("alice", ALICE_PASSWORD))
        .await;
    // A username that cannot be an email is refused before any hash, and answered as a wrong
    // password is: the credentials are invalid (RFC 6749 §5.2).
    for response in [&wrong, &unknown, &not_an_email] {
        assert_error(response, 400, "invalid_grant");
        assert!(response.headers().get("www-authenticate").is_none());
    }
    assert_eq!(json(&wrong), json(&unknown));
    assert_eq!(json(&wrong), json(&not_an_email));
}

#[tokio::test]
async fn error_never_echoes_the_password() {
    let f = fixture();
    let secret = "Not-Alices-Password-7";
    let response = f
        .token(Some(&f.demo_basic()), &password(ALICE, secret))
        .await;
    assert_error(&response, 400, "invalid_grant");
    assert!(!response.body().contains(secret));
}

#[tokio::test]
async fn missing_username_or_password_is_invalid_request() {
    let f = fixture();
    for body in [
        format!("grant_type=password&password={ALICE_PASSWORD}"),
        format!("grant_type=password&username={ALICE}"),
        format!("grant_type=password&username=&password={ALICE_PASSWORD}"),
        format!("grant_type=password&username={ALICE}&password="),
        "grant_type=password".to_owned(),
    ] {
        let response = f.token(Some(&f.demo_basic()), &body).await;
        assert_error(&response, 400, "invalid_request");
    }
}

#[tokio::test]
async fn scope_beyond_the_client_is_invalid_scope() {
    let f = fixture();
    for scope in ["admin", "profile%20admin", "unknown"] {
        let body = format!("{}&scope={scope}", password(ALICE, ALICE_PASSWORD));
        let response = f.token(Some(&f.demo_basic()), &body).await;
        assert_error(&response, 400, "invalid_scope");
    }
}

#[tokio::test]
async fn malformed_scope_is_invalid_scope() {
    let f = fixture();
    let body = format!("{}&scope=%22quoted%22", password(ALICE, ALICE_PASSWORD));
    let response = f.token(Some(&f.demo_basic()), &body).await;
    assert_error(&response, 400, "invalid_scope");
}

#[tokio::test]
async fn scope_may_be_narrowed() {
    let f = fixture();
    for (requested, granted) in [("email", "email"), ("profile", "profile")] {
        let body = format!("{}&scope={requested}", password(ALICE, ALICE_PASSWORD));
        let body = tokens(&f.token(Some(&f.demo_basic()), &body).await);
        assert_scope(&body, granted);
    }
    let body = format!("{}&scope=email+profile", password(BOB, BOB_PASSWORD));
    assert_scope(
        &tokens(&f.token(Some(&f.demo_basic()), &body).await),
        "profile email",
    );
}

#[tokio::test]
async fn public_client_is_not_agreed_for_password() {
    let f = fixture();
    let body = format!(
        "{}&client_id=public-client",
        password(ALICE, ALICE_PASSWORD)
    );
    let response = f.token(None, &body).await;
    assert_error(&response, 400, "unauthorized_client");
}

#[tokio::test]
async fn wrong_client_secret_is_checked_before_the_user() {
    let f = fixture();
    let response = f
        .token(
            Some(&basic("demo-client", "wrong")),
            &password(ALICE, ALICE_PASSWORD),
        )
        .await;
    assert_error(&response, 401, "invalid_client");
}
