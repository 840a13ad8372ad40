//! The client credentials grant (RFC 6749 §4.4): confidential clients only, never a refresh
//! token.

mod common;

use std::collections::BTreeSet;

use common::*;
use http::Response;
use serde_json::Value;

const CC: &str = "grant_type=client_credentials";

/// Asserts a client-credentials token response and answers its body.
fn tokens(response: &Response<String>) -> Value {
    let body = assert_tokens(response);
    let keys: BTreeSet<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let expected = ["access_token", "expires_in", "jti", "scope", "token_type"];
    assert_eq!(
        keys,
        expected.into_iter().collect(),
        "no refresh_token: {body}"
    );
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["expires_in"].as_u64(), Some(3600), "{body}");
    assert_ne!(body["jti"], body["access_token"]);
    body
}

#[tokio::test]
async fn demo_client_gets_its_default_scope_and_no_refresh_token() {
    let f = fixture();
    let body = tokens(&f.token(Some(&f.demo_basic()), CC).await);
    assert_scope(&body, "profile email");
    assert!(
        f.access_is_active(body["access_token"].as_str().unwrap())
            .await
    );
}

#[tokio::test]
async fn fast_client_gets_its_default_scope_and_no_refresh_token() {
    let f = fixture();
    let body = tokens(&f.token(Some(&f.fast_basic()), CC).await);
    assert_scope(&body, "profile");
    assert!(
        f.access_is_active(body["access_token"].as_str().unwrap())
            .await
    );
}

#[tokio::test]
async fn each_request_gets_a_fresh_token() {
    let f = fixture();
    let first = tokens(&f.token(Some(&f.fast_basic()), CC).await);
    let second = tokens(&f.token(Some(&f.fast_basic()), CC).await);
    assert_ne!(first["access_token"], second["access_token"]);
    assert_ne!(first["jti"], second["jti"]);
}

#[tokio::test]
async fn scope_may_be_narrowed() {
    let f = fixture();
    for (requested, granted) in [
        ("email", "email"),
        ("profile", "profile"),
        ("email+profile", "profile email"),
    ] {
        let body = format!("{CC}&scope={requested}");
        assert_scope(
            &tokens(&f.token(Some(&f.demo_basic()), &body).await),
            granted,
        );
    }
    // Beyond its default but within its registered scopes.
    let body = format!("{CC}&scope=email");
    assert_scope(
        &tokens(&f.token(Some(&f.fast_basic()), &body).await),
        "email",
    );
}

#[tokio::test]
async fn scope_beyond_the_client_is_invalid_scope() {
    let f = fixture();
    for scope in ["admin", "profile%20admin", "%22"] {
        let body = format!("{CC}&scope={scope}");
        assert_error(
            &f.token(Some(&f.demo_basic()), &body).await,
            400,
            "invalid_scope",
        );
    }
}

#[tokio::test]
async fn plain_client_is_not_agreed_for_client_credentials() {
    let f = fixture();
    let response = f
        .token(Some(&basic("plain-client", "plain-secret")), CC)
        .await;
    assert_error(&response, 400, "unauthorized_client");
}

/// RFC 6749 §4.4: only confidential clients. The public client cannot authenticate, and is not
/// agreed for the grant either; grantor answers `unauthorized_client` (400), not 401.
#[tokio::test]
async fn public_client_cannot_use_client_credentials() {
    let f = fixture();
    let by_id = format!("{CC}&client_id=public-client");
    assert_error(&f.token(None, &by_id).await, 400, "unauthorized_client");
    let empty_basic = basic("public-client", "");
    assert_error(
        &f.token(Some(&empty_basic), CC).await,
        400,
        "unauthorized_client",
    );
    let with_secret = basic("public-client", "x");
    assert_error(
        &f.token(Some(&with_secret), CC).await,
        401,
        "invalid_client",
    );
}

#[tokio::test]
async fn wrong_secret_is_invalid_client() {
    let f = fixture();
    let response = f.token(Some(&basic("demo-client", "nope")), CC).await;
    assert_error(&response, 401, "invalid_client");
}
