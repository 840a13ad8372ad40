//! RFC 6750 bearer validation: the grant for a good token, the exact challenge otherwise.

mod common;

use std::time::Duration;

use common::*;

const REALM: &str = "Bearer realm=\"http://127.0.0.1:8080\"";
/// RFC 9728 §5.1: every challenge names the default resource's metadata.
const METADATA: &str =
    ", resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource\"";

fn challenge(response: &http::Response<String>) -> &str {
    response.headers()["www-authenticate"].to_str().unwrap()
}

#[tokio::test]
async fn a_valid_token_yields_its_grant() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let access = tokens["access_token"].as_str().unwrap();
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let grant = f
            .bearer(Some(&format!("{scheme} {access}")), Some("profile"))
            .await
            .unwrap();
        assert_eq!(grant.authorization.client_id.as_str(), f.fast_id);
        assert_eq!(grant.authorization.user.as_ref(), Some(&f.alice));
        assert_eq!(grant.authorization.scope.as_str(), "profile");
        assert_eq!(grant.jti().as_str(), tokens["jti"]);
        assert_eq!(grant.expires_at.as_secs(), START + 3600);
    }
}

#[tokio::test]
async fn no_credentials_get_a_bare_challenge_without_an_error_code() {
    let f = fixture();
    for authorization in [None, Some("Basic YTpi"), Some("Digest x")] {
        let response = f.bearer(authorization, None).await.unwrap_err();
        assert_eq!(response.status(), 401, "{authorization:?}");
        assert_eq!(challenge(&response), format!("{REALM}{METADATA}"));
    }
}

#[tokio::test]
async fn a_bad_expired_or_revoked_token_is_invalid_token() {
    let f = fixture();
    let expected = format!(
        "{REALM}, error=\"invalid_token\", \
         error_description=\"the access token is invalid, expired or revoked\"{METADATA}"
    );
    let unknown = f
        .bearer(Some("Bearer no-such-token"), None)
        .await
        .unwrap_err();
    assert_eq!(unknown.status(), 401);
    assert_eq!(challenge(&unknown), expected);
    assert_eq!(json(&unknown)["error"], "invalid_token");

    let revoked = f.fast_tokens().await;
    let access = revoked["access_token"].as_str().unwrap();
    f.revoke(Some(&f.fast_basic()), &format!("token={access}"))
        .await;
    let response = f
        .bearer(Some(&format!("Bearer {access}")), None)
        .await
        .unwrap_err();
    assert_eq!(challenge(&response), expected);

    let expiring = f.fast_tokens().await;
    let access = expiring["access_token"].as_str().unwrap();
    f.clock.advance(Duration::from_secs(3600));
    let response = f
        .bearer(Some(&format!("Bearer {access}")), None)
        .await
        .unwrap_err();
    assert_eq!(response.status(), 401);
    assert_eq!(challenge(&response), expected);
}

#[tokio::test]
async fn a_refresh_token_is_not_a_bearer_token() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let response = f
        .bearer(Some(&format!("Bearer {refresh}")), None)
        .await
        .unwrap_err();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn missing_scope_is_insufficient_scope_with_the_scope_needed() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let access = tokens["access_token"].as_str().unwrap();
    let response = f
        .bearer(Some(&format!("Bearer {access}")), Some("email profile"))
        .await
        .unwrap_err();
    assert_eq!(response.status(), 403);
    assert_eq!(
        challenge(&response),
        format!(
            "{REALM}, error=\"insufficient_scope\", error_description=\"the access token lacks \
             the scope this resource requires\", scope=\"email profile\"{METADATA}"
        )
    );
    let body = json(&response);
    assert_eq!(body["error"], "insufficient_scope");
    assert_eq!(body["scope"], "email profile");
}

#[tokio::test]
async fn a_malformed_header_is_invalid_request() {
    let f = fixture();
    for authorization in [
        "Bearer",
        "Bearer ",
        "Bearer a b",
        "Bearer a\"b",
        "Bearer ==",
        "Bearer a=b",
    ] {
        let response = f.bearer(Some(authorization), None).await.unwrap_err();
        assert_eq!(response.status(), 400, "{authorization}");
        assert!(
            challenge(&response).starts_with(&format!("{REALM}, error=\"invalid_request\"")),
            "{authorization}"
        );
    }
    // The challenge's text is the RFC's character set, readable on the wire: no `§` turned `?`.
    let response = f.bearer(Some("Bearer"), None).await.unwrap_err();
    assert!(
        challenge(&response).contains(
            "error_description=\"the Authorization header does not carry a token \
             (RFC 6750 section 2.1, RFC 9449 section 7.1)\""
        ),
        "{}",
        challenge(&response)
    );
    let request = http::Request::get("/api/me")
        .header("authorization", "Bearer a")
        .header("authorization", "Bearer b")
        .body(())
        .unwrap();
    let response = f.server.bearer(&request, None).await.unwrap_err();
    assert_eq!(response.status(), 400);
}

/// Each refusal says why, as a value a host can match, beside the answer it sends.
#[tokio::test]
async fn every_refusal_carries_its_typed_reason() {
    use grantor::BearerRefusalReason as Reason;
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let access = tokens["access_token"].as_str().unwrap();
    let check = |authorization: Option<String>, scope: Option<&str>| {
        let mut request = http::Request::get("/api/me");
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        let request = request.body(()).unwrap();
        let scope = scope.map(|s| grantor::Scope::parse(s).unwrap());
        let server = f.server.clone();
        async move { server.bearer(&request, scope.as_ref()).await.unwrap_err() }
    };
    let cases = [
        (None, None, Reason::NoCredentials, 401),
        (
            Some("Bearer a b".to_owned()),
            None,
            Reason::InvalidRequest,
            400,
        ),
        (
            Some("Bearer not-a-token".to_owned()),
            None,
            Reason::InvalidToken,
            401,
        ),
        (
            Some(format!("Bearer {access}")),
            Some("admin"),
            Reason::InsufficientScope,
            403,
        ),
    ];
    for (authorization, scope, reason, status) in cases {
        let refusal = check(authorization.clone(), scope).await;
        assert_eq!(refusal.reason(), reason, "{authorization:?}");
        assert_eq!(refusal.status(), status, "{authorization:?}");
        let response = refusal.into_response();
        assert!(response.headers().contains_key("www-authenticate"));
    }
}
