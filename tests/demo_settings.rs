//! The demo servers' newer settings over real HTTP, against `axum_server` and `actix_server`:
//! `--refresh-grace` (a retry of a lost refresh answer leaves one live pair), `--profile
//! oauth2.1` (no password, no implicit, PKCE from everyone), and loopback redirect URIs with any
//! port (RFC 8252 §7.3).

mod demo;

use demo::Server;
use demo::http::*;

each_framework! {
    a_refresh_retry_within_the_grace_window_leaves_one_live_pair => refresh_grace;
    the_oauth_2_1_profile_refuses_password_and_implicit_and_requires_pkce => oauth21;
    a_loopback_redirect_uri_matches_with_any_port => loopback_port;
}

async fn refresh_grace(framework: &str) {
    let server = Server::start_with_args(framework, "memory", &["--refresh-grace", "30"]);
    let base = &server.base;
    let first = password_grant(base, DEMO, ALICE, "profile").await;
    let refresh = |body: &serde_json::Value| {
        let token = body["refresh_token"].as_str().unwrap().to_owned();
        async move {
            token_reply(
                base,
                &[("grant_type", "refresh_token"), ("refresh_token", &token)],
            )
            .await
        }
    };
    let lost = assert_tokens(&refresh(&first).await);
    let retried = assert_tokens(&refresh(&first).await);
    assert_eq!(
        me(base, Some(access_token(&lost))).await.status,
        401,
        "the lost pair"
    );
    assert_eq!(me(base, Some(access_token(&retried))).await.status, 200);
    assert_tokens(&refresh(&retried).await);
    server.assert_alive_and_calm();
}

async fn token_reply(base: &str, pairs: &[(&str, &str)]) -> Reply {
    token(base, Some(DEMO), pairs).await
}

async fn oauth21(framework: &str) {
    let server = Server::start_with_args(framework, "memory", &["--profile", "oauth2.1"]);
    let base = &server.base;
    let password = token_reply(
        base,
        &[
            ("grant_type", "password"),
            ("username", ALICE.0),
            ("password", ALICE.1),
        ],
    )
    .await;
    assert_oauth_error(&password, 400, "unsupported_grant_type");
    let metadata = get(
        &browser(),
        &format!("{base}/.well-known/oauth-authorization-server"),
    )
    .await;
    let metadata = metadata.json();
    assert_eq!(
        metadata["response_types_supported"],
        serde_json::json!(["code"])
    );
    // A confidential client without PKCE is sent back with an error.
    let url = authorize_url(
        base,
        &[
            ("response_type", "code"),
            ("client_id", "demo-client"),
            ("redirect_uri", CALLBACK),
        ],
    );
    let refused = get(&browser(), &url).await;
    assert_eq!(callback_query(&refused)["error"], "invalid_request");
    server.assert_alive_and_calm();
}

async fn loopback_port(framework: &str) {
    let server = Server::start(framework);
    let other_port = "http://127.0.0.1:53117/callback";
    let url = authorize_url(
        &server.base,
        &[
            ("response_type", "code"),
            ("client_id", "plain-client"),
            ("redirect_uri", other_port),
            ("state", "port"),
        ],
    );
    let browser = browser();
    let page = get(&browser, &url).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let done = sign_in(&browser, &server.base, &sign_in_form(&page), ALICE).await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(
        done.location()
            .unwrap()
            .starts_with(&format!("{other_port}?code="))
    );
    server.assert_alive_and_calm();
}
