//! The demo's sign-in and approval pages in a real browser: headless Chromium, driven through
//! chromedriver (WebDriver) with fantoccini, against the axum demo server run as a child process:
//! an authorization code flow, a `response_mode=form_post` answer whose page posts itself under
//! its content security policy, single sign-on and logout, then a device flow (RFC 8628) whose
//! user enters the code on the `/device` page.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`/usr/bin/chromium`, `/usr/bin/chromedriver`;
//! `GRANTOR_CHROMIUM` / `GRANTOR_CHROMEDRIVER` point elsewhere). `.ci/run` installs them; without
//! them this test fails (it never passes silently). Screenshots of both pages are saved under
//! `<target>/browser/`.

use std::path::Path;
use std::time::{Duration, Instant};

#[path = "demo/chromium.rs"]
mod chromium;
mod demo;
#[path = "demo/openid.rs"]
mod openid;

use chromium::{
    ChromeDriver, Profile, WAIT, click_to_new_page, open_session, screenshot, text_of, tool,
    wait_for_url,
};
use demo::Server;
use fantoccini::{Client, Locator};

const REDIRECT: &str = "http://127.0.0.1:8081/callback";
const ALICE: &str = "alice@example.com";
const ALICE_PASSWORD: &str = "alice-password-1";
/// How long the browser part of the test may take in all.
const WHOLE_FLOW: Duration = Duration::from_secs(90);

#[test]
fn sign_in_approve_sign_on_log_out_and_connect_a_device_in_headless_chromium() {
    let started = Instant::now();
    let chromium = tool("GRANTOR_CHROMIUM", "/usr/bin/chromium");
    let chromedriver = tool("GRANTOR_CHROMEDRIVER", "/usr/bin/chromedriver");
    let out = demo::target_dir().join("browser");
    std::fs::create_dir_all(&out).expect("create <target>/browser");

    // Dropped in reverse: the driver (and its browser) goes before the profile and the server.
    let server = Server::start("axum");
    let profile = Profile::new(&out);
    let driver = ChromeDriver::start(&chromedriver, &out);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        tokio::time::timeout(
            WHOLE_FLOW,
            flow(&server, &driver, &chromium, &profile.0, &out),
        )
        .await
        .expect("the browser flows took longer than 90 seconds")
    });
    eprintln!(
        "browser test took {:.1}s (screenshots in {})",
        started.elapsed().as_secs_f64(),
        out.display()
    );
}

