//! The demo servers of `examples/` over real HTTP: one suite, run against `axum_server` and
//! `actix_server` alike, as a standard OAuth 2.0 client and a browser would drive them (the demo
//! contract). Each test builds the examples (a no-op when fresh), starts its own server on a free
//! loopback port and kills it when done; `suite!` makes an `axum` and an `actix` test of every
//! check, so `cargo test --test demo_http actix` runs one framework.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::header::CONTENT_TYPE;
use sha2::{Digest, Sha256};

mod demo;

use demo::Server;
use demo::http::*;

/// Makes an `axum` and an `actix` test of each check. `check(base)` gets the server's base URL;
/// `check(server)` gets the server itself.
macro_rules! suite {
    ($($rule:ident => $check:ident($arg:ident);)*) => {$(
        mod $rule {
            #[tokio::test]
            async fn axum() {
                suite!(@run "axum", $check, $arg);
            }

            #[tokio::test]
            async fn actix() {
                suite!(@run "actix", $check, $arg);
            }
        }
    )*};
    (@run $framework:literal, $check:ident, base) => {
        let server = super::Server::start($framework);
        super::$check(&server.base).await;
    };
    (@run $framework:literal, $check:ident, server) => {
        super::$check(super::Server::start($framework)).await;
    };
}

suite! {
    metadata_is_json_with_absolute_endpoints => check_metadata(base);
    index_is_an_html_page => check_index(base);
    password_grant_gives_demo_client_a_refresh_token => check_password_grant_demo_client(base);
    password_grant_gives_plain_client_no_refresh_token => check_password_grant_plain_client(base);
    wrong_password_is_invalid_grant => check_wrong_password(base);
    client_credentials_has_no_refresh_token_and_no_user => check_client_credentials(base);
    events_are_json_lines_on_stdout => check_events(server);
    refresh_rotates_and_reuse_revokes_the_family => check_refresh_rotation(base);
    secret_in_body_is_invalid_client => check_secret_in_body(base);
    token_revoke_and_introspect_answer_get_with_405 => check_get_is_405(base);
    oversized_body_is_413_json => check_oversized_body(base);
    unreadable_body_is_400_not_413 => check_unreadable_body(base);
    code_flow_through_the_pages => check_code_flow(base);
    deny_redirects_with_access_denied => check_deny(base);
    plain_client_skips_the_approval_step => check_plain_client_code_flow(base);
    public_client_exchanges_with_pkce_s256 => check_public_client_pkce(base);
    implicit_flow_puts_the_token_in_the_fragment => check_implicit_flow(base);
    unknown_client_or_redirect_uri_shows_an_error_page => check_unredirectable_errors(base);
    admin_scope_is_invalid_scope => check_admin_scope(base);
    me_without_token_is_a_bare_bearer_challenge => check_me_without_token(base);
    me_with_a_bad_token_is_invalid_token => check_me_bad_token(base);
    two_authorization_headers_are_invalid_request => check_two_authorization_headers(base);
    host_routes_answer_other_methods_405_and_unknown_paths_404 => check_methods_and_paths(base);
    revoked_token_is_refused_and_inactive => check_revocation(base);
    live_token_introspects_active_with_username => check_introspection(base);
    csrf_token_and_session_cookie_are_enforced => check_csrf(base);
    log_has_method_path_status_never_query_or_secrets => check_log(server);
    stops_on_sigterm_with_success => check_sigterm(server);
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

async fn check_metadata(base: &str) {
    let reply = get(
        &browser(),
        &format!("{base}/.well-known/oauth-authorization-server"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, "application/json");
    let metadata = reply.json();
    assert_eq!(metadata["issuer"], base, "{metadata}");
    for (field, path) in [
        ("authorization_endpoint", "/api/oauth/authorize"),
        ("token_endpoint", "/api/oauth/token"),
        ("revocation_endpoint", "/api/oauth/revoke"),
        ("introspection_endpoint", "/api/oauth/introspect"),
        ("registration_endpoint", "/api/oauth/register"),
    ] {
        assert_eq!(
            metadata[field],
            format!("{base}{path}"),
            "{field}: {metadata}"
        );
    }
    let methods = strings(&metadata["token_endpoint_auth_methods_supported"]);
    assert!(
        methods.contains(&"client_secret_basic".to_owned()),
        "{metadata}"
    );
    // `post-client` sends its secret in the body (examples/README.md part 3); no other client may.
    assert!(
        methods.contains(&"client_secret_post".to_owned()),
        "{metadata}"
    );
    assert!(strings(&metadata["code_challenge_methods_supported"]).contains(&"S256".to_owned()));
}

async fn check_index(base: &str) {
    let reply = get(&browser(), &format!("{base}/")).await;
    assert_eq!(reply.status, 200);
    assert_page_headers(&reply, false);
    assert!(
        reply
            .body
            .contains("/.well-known/oauth-authorization-server"),
        "{}",
        reply.body
    );
}

async fn check_password_grant_demo_client(base: &str) {
    let tokens = password_grant(base, DEMO, ALICE, "profile email").await;
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    assert_scope(&tokens["scope"], "profile email");
}

async fn check_password_grant_plain_client(base: &str) {
    let tokens = password_grant(base, PLAIN, BOB, "email").await;
    assert!(tokens.get("refresh_token").is_none(), "{tokens}");
    assert_scope(&tokens["scope"], "email");
    let profile = me(base, Some(access_token(&tokens))).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    assert_eq!(profile.json()["email"], BOB.0);
}

async fn check_wrong_password(base: &str) {
    let reply = token(
        base,
        Some(DEMO),
        &[
            ("grant_type", "password"),
            ("username", ALICE.0),
            ("password", "not-her-password"),
        ],
    )
    .await;
    assert_oauth_error(&reply, 400, "invalid_grant");
}

async fn check_events(server: Server) {
    let base = server.base.as_str();
    let reply = token(base, Some(DEMO), &[("grant_type", "client_credentials")]).await;
    let tokens = assert_tokens(&reply);
    let jti = tokens["jti"].as_str().expect("a jti");
    let events = server.events_with(jti).await;
    let issued: serde_json::Value = events
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("a JSON line"))
        .find(|event| event["jti"] == jti)
        .unwrap_or_else(|| panic!("no event for the token in {events:?}"));
    assert_eq!(issued["event"], "token_issued", "{issued}");
    assert_eq!(issued["grant_type"], "client_credentials", "{issued}");
    assert_eq!(issued["client_id"], DEMO.0, "{issued}");
    assert!(
        issued["family"].as_str().is_some_and(|f| f.len() == 32),
        "{issued}"
    );
    assert!(issued["at"].as_u64().is_some(), "{issued}");
    assert!(issued.get("user_id").is_none(), "{issued}");
    assert!(
        !events.contains(access_token(&tokens)),
        "an event shows the token"
    );

    let refused = token(
        base,
        Some((DEMO.0, "not-the-secret")),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_oauth_error(&refused, 401, "invalid_client");
    let events = server.events_with("client_authentication_failed").await;
    assert!(
        events.lines().any(
            |line| line.contains("\"event\":\"client_authentication_failed\"")
                && line.contains(DEMO.0)
        ),
        "{events}"
    );
    assert!(!events.contains("not-the-secret"));
}

async fn check_client_credentials(base: &str) {
    let reply = token(base, Some(DEMO), &[("grant_type", "client_credentials")]).await;
    let tokens = assert_tokens(&reply);
    assert!(tokens.get("refresh_token").is_none(), "{tokens}");
    let profile = me(base, Some(access_token(&tokens))).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    let profile = profile.json();
    assert!(
        profile["email"].is_null(),
        "a client-credentials token has no user: {profile}"
    );
    assert_eq!(profile["client_id"], DEMO.0, "{profile}");
}

async fn check_refresh_rotation(base: &str) {
    let first = password_grant(base, DEMO, ALICE, "profile email").await;
    let refresh = |token: &str| {
        let token = token.to_owned();
        async move {
            self::token(
                base,
                Some(DEMO),
                &[("grant_type", "refresh_token"), ("refresh_token", &token)],
            )
            .await
        }
    };
    let old_refresh = first["refresh_token"].as_str().expect("a refresh token");
    let second = assert_tokens(&refresh(old_refresh).await);
    let new_refresh = second["refresh_token"]
        .as_str()
        .expect("a rotated refresh token");
    assert_ne!(new_refresh, old_refresh, "the refresh token rotates");
    assert_ne!(access_token(&second), access_token(&first));
    assert_scope(&second["scope"], "profile email");
    assert_eq!(me(base, Some(access_token(&second))).await.status, 200);

    // Presenting the rotated token again is reuse: the whole family goes.
    assert_oauth_error(&refresh(old_refresh).await, 400, "invalid_grant");
    assert_oauth_error(&refresh(new_refresh).await, 400, "invalid_grant");
    for tokens in [&first, &second] {
        let profile = me(base, Some(access_token(tokens))).await;
        assert_eq!(
            profile.status, 401,
            "the family's access tokens are revoked: {}",
            profile.body
        );
    }
}

async fn check_secret_in_body(base: &str) {
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", DEMO.0),
            ("client_secret", DEMO.1),
        ],
    )
    .await;
    assert_oauth_error(&reply, 401, "invalid_client");
    let challenge = reply.header("www-authenticate").expect("a challenge");
    assert!(challenge.starts_with("Basic "), "{challenge}");
}

