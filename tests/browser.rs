//! The demo's sign-in and approval pages in a real browser: headless Chromium, driven through
//! chromedriver (WebDriver) with fantoccini, against the axum demo server run as a child process:
//! an authorization code flow, then a device flow (RFC 8628) whose user enters the code on the
//! `/device` page.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`/usr/bin/chromium`, `/usr/bin/chromedriver`;
//! `GRANTOR_CHROMIUM` / `GRANTOR_CHROMEDRIVER` point elsewhere). `.ci/run` installs them; without
//! them this test fails (it never passes silently). Screenshots of both pages are saved under
//! `<target>/browser/`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod demo;

use demo::Server;
use fantoccini::wd::TimeoutConfiguration;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;

const REDIRECT: &str = "http://127.0.0.1:8081/callback";
const ALICE: &str = "alice@example.com";
const ALICE_PASSWORD: &str = "alice-password-1";
/// How long any single wait (server banner, driver start, an element, a navigation) may take.
const WAIT: Duration = Duration::from_secs(10);
/// How long the browser part of the test may take in all.
const WHOLE_FLOW: Duration = Duration::from_secs(90);

const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=900,800",
];

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

async fn open_session(driver: &ChromeDriver, chromium: &Path, profile: &Path) -> Client {
    let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|f| (*f).to_owned()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("browserName".into(), "chrome".into());
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({ "binary": chromium.display().to_string(), "args": args }),
    );
    let browser = tokio::time::timeout(
        Duration::from_secs(30),
        ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&driver.url),
    )
    .await
    .expect("chromedriver did not open a Chromium session within 30 s")
    .unwrap_or_else(|e| panic!("chromedriver could not start Chromium: {e}"));
    browser
        .update_timeouts(TimeoutConfiguration::new(
            Some(WAIT),
            Some(WAIT),
            Some(Duration::ZERO),
        ))
        .await
        .expect("set WebDriver timeouts");
    browser
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

/// Clicks a button and waits until the browser shows a new, fully loaded page (a marker set on
/// the old page's window is gone), so the next lookup cannot see the old page.
async fn click_to_new_page(browser: &Client, button: Locator<'_>, what: &str) {
    browser
        .execute("window.grantorOldPage = true;", Vec::new())
        .await
        .expect("mark the current page");
    browser
        .find(button)
        .await
        .unwrap_or_else(|e| panic!("no {what} button: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {what}: {e}"));
    let deadline = Instant::now() + WAIT;
    loop {
        // While the page changes the script may fail (the old document is gone); poll on.
        let fresh = browser
            .execute(
                "return !window.grantorOldPage && document.readyState === 'complete';",
                Vec::new(),
            )
            .await;
        if matches!(fresh, Ok(serde_json::Value::Bool(true))) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "clicking {what} did not load a new page within {WAIT:?} (last check: {fresh:?})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits for the browser to land on the client's redirect URI and returns that URL. Nothing
/// listens there, so Chromium shows its error page; WebDriver still reports the URL it tried.
async fn wait_for_callback(browser: &Client) -> url::Url {
    wait_for_url(browser, REDIRECT).await
}

/// Waits for the browser to land on a URL starting with `prefix` and returns it.
async fn wait_for_url(browser: &Client, prefix: &str) -> url::Url {
    let deadline = Instant::now() + WAIT;
    loop {
        let url = browser.current_url().await.expect("current URL");
        if url.as_str().starts_with(prefix) {
            return url;
        }
        assert!(
            Instant::now() < deadline,
            "the browser did not reach {prefix} within {WAIT:?}; it is at {url}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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

async fn text_of(browser: &Client, css: &str) -> String {
    browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css} element: {e}"))
        .text()
        .await
        .expect("element text")
}

async fn screenshot(browser: &Client, path: &Path) {
    let png = browser.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    std::fs::write(path, png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// The path of a required browser tool; a missing one fails the test with what to install.
fn tool(env: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(env).map_or_else(|| PathBuf::from(default), PathBuf::from);
    assert!(
        path.is_file(),
        "{} not found: this test needs Debian's chromium and chromium-driver \
         (`apt-get install -y --no-install-recommends chromium chromium-driver`, as .ci/run does), \
         or {env} set to the binary",
        path.display()
    );
    path
}

/// chromedriver as a child process on a free loopback port; killed on drop.
struct ChromeDriver {
    child: Child,
    url: String,
    log_path: PathBuf,
}

impl ChromeDriver {
    fn start(binary: &Path, out: &Path) -> Self {
        let port = demo::free_port();
        let log_path = out.join("chromedriver.log");
        let child = Command::new(binary)
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log_path.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
        let mut driver = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log_path,
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + WAIT;
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = driver.child.try_wait() {
                panic!(
                    "chromedriver exited at start ({status}); see {}",
                    driver.log_path.display()
                );
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on {addr} within {WAIT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        driver
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        // chromedriver's /shutdown quits the browsers of any session still open (after a failed
        // assertion); killing chromedriver alone would leave Chromium running.
        if self.child.try_wait().ok().flatten().is_none() {
            let addr = self.url.trim_start_matches("http://");
            if let Ok(mut stream) = addr.parse().map_err(|_| ()).and_then(|a| {
                TcpStream::connect_timeout(&a, Duration::from_secs(1)).map_err(|_| ())
            }) {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = stream.write_all(
                    format!("GET /shutdown HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                        .as_bytes(),
                );
                let _ = stream.read_to_end(&mut Vec::new());
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("chromedriver log: {}", self.log_path.display());
        }
    }
}

/// A fresh, empty Chromium profile directory; removed on drop.
struct Profile(PathBuf);

impl Profile {
    fn new(out: &Path) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = out.join(format!("profile-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the Chromium profile dir");
        Self(dir)
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
