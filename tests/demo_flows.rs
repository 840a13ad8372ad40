//! Pushed authorization requests (RFC 9126) and the device authorization grant (RFC 8628) on
//! the demo servers over real HTTP, against `axum_server` and `actix_server` (examples/README.md).

mod demo;

use demo::Server;
use demo::http::*;
use serde_json::Value;

each_framework! {
    a_pushed_request_runs_the_code_flow_by_reference => pushed_code_flow;
    a_request_uri_is_answered_once_and_bound_to_its_client => request_uri_refusals;
    a_device_is_connected_through_the_device_page => device_flow;
    a_device_polling_too_fast_is_slowed_down_and_a_denial_reaches_it => device_refusals;
    the_metadata_lists_every_endpoint_and_grant_urn => metadata;
}

const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

async fn push(base: &str, pairs: &[(&str, &str)]) -> Reply {
    post_form(
        &browser(),
        &format!("{base}/api/oauth/par"),
        Some(DEMO),
        pairs,
    )
    .await
}

fn code_request() -> Vec<(&'static str, &'static str)> {
    vec![
        ("response_type", "code"),
        ("redirect_uri", CALLBACK),
        ("scope", "profile"),
        ("state", "pushed-state"),
    ]
}

async fn pushed_code_flow(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let reply = push(base, &code_request()).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let pushed = reply.json();
    assert_eq!(pushed["expires_in"], 60);
    let request_uri = pushed["request_uri"].as_str().expect("request_uri");
    assert!(request_uri.starts_with("urn:ietf:params:oauth:request_uri:"));

    let http = browser();
    let params = [("client_id", DEMO.0), ("request_uri", request_uri)];
    let approval = sign_in_via_authorize(&http, base, &params, ALICE).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    let answer = decide(&http, base, &approval, "approve").await;
    let query = callback_query(&answer);
    assert_eq!(query["state"], "pushed-state");
    let tokens = assert_tokens(
        &token(
            base,
            Some(DEMO),
            &[
                ("grant_type", "authorization_code"),
                ("code", &query["code"]),
                ("redirect_uri", CALLBACK),
            ],
        )
        .await,
    );
    assert_scope(&tokens["scope"], "profile");
    let me = me(base, Some(access_token(&tokens))).await;
    assert_eq!(me.json()["email"], ALICE.0);
}

async fn request_uri_refusals(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let pushed = push(base, &code_request()).await.json();
    let request_uri = pushed["request_uri"].as_str().expect("request_uri");
    let http = browser();
    // Another client naming it: an error page, and the request stays for its owner.
    let other = [("client_id", PLAIN.0), ("request_uri", request_uri)];
    let page = get(&http, &authorize_url(base, &other)).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("invalid_request_uri"), "{}", page.body);
    let own = [("client_id", DEMO.0), ("request_uri", request_uri)];
    let page = get(&http, &authorize_url(base, &own)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    sign_in_form(&page);
    // Visited again before the sign-in is answered (a reload): the sign-in again.
    let reloaded = browser();
    let approval = sign_in_via_authorize(&reloaded, base, &own, ALICE).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    let answer = decide(&reloaded, base, &approval, "approve").await;
    assert!(callback_query(&answer).contains_key("code"));
    // Answered: gone.
    let page = get(&http, &authorize_url(base, &own)).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("invalid_request_uri"), "{}", page.body);
    // Pushing needs the client's credentials, and never carries a request_uri itself.
    let anonymous = post_form(
        &http,
        &format!("{base}/api/oauth/par"),
        None,
        &[("client_id", DEMO.0), ("response_type", "code")],
    )
    .await;
    assert_oauth_error(&anonymous, 401, "invalid_client");
    let mut nested = code_request();
    nested.push(("request_uri", request_uri));
    assert_oauth_error(&push(base, &nested).await, 400, "invalid_request");
    let bad_scope = [
        ("response_type", "code"),
        ("redirect_uri", CALLBACK),
        ("scope", "admin"),
    ];
    assert_oauth_error(&push(base, &bad_scope).await, 400, "invalid_scope");
}

