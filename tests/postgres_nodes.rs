//! Many nodes, one PostgreSQL database: `examples/axum_server` started as two processes over the
//! same database, driven over real HTTP.
//!
//! - `a_browser_signs_in_across_nodes_and_the_throttle_counts_on_every_node`: the sign-in page
//!   from node A, its form posted to node B, the approval on A, the code exchanged on B; ten
//!   wrong passwords spread over both nodes lock the account on both.
//! - `two_nodes_share_one_database`: a code issued on node A is redeemed on node B; 100
//!   concurrent redemptions of one code, spread over both nodes, yield exactly one token; a
//!   refresh token rotated on A is dead on B; a token revoked on B is refused on A.
//! - `a_database_outage_is_answered_cleanly_and_recovered_from`: the database is stopped mid-run
//!   (an immediate shutdown, as in a crash); every answer is still a clean OAuth error (503
//!   `temporarily_unavailable` or 500 `server_error` JSON), none takes longer than the pool's
//!   acquire timeout and a margin, the node does not panic, and it serves again by itself once
//!   the database is back.
//!
//! - `a_client_idle_past_the_ttl_is_gone_on_every_node`: under `--registration-idle-ttl 2`, a
//!   self-registered client used on both nodes every second lives on; one left alone for three
//!   seconds is refused with `invalid_client` on either node.
//!
//! They need `GRANTOR_TEST_POSTGRES_URL` (a database they may create schemas in) and, for the
//! outage, `GRANTOR_TEST_POSTGRES_CTL` (a command taking `stop` and `start`, such as
//! `.ci/postgres`); `.ci/run` sets both. Without them each test says `skipped: …` on stderr (past
//! the harness's capture) and does nothing. The tests of this file run one at a time (the outage
//! stops the database everyone uses); run no other PostgreSQL tests at the same time.

#![cfg(feature = "postgres")]

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod demo;

use demo::Server as Node;

/// The issuer every node of one deployment shares (so a token's audience, `{issuer}/api`, is
/// the same API whichever node checks it).
const SHARED_ISSUER: &str = "http://nodes.grantor.test";

/// A node of the deployment over `store`, behind the shared issuer.
fn node(framework: &str, store: &str) -> Node {
    Node::start_with_args(framework, store, &["--issuer", SHARED_ISSUER])
}
use reqwest::StatusCode;
use reqwest::redirect::Policy;
use serde_json::Value;

/// The tests of this file hold this while they run: the outage test stops the database.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const REDIRECT: &str = "http://127.0.0.1:8081/callback";

fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}

// ---------------------------------------------------------------------------------------------
// The two-node test

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_share_one_database() {
    let Some(db) = Database::fresh("two_nodes_share_one_database").await else {
        return;
    };
    let _turn = ONE_AT_A_TIME.lock().await;
    let (a, b) = (node("axum", &db.store()), node("axum", &db.store()));
    let client = http_client();

    // A code issued on A is redeemed on B.
    let code = sign_in_for_code(&client, &a.base).await;
    let (status, body) = exchange_code(&client, &b.base, &code).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let access = body["access_token"].as_str().unwrap().to_owned();
    let (status, _) = me(&client, &a.base, &access).await;
    assert_eq!(status, StatusCode::OK, "the token from B works on A");

    // 100 concurrent redemptions of one code, half on each node: exactly one token. The code
    // comes from B without a password: the browser signed in on A is signed in on B (single
    // sign-on through the shared session table).
    warm_up_client_authentication(&client, &[&a.base, &b.base]).await;
    let code = code_by_single_sign_on(&client, &b.base).await;
    let barrier = Arc::new(tokio::sync::Barrier::new(100));
    let racers: Vec<_> = (0..100)
        .map(|i| {
            let base = if i % 2 == 0 { &a.base } else { &b.base }.clone();
            let (client, code, barrier) = (client.clone(), code.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                exchange_code(&client, &base, &code).await
            })
        })
        .collect();
    let (mut tokens, mut refused) = (0, 0);
    for racer in racers {
        let (status, body) = racer.await.unwrap();
        match status {
            StatusCode::OK => tokens += 1,
            StatusCode::BAD_REQUEST => {
                assert_eq!(body["error"], "invalid_grant", "{body}");
                refused += 1;
            }
            other => panic!("a racer got {other}: {body}"),
        }
    }
    assert_eq!((tokens, refused), (1, 99));

    // A refresh token rotated on A is dead on B (and its reuse revokes the family).
    let first = password_grant(&client, &a.base).await;
    let old = first["refresh_token"].as_str().unwrap();
    let (status, second) = refresh(&client, &a.base, old).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let (status, body) = refresh(&client, &b.base, old).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "invalid_grant");
    let new = second["refresh_token"].as_str().unwrap();
    let (status, body) = refresh(&client, &a.base, new).await;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::BAD_REQUEST, &Value::from("invalid_grant")),
        "the reuse on B revoked the family on A too"
    );

    // A token revoked on B is refused on A.
    let tokens = password_grant(&client, &a.base).await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(me(&client, &a.base, access).await.0, StatusCode::OK);
    let revoked = client
        .post(format!("{}/api/oauth/revoke", b.base))
        .basic_auth("demo-client", Some("demo-secret"))
        .form_body(&[("token", access)])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);
    let (status, _) = me(&client, &a.base, access).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "revoked on B, refused on A"
    );

    for node in [&a, &b] {
        node.assert_alive_and_calm();
    }
    drop((a, b));
    db.drop_schema().await;
}