async fn check_get_is_405(base: &str) {
    let http = browser();
    for path in [
        "/api/oauth/token",
        "/api/oauth/revoke",
        "/api/oauth/introspect",
    ] {
        let reply = get(&http, &format!("{base}{path}")).await;
        assert_oauth_error(&reply, 405, "invalid_request");
        assert_eq!(reply.header("allow"), Some("POST"), "{path}");
    }
}

async fn check_oversized_body(base: &str) {
    let http = browser();
    let body = format!("grant_type=password&username={}", "a".repeat(17 * 1024));
    for path in [
        "/api/oauth/token",
        "/api/oauth/revoke",
        "/api/oauth/introspect",
        "/api/oauth/authorize",
        "/signin",
        "/approve",
    ] {
        let reply = send(
            http.post(format!("{base}{path}"))
                .basic_auth(DEMO.0, Some(DEMO.1))
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(body.clone()),
        )
        .await;
        assert_oauth_error(&reply, 413, "invalid_request");
        // The rest of the body is unread: the server closes the connection and says so, so
        // the same client's next request goes on a new one.
        assert_eq!(reply.header("connection"), Some("close"), "{path}");
    }
    let metadata = get(
        &http,
        &format!("{base}/.well-known/oauth-authorization-server"),
    )
    .await;
    assert_eq!(metadata.status, 200);
}

