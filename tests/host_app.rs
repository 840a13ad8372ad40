//! `examples/host_app`, a host that plugs its own users and its own sign-in step into grantor,
//! driven as a child process over real HTTP and in headless Chromium: Carol (a bcrypt hash and
//! a TOTP secret in the host's table) signs in on the host's login and code pages and gets an
//! MFA token that `/api/profile` takes; Dave (Django's PBKDF2, no second factor) signs in with
//! his password alone and is asked to step up there (RFC 9470); both leave with Argon2id
//! hashes in the host's file; wrong passwords and codes show the host's pages again, a spent
//! code page is refused, grantor's own password form is closed; and the host's user store keeps
//! the lookup rules of grantor's store contract.
//!
//! The browser part needs Debian's `chromium` and `chromium-driver` (see `demo/chromium.rs`);
//! its screenshots are saved as `<target>/browser/host_*.png`.

#[path = "demo/chromium.rs"]
mod chromium;
mod demo;
// The very store the example serves, so that the contract checks what runs.
#[allow(
    dead_code,
    reason = "the example uses more of it than the contract does"
)]
#[path = "../examples/host_app/users.rs"]
mod users;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use chromium::{
    ChromeDriver, Profile, WAIT, click_to_new_page, open_session, screenshot, text_of, tool,
    wait_for_url,
};
use demo::http::*;
use fantoccini::{Client, Locator};
use grantor::sql::rusqlite::{Connection, OpenFlags};
use grantor::store::KnownHashes;
use grantor::store::contract::{self, KnownAccount};
use serde_json::Value;
use totp_rs::{Algorithm, Secret, TOTP};

const CLIENT: &str = "host-spa";
const PASSWORD_ACR: &str = "urn:example:acr:password";
const MFA: &str = "urn:example:acr:mfa";
const CAROL: (&str, &str) = ("carol", "carol-password-1");
const DAVE: (&str, &str) = ("dave", "dave-password-2");
const CAROL_TOTP_SECRET: &str = "KRSXG5CTMVRXEZLUKN2XAZLSKNSWG4TFOQ";

