//! The implicit grant (RFC 6749 §4.2) as a client sees it: the token and every other response
//! parameter arrive in the redirect's fragment, never its query, and never with a refresh token.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use grantor::*;
use grantor::{client::*, clock::*, settings::*, store::*};
use http::Response;

/// A token request by `client_id` to [`REDIRECT`], state `xyz`, then `extra`.
fn token_query(client_id: &str, extra: &str) -> String {
    format!(
        "response_type=token&client_id={client_id}&redirect_uri={REDIRECT_ENCODED}&state=xyz{extra}"
    )
}

fn enc(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn location(response: &Response<String>) -> &str {
    response.headers()["location"].to_str().unwrap()
}

/// Asserts nothing of the answer is in the redirect's query: the Location up to `#` is exactly
/// the registered redirect URI.
fn assert_only_in_fragment(response: &Response<String>, registered: &str) {
    assert_eq!(response.status(), 303);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let location = location(response);
    let (before, after) = location.split_once('#').expect("a fragment");
    assert_eq!(before, registered, "{location}");
    assert!(!after.is_empty(), "{location}");
}

/// Signs in as `user` and decides on a token request.
async fn decide(f: &Fixture, query: &str, user: &UserId, decision: Decision) -> Response<String> {
    let pending = f.pending(query).await;
    assert_eq!(pending.response_type(), ResponseType::Token);
    f.server.decide(pending, user, decision).await
}

/// Alice approves `query`; answers the fragment, having checked nothing is in the query.
async fn approved_fragment(f: &Fixture, query: &str) -> HashMap<String, String> {
    let response = decide(f, query, f.alice.id(), Decision::Approve).await;
    assert_only_in_fragment(&response, REDIRECT);
    let r = redirect(&response);
    assert!(r.query.is_empty(), "{:?}", r.query);
    r.fragment
}

/// Asserts an implicit-flow error in the fragment, with state `xyz` and `iss`, query empty.
fn assert_fragment_error(response: &Response<String>, code: &str) {
    assert_only_in_fragment(response, REDIRECT);
    let r = redirect(response);
    assert!(r.query.is_empty(), "{:?}", r.query);
    assert_eq!(r.fragment["error"], code, "{:?}", r.fragment);
    assert!(!r.fragment["error_description"].is_empty());
    assert_eq!(r.fragment["state"], "xyz");
    assert_eq!(r.fragment["iss"], ISSUER);
    assert!(!r.fragment.contains_key("access_token"));
}

/// Expects the authorization endpoint itself to redirect an error.
async fn authorize_error(f: &Fixture, query: &str) -> Response<String> {
    match f.server.authorize(&authorize_request(query)).await {
        Authorize::Redirect(redirect) => redirect.into_response(),
        other => panic!("expected an error redirect for {query}, got {other:?}"),
    }
}

async fn grant_of(f: &Fixture, access_token: &str) -> AccessGrant {
    let request = http::Request::get("/api/me")
        .header("authorization", format!("Bearer {access_token}"))
        .body(())
        .unwrap();
    f.server
        .bearer(&request, None)
        .await
        .expect("an active access token")
}

/// Registers a client agreed for the implicit grant only, approval not required.
fn register(f: &Fixture, id: &str, redirect_uri: &str, scopes: &str) {
    let verifier = ClientCredentials::generate().unwrap().verifier;
    f.register(
        Client::confidential(id, verifier)
            .redirect_uri(redirect_uri)
            .grant_types([GrantType::Implicit])
            .scopes(scopes)
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
    );
}

#[tokio::test]
async fn implicit_token_is_in_the_fragment_never_the_query() {
    let f = fixture();
    let fragment = approved_fragment(&f, &token_query("demo-client", "")).await;
    for name in [
        "access_token",
        "token_type",
        "expires_in",
        "scope",
        "jti",
        "state",
        "iss",
    ] {
        assert!(
            fragment.contains_key(name),
            "{name} missing from {fragment:?}"
        );
    }
    assert_eq!(fragment.len(), 7, "{fragment:?}");
    assert_eq!(fragment["state"], "xyz");
    assert_eq!(fragment["iss"], ISSUER);
    assert!(!fragment.contains_key("code"));
}

#[tokio::test]
async fn implicit_token_type_is_bearer_and_expires_in_is_3600() {
    let f = fixture();
    let fragment = approved_fragment(&f, &token_query("demo-client", "")).await;
    assert_eq!(fragment["token_type"], "bearer");
    assert_eq!(fragment["expires_in"], "3600");
}

#[tokio::test]
async fn implicit_never_issues_a_refresh_token() {
    let f = fixture();
    assert!(
        grantor::store::ClientStore::find_client(&f.store, "demo-client")
            .await
            .unwrap()
            .unwrap()
            .issues_refresh_tokens()
    );
    for client in ["demo-client", f.fast_id.as_str()] {
        let response = decide(
            &f,
            &token_query(client, ""),
            f.alice.id(),
            Decision::Approve,
        )
        .await;
        assert!(
            !location(&response).contains("refresh_token"),
            "{}",
            location(&response)
        );
        assert!(!redirect(&response).fragment.contains_key("refresh_token"));
    }
    // Nothing but the access token was minted.
    assert_eq!(f.store.token_counts().1, 0, "live refresh tokens");
}

#[tokio::test]
async fn implicit_jti_is_22_characters_and_not_the_token() {
    let f = fixture();
    let fragment = approved_fragment(&f, &token_query("demo-client", "")).await;
    let jti = &fragment["jti"];
    assert_eq!(jti.len(), 22);
    assert_ne!(jti, &fragment["access_token"]);
    assert!(!fragment["access_token"].contains(jti.as_str()));
    assert_eq!(
        grant_of(&f, &fragment["access_token"]).await.jti().as_str(),
        jti
    );
}

#[tokio::test]
async fn implicit_token_is_active_and_expires_after_3600_seconds() {
    let f = fixture();
    let fragment = approved_fragment(&f, &token_query("demo-client", "")).await;
    let token = &fragment["access_token"];
    assert!(f.access_is_active(token).await);
    f.clock.advance(Duration::from_secs(3599));
    assert!(f.access_is_active(token).await);
    f.clock.advance(Duration::from_secs(1));
    assert!(!f.access_is_active(token).await);
}

#[tokio::test]
async fn implicit_token_is_bound_to_the_user_client_and_scope() {
    let f = fixture();
    let pending = f.pending(&token_query("demo-client", "&scope=email")).await;
    let response = f
        .server
        .decide(pending, f.bob.id(), Decision::Approve)
        .await;
    let fragment = redirect(&response).fragment;
    assert_eq!(fragment["scope"], "email");
    let grant = grant_of(&f, &fragment["access_token"]).await;
    assert_eq!(grant.authorization.client_id.as_str(), "demo-client");
    assert_eq!(
        grant.authorization.user.as_ref().map(User::id),
        Some(f.bob.id())
    );
    assert_eq!(grant.authorization.scope.as_str(), "email");
    assert_eq!(grant.expires_at, UnixTime::from_secs(START + 3600));
}

#[tokio::test]
async fn implicit_scope_is_present_and_canonical() {
    let f = fixture();
    let requested =
        approved_fragment(&f, &token_query("demo-client", "&scope=profile%20email")).await;
    assert_eq!(requested["scope"], "email profile");
    let default = approved_fragment(&f, &token_query("demo-client", "")).await;
    assert_eq!(default["scope"], "email profile");
    let fast_default = approved_fragment(&f, &token_query(&f.fast_id, "")).await;
    assert_eq!(fast_default["scope"], "profile");
}

#[tokio::test]
async fn implicit_empty_default_scope_is_present_and_empty() {
    let f = fixture();
    register(&f, "no-scope-client", REDIRECT, "");
    let fragment = approved_fragment(&f, &token_query("no-scope-client", "")).await;
    assert_eq!(
        fragment.get("scope").map(String::as_str),
        Some(""),
        "{fragment:?}"
    );
    assert!(f.access_is_active(&fragment["access_token"]).await);
}

#[tokio::test]
async fn implicit_each_approval_issues_a_distinct_token() {
    let f = fixture();
    let a = approved_fragment(&f, &token_query("demo-client", "")).await;
    let b = approved_fragment(&f, &token_query("demo-client", "")).await;
    assert_ne!(a["access_token"], b["access_token"]);
    assert_ne!(a["jti"], b["jti"]);
}

#[tokio::test]
async fn implicit_deny_sends_access_denied_in_the_fragment() {
    let f = fixture();
    let response = decide(
        &f,
        &token_query("demo-client", ""),
        f.alice.id(),
        Decision::Deny,
    )
    .await;
    assert_fragment_error(&response, "access_denied");
    assert_eq!(f.store.token_counts().0, 0, "no access token was minted");
}

#[tokio::test]
async fn implicit_expired_pending_is_access_denied_in_the_fragment() {
    let f = fixture();
    let pending = f.pending(&token_query("demo-client", "")).await;
    f.clock.advance(Duration::from_secs(601));
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    assert_fragment_error(&response, "access_denied");
}

#[tokio::test]
async fn implicit_unknown_user_is_access_denied_in_the_fragment() {
    let f = fixture();
    let response = decide(
        &f,
        &token_query("demo-client", ""),
        &UserId::new("nobody"),
        Decision::Approve,
    )
    .await;
    assert_fragment_error(&response, "access_denied");
}

#[tokio::test]
async fn implicit_client_removed_before_decide_is_not_redirected() {
    let f = fixture();
    let pending = f.pending(&token_query("demo-client", "")).await;
    assert!(f.remove_client("demo-client"));
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    assert_error(&response, 400, "invalid_request");
    assert!(response.headers().get("location").is_none());
    assert!(!response.body().contains("access_token"));
}

#[tokio::test]
async fn implicit_errors_after_validation_go_to_the_fragment() {
    let f = fixture();
    for (extra, code) in [
        ("&scope=admin", "invalid_scope"),
        ("&scope=profile%20admin", "invalid_scope"),
        ("&scope=a%22b", "invalid_scope"),
        ("&scope=profile&scope=email", "invalid_request"),
        ("&response_type=token", "invalid_request"),
    ] {
        let response = authorize_error(&f, &token_query("demo-client", extra)).await;
        assert_fragment_error(&response, code);
    }
    let response = authorize_error(&f, &token_query("demo-client", "&state=other")).await;
    assert_only_in_fragment(&response, REDIRECT);
    assert_eq!(redirect(&response).fragment["error"], "invalid_request");
}

#[tokio::test]
async fn client_not_agreed_for_implicit_gets_unauthorized_client_in_the_fragment() {
    let f = fixture();
    for client in ["plain-client", "public-client"] {
        let response = authorize_error(&f, &token_query(client, "")).await;
        assert_fragment_error(&response, "unauthorized_client");
    }
}

#[tokio::test]
async fn implicit_request_with_a_bad_client_or_redirect_uri_is_rejected_without_redirect() {
    let f = fixture();
    let evil = enc("https://evil.example/cb");
    for query in [
        token_query("nobody", ""),
        format!("response_type=token&client_id=demo-client&redirect_uri={evil}"),
        "response_type=token&client_id=demo-client".to_owned(),
        token_query("demo-client", &format!("&redirect_uri={REDIRECT_ENCODED}")),
    ] {
        match f.server.authorize(&authorize_request(&query)).await {
            Authorize::Reject(error) => assert_eq!(error.code(), ErrorCode::InvalidRequest),
            other => panic!("expected Reject for {query}, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn implicit_ignores_pkce_parameters() {
    let f = fixture();
    for extra in [
        format!("&code_challenge={CHALLENGE}&code_challenge_method=S256"),
        format!("&code_challenge={VERIFIER}&code_challenge_method=plain"),
        format!("&code_challenge={VERIFIER}"),
        "&code_challenge=abc&code_challenge_method=S512".to_owned(),
        "&code_challenge_method=S256".to_owned(),
    ] {
        let fragment = approved_fragment(&f, &token_query("demo-client", &extra)).await;
        assert!(
            fragment.contains_key("access_token"),
            "{extra}: {fragment:?}"
        );
    }
}

#[tokio::test]
async fn implicit_needs_no_pkce_even_when_every_client_must_use_it() {
    let f = fixture_with(|b| b.pkce_policy(PkcePolicy::AllClients));
    let fragment = approved_fragment(&f, &token_query("demo-client", "")).await;
    assert!(fragment.contains_key("access_token"));
}

#[tokio::test]
async fn implicit_state_with_special_characters_round_trips_in_the_fragment() {
    let f = fixture();
    let state = "a&b=c d#e+f%20?g/h;i ~!\"'<>[]{}|^`";
    let query = format!(
        "response_type=token&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&state={}",
        enc(state)
    );
    let response = decide(&f, &query, f.alice.id(), Decision::Approve).await;
    assert_only_in_fragment(&response, REDIRECT);
    assert_eq!(redirect(&response).fragment["state"], state);
    let error = authorize_error(&f, &format!("{query}&scope=admin")).await;
    assert_eq!(redirect(&error).fragment["state"], state);
}

#[tokio::test]
async fn implicit_keeps_a_registered_query_and_adds_nothing_to_it() {
    let f = fixture();
    let uri = "http://127.0.0.1:8081/cb?tenant=a";
    register(&f, "tenant-client", uri, "profile");
    let query = format!(
        "response_type=token&client_id=tenant-client&redirect_uri={}&state=xyz",
        enc(uri)
    );
    let response = decide(&f, &query, f.alice.id(), Decision::Approve).await;
    assert_only_in_fragment(&response, uri);
    let r = redirect(&response);
    assert_eq!(
        r.query,
        HashMap::from([("tenant".to_owned(), "a".to_owned())])
    );
    assert_eq!(r.fragment["scope"], "profile");
    assert_eq!(r.fragment["state"], "xyz");
    let error = authorize_error(&f, &format!("{query}&scope=admin")).await;
    assert_only_in_fragment(&error, uri);
    assert_eq!(redirect(&error).fragment["error"], "invalid_scope");
}

#[tokio::test]
async fn implicit_pending_describes_the_token_request() {
    let f = fixture();
    let pending = f.pending(&token_query("demo-client", "&scope=email")).await;
    assert_eq!(pending.response_type(), ResponseType::Token);
    assert_eq!(pending.client().name(), "Demo Client");
    assert_eq!(pending.scope().as_str(), "email");
    assert_eq!(pending.redirect_uri(), REDIRECT);
    assert!(pending.needs_approval());
    let fast = f.pending(&token_query(&f.fast_id, "")).await;
    assert!(!fast.needs_approval());
}

#[tokio::test]
async fn an_implicit_token_remembers_the_sign_in_the_decision_was() {
    let f = fixture();
    f.clock.advance(Duration::from_secs(7));
    // The host signed Alice in itself and decided: the decision is the sign-in, by no method
    // grantor knows.
    let fragment = approved_fragment(&f, &token_query(&f.fast_id, "")).await;
    let grant = grant_of(&f, &fragment["access_token"]).await;
    let signed_in = grant.authorization.authentication.expect("a sign-in");
    assert_eq!(signed_in.auth_time(), UnixTime::from_secs(START + 7));
    assert_eq!(signed_in.acr(), None);
    assert!(signed_in.amr().is_empty(), "{signed_in:?}");
}