async fn check_unreadable_body(base: &str) {
    // A chunk size that is not hexadecimal: the body cannot be read, but it is not too large.
    // reqwest cannot send this, so it goes over a plain socket.
    let authority = base.trim_start_matches("http://");
    let mut socket = std::net::TcpStream::connect(authority).expect("a connection");
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a timeout");
    let request = format!(
        "POST /api/oauth/token HTTP/1.1\r\nHost: {authority}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\nzz\r\ngrant_type=client_credentials\r\n0\r\n\r\n"
    );
    socket
        .write_all(request.as_bytes())
        .expect("the request is sent");
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
}

async fn check_code_flow(base: &str) {
    let http = browser();
    let state = "state-of-the-code-flow";
    let page = get(
        &http,
        &authorize_url(
            base,
            &[
                ("response_type", "code"),
                ("client_id", DEMO.0),
                ("redirect_uri", CALLBACK),
                ("scope", "profile email"),
                ("state", state),
            ],
        ),
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_page_headers(&page, true);
    let csrf = sign_in_form(&page);

    // A wrong password shows the form again with a message, and never redirects.
    let again = sign_in(&http, base, &csrf, (ALICE.0, "not-her-password")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(again.location().is_none(), "{:?}", again.location());
    assert_page_headers(&again, true);
    assert!(
        again.body.contains("The email or password is incorrect."),
        "{}",
        again.body
    );
    let csrf = sign_in_form(&again);

    let approval = sign_in(&http, base, &csrf, ALICE).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    assert_page_headers(&approval, true);
    assert!(approval.body.contains("Demo Client"), "{}", approval.body);
    assert!(approval.body.contains("profile"), "{}", approval.body);
    assert!(approval.body.contains("email"), "{}", approval.body);
    let done = decide(&http, base, &approval, "approve").await;
    let params = callback_query(&done);
    assert_eq!(params.get("state").map(String::as_str), Some(state));
    assert_eq!(params.get("iss").map(String::as_str), Some(base));
    let code = params.get("code").expect("a code");

    let redeem = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let tokens = assert_tokens(&token(base, Some(DEMO), &redeem).await);
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    assert_scope(&tokens["scope"], "profile email");
    let profile = me(base, Some(access_token(&tokens))).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    let profile = profile.json();
    assert_eq!(profile["email"], ALICE.0, "{profile}");
    assert_scope(&profile["scope"], "profile email");

    // A code is redeemed once; a replay revokes what it was exchanged for (RFC 6749 §4.1.2).
    assert_oauth_error(
        &token(base, Some(DEMO), &redeem).await,
        400,
        "invalid_grant",
    );
    assert_oauth_error(
        &me(base, Some(access_token(&tokens))).await,
        401,
        "invalid_token",
    );
}

async fn check_deny(base: &str) {
    let http = browser();
    let approval = sign_in_via_authorize(
        &http,
        base,
        &[
            ("response_type", "code"),
            ("client_id", DEMO.0),
            ("redirect_uri", CALLBACK),
            ("state", "deny-me"),
        ],
        BOB,
    )
    .await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    let params = callback_query(&decide(&http, base, &approval, "deny").await);
    assert_eq!(
        params.get("error").map(String::as_str),
        Some("access_denied")
    );
    assert_eq!(params.get("state").map(String::as_str), Some("deny-me"));
    assert_eq!(params.get("iss").map(String::as_str), Some(base));
    assert!(!params.contains_key("code"), "{params:?}");
}

async fn check_plain_client_code_flow(base: &str) {
    let done = sign_in_via_authorize(
        &browser(),
        base,
        &[
            ("response_type", "code"),
            ("client_id", PLAIN.0),
            ("redirect_uri", CALLBACK),
            ("state", "plain"),
        ],
        ALICE,
    )
    .await;
    let params = callback_query(&done);
    assert_eq!(params.get("state").map(String::as_str), Some("plain"));
    let code = params.get("code").expect("a code");
    let reply = token(
        base,
        Some(PLAIN),
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
        ],
    )
    .await;
    let tokens = assert_tokens(&reply);
    assert!(tokens.get("refresh_token").is_none(), "{tokens}");
}

async fn check_public_client_pkce(base: &str) {
    let verifier = "a-code-verifier-of-at-least-43-characters-0123456789";
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let http = browser();
    let without_pkce = [
        ("response_type", "code"),
        ("client_id", "public-client"),
        ("redirect_uri", CALLBACK),
        ("state", "pkce"),
    ];
    // Without a challenge a public client is refused, at its redirect URI.
    let refused = get(&http, &authorize_url(base, &without_pkce)).await;
    let params = callback_query(&refused);
    assert_eq!(
        params.get("error").map(String::as_str),
        Some("invalid_request")
    );

    let mut with_pkce = without_pkce.to_vec();
    with_pkce.extend([
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ]);
    for (verifier, works) in [
        ("another-code-verifier-of-at-least-43-characters-012", false),
        (verifier, true),
    ] {
        // A fresh code each time: a code is spent by its first redemption, right or wrong. A
        // fresh browser too: a signed-in one would get its code without the sign-in page.
        let done = sign_in_via_authorize(&browser(), base, &with_pkce, ALICE).await;
        let code = callback_query(&done).remove("code").expect("a code");
        let reply = token(
            base,
            None,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", CALLBACK),
                ("client_id", "public-client"),
                ("code_verifier", verifier),
            ],
        )
        .await;
        if !works {
            assert_oauth_error(&reply, 400, "invalid_grant");
            continue;
        }
        let tokens = assert_tokens(&reply);
        assert!(tokens.get("refresh_token").is_none(), "{tokens}");
        let profile = me(base, Some(access_token(&tokens))).await;
        assert_eq!(profile.json()["email"], ALICE.0);
    }
}