// ---------------------------------------------------------------------------------------------
// Over HTTP
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn carol_signs_in_on_the_hosts_login_and_code_pages_as_mfa_and_leaves_with_argon2id() {
    let app = HostApp::start();
    let base = &app.base;
    assert!(
        app.password_hash(1).starts_with("$2b$04$"),
        "the legacy row"
    );
    let http = browser();

    let page = get(&http, &authorize_url(base, &params("carol-state"))).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_page_headers(&page, true);
    assert!(page.body.contains("Example Host"), "{}", page.body);
    assert!(page.body.contains("Host SPA"), "{}", page.body);
    let csrf = login_form(&page);

    let code_page = post_login(&http, base, &csrf, CAROL).await;
    assert_eq!(code_page.status, 200, "{}", code_page.body);
    assert_page_headers(&code_page, true);
    assert!(
        pending_cookie(&code_page).is_some(),
        "{:?}",
        code_page.headers
    );
    assert_eq!(code_form(&code_page), csrf, "grantor's form travels on");

    let redirected = post_code(&http, base, &csrf, &carol_code()).await;
    assert_eq!(callback_query(&redirected)["state"], "carol-state");
    let (tokens, id_token) = redeem(base, &redirected).await;
    assert_eq!(id_token["sub"], "1", "{id_token}");
    assert_eq!(id_token["acr"], MFA, "{id_token}");
    assert_eq!(
        id_token["amr"],
        serde_json::json!(["pwd", "otp"]),
        "{id_token}"
    );

    let profile = profile(base, access_token(&tokens)).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    assert_eq!(
        profile.json(),
        serde_json::json!({ "sub": "1", "name": "Carol Legacy", "acr": MFA })
    );
    let hash = app.password_hash(1);
    assert!(hash.starts_with("$argon2id$"), "Carol's row keeps {hash}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dave_signs_in_with_his_password_alone_and_the_profile_asks_him_to_step_up() {
    let app = HostApp::start();
    let base = &app.base;
    assert!(
        app.password_hash(2).starts_with("pbkdf2_sha256$"),
        "the legacy row"
    );
    let http = browser();
    let page = get(&http, &authorize_url(base, &params("dave-state"))).await;
    let csrf = login_form(&page);

    // No code page: straight back to the client.
    let redirected = post_login(&http, base, &csrf, DAVE).await;
    assert_eq!(callback_query(&redirected)["state"], "dave-state");
    let (tokens, id_token) = redeem(base, &redirected).await;
    assert_eq!(id_token["sub"], "2", "{id_token}");
    assert_eq!(id_token["acr"], PASSWORD_ACR, "{id_token}");
    assert_eq!(id_token["amr"], serde_json::json!(["pwd"]), "{id_token}");

    let refused = profile(base, access_token(&tokens)).await;
    assert_oauth_error(&refused, 401, "insufficient_user_authentication");
    let challenge = refused.header("www-authenticate").unwrap_or_default();
    for part in [
        "error=\"insufficient_user_authentication\"",
        "acr_values=\"urn:example:acr:mfa\"",
        "max_age=300",
    ] {
        assert!(challenge.contains(part), "{part} in {challenge}");
    }
    let hash = app.password_hash(2);
    assert!(hash.starts_with("$argon2id$"), "Dave's row keeps {hash}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_shows_the_hosts_login_page_again_and_its_form_still_signs_in() {
    let app = HostApp::start();
    let base = &app.base;
    let http = browser();
    let page = get(&http, &authorize_url(base, &params("retry"))).await;
    let csrf = login_form(&page);

    let again = post_login(&http, base, &csrf, (CAROL.0, "not-carols-password")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.location(), None, "never a redirect");
    assert_eq!(login_form(&again), csrf, "the same sealed form");
    assert!(
        again.body.contains("Host SPA"),
        "the client named again: {}",
        again.body
    );
    assert!(
        again
            .body
            .contains("The username or password is incorrect."),
        "{}",
        again.body
    );
    assert!(app.password_hash(1).starts_with("$2b$"), "nothing written");
    // A login the host's rule refuses is refused before any lookup, on the same page.
    let malformed = post_login(&http, base, &csrf, ("x", "whatever-password")).await;
    assert_eq!(login_form(&malformed), csrf);
    assert!(
        malformed.body.contains("role=\"alert\""),
        "{}",
        malformed.body
    );

    let code_page = post_login(&http, base, &csrf, CAROL).await;
    assert_eq!(code_form(&code_page), csrf);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_code_shows_the_code_page_again_and_a_spent_code_page_is_refused() {
    let app = HostApp::start();
    let base = &app.base;
    let http = browser();
    let page = get(&http, &authorize_url(base, &params("codes"))).await;
    let session = cookie_set(&page, "grantor-signin").expect("grantor's cookie");
    let csrf = login_form(&page);
    let code_page = post_login(&http, base, &csrf, CAROL).await;
    let pending = pending_cookie(&code_page).expect("the host's pending login");

    let right = carol_code();
    let wrong = wrong_code(&right);
    let again = post_code(&http, base, &csrf, &wrong).await;
    assert_eq!(again.status, 400, "{}", again.body);
    assert_eq!(again.location(), None);
    assert_eq!(code_form(&again), csrf);
    assert!(again.body.contains("not right"), "{}", again.body);

    let redirected = post_code(&http, base, &csrf, &right).await;
    assert!(callback_query(&redirected).contains_key("code"));

    // The same page posted again, cookies and all: the pending login is spent.
    let replayed = send(
        browser()
            .post(format!("{base}/host/code"))
            .header(
                "cookie",
                format!("grantor-signin={session}; host-pending={pending}"),
            )
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[("csrf", &csrf), ("code", &right)])),
    )
    .await;
    assert_eq!(replayed.status, 400, "{}", replayed.body);
    assert_eq!(replayed.location(), None, "no second code");
    assert!(replayed.body.contains("already used"), "{}", replayed.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grantors_own_password_form_is_closed_so_nobody_skips_the_hosts_code() {
    let app = HostApp::start();
    let base = &app.base;
    let http = browser();
    let page = get(&http, &authorize_url(base, &params("skip"))).await;
    let csrf = login_form(&page);
    let fields = [
        ("csrf", csrf.as_str()),
        ("username", CAROL.0),
        ("password", CAROL.1),
    ];
    for path in ["/signin", "/signin/second-factor"] {
        let reply = post_form(&http, &format!("{base}{path}"), None, &fields).await;
        assert_eq!(reply.status, 404, "{path}: {}", reply.body);
        assert_eq!(reply.location(), None, "{path}");
    }
    assert!(
        app.password_hash(1).starts_with("$2b$"),
        "no password was checked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_users_table_keeps_the_lookup_rules_of_grantors_store_contract() {
    // The example writes the legacy rows at its first start; the contract reads them through
    // the example's own store type.
    let app = HostApp::start();
    let users = users::HostUsers::open(&app.database).expect("the host's database");
    let known = [
        KnownAccount {
            username: CAROL.0,
            password: CAROL.1,
        },
        KnownAccount {
            username: DAVE.0,
            password: DAVE.1,
        },
    ];
    contract::user_lookups_with(&users, &users::logins(), &KnownHashes, &known).await;
}

// ---------------------------------------------------------------------------------------------
// In headless Chromium
// ---------------------------------------------------------------------------------------------

#[test]
fn carol_walks_the_hosts_login_and_code_pages_to_the_callback_in_headless_chromium() {
    let chromium = tool("GRANTOR_CHROMIUM", "/usr/bin/chromium");
    let chromedriver = tool("GRANTOR_CHROMEDRIVER", "/usr/bin/chromedriver");
    let out = target_dir().join("browser");
    std::fs::create_dir_all(&out).expect("create <target>/browser");
    // Dropped in reverse: the driver (and its browser) goes before the profile and the app.
    let app = HostApp::start();
    let profile = Profile::new(&out);
    let driver = ChromeDriver::start(&chromedriver, &out);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(60),
            browser_flow(&app, &driver, &chromium, &profile.0, &out),
        )
        .await
        .expect("the browser flow took longer than 60 seconds")
    });
}

async fn browser_flow(
    app: &HostApp,
    driver: &ChromeDriver,
    chromium: &Path,
    profile: &Path,
    out: &Path,
) {
    let base = &app.base;
    let browser = open_session(driver, chromium, profile).await;
    browser
        .goto(&authorize_url(base, &params("browser-state")))
        .await
        .expect("open the authorization URL");
    let page = text_of(&browser, "main").await;
    assert!(page.contains("Sign in to Example Host"), "{page}");
    assert!(page.contains("Host SPA"), "{page}");
    screenshot(&browser, &out.join("host_login.png")).await;

    fill(&browser, "login", CAROL.0).await;
    fill(&browser, "password", "not-carols-password").await;
    click_to_new_page(
        &browser,
        Locator::Css("form button[type=submit]"),
        "Sign in",
    )
    .await;
    let problem = text_of(&browser, ".problem").await;
    assert!(problem.contains("incorrect"), "{problem}");
    screenshot(&browser, &out.join("host_login_problem.png")).await;

    fill(&browser, "login", CAROL.0).await;
    fill(&browser, "password", CAROL.1).await;
    click_to_new_page(
        &browser,
        Locator::Css("form button[type=submit]"),
        "Sign in",
    )
    .await;
    let page = text_of(&browser, "main").await;
    assert!(page.contains("Enter your code"), "{page}");
    let url = browser.current_url().await.expect("current URL");
    assert!(
        url.as_str().starts_with(&format!("{base}/host/login")),
        "{url}"
    );
    screenshot(&browser, &out.join("host_code.png")).await;

    fill(&browser, "code", &carol_code()).await;
    browser
        .find(Locator::Css("form button[type=submit]"))
        .await
        .expect("the Verify button")
        .click()
        .await
        .expect("click Verify");
    // Nothing listens at the callback: WebDriver still reports the URL the browser went to.
    let callback = wait_for_url(&browser, CALLBACK).await;
    let param = |name: &str| {
        callback
            .query_pairs()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    };
    assert_eq!(
        param("state").as_deref(),
        Some("browser-state"),
        "{callback}"
    );
    let code = param("code").unwrap_or_else(|| panic!("no code in {callback}"));
    let (_, id_token) = redeem_code(base, &code).await;
    assert_eq!(id_token["acr"], MFA, "{id_token}");
    tokio::time::timeout(WAIT, browser.close())
        .await
        .expect("closing the browser session timed out")
        .expect("close the browser session");
}

/// Types `text` into the form's input `name`, as a person would.
async fn fill(browser: &Client, name: &str, text: &str) {
    let input = browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(&format!("form input[name={name}]")))
        .await
        .unwrap_or_else(|e| panic!("no {name} input: {e}"));
    input.clear().await.expect("clear the input");
    input.send_keys(text).await.expect("type into the input");
}

