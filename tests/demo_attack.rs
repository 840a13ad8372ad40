//! The demo servers under attack (examples/README.md, "Under attack"), over real HTTP on loopback, each
//! check against `axum_server` and `actix_server`: while one client misbehaves, a real user's
//! request still succeeds. The floods are bounded in count and time.
//!
//! - an authorization-request flood (4,000-byte `state`) keeps nothing: a user signs in after it;
//! - a wrong-client-secret flood does not starve a user's password check;
//! - 60 concurrent guesses at one account: at most 10 reach the password check;
//! - a planted cookie and form are worth nothing after the user signs in (new session id and
//!   CSRF token);
//! - a client introspecting another client's token sees exactly `{"active":false}`, while the
//!   resource server `api-server` sees every token of its audience.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

mod demo;

use demo::http::*;
use demo::{Server, resident_kib};

under_attack! {
    an_authorization_flood_keeps_nothing_and_a_user_still_signs_in => authorization_flood;
    a_wrong_secret_flood_does_not_starve_a_user_s_password_check => wrong_secret_flood;
    concurrent_guesses_at_one_account_all_count => concurrent_guesses;
    a_planted_session_is_worth_nothing_after_sign_in => session_fixation;
    introspection_shows_a_client_only_its_own_tokens => introspection_scope;
}

/// `workers` tasks send `total` requests made by `request` between them, or as many as they can
/// until `deadline` when given; answers the statuses.
async fn flood<F, Fut>(
    workers: usize,
    total: usize,
    deadline: Option<Instant>,
    request: F,
) -> Vec<u16>
where
    F: Fn(reqwest::Client) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = u16> + Send,
{
    let request = Arc::new(request);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(workers)
        .no_proxy()
        .build()
        .unwrap();
    let mut tasks = JoinSet::new();
    for worker in 0..workers {
        let (request, http) = (request.clone(), http.clone());
        let share = total / workers + usize::from(worker < total % workers);
        tasks.spawn(async move {
            let mut statuses = Vec::with_capacity(share.min(4096));
            for _ in 0..share {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                statuses.push(request(http.clone()).await);
            }
            statuses
        });
    }
    let mut statuses = Vec::with_capacity(total.min(1 << 16));
    while let Some(done) = tasks.join_next().await {
        statuses.extend(done.expect("a flood task"));
    }
    statuses
}

async fn authorization_flood(server: &Server) {
    const REQUESTS: usize = 4_000;
    // The longest state a request may carry.
    let state = "s".repeat(2_048);
    let url = authorize_url(
        &server.base,
        &[
            ("response_type", "code"),
            ("client_id", "public-client"),
            ("redirect_uri", CALLBACK),
            (
                "code_challenge",
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            ),
            ("code_challenge_method", "S256"),
            ("state", &state),
        ],
    );
    let before = resident_kib(server.pid());
    let started = Instant::now();
    let statuses = flood(32, REQUESTS, None, move |http| {
        let url = url.clone();
        async move {
            let reply = http.get(&url).send().await.expect("answered");
            let status = reply.status().as_u16();
            let _ = reply.bytes().await;
            status
        }
    })
    .await;
    assert!(
        statuses.iter().all(|s| *s == 200),
        "every request got its page"
    );
    let after = resident_kib(server.pid());
    eprintln!(
        "{REQUESTS} authorization requests in {:.1} s; resident memory {before:?} -> {after:?} KiB",
        started.elapsed().as_secs_f64()
    );
    if let (Some(before), Some(after)) = (before, after) {
        // Nothing is kept per request: what grows is the allocator's and the runtime's working
        // set, not a table of 4,000 sign-ins with 4 KB each (16 MB).
        assert!(
            after.saturating_sub(before) < 12 * 1024,
            "{before} -> {after} KiB"
        );
    }
    // A real user signs in right after, through the approval page.
    let browser = browser();
    let params = [
        ("response_type", "code"),
        ("client_id", "demo-client"),
        ("redirect_uri", CALLBACK),
        ("state", "real-user"),
    ];
    let approval = sign_in_via_authorize(&browser, &server.base, &params, ALICE).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    let done = decide(&browser, &server.base, &approval, "approve").await;
    let query = callback_query(&done);
    assert_eq!(query["state"], "real-user");
    assert!(query.contains_key("code"));
}