/// Starts a device flow for `device-client`.
async fn start_device(base: &str) -> Value {
    let reply = post_form(
        &browser(),
        &format!("{base}/api/oauth/device_authorization"),
        None,
        &[("client_id", "device-client"), ("scope", "profile email")],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    reply.json()
}

async fn poll(base: &str, device_code: &str) -> Reply {
    token(
        base,
        None,
        &[
            ("grant_type", DEVICE_GRANT),
            ("client_id", "device-client"),
            ("device_code", device_code),
        ],
    )
    .await
}

/// The person's part on the `/device` page: the code, the sign-in, the approval page.
async fn enter_code_and_sign_in(http: &reqwest::Client, base: &str, user_code: &str) -> Reply {
    let page = get(http, &format!("{base}/device")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_page_headers(&page, false);
    let form = HtmlForm::parse(&page.body);
    assert_eq!(form.action, "/device", "{}", page.body);
    assert!(
        form.inputs.iter().any(|i| i.name == "user_code"),
        "{}",
        page.body
    );
    // A mistyped code shows the form again.
    let wrong = post_form(
        http,
        &format!("{base}/device"),
        None,
        &[("user_code", "BBBB-BBBB")],
    )
    .await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert!(wrong.body.contains("user_code"), "{}", wrong.body);
    let lower = user_code.to_lowercase();
    let sign_in_page = post_form(
        http,
        &format!("{base}/device"),
        None,
        &[("user_code", &lower)],
    )
    .await;
    assert_eq!(sign_in_page.status, 200, "{}", sign_in_page.body);
    assert!(
        sign_in_page.body.contains("Device Client"),
        "{}",
        sign_in_page.body
    );
    let approval = sign_in(http, base, &sign_in_form(&sign_in_page), ALICE).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    approval
}

async fn device_flow(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let started = start_device(base).await;
    let user_code = started["user_code"].as_str().expect("user_code");
    assert_eq!(started["verification_uri"], format!("{base}/device"));
    assert_eq!(
        started["verification_uri_complete"],
        format!("{base}/device?user_code={user_code}")
    );
    assert_eq!(started["expires_in"], 600);
    assert_eq!(started["interval"], 5);
    let device_code = started["device_code"].as_str().expect("device_code");
    assert_oauth_error(&poll(base, device_code).await, 400, "authorization_pending");
    let polled = std::time::Instant::now();

    let http = browser();
    let prefilled = get(
        &http,
        started["verification_uri_complete"].as_str().unwrap(),
    )
    .await;
    assert!(prefilled.body.contains(user_code), "{}", prefilled.body);
    let approval = enter_code_and_sign_in(&http, base, user_code).await;
    let done = decide(&http, base, &approval, "approve").await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("return to your device"), "{}", done.body);

    tokio::time::sleep(std::time::Duration::from_secs(5).saturating_sub(polled.elapsed())).await;
    let tokens = assert_tokens(&poll(base, device_code).await);
    assert_scope(&tokens["scope"], "profile email");
    assert!(
        tokens["refresh_token"].is_string(),
        "device-client gets refresh tokens"
    );
    let me = me(base, Some(access_token(&tokens))).await;
    assert_eq!(me.json()["email"], ALICE.0);
    // Spent.
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    assert_oauth_error(&poll(base, device_code).await, 400, "invalid_grant");
}

async fn device_refusals(framework: &str) {
    let server = Server::start_with_args(framework, "memory", &["--device-code-ttl", "30"]);
    let base = &server.base;
    let started = start_device(base).await;
    assert_eq!(started["expires_in"], 30);
    let device_code = started["device_code"].as_str().expect("device_code");
    assert_oauth_error(&poll(base, device_code).await, 400, "authorization_pending");
    assert_oauth_error(&poll(base, device_code).await, 400, "slow_down");
    let http = browser();
    let approval =
        enter_code_and_sign_in(&http, base, started["user_code"].as_str().unwrap()).await;
    let done = decide(&http, base, &approval, "deny").await;
    assert_eq!(done.status, 200, "{}", done.body);
    tokio::time::sleep(std::time::Duration::from_secs(10)).await;
    assert_oauth_error(&poll(base, device_code).await, 400, "access_denied");
    // A client without the grant, and an unknown code.
    let refused = post_form(
        &http,
        &format!("{base}/api/oauth/device_authorization"),
        None,
        &[("client_id", "public-client")],
    )
    .await;
    assert_oauth_error(&refused, 400, "unauthorized_client");
    assert_oauth_error(&poll(base, "no-such-code").await, 400, "invalid_grant");
}

async fn metadata(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = metadata_document(base).await;
    assert_eq!(
        metadata["pushed_authorization_request_endpoint"],
        format!("{base}/api/oauth/par")
    );
    assert_eq!(
        metadata["device_authorization_endpoint"],
        format!("{base}/api/oauth/device_authorization")
    );
    let grants = strings(&metadata["grant_types_supported"]);
    assert!(grants.iter().any(|g| g == DEVICE_GRANT), "{grants:?}");
}