// ---------------------------------------------------------------------------------------------
// The host's pages, as a client and a browser see them
// ---------------------------------------------------------------------------------------------

/// An OpenID Connect code request of the host's client, with PKCE.
fn params(state: &str) -> Vec<(&str, &str)> {
    vec![
        ("response_type", "code"),
        ("client_id", CLIENT),
        ("redirect_uri", CALLBACK),
        ("scope", "openid profile"),
        ("state", state),
        ("nonce", "host-nonce"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
}

/// The host's login page, checked: posts `login`, `password` and grantor's hidden `csrf` to
/// the host's own route. Answers the `csrf`.
fn login_form(page: &Reply) -> String {
    let form = HtmlForm::parse(&page.body);
    assert_eq!(form.action, "/host/login", "{}", page.body);
    assert!(form.method.eq_ignore_ascii_case("post"), "{}", page.body);
    let kind = |name: &str| {
        form.inputs
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.kind.clone())
    };
    assert_eq!(kind("login").as_deref(), Some("text"), "{}", page.body);
    assert_eq!(
        kind("password").as_deref(),
        Some("password"),
        "{}",
        page.body
    );
    form.hidden("csrf").to_owned()
}

/// The host's code page, checked: posts `code` and grantor's hidden `csrf` to the host's own
/// route. Answers the `csrf`.
fn code_form(page: &Reply) -> String {
    let form = HtmlForm::parse(&page.body);
    assert_eq!(form.action, "/host/code", "{}", page.body);
    assert!(
        form.inputs.iter().any(|i| i.name == "code"),
        "{}",
        page.body
    );
    form.hidden("csrf").to_owned()
}

async fn post_login(http: &reqwest::Client, base: &str, csrf: &str, user: (&str, &str)) -> Reply {
    let fields = [("csrf", csrf), ("login", user.0), ("password", user.1)];
    post_form(http, &format!("{base}/host/login"), None, &fields).await
}

async fn post_code(http: &reqwest::Client, base: &str, csrf: &str, code: &str) -> Reply {
    let fields = [("csrf", csrf), ("code", code)];
    post_form(http, &format!("{base}/host/code"), None, &fields).await
}

/// The value a response's `Set-Cookie` gives the cookie `name`.
fn cookie_set(reply: &Reply, name: &str) -> Option<String> {
    reply
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|cookie| cookie.split(';').next()?.split_once('='))
        .find(|(key, value)| *key == name && !value.is_empty())
        .map(|(_, value)| value.to_owned())
}