async fn flow(server: &Server, driver: &ChromeDriver, chromium: &Path, profile: &Path, out: &Path) {
    let base = server.base.clone();
    let browser = open_session(driver, chromium, profile).await;
    // The authorization request leads to the sign-in page.
    let authorize = format!(
        "{base}/api/oauth/authorize?response_type=code&client_id=demo-client\
         &redirect_uri=http%3A%2F%2F127.0.0.1%3A8081%2Fcallback&state=browser-state\
         &scope=profile%20email"
    );
    browser
        .goto(&authorize)
        .await
        .expect("open the authorize URL");
    let page = text_of(&browser, "main").await;
    assert!(page.contains("Sign in"), "not the sign-in page: {page}");
    assert!(
        page.contains("Demo Client"),
        "sign-in page names no client: {page}"
    );
    screenshot(&browser, &out.join("sign-in.png")).await;

    // A wrong password: the sign-in page again, with a visible message, no redirect.
    sign_in(&browser, ALICE, "not-alices-password").await;
    let problem = browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(".problem"))
        .await
        .expect("no error message after a wrong password");
    assert!(
        problem.is_displayed().await.expect("problem visibility"),
        "the sign-in error message is not visible"
    );
    let message = problem.text().await.expect("problem text");
    assert!(
        !message.trim().is_empty(),
        "the sign-in error message is empty"
    );
    let url = browser.current_url().await.expect("current URL");
    assert!(
        url.as_str().starts_with(&base),
        "a wrong password left the server: {url}"
    );
    browser
        .find(Locator::Css("form input[name=password]"))
        .await
        .expect("the sign-in form is shown again after a wrong password");
    screenshot(&browser, &out.join("sign-in-error.png")).await;

    // The right password: the approval page names the client and the scopes.
    sign_in(&browser, ALICE, ALICE_PASSWORD).await;
    browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("button[name=decision][value=approve]"))
        .await
        .expect("no approval page after signing in");
    let page = text_of(&browser, "main").await;
    for expected in ["Demo Client", "profile", "email", ALICE] {
        assert!(
            page.contains(expected),
            "the approval page does not show {expected:?}: {page}"
        );
    }
    browser
        .find(Locator::Css("button[name=decision][value=deny]"))
        .await
        .expect("the approval page has no Deny button");
    screenshot(&browser, &out.join("approval.png")).await;

    // Approve: the browser is sent to the client's redirect URI (where nothing listens).
    browser
        .find(Locator::Css("button[name=decision][value=approve]"))
        .await
        .expect("Approve button")
        .click()
        .await
        .expect("click Approve");
    let callback = wait_for_callback(&browser).await;
    let param = |name: &str| {
        callback
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    assert_eq!(
        param("state").as_deref(),
        Some("browser-state"),
        "{callback}"
    );
    assert_eq!(param("error"), None, "{callback}");
    assert_eq!(param("iss").as_deref(), Some(base.as_str()), "{callback}");
    let code = param("code").unwrap_or_else(|| panic!("no code in {callback}"));

    // The code works at the token endpoint, and the token at the protected resource.
    let http = reqwest::Client::builder()
        .timeout(WAIT)
        .build()
        .expect("HTTP client");
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", &code)
        .append_pair("redirect_uri", REDIRECT)
        .finish();
    let response = http
        .post(format!("{base}/api/oauth/token"))
        .basic_auth("demo-client", Some("demo-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .expect("token request");
    let status = response.status();
    let body = response.text().await.expect("token response body");
    assert_eq!(status, 200, "token endpoint refused the code: {body}");
    let token: serde_json::Value = serde_json::from_str(&body).expect("token JSON");
    let access_token = token["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| panic!("no access_token in {body}"));
    assert!(
        token["token_type"]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case("bearer")),
        "{body}"
    );
    let me = me(&http, &base, access_token).await;
    assert_eq!(me["email"], ALICE, "{me}");

    form_post(&browser, &base).await;
    single_sign_on_and_logout(&browser, &base, out).await;
    device_flow(&browser, &http, &base, out).await;
    // Reached only when every check passed; after a failure, dropping the driver ends the
    // session (chromedriver's /shutdown quits Chromium).
    tokio::time::timeout(WAIT, browser.close())
        .await
        .expect("closing the browser session timed out")
        .expect("close the browser session");
}

/// RFC 8628: a device starts a flow over HTTP; the person opens `verification_uri_complete`,
/// confirms the prefilled code, signs in and approves; the device's poll then gets tokens.
async fn device_flow(browser: &Client, http: &reqwest::Client, base: &str, out: &Path) {
    let started: serde_json::Value = http
        .post(format!("{base}/api/oauth/device_authorization"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("client_id=device-client&scope=profile")
        .send()
        .await
        .expect("device authorization request")
        .json()
        .await
        .expect("device authorization JSON");
    let device_code = started["device_code"].as_str().expect("device_code");
    let user_code = started["user_code"].as_str().expect("user_code");
    assert_eq!(started["verification_uri"], format!("{base}/device"));
    let poll = || async {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "urn:ietf:params:oauth:grant-type:device_code")
            .append_pair("client_id", "device-client")
            .append_pair("device_code", device_code)
            .finish();
        let response = http
            .post(format!("{base}/api/oauth/token"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .expect("device poll");
        let status = response.status().as_u16();
        let body: serde_json::Value = response.json().await.expect("poll JSON");
        (status, body)
    };
    let (status, body) = poll().await;
    assert_eq!(
        (status, &body["error"]),
        (400, &"authorization_pending".into()),
        "{body}"
    );
    let polled = Instant::now();

    let complete = started["verification_uri_complete"]
        .as_str()
        .expect("verification_uri_complete");
    browser
        .goto(complete)
        .await
        .expect("open the verification page");
    let input = browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("form input[name=user_code]"))
        .await
        .expect("the /device page has no user_code input");
    assert_eq!(
        input.attr("value").await.expect("value").as_deref(),
        Some(user_code),
        "the code is not prefilled from verification_uri_complete"
    );
    screenshot(browser, &out.join("device.png")).await;
    click_to_new_page(
        browser,
        Locator::Css("form button[type=submit]"),
        "Continue",
    )
    .await;
    let page = text_of(browser, "main").await;
    assert!(
        page.contains("Device Client"),
        "not the device's sign-in page: {page}"
    );
    sign_in(browser, ALICE, ALICE_PASSWORD).await;
    browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("button[name=decision][value=approve]"))
        .await
        .expect("no approval page for the device");
    click_to_new_page(
        browser,
        Locator::Css("button[name=decision][value=approve]"),
        "Approve",
    )
    .await;
    let page = text_of(browser, "main").await;
    assert!(page.contains("return to your device"), "{page}");
    screenshot(browser, &out.join("device-connected.png")).await;

    // The device polls no sooner than its interval.
    let interval = Duration::from_secs(started["interval"].as_u64().expect("interval"));
    tokio::time::sleep(interval.saturating_sub(polled.elapsed()) + Duration::from_millis(200))
        .await;
    let (status, tokens) = poll().await;
    assert_eq!(status, 200, "the device got no tokens: {tokens}");
    let access_token = tokens["access_token"].as_str().expect("access_token");
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    let me = me(http, base, access_token).await;
    assert_eq!(me["email"], ALICE, "{me}");
}

/// `/api/me` for `access_token`.
async fn me(http: &reqwest::Client, base: &str, access_token: &str) -> serde_json::Value {
    http.get(format!("{base}/api/me"))
        .bearer_auth(access_token)
        .send()
        .await
        .expect("/api/me request")
        .json()
        .await
        .expect("/api/me JSON")
}

/// Fills the sign-in form and submits it by clicking its button, as a person would.
async fn sign_in(browser: &Client, username: &str, password: &str) {
    let field = |name: &'static str| async move {
        browser
            .wait()
            .at_most(WAIT)
            .for_element(Locator::Css(&format!("form input[name={name}]")))
            .await
            .unwrap_or_else(|e| panic!("no {name} input on the sign-in page: {e}"))
    };
    let hidden_csrf = browser
        .find(Locator::Css("form input[type=hidden][name=csrf]"))
        .await
        .expect("the sign-in form has no hidden csrf input");
    assert!(
        hidden_csrf
            .attr("value")
            .await
            .expect("csrf value")
            .is_some_and(|v| !v.is_empty()),
        "the csrf input is empty"
    );
    let user = field("username").await;
    assert_eq!(
        user.attr("type").await.expect("type").as_deref(),
        Some("email")
    );
    user.clear().await.expect("clear username");
    user.send_keys(username).await.expect("type username");
    let pass = field("password").await;
    pass.clear().await.expect("clear password");
    pass.send_keys(password).await.expect("type password");
    click_to_new_page(browser, Locator::Css("form button[type=submit]"), "Sign in").await;
}

/// Waits for the browser to land on the client's redirect URI and returns that URL. Nothing
/// listens there, so Chromium shows its error page; WebDriver still reports the URL it tried.
async fn wait_for_callback(browser: &Client) -> url::Url {
    wait_for_url(browser, REDIRECT).await
}

/// OAuth 2.0 Form Post Response Mode in the browser: signed in above, a request with
/// `response_mode=form_post` is answered by a page whose own script (allowed by its content
/// security policy, nothing else is) posts the code to the redirect URI, with no click. A
/// listener on the redirect URI's port takes the post.
async fn form_post(browser: &Client, base: &str) {
    let (_, mut requests) = openid::requests_at("127.0.0.1:8081").await;
    let authorize = format!(
        "{base}/api/oauth/authorize?response_type=code&client_id=plain-client\
         &redirect_uri=http%3A%2F%2F127.0.0.1%3A8081%2Fcallback&state=posted-state\
         &response_mode=form_post&scope=openid&nonce=posted-nonce"
    );
    browser
        .goto(&authorize)
        .await
        .expect("open the authorize URL");
    let (head, body) = tokio::time::timeout(WAIT, requests.recv())
        .await
        .expect("the page did not post itself to the redirect URI")
        .expect("the listener");
    assert!(head.starts_with("POST /callback "), "{head}");
    let fields: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(body.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(
        fields.get("state").map(String::as_str),
        Some("posted-state"),
        "{body}"
    );
    assert_eq!(fields.get("iss").map(String::as_str), Some(base), "{body}");
    assert!(fields.get("code").is_some_and(|c| !c.is_empty()), "{body}");
}

/// OpenID Connect in the browser: signed in above (for `demo-client`), another client's
/// request comes straight back with a code (single sign-on, no page); a logout asked for by
/// that client shows a confirmation, whose button returns the browser to the client's logged-out
/// page; then the sign-in page again.
async fn single_sign_on_and_logout(browser: &Client, base: &str, out: &Path) {
    let authorize = format!(
        "{base}/api/oauth/authorize?response_type=code&client_id=plain-client\
         &redirect_uri=http%3A%2F%2F127.0.0.1%3A8081%2Fcallback&state=sso-state\
         &scope=openid%20email&nonce=browser-nonce"
    );
    // Straight to the client's redirect URI, where nothing listens: Chromium reports the
    // navigation as failed, and WebDriver's URL says where it went.
    let _ = browser.goto(&authorize).await;
    let callback = wait_for_callback(browser).await;
    let code = callback.query_pairs().find(|(k, _)| k == "code");
    assert!(code.is_some(), "no code without a sign-in: {callback}");

    let logout = format!(
        "{base}/api/oauth/logout?client_id=plain-client\
         &post_logout_redirect_uri=http%3A%2F%2F127.0.0.1%3A8081%2Flogged-out&state=bye"
    );
    browser.goto(&logout).await.expect("open the logout URL");
    let page = text_of(browser, "main").await;
    assert!(
        page.contains("Sign out"),
        "not the logout confirmation: {page}"
    );
    screenshot(browser, &out.join("logout.png")).await;
    browser
        .find(Locator::Css("button[name=logout]"))
        .await
        .expect("the logout button")
        .click()
        .await
        .expect("click the logout button");
    let back = wait_for_url(browser, "http://127.0.0.1:8081/logged-out").await;
    assert_eq!(back.query(), Some("state=bye"), "{back}");

    browser
        .goto(&authorize)
        .await
        .expect("open the authorize URL");
    let page = text_of(browser, "main").await;
    assert!(
        page.contains("Sign in"),
        "signed out, the sign-in page: {page}"
    );
}