async fn wrong_secret_flood(server: &Server) {
    let base = server.base.clone();
    // The real client has authenticated before (as a running application has).
    password_grant(&base, DEMO, BOB, "profile").await;
    let flood_base = base.clone();
    let flood_ends = Instant::now() + Duration::from_secs(6);
    let attack = tokio::spawn(flood(64, usize::MAX / 2, Some(flood_ends), move |http| {
        let url = format!("{flood_base}/api/oauth/token");
        async move {
            let reply = http
                .post(url)
                .basic_auth("demo-client", Some("wrong-secret"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body("grant_type=client_credentials")
                .send()
                .await
                .expect("answered");
            reply.status().as_u16()
        }
    }));
    // While the flood runs, real users' password grants succeed.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for user in [ALICE, BOB, ALICE] {
        let started = Instant::now();
        password_grant(&base, DEMO, user, "profile").await;
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
    assert!(
        Instant::now() < flood_ends,
        "the users' requests ran during the flood"
    );
    let statuses = attack.await.expect("the flood");
    assert!(
        statuses.iter().all(|s| *s == 401),
        "every wrong secret is 401"
    );
    eprintln!("{} wrong secrets sent during the flood", statuses.len());
}

async fn concurrent_guesses(server: &Server) {
    let mut guesses = JoinSet::new();
    for i in 0..60 {
        let base = server.base.clone();
        // The right password comes last, while the wrong ones are still in flight: before
        // any of them had been counted, it used to get 200.
        let (password, delay) = if i == 59 {
            (BOB.1.to_owned(), Duration::from_millis(300))
        } else {
            (format!("wrong-guess-{i}"), Duration::ZERO)
        };
        guesses.spawn(async move {
            tokio::time::sleep(delay).await;
            token(
                &base,
                Some(DEMO),
                &[
                    ("grant_type", "password"),
                    ("username", BOB.0),
                    ("password", &password),
                ],
            )
            .await
        });
    }
    // Under load the guesses reach the server in any order, and a saturated hashing lane may
    // answer some 503 unchecked; what must hold is that no more than the throttle's ten wrong
    // passwords are ever checked, however many arrive at once.
    let (mut throttled, mut wrong, mut unchecked, mut right) = (0, 0, 0, 0);
    while let Some(reply) = guesses.join_next().await {
        let reply = reply.expect("a guess");
        let description = reply.json()["error_description"]
            .as_str()
            .map(str::to_owned);
        match (reply.status, description) {
            (200, _) => right += 1,
            (_, Some(d)) if d.starts_with("too many failed sign-ins") => throttled += 1,
            (503, _) => unchecked += 1,
            (400, _) => wrong += 1,
            (status, d) => panic!("an unexpected answer: {status} {d:?}"),
        }
    }
    eprintln!(
        "{wrong} wrong passwords checked, {throttled} throttled, {unchecked} unchecked, {right} right"
    );
    assert!(
        wrong <= 10,
        "every guess counted: {wrong} wrong passwords checked"
    );
    assert!(throttled > 0, "the throttle refused the rest");
    assert_eq!(wrong + throttled + unchecked + right, 60);
    if wrong == 10 {
        // The account is locked for its window, whatever the password.
        let locked = token(
            &server.base,
            Some(DEMO),
            &[
                ("grant_type", "password"),
                ("username", BOB.0),
                ("password", BOB.1),
            ],
        )
        .await;
        assert_oauth_error(&locked, 400, "invalid_grant");
    }
    // Another account is untouched.
    password_grant(&server.base, DEMO, ALICE, "profile").await;
}

async fn session_fixation(server: &Server) {
    let base = &server.base;
    let params = [
        ("response_type", "code"),
        ("client_id", "demo-client"),
        ("redirect_uri", CALLBACK),
        ("state", "victim"),
    ];
    // The attacker starts a sign-in and keeps its cookie and form.
    let page = get(&browser(), &authorize_url(base, &params)).await;
    let planted_cookie = cookie_value(&page).expect("a session cookie");
    let planted_csrf = sign_in_form(&page);
    // The victim's browser carries them and signs in.
    let victim = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let post = |client: &reqwest::Client, path: &str, cookie: &str, pairs: &[(&str, &str)]| {
        client
            .post(format!("{base}{path}"))
            .header("cookie", format!("{}={cookie}", cookie_name(&page)))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(pairs))
    };
    let signed_in = send(post(
        &victim,
        "/signin",
        &planted_cookie,
        &[
            ("csrf", &planted_csrf),
            ("username", ALICE.0),
            ("password", ALICE.1),
        ],
    ))
    .await;
    assert_eq!(signed_in.status, 200, "{}", signed_in.body);
    let new_cookie = cookie_value(&signed_in).expect("a new session cookie at sign-in");
    let new_csrf = HtmlForm::parse(&signed_in.body).hidden("csrf").to_owned();
    assert_ne!(new_cookie, planted_cookie, "a new session id");
    assert_ne!(new_csrf, planted_csrf, "a new CSRF token");
    // What the attacker planted approves nothing and signs in no more.
    for (cookie, csrf) in [
        (&planted_cookie, &planted_csrf),
        (&planted_cookie, &new_csrf),
        (&new_cookie, &planted_csrf),
    ] {
        let tried = send(post(
            &browser(),
            "/approve",
            cookie,
            &[("csrf", csrf), ("decision", "approve")],
        ))
        .await;
        assert_eq!(tried.status, 400, "{}", tried.body);
        assert!(tried.location().is_none());
    }
    let again = send(post(
        &browser(),
        "/signin",
        &planted_cookie,
        &[
            ("csrf", &planted_csrf),
            ("username", ALICE.0),
            ("password", ALICE.1),
        ],
    ))
    .await;
    assert_eq!(again.status, 400, "the form signs in once: {}", again.body);
    // The victim's new session carries the decision.
    let approved = send(post(
        &victim,
        "/approve",
        &new_cookie,
        &[("csrf", &new_csrf), ("decision", "approve")],
    ))
    .await;
    let query = callback_query(&approved);
    assert_eq!(query["state"], "victim");
}

/// The value the response's `Set-Cookie` gives the sign-in cookie.
fn cookie_value(reply: &Reply) -> Option<String> {
    let set = reply.header("set-cookie")?;
    let (_, value) = set.split(';').next()?.split_once('=')?;
    Some(value.to_owned())
}

fn cookie_name(reply: &Reply) -> String {
    let set = reply.header("set-cookie").expect("Set-Cookie");
    set.split_once('=').expect("name=value").0.to_owned()
}

async fn introspection_scope(server: &Server) {
    let base = &server.base;
    let plain = password_grant(base, PLAIN, ALICE, "profile").await;
    let token = access_token(&plain).to_owned();
    let as_client = |client: (&'static str, &'static str)| {
        let token = token.clone();
        async move {
            post_form(
                &browser(),
                &format!("{base}/api/oauth/introspect"),
                Some(client),
                &[("token", &token)],
            )
            .await
        }
    };
    let other = as_client(DEMO).await;
    assert_eq!(other.status, 200);
    assert_eq!(other.body, r#"{"active":false}"#);
    let own = as_client(PLAIN).await.json();
    assert_eq!(own["active"], true);
    assert_eq!(own["username"], ALICE.0);
    let resource_server = as_client(("api-server", "api-secret")).await.json();
    assert_eq!(resource_server["active"], true);
    assert_eq!(resource_server["aud"], format!("{base}/api"));
    assert_eq!(resource_server["username"], ALICE.0);
}
