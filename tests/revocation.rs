//! RFC 7009 revocation: a client revokes its own tokens; refresh tokens take their family along.

mod common;

use common::*;

fn form(token: &str, hint: Option<&str>) -> String {
    match hint {
        Some(hint) => format!("token={token}&token_type_hint={hint}"),
        None => format!("token={token}"),
    }
}

#[tokio::test]
async fn a_revoked_access_token_is_refused_everywhere_at_once() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let access = tokens["access_token"].as_str().unwrap();
    let response = f.revoke(Some(&f.fast_basic()), &form(access, None)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert!(!f.access_is_active(access).await);
    assert!(
        f.bearer(Some(&format!("Bearer {access}")), None)
            .await
            .is_err()
    );
    let introspected = f
        .introspect(Some(&f.fast_basic()), &form(access, None))
        .await;
    assert_eq!(introspected.body(), r#"{"active":false}"#);
    // The refresh token of the same grant is untouched (RFC 7009 §2.1 leaves it to the server).
    let refresh = tokens["refresh_token"].as_str().unwrap();
    assert_eq!(f.refresh(refresh).await.status(), 200);
}

#[tokio::test]
async fn revoking_a_refresh_token_kills_its_family_and_access_tokens() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let rotated = json(&f.refresh(refresh).await);
    let newest_refresh = rotated["refresh_token"].as_str().unwrap();
    for hint in [Some("refresh_token"), Some("access_token"), None] {
        let response = f
            .revoke(Some(&f.fast_basic()), &form(newest_refresh, hint))
            .await;
        assert_eq!(response.status(), 200);
    }
    for access in [&tokens["access_token"], &rotated["access_token"]] {
        assert!(!f.access_is_active(access.as_str().unwrap()).await);
    }
    let refreshed = f.refresh(newest_refresh).await;
    assert_error(&refreshed, 400, "invalid_grant");
}

#[tokio::test]
async fn revoking_a_rotated_refresh_token_still_kills_the_family() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let first = tokens["refresh_token"].as_str().unwrap();
    let rotated = json(&f.refresh(first).await);
    let response = f.revoke(Some(&f.fast_basic()), &form(first, None)).await;
    assert_eq!(response.status(), 200);
    assert!(
        !f.access_is_active(rotated["access_token"].as_str().unwrap())
            .await
    );
}

#[tokio::test]
async fn a_client_cannot_revoke_another_clients_token() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();
    for token in [access, refresh] {
        let response = f.revoke(Some(&f.demo_basic()), &form(token, None)).await;
        assert_eq!(
            response.status(),
            200,
            "a foreign token answers like an unknown one"
        );
    }
    assert!(f.access_is_active(access).await);
    assert_eq!(f.refresh(refresh).await.status(), 200);
}

#[tokio::test]
async fn unknown_tokens_and_unknown_hints_answer_200() {
    let f = fixture();
    for body in [
        form("no-such-token", None),
        form("no-such-token", Some("refresh_token")),
        form("no-such-token", Some("something_else")),
    ] {
        let response = f.revoke(Some(&f.fast_basic()), &body).await;
        assert_eq!(response.status(), 200, "{body}");
    }
    let tokens = f.fast_tokens().await;
    let access = tokens["access_token"].as_str().unwrap();
    let response = f
        .revoke(Some(&f.fast_basic()), &form(access, Some("unknown_hint")))
        .await;
    assert_eq!(response.status(), 200);
    assert!(
        !f.access_is_active(access).await,
        "an unknown hint is only a hint"
    );
}

#[tokio::test]
async fn a_public_client_revokes_its_own_token_with_client_id() {
    let f = fixture();
    let code = f
        .code(
            "public-client",
            &format!("&code_challenge={CHALLENGE}&code_challenge_method=S256"),
        )
        .await;
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &client_id=public-client&code_verifier={VERIFIER}"
    );
    let tokens = json(&f.token(None, &body).await);
    let access = tokens["access_token"].as_str().unwrap();
    let body = format!("token={access}&client_id=public-client");
    assert_eq!(f.revoke(None, &body).await.status(), 200);
    assert!(!f.access_is_active(access).await);
}

#[tokio::test]
async fn revocation_requires_client_authentication() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let access = tokens["access_token"].as_str().unwrap();
    let response = f.revoke(None, &form(access, None)).await;
    assert_error(&response, 401, "invalid_client");
    let wrong = basic(&f.fast_id, "wrong-secret");
    let response = f.revoke(Some(&wrong), &form(access, None)).await;
    assert_error(&response, 401, "invalid_client");
    let with_secret = format!("{}&client_secret={}", form(access, None), f.fast_secret);
    let response = f.revoke(Some(&f.fast_basic()), &with_secret).await;
    assert_error(&response, 401, "invalid_client");
    assert!(f.access_is_active(access).await);
}

#[tokio::test]
async fn malformed_revocation_requests_are_invalid_request() {
    let f = fixture();
    let auth = f.fast_basic();
    assert_error(&f.revoke(Some(&auth), "").await, 400, "invalid_request");
    assert_error(
        &f.revoke(Some(&auth), "token=a&token=b").await,
        400,
        "invalid_request",
    );
    assert_error(
        &f.revoke(Some(&auth), "token=%zz").await,
        400,
        "invalid_request",
    );
    let get = http::Request::get("/api/oauth/revoke").body("").unwrap();
    let response = f.server.revoke(&get).await;
    assert_error(&response, 405, "invalid_request");
    assert_eq!(response.headers()["allow"], "POST");
    let json_body = http::Request::post("/api/oauth/revoke")
        .header("authorization", auth.as_str())
        .header("content-type", "application/json")
        .body(r#"{"token":"x"}"#)
        .unwrap();
    assert_error(&f.server.revoke(&json_body).await, 400, "invalid_request");
}