async fn check_implicit_flow(base: &str) {
    let http = browser();
    let approval = sign_in_via_authorize(
        &http,
        base,
        &[
            ("response_type", "token"),
            ("client_id", DEMO.0),
            ("redirect_uri", CALLBACK),
            ("scope", "email"),
            ("state", "implicit"),
        ],
        ALICE,
    )
    .await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    let done = decide(&http, base, &approval, "approve").await;
    assert_eq!(done.status, 303, "{}", done.body);
    let location = url::Url::parse(done.location().expect("a Location")).expect("a URL");
    assert_eq!(
        location.as_str().split('#').next(),
        Some(CALLBACK),
        "the token is in the fragment only"
    );
    let fragment: HashMap<String, String> =
        url::form_urlencoded::parse(location.fragment().expect("a fragment").as_bytes())
            .into_owned()
            .collect();
    for name in [
        "access_token",
        "token_type",
        "expires_in",
        "scope",
        "jti",
        "state",
    ] {
        assert!(fragment.contains_key(name), "{name} in {fragment:?}");
    }
    assert!(fragment["token_type"].eq_ignore_ascii_case("bearer"));
    assert!(fragment["expires_in"].parse::<u64>().is_ok_and(|s| s > 0));
    assert_eq!(fragment["scope"], "email");
    assert_eq!(fragment["state"], "implicit");
    assert!(!fragment.contains_key("refresh_token"), "{fragment:?}");
    let profile = me(base, Some(&fragment["access_token"])).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    assert_eq!(profile.json()["email"], ALICE.0);
}