// ---------------------------------------------------------------------------------------------
// A browser's sign-in across nodes

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_browser_signs_in_across_nodes_and_the_throttle_counts_on_every_node() {
    use demo::http::{self as web, ALICE, BOB, CALLBACK, DEMO};
    let test = "a_browser_signs_in_across_nodes_and_the_throttle_counts_on_every_node";
    let Some(db) = Database::fresh(test).await else {
        return;
    };
    let _turn = ONE_AT_A_TIME.lock().await;
    let (a, b) = (node("axum", &db.store()), node("actix", &db.store()));
    // One browser: its session cookie goes to both nodes (cookies do not depend on the port).
    let browser = web::browser();
    let params = [
        ("response_type", "code"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("state", "across-nodes"),
        ("scope", "profile"),
    ];

    // The sign-in page from A, the form posted to B, the approval on A.
    let page = web::get(&browser, &web::authorize_url(&a.base, &params)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let csrf = web::sign_in_form(&page);
    let approval = web::sign_in(&browser, &b.base, &csrf, ALICE).await;
    assert_eq!(
        approval.status, 200,
        "B knows A's session: {}",
        approval.body
    );
    assert!(approval.body.contains("Allow access?"), "{}", approval.body);
    let answer = web::decide(&browser, &a.base, &approval, "approve").await;
    let query = web::callback_query(&answer);
    assert_eq!(query["state"], "across-nodes");

    // The code from A's approval is exchanged on B.
    let exchange = [
        ("grant_type", "authorization_code"),
        ("code", query["code"].as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let tokens = web::assert_tokens(&web::token(&b.base, Some(DEMO), &exchange).await);
    let me = web::me(&a.base, Some(web::access_token(&tokens))).await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(me.json()["email"], ALICE.0);

    // The session was used up on A: replaying the approval on B is refused.
    let replay = web::decide(&browser, &b.base, &approval, "approve").await;
    assert_eq!(replay.status, 400, "{}", replay.body);

    // Ten wrong passwords for Bob, alternating nodes, lock his account on both: the throttle
    // counts through the shared store, not per process.
    let grant = |password| {
        [
            ("grant_type", "password"),
            ("username", BOB.0),
            ("password", password),
        ]
    };
    for i in 0..10 {
        let node = if i % 2 == 0 { &a } else { &b };
        let reply = web::token(&node.base, Some(DEMO), &grant("not-bobs-password")).await;
        web::assert_oauth_error(&reply, 400, "invalid_grant");
    }
    for node in [&a, &b] {
        let reply = web::token(&node.base, Some(DEMO), &grant(BOB.1)).await;
        web::assert_oauth_error(&reply, 400, "invalid_grant");
        assert!(
            reply.json()["error_description"]
                .as_str()
                .is_some_and(|d| d.contains("too many failed sign-ins")),
            "{}",
            reply.body
        );
    }

    for node in [&a, &b] {
        node.assert_alive_and_calm();
    }
    drop((a, b));
    db.drop_schema().await;
}

// ---------------------------------------------------------------------------------------------
// Idle self-registered clients

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_idle_past_the_ttl_is_gone_on_every_node() {
    let Some(db) = Database::fresh("a_client_idle_past_the_ttl_is_gone_on_every_node").await else {
        return;
    };
    let _turn = ONE_AT_A_TIME.lock().await;
    let ttl = ["--issuer", SHARED_ISSUER, "--registration-idle-ttl", "2"];
    let a = Node::start_with_args("axum", &db.store(), &ttl);
    let b = Node::start_with_args("actix", &db.store(), &ttl);
    let client = http_client();
    let idle = register_client(&client, &a.base).await;
    let busy = register_client(&client, &b.base).await;
    assert_eq!(
        probe(&client, &b.base, &idle).await,
        (StatusCode::BAD_REQUEST, "invalid_grant".into())
    );
    for node in [&a, &b, &a, &b] {
        tokio::time::sleep(Duration::from_millis(900)).await;
        let (status, error) = probe(&client, &node.base, &busy).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "a client in use lives on: {error}"
        );
    }
    for node in [&a, &b] {
        let (status, error) = probe(&client, &node.base, &idle).await;
        assert_eq!(
            (status, error.as_str()),
            (StatusCode::UNAUTHORIZED, "invalid_client")
        );
    }
    a.assert_alive_and_calm();
    b.assert_alive_and_calm();
    drop((a, b));
    db.drop_schema().await;
}

/// Registers a confidential client at `base`: its id and secret.
async fn register_client(client: &reqwest::Client, base: &str) -> (String, String) {
    let metadata = serde_json::json!({
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
    });
    let response = client
        .post(format!("{base}/api/oauth/register"))
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let body: Value = response.json().await.unwrap();
    let field = |name: &str| body[name].as_str().unwrap().to_owned();
    (field("client_id"), field("client_secret"))
}

/// A token request `registered` authenticates, with a refresh token nobody issued: the
/// status and the error (`invalid_grant` while the client lives, `invalid_client` after).
async fn probe(
    client: &reqwest::Client,
    base: &str,
    (id, secret): &(String, String),
) -> (StatusCode, String) {
    let response = client
        .post(format!("{base}/api/oauth/token"))
        .basic_auth(id, Some(secret))
        .form_body(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "none-such"),
        ])
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    (
        status,
        body["error"].as_str().unwrap_or_default().to_owned(),
    )
}

// ---------------------------------------------------------------------------------------------
// The outage test

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_outage_is_answered_cleanly_and_recovered_from() {
    let test = "a_database_outage_is_answered_cleanly_and_recovered_from";
    let Ok(ctl) = std::env::var("GRANTOR_TEST_POSTGRES_CTL") else {
        if std::env::var("GRANTOR_TEST_POSTGRES_URL").is_ok() {
            skipped(test, "GRANTOR_TEST_POSTGRES_CTL not set");
        } else {
            skipped(test, "GRANTOR_TEST_POSTGRES_URL not set");
        }
        return;
    };
    let Some(db) = Database::fresh(test).await else {
        return;
    };
    let _turn = ONE_AT_A_TIME.lock().await;
    let (a, b) = (node("axum", &db.store()), node("axum", &db.store()));
    let client = http_client();
    warm_up_client_authentication(&client, &[&a.base, &b.base]).await;
    let before = password_grant(&client, &a.base).await;
    let access = before["access_token"].as_str().unwrap().to_owned();
    assert_eq!(me(&client, &b.base, &access).await.0, StatusCode::OK);

    // Load running through the outage: requests in flight when the database dies.
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let load: Vec<_> = (0..4)
        .map(|i| {
            let base = if i % 2 == 0 { &a.base } else { &b.base }.clone();
            let (client, access, running) = (client.clone(), access.clone(), running.clone());
            tokio::spawn(async move {
                let mut answers = Vec::new();
                while running.load(std::sync::atomic::Ordering::Relaxed) {
                    let (what, request) = if i < 2 {
                        let request = client
                            .post(format!("{base}/api/oauth/token"))
                            .basic_auth("demo-client", Some("demo-secret"))
                            .form_body(&[("grant_type", "client_credentials")]);
                        ("load: POST /api/oauth/token client_credentials", request)
                    } else {
                        let request = client.get(format!("{base}/api/me")).bearer_auth(&access);
                        ("load: GET /api/me", request)
                    };
                    answers.push(send_timed(what.to_owned(), request).await);
                }
                answers
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;

    // The database goes away at once, as in a crash; it comes back even if this test fails.
    let outage = Outage::begin(&ctl);
    let started = Instant::now();
    let mut answers = Vec::new();
    for round in 0..2 {
        // Every kind of request on both nodes at once; each may wait up to the pool's acquire
        // timeout.
        let mut pending = Vec::new();
        for node in [&a, &b] {
            for (what, request) in outage_requests(&client, &node.base, &access) {
                pending.push(tokio::spawn(send_timed(what, request)));
            }
        }
        for answer in pending {
            let (what, took, status, content_type, body) = answer.await.unwrap();
            answers.push(format!("round {round} {what}: {status} in {took:?}"));
            check_outage_answer(&what, took, status, &content_type, &body);
        }
    }
    let outage_took = started.elapsed();
    for node in [&a, &b] {
        node.assert_alive_and_calm();
        let log = node.log();
        assert!(
            log.contains("grantor: store failure"),
            "the cause goes to the host's log:\n{log}"
        );
    }
    outage.end();

    // Service comes back by itself.
    let deadline = Instant::now() + Duration::from_secs(30);
    for node in [&a, &b] {
        loop {
            let (status, body) = try_password_grant(&client, &node.base).await;
            if status == StatusCode::OK {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{}: not back 30 s after the database: {status} {body}",
                node.base
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let (status, _) = me(&client, &node.base, &access).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "tokens from before the outage still work"
        );
        node.assert_alive_and_calm();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    running.store(false, std::sync::atomic::Ordering::Relaxed);
    let (mut served, mut refused) = (0, 0);
    for task in load {
        let answers = task.await.unwrap();
        let last = answers.last().map(|(_, _, status, _, _)| *status);
        assert_eq!(
            last,
            Some(StatusCode::OK),
            "the load is served again at the end"
        );
        for (what, took, status, content_type, body) in answers {
            if status == StatusCode::OK {
                served += 1;
            } else {
                refused += 1;
                check_outage_answer(&what, took, status, &content_type, &body);
            }
        }
    }
    assert!(refused > 0, "the load met the outage");
    answers.push(format!(
        "load through the outage: {served} served, {refused} refused cleanly"
    ));
    let _ = writeln!(
        std::io::stderr(),
        "{test}: {} answers during a {outage_took:?} outage, then recovered:\n  {}",
        answers.len(),
        answers.join("\n  ")
    );
    drop((a, b));
    db.drop_schema().await;
}

/// Sends `request` (failing the test past 10 s or without an HTTP answer) and answers what it
/// was, how long it took, the status, the content type and the body.
async fn send_timed(
    what: String,
    request: reqwest::RequestBuilder,
) -> (String, Duration, StatusCode, String, String) {
    let sent = Instant::now();
    let response = tokio::time::timeout(Duration::from_secs(10), request.send())
        .await
        .unwrap_or_else(|_| panic!("{what} hung past 10 s"))
        .unwrap_or_else(|e| panic!("{what}: no HTTP answer: {e}"));
    let took = sent.elapsed();
    let status = response.status();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        // A 503 says when to come back (RFC 9110 section 10.2.3).
        assert_eq!(
            response.headers().get("retry-after").map(|v| v.as_bytes()),
            Some(&b"1"[..]),
            "{what}: a 503 without Retry-After"
        );
    }
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = response.text().await.unwrap();
    (what, took, status, content_type, body)
}

/// A clean OAuth error, in time: 503 `temporarily_unavailable` or 500 `server_error`, JSON
/// without the cause (or, for the authorization endpoint, the sign-in flow's error page).
fn check_outage_answer(
    what: &str,
    took: Duration,
    status: StatusCode,
    content_type: &str,
    body: &str,
) {
    assert!(
        took < Duration::from_secs(6),
        "{what} took {took:?}: longer than the pool's acquire timeout (3 s) and a margin"
    );
    assert!(
        matches!(
            status,
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::INTERNAL_SERVER_ERROR
        ),
        "{what}: {status} {body}"
    );
    let expected = if status == StatusCode::SERVICE_UNAVAILABLE {
        "temporarily_unavailable"
    } else {
        "server_error"
    };
    if content_type.starts_with("application/json") {
        let json: Value = serde_json::from_str(body).unwrap();
        assert_eq!(json["error"], expected, "{what}: {body}");
        assert!(
            !body.contains("sqlx") && !body.contains("postgres") && !body.contains("pool"),
            "{what}: the cause leaked: {body}"
        );
    } else {
        // The sign-in flow's error page (HTML), still naming the OAuth error.
        assert!(what.contains("/api/oauth/authorize"), "{what}: {body}");
        assert!(body.contains(expected), "{what}: {body}");
    }
}

/// Every kind of request a node answers from the database, as (what, request).
fn outage_requests(
    client: &reqwest::Client,
    base: &str,
    access: &str,
) -> Vec<(String, reqwest::RequestBuilder)> {
    let token = format!("{base}/api/oauth/token");
    let authorize = format!(
        "{base}/api/oauth/authorize?response_type=code&client_id=plain-client\
         &redirect_uri={}&state=s",
        urlencode(REDIRECT)
    );
    vec![
        (
            "POST /api/oauth/token password".to_owned(),
            client
                .post(&token)
                .basic_auth("demo-client", Some("demo-secret"))
                .form_body(&[
                    ("grant_type", "password"),
                    ("username", "alice@example.com"),
                    ("password", "alice-password-1"),
                ]),
        ),
        (
            "POST /api/oauth/token client_credentials".to_owned(),
            client
                .post(&token)
                .basic_auth("demo-client", Some("demo-secret"))
                .form_body(&[("grant_type", "client_credentials")]),
        ),
        (
            "POST /api/oauth/token authorization_code".to_owned(),
            client
                .post(&token)
                .basic_auth("plain-client", Some("plain-secret"))
                .form_body(&[
                    ("grant_type", "authorization_code"),
                    ("code", "some-code"),
                    ("redirect_uri", REDIRECT),
                ]),
        ),
        (
            "POST /api/oauth/introspect".to_owned(),
            client
                .post(format!("{base}/api/oauth/introspect"))
                .basic_auth("demo-client", Some("demo-secret"))
                .form_body(&[("token", access)]),
        ),
        (
            "POST /api/oauth/revoke".to_owned(),
            client
                .post(format!("{base}/api/oauth/revoke"))
                .basic_auth("demo-client", Some("demo-secret"))
                .form_body(&[("token", "some-token")]),
        ),
        (
            "GET /api/me".to_owned(),
            client.get(format!("{base}/api/me")).bearer_auth(access),
        ),
        ("GET /api/oauth/authorize".to_owned(), client.get(authorize)),
    ]
}

/// Stops the database now and starts it again when ended or dropped.
struct Outage {
    ctl: String,
    ended: bool,
}

impl Outage {
    fn begin(ctl: &str) -> Self {
        run_ctl(ctl, "stop");
        Self {
            ctl: ctl.to_owned(),
            ended: false,
        }
    }

    fn end(mut self) {
        run_ctl(&self.ctl, "start");
        self.ended = true;
    }
}

impl Drop for Outage {
    fn drop(&mut self) {
        if !self.ended {
            run_ctl(&self.ctl, "start");
        }
    }
}

fn run_ctl(ctl: &str, action: &str) {
    let status = Command::new(ctl)
        .arg(action)
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("cannot run {ctl} {action}: {e}"));
    assert!(status.success(), "{ctl} {action}: {status}");
}

// ---------------------------------------------------------------------------------------------
// The OAuth client

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .cookie_store(true)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A form body (`application/x-www-form-urlencoded`), as a browser or an OAuth client sends it.
trait FormBody {
    fn form_body(self, pairs: &[(&str, &str)]) -> Self;
}

impl FormBody for reqwest::RequestBuilder {
    fn form_body(self, pairs: &[(&str, &str)]) -> Self {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        self.header("content-type", "application/x-www-form-urlencoded")
            .body(body)
    }
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Signs Alice in on `base` for `plain-client` (no approval page) and answers the code.
async fn sign_in_for_code(client: &reqwest::Client, base: &str) -> String {
    let page = client
        .get(format!(
            "{base}/api/oauth/authorize?response_type=code&client_id=plain-client\
             &redirect_uri={}&state=xyz",
            urlencode(REDIRECT)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    let csrf = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a CSRF token on the sign-in page")
        .to_owned();
    let signed_in = client
        .post(format!("{base}/signin"))
        .form_body(&[
            ("csrf", csrf.as_str()),
            ("username", "alice@example.com"),
            ("password", "alice-password-1"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    let location = signed_in.headers()["location"].to_str().unwrap();
    let location = url::Url::parse(location).unwrap();
    location
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("a code in the redirect")
}

/// A code for `plain-client` from a browser already signed in (on any node): the authorization
/// endpoint answers with the redirect at once, no sign-in page.
async fn code_by_single_sign_on(client: &reqwest::Client, base: &str) -> String {
    let answer = client
        .get(format!(
            "{base}/api/oauth/authorize?response_type=code&client_id=plain-client\
             &redirect_uri={}&state=sso",
            urlencode(REDIRECT)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer.status(),
        StatusCode::SEE_OTHER,
        "no sign-in page: signed in"
    );
    let location = answer.headers()["location"].to_str().unwrap();
    let location = url::Url::parse(location).unwrap();
    location
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("a code in the redirect")
}

async fn exchange_code(client: &reqwest::Client, base: &str, code: &str) -> (StatusCode, Value) {
    let response = client
        .post(format!("{base}/api/oauth/token"))
        .basic_auth("plain-client", Some("plain-secret"))
        .form_body(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
        ])
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

/// Authenticates each client once on each node, so that the race below measures the store, not
/// Argon2 (each node caches a verified secret).
async fn warm_up_client_authentication(client: &reqwest::Client, bases: &[&str]) {
    for base in bases {
        let (status, body) = exchange_code(client, base, "warm-up").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, body) = try_password_grant(client, base).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

async fn try_password_grant(client: &reqwest::Client, base: &str) -> (StatusCode, String) {
    let response = client
        .post(format!("{base}/api/oauth/token"))
        .basic_auth("demo-client", Some("demo-secret"))
        .form_body(&[
            ("grant_type", "password"),
            ("username", "alice@example.com"),
            ("password", "alice-password-1"),
        ])
        .send()
        .await;
    match response {
        Ok(response) => {
            let status = response.status();
            (status, response.text().await.unwrap_or_default())
        }
        Err(error) => (StatusCode::BAD_GATEWAY, error.to_string()),
    }
}

async fn password_grant(client: &reqwest::Client, base: &str) -> Value {
    let (status, body) = try_password_grant(client, base).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_str(&body).unwrap()
}

async fn refresh(client: &reqwest::Client, base: &str, token: &str) -> (StatusCode, Value) {
    let response = client
        .post(format!("{base}/api/oauth/token"))
        .basic_auth("demo-client", Some("demo-secret"))
        .form_body(&[("grant_type", "refresh_token"), ("refresh_token", token)])
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

async fn me(client: &reqwest::Client, base: &str, access: &str) -> (StatusCode, String) {
    let response = client
        .get(format!("{base}/api/me"))
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.text().await.unwrap())
}

// ---------------------------------------------------------------------------------------------
// The database and the nodes

/// A fresh schema in the test database, and a URL whose connections use it. With
/// `GRANTOR_TEST_POSTGRES_POOLER` (pgbouncer in transaction mode in front of that cluster,
/// `.ci/pgbouncer`), a fresh database instead, migrated directly as `grantor migrate` would be
/// before a deploy, which the nodes reach through the pooler (`pooler=transaction`). With
/// `GRANTOR_TEST_POSTGRES_ISOLATION` (such as `serializable`), every transaction of the nodes
/// runs at that isolation level.
struct Database {
    admin_url: String,
    made: Made,
    url: String,
}

/// What [`Database::fresh`] made, to drop.
enum Made {
    Schema(String),
    Database(String),
}

impl Database {
    /// The demo server's `--store` for this database.
    fn store(&self) -> String {
        format!("postgres:{}", self.url)
    }

    async fn fresh(test: &str) -> Option<Self> {
        use grantor::sql::sqlx::Connection as _;
        let Ok(admin_url) = std::env::var("GRANTOR_TEST_POSTGRES_URL") else {
            skipped(test, "GRANTOR_TEST_POSTGRES_URL not set");
            return None;
        };
        let pooler = std::env::var("GRANTOR_TEST_POSTGRES_POOLER")
            .ok()
            .filter(|url| !url.is_empty());
        let isolation = std::env::var("GRANTOR_TEST_POSTGRES_ISOLATION")
            .ok()
            .filter(|level| !level.is_empty());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("grantor_nodes_{}_{nanos}", std::process::id());
        let mut admin = grantor::sql::sqlx::postgres::PgConnection::connect(&admin_url)
            .await
            .unwrap();
        let database = if let Some(pooler) = pooler {
            grantor::sql::sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut admin)
                .await
                .unwrap();
            if let Some(level) = &isolation {
                let set =
                    format!("ALTER DATABASE {name} SET default_transaction_isolation = '{level}'");
                grantor::sql::sqlx::query(&set)
                    .execute(&mut admin)
                    .await
                    .unwrap();
            }
            let (base, _) = admin_url
                .split('?')
                .next()
                .unwrap()
                .rsplit_once('/')
                .unwrap();
            grantor::sql::PostgresStore::connect(&format!("{base}/{name}"))
                .await
                .unwrap()
                .close()
                .await;
            let url = format!("{}/{name}?pooler=transaction", pooler.trim_end_matches('/'));
            Self {
                admin_url,
                made: Made::Database(name),
                url,
            }
        } else {
            grantor::sql::sqlx::query(&format!("CREATE SCHEMA {name}"))
                .execute(&mut admin)
                .await
                .unwrap();
            let separator = if admin_url.contains('?') { '&' } else { '?' };
            let mut url = format!("{admin_url}{separator}options[search_path]={name}");
            if let Some(level) = &isolation {
                url.push_str(&format!("&options[default_transaction_isolation]={level}"));
            }
            Self {
                admin_url,
                made: Made::Schema(name),
                url,
            }
        };
        let _ = admin.close().await;
        if let Some(level) = &isolation {
            // What the nodes' transactions run at, asked as the nodes connect.
            let store = grantor::sql::PostgresStore::connect(&database.url)
                .await
                .unwrap();
            let mut tx = store.pool().begin().await.unwrap();
            let set: String =
                grantor::sql::sqlx::query_scalar("SHOW default_transaction_isolation")
                    .persistent(false)
                    .fetch_one(&mut *tx)
                    .await
                    .unwrap();
            tx.commit().await.unwrap();
            store.close().await;
            assert_eq!(&set, level, "the nodes' isolation");
        }
        Some(database)
    }

    async fn drop_schema(self) {
        use grantor::sql::sqlx::Connection as _;
        let mut admin = grantor::sql::sqlx::postgres::PgConnection::connect(&self.admin_url)
            .await
            .unwrap();
        let drop = match &self.made {
            Made::Schema(schema) => format!("DROP SCHEMA {schema} CASCADE"),
            // The pooler may still hold server connections to it.
            Made::Database(name) => format!("DROP DATABASE {name} WITH (FORCE)"),
        };
        grantor::sql::sqlx::query(&drop)
            .execute(&mut admin)
            .await
            .unwrap();
        let _ = admin.close().await;
    }
}