fn pending_cookie(reply: &Reply) -> Option<String> {
    cookie_set(reply, "host-pending")
}

/// Carol's authenticator app: the code of this 30-second step.
fn carol_code() -> String {
    let secret = Secret::Encoded(CAROL_TOTP_SECRET.to_owned())
        .to_bytes()
        .expect("a base32 secret");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs();
    TOTP::new_unchecked(Algorithm::SHA1, 6, 1, 30, secret).generate(now)
}

/// A code that is not `right` (each digit moved by one).
fn wrong_code(right: &str) -> String {
    right
        .bytes()
        .map(|digit| char::from(b'0' + (digit - b'0' + 1) % 10))
        .collect()
}

/// The tokens for the code a redirect carries, and their ID token's claims.
async fn redeem(base: &str, redirected: &Reply) -> (Value, Value) {
    let code = callback_query(redirected).remove("code").expect("a code");
    redeem_code(base, &code).await
}

/// The tokens for `code` and their ID token's claims (its signature is the OpenID tests').
async fn redeem_code(base: &str, code: &str) -> (Value, Value) {
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
            ("client_id", CLIENT),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    let tokens = assert_tokens(&reply);
    let id_token = tokens["id_token"].as_str().expect("an ID token");
    let payload = id_token.split('.').nth(1).expect("a JWT");
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    let claims = serde_json::from_slice(&payload).expect("JSON claims");
    (tokens, claims)
}