async fn check_unredirectable_errors(base: &str) {
    let http = browser();
    for (client_id, redirect_uri) in [
        ("no-such-client", CALLBACK),
        (DEMO.0, "http://127.0.0.1:8081/elsewhere"),
        (DEMO.0, "http://evil.example/callback"),
    ] {
        let reply = get(
            &http,
            &authorize_url(
                base,
                &[
                    ("response_type", "code"),
                    ("client_id", client_id),
                    ("redirect_uri", redirect_uri),
                    ("state", "s"),
                ],
            ),
        )
        .await;
        assert_eq!(
            reply.status, 400,
            "{client_id} {redirect_uri}: {}",
            reply.body
        );
        assert!(reply.location().is_none(), "{:?}", reply.location());
        assert_page_headers(&reply, false);
        assert!(reply.body.contains("invalid_request"), "{}", reply.body);
    }
}

async fn check_admin_scope(base: &str) {
    let reply = get(
        &browser(),
        &authorize_url(
            base,
            &[
                ("response_type", "code"),
                ("client_id", DEMO.0),
                ("redirect_uri", CALLBACK),
                ("scope", "profile admin"),
                ("state", "too-much"),
            ],
        ),
    )
    .await;
    let params = callback_query(&reply);
    assert_eq!(
        params.get("error").map(String::as_str),
        Some("invalid_scope")
    );
    assert_eq!(params.get("state").map(String::as_str), Some("too-much"));
    // And at the token endpoint.
    let reply = token(
        base,
        Some(DEMO),
        &[("grant_type", "client_credentials"), ("scope", "admin")],
    )
    .await;
    assert_oauth_error(&reply, 400, "invalid_scope");
}

async fn check_me_without_token(base: &str) {
    let reply = me(base, None).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    // RFC 9728 §5.1: the challenge names the API's metadata (examples/README.md part 3).
    let metadata = format!("{base}/.well-known/oauth-protected-resource/api");
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!("Bearer realm=\"{base}\", resource_metadata=\"{metadata}\"").as_str())
    );
}

async fn check_me_bad_token(base: &str) {
    let reply = me(base, Some("not-a-token-this-server-issued")).await;
    assert_oauth_error(&reply, 401, "invalid_token");
    let challenge = reply.header("www-authenticate").expect("a challenge");
    assert!(challenge.starts_with("Bearer realm=\""), "{challenge}");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
}

async fn check_two_authorization_headers(base: &str) {
    // Repeated headers reach grantor as they were sent (RFC 6750 §2.1: one credential).
    let tokens = password_grant(base, DEMO, ALICE, "profile").await;
    let reply = send(
        browser()
            .get(format!("{base}/api/me"))
            .header("authorization", format!("Bearer {}", access_token(&tokens)))
            .header("authorization", "Bearer another-token"),
    )
    .await;
    assert_oauth_error(&reply, 400, "invalid_request");
}