async fn profile(base: &str, access_token: &str) -> Reply {
    send(
        browser()
            .get(format!("{base}/api/profile"))
            .bearer_auth(access_token),
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// The example as a child process
// ---------------------------------------------------------------------------------------------

/// `examples/host_app` on a free port over a database file of its own; killed on drop, and the
/// file removed.
struct HostApp {
    base: String,
    database: PathBuf,
    child: Child,
    log: Arc<Mutex<String>>,
}

impl HostApp {
    fn start() -> Self {
        static STARTED: AtomicU32 = AtomicU32::new(0);
        let binary = binary();
        let dir = target_dir().join("host_app");
        std::fs::create_dir_all(&dir).expect("create <target>/host_app");
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let database = dir.join(format!("users-{}-{n}.sqlite3", std::process::id()));
        let _ = std::fs::remove_file(&database);
        let mut failures = Vec::new();
        // A free port can be taken before the app binds it: try again.
        for _ in 0..3 {
            match Self::try_start(binary, &database) {
                Ok(app) => return app,
                Err(failure) => failures.push(failure),
            }
        }
        panic!("host_app did not start:\n{}", failures.join("\n---\n"));
    }

    fn try_start(binary: &Path, database: &Path) -> Result<Self, String> {
        let addr = format!("127.0.0.1:{}", demo::free_port());
        let mut child = Command::new(binary)
            .args(["--addr", &addr, "--database"])
            .arg(database)
            .env_remove("HOST_ADDR")
            .env_remove("HOST_ISSUER")
            .env_remove("HOST_DATABASE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let mut log = sink.lock().unwrap_or_else(|p| p.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let (banner, first_line) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = stdout.lines().map_while(Result::ok);
            if let Some(line) = lines.next() {
                let _ = banner.send(line);
            }
            lines.for_each(drop);
        });
        let app = Self {
            base: format!("http://{addr}"),
            database: database.to_owned(),
            child,
            log,
        };
        match first_line.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => {
                assert_eq!(line, format!("host_app listening on {}", app.base));
                Ok(app)
            }
            Err(_) => {
                let log = app.log.lock().unwrap_or_else(|p| p.into_inner()).clone();
                drop(app);
                Err(format!("no banner within 30 s; stderr:\n{log}"))
            }
        }
    }

    /// The `password_hash` of row `id`, read from the file as another program would.
    fn password_hash(&self, id: i64) -> String {
        let db = Connection::open_with_flags(&self.database, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the host's database read-only");
        db.query_row(
            "SELECT password_hash FROM users WHERE id = ?1",
            [id],
            |row| row.get(0),
        )
        .expect("the row")
    }
}

/// The example, built once per test binary as the demo servers are.
fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| demo::example("host_app"))
}

/// `<target dir>`, from the example's path (`<target dir>/<profile>/examples/host_app`), without
/// building the demo servers as `demo::target_dir` does.
fn target_dir() -> &'static Path {
    binary()
        .ancestors()
        .nth(3)
        .expect("<target dir>/<profile>/examples/host_app")
}

impl Drop for HostApp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
            eprintln!("--- host_app output ---\n{log}");
        }
        let _ = std::fs::remove_file(&self.database);
    }
}