async fn check_methods_and_paths(base: &str) {
    let http = browser();
    for (method, path, status, allow) in [
        ("GET", "/signin", 405, "POST"),
        ("GET", "/approve", 405, "POST"),
        ("POST", "/", 405, "GET"),
        ("PUT", "/api/me", 405, "GET"),
        (
            "DELETE",
            "/.well-known/oauth-authorization-server",
            405,
            "GET",
        ),
        ("HEAD", "/", 200, ""),
        ("HEAD", "/.well-known/oauth-authorization-server", 200, ""),
        ("GET", "/no-such-page", 404, ""),
    ] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let reply = send(http.request(method.clone(), format!("{base}{path}"))).await;
        assert_eq!(reply.status, status, "{method} {path}");
        if !allow.is_empty() {
            let allowed = reply.header("allow").unwrap_or_default();
            assert!(
                allowed.contains(allow),
                "{method} {path}: Allow {allowed:?}"
            );
        }
    }
}

async fn check_revocation(base: &str) {
    let tokens = password_grant(base, DEMO, ALICE, "profile").await;
    let access = access_token(&tokens);
    assert_eq!(me(base, Some(access)).await.status, 200);
    let reply = post_form(
        &browser(),
        &format!("{base}/api/oauth/revoke"),
        Some(DEMO),
        &[("token", access), ("token_type_hint", "access_token")],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_oauth_error(&me(base, Some(access)).await, 401, "invalid_token");
    assert_eq!(
        introspect(base, access).await,
        serde_json::json!({"active": false})
    );
}

async fn check_introspection(base: &str) {
    let tokens = password_grant(base, DEMO, BOB, "profile email").await;
    let answer = introspect(base, access_token(&tokens)).await;
    assert_eq!(answer["active"], true, "{answer}");
    assert_eq!(answer["username"], BOB.0, "{answer}");
    assert_eq!(answer["client_id"], DEMO.0, "{answer}");
    assert_scope(&answer["scope"], "profile email");
    assert_eq!(
        introspect(base, "never-issued").await,
        serde_json::json!({"active": false})
    );
}

async fn check_csrf(base: &str) {
    let http = browser();
    let page = get(
        &http,
        &authorize_url(
            base,
            &[
                ("response_type", "code"),
                ("client_id", PLAIN.0),
                ("redirect_uri", CALLBACK),
            ],
        ),
    )
    .await;
    let csrf = sign_in_form(&page);
    let forged = sign_in(&http, base, "forged-csrf-token", ALICE).await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    assert!(forged.location().is_none(), "{:?}", forged.location());
    assert_page_headers(&forged, false);
    // The right token without the session cookie (another browser) is refused as well.
    let elsewhere = sign_in(&browser(), base, &csrf, ALICE).await;
    assert_eq!(elsewhere.status, 400, "{}", elsewhere.body);
    assert!(elsewhere.location().is_none());
    // The real form still works.
    let done = sign_in(&http, base, &csrf, ALICE).await;
    assert!(callback_query(&done).contains_key("code"));
}

async fn check_log(server: Server) {
    let base = server.base.as_str();
    let http = browser();
    let state = "a-state-the-log-must-not-show";
    let approval = sign_in_via_authorize(
        &http,
        base,
        &[
            ("response_type", "code"),
            ("client_id", DEMO.0),
            ("redirect_uri", CALLBACK),
            ("state", state),
        ],
        ALICE,
    )
    .await;
    let code = callback_query(&decide(&http, base, &approval, "approve").await)
        .remove("code")
        .expect("a code");
    let reply = token(
        base,
        Some(DEMO),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
        ],
    )
    .await;
    let tokens = assert_tokens(&reply);
    let log = server.log_with("path=/api/oauth/token").await;
    for line in [
        "method=GET path=/api/oauth/authorize status=200",
        "method=POST path=/signin status=200",
        "method=POST path=/approve status=303",
        "method=POST path=/api/oauth/token status=200",
    ] {
        assert!(log.contains(line), "{line} in:\n{log}");
    }
    assert!(log.contains("latency_us="), "{log}");
    for secret in [
        state,
        &code,
        access_token(&tokens),
        tokens["refresh_token"].as_str().unwrap_or("?"),
        ALICE.1,
        DEMO.1,
        "client_id",
        "redirect_uri",
    ] {
        assert!(!log.contains(secret), "the log shows {secret}:\n{log}");
    }
}

async fn check_sigterm(server: Server) {
    // A client that keeps its connection open afterwards, as a browser does.
    let http = browser();
    assert_eq!(get(&http, &format!("{}/", server.base)).await.status, 200);
    let started = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    loop {
        if let Some(status) = server.try_wait() {
            assert!(status.success(), "exit status after SIGTERM: {status}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still running 10 s after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(http);
}
