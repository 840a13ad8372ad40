//! The demo servers under a harder attacker (examples/README.md, "Under attack, part 3"), over real
//! HTTP on loopback, each check against `axum_server` and `actix_server`. The attacker only
//! self-registers clients; each flood is bounded in count and time, and a real user's request
//! still succeeds after it.
//!
//! - a self-registered `private_key_jwt` client floods valid assertions (fresh `jti` each): it
//!   is refused past its own budget, and Alice still signs in and demo-client still pushes a
//!   request;
//! - a locked account stays locked through a flood of unknown usernames, and every other
//!   account still signs in;
//! - a client with ten RSA keys floods assertions without `kid` and with bad signatures: each
//!   is refused as needing a `kid` or as badly signed, so none is tried against every key, and
//!   `/api/me` answers throughout (its latency is printed, not asserted);
//! - a flood of wrong device user codes spends the server-wide limit of codes typed without a
//!   sign-in; another browser's person then enters the right code with their sign-in, and
//!   the device gets its tokens;
//! - self-registered public clients push requests until their shared budget is spent:
//!   demo-client, which an administrator registered, still pushes;
//! - a client that registers itself as "Demo Client Pro" gets an approval page a person can
//!   tell from demo-client's: it is marked unverified and names the host the answer goes to.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::task::JoinSet;

mod demo;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use demo::http::*;
use demo::{Server, resident_kib};
use keys::ProofKey;
use serde_json::{Value, json};

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// `grantor::client_assertion::ASSERTIONS_PER_CLIENT`.
const ASSERTIONS_PER_CLIENT: usize = 10_000;

under_attack! {
    an_assertion_flood_spends_only_its_clients_budget => assertion_flood;
    a_locked_account_stays_locked_through_a_flood_of_unknown_usernames => unknown_username_flood;
    a_look_alike_client_s_approval_page_names_where_the_answer_goes => look_alike;
    bad_assertions_against_many_keys_are_checked_against_one_key_each => many_keys_flood;
    wrong_user_codes_refuse_no_one_s_right_code => user_code_flood;
    a_push_flood_from_self_registered_clients_leaves_demo_client_its_budget => push_flood;
}

fn http_client(workers: usize) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(workers)
        .no_proxy()
        .build()
        .unwrap()
}

/// An assertion of `client` for `aud` signed by `key` (no `kid`), with a fresh `jti`.
fn assertion(key: &ProofKey, client: &str, aud: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({
        "iss": client, "sub": client, "aud": aud, "iat": now, "exp": now + 60,
        "jti": format!("flood-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)),
    });
    key.sign_with(&claims, |header| {
        header.typ = Some("JWT".to_owned());
        header.jwk = None;
    })
}

/// A self-registered `private_key_jwt` client with `key`: its id.
async fn register_keyed_client(base: &str, key: &ProofKey) -> String {
    let jwk = serde_json::to_value(&key.jwk).unwrap();
    let registration = json!({
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": [jwk]},
    });
    let client = register(base, &registration).await;
    client["client_id"].as_str().unwrap().to_owned()
}

/// Introspection authenticated by an assertion of `client`: the status and the description.
async fn introspect_as(
    http: &reqwest::Client,
    base: &str,
    key: &ProofKey,
    client: &str,
) -> (u16, String) {
    let url = format!("{base}/api/oauth/introspect");
    let signed = assertion(key, client, base);
    let pairs = [
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", signed.as_str()),
        ("token", "not-a-token"),
    ];
    status_and_description(&post_form(http, &url, None, &pairs).await)
}

async fn assertion_flood(server: &Server) {
    const WORKERS: usize = 8;
    const DEADLINE: Duration = Duration::from_secs(90);
    let base = server.base.clone();
    let key = Arc::new(ProofKey::eddsa(21));
    let attacker = register_keyed_client(&base, &key).await;
    let before = resident_kib(server.pid());
    let started = Instant::now();
    let http = http_client(WORKERS);
    let mut tasks = JoinSet::new();
    let total = ASSERTIONS_PER_CLIENT + 200;
    for worker in 0..WORKERS {
        let (http, base, key, attacker) =
            (http.clone(), base.clone(), key.clone(), attacker.clone());
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for _ in (worker..total).step_by(WORKERS) {
                if started.elapsed() > DEADLINE {
                    break;
                }
                answers.push(introspect_as(&http, &base, &key, &attacker).await);
            }
            answers
        });
    }
    let mut answers = Vec::new();
    while let Some(done) = tasks.join_next().await {
        answers.extend(done.expect("a flood task"));
    }
    let elapsed = started.elapsed();
    let accepted = answers.iter().filter(|(status, _)| *status == 200).count();
    let refused = answers
        .iter()
        .filter(|(status, description)| {
            *status == 429 && description.contains("too many client assertions by this client")
        })
        .count();
    let after = resident_kib(server.pid());
    eprintln!(
        "{} assertions in {elapsed:.1?}: {accepted} accepted, {refused} refused past the budget; \
         resident {before:?} -> {after:?} KiB",
        answers.len()
    );
    assert_eq!(
        answers.len(),
        total,
        "the flood finished inside {DEADLINE:?}"
    );
    assert_eq!(
        accepted, ASSERTIONS_PER_CLIENT,
        "exactly the client's budget was spent"
    );
    assert_eq!(
        accepted + refused,
        total,
        "nothing else: {:?}",
        &answers[..3]
    );

    // Alice signs in (a sealed sign-in form: one more one-time value), demo-client pushes a
    // request, and another self-registered key client still authenticates.
    let http = browser();
    let params = [
        ("response_type", "code"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("state", "after-the-flood"),
    ];
    let approval = sign_in_via_authorize(&http, &base, &params, ALICE).await;
    let query = callback_query(&decide(&http, &base, &approval, "approve").await);
    assert_eq!(query["state"], "after-the-flood");
    let pushed = post_form(
        &http,
        &format!("{base}/api/oauth/par"),
        Some(DEMO),
        &[("response_type", "code"), ("redirect_uri", CALLBACK)],
    )
    .await;
    assert_eq!(pushed.status, 201, "{}", pushed.body);
    let neighbour_key = ProofKey::eddsa(22);
    let neighbour = register_keyed_client(&base, &neighbour_key).await;
    let (status, description) = introspect_as(&http, &base, &neighbour_key, &neighbour).await;
    assert_eq!(status, 200, "{description}");
}

async fn unknown_username_flood(server: &Server) {
    // More concurrent guesses than the dummy checks' places, so some are answered unchecked.
    const WORKERS: usize = 64;
    const FLOOD: usize = 2_000;
    let base = server.base.clone();
    // Bob's account is locked by ten wrong passwords.
    for i in 0..11 {
        let password = format!("wrong-{i}");
        let reply = token(
            &base,
            Some(DEMO),
            &[
                ("grant_type", "password"),
                ("username", BOB.0),
                ("password", &password),
            ],
        )
        .await;
        assert_oauth_error(&reply, 400, "invalid_grant");
    }
    let http = http_client(WORKERS);
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for worker in 0..WORKERS {
        let (http, base) = (http.clone(), base.clone());
        tasks.spawn(async move {
            let mut statuses = Vec::new();
            for i in (worker..FLOOD).step_by(WORKERS) {
                let username = format!("nobody-{i}@example.com");
                let pairs = [
                    ("grant_type", "password"),
                    ("username", username.as_str()),
                    ("password", "guess"),
                ];
                let url = format!("{base}/api/oauth/token");
                statuses.push(post_form(&http, &url, Some(DEMO), &pairs).await.status);
            }
            statuses
        });
    }
    let mut statuses = Vec::new();
    while let Some(done) = tasks.join_next().await {
        statuses.extend(done.expect("a flood task"));
    }
    let unchecked = statuses.iter().filter(|s| **s == 503).count();
    eprintln!(
        "{FLOOD} unknown usernames in {:.1?}: {unchecked} answered 503 unchecked",
        started.elapsed()
    );
    assert!(
        statuses.iter().all(|s| *s == 400 || *s == 503),
        "only wrong-credential and unchecked answers"
    );
    // Bob's lock held; Alice signs in.
    let locked = token(
        &base,
        Some(DEMO),
        &[
            ("grant_type", "password"),
            ("username", BOB.0),
            ("password", BOB.1),
        ],
    )
    .await;
    assert_oauth_error(&locked, 400, "invalid_grant");
    let description = locked.json()["error_description"].to_string();
    assert!(
        description.contains("too many failed sign-ins"),
        "{description}"
    );
    password_grant(&base, DEMO, ALICE, "profile").await;
}

async fn look_alike(server: &Server) {
    let base = &server.base;
    let evil = "https://attacker.example/cb";
    let registration = json!({
        // "Demo Client" itself, or a look-alike of it, is refused at registration.
        "client_name": "Demo Client Pro",
        "redirect_uris": [evil],
        "grant_types": ["authorization_code"],
        "token_endpoint_auth_method": "none",
    });
    let registered = register(base, &registration).await;
    let impostor = registered["client_id"].as_str().unwrap().to_owned();
    let page = |client: &str, redirect: &str| {
        let params = [
            ("response_type", "code"),
            ("client_id", client),
            ("redirect_uri", redirect),
            (
                "code_challenge",
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            ),
            ("code_challenge_method", "S256"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let base = base.clone();
        async move {
            let params: Vec<(&str, &str)> = params
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let approval = sign_in_via_authorize(&browser(), &base, &params, ALICE).await;
            assert_eq!(approval.status, 200, "{}", approval.body);
            approval.body
        }
    };
    let real = page(DEMO.0, CALLBACK).await;
    let fake = page(&impostor, evil).await;
    assert!(real.contains("Demo Client") && fake.contains("Demo Client"));
    assert!(fake.contains("Unverified application"), "{fake}");
    assert!(fake.contains("<strong>attacker.example</strong>"), "{fake}");
    assert!(!real.contains("Unverified"), "{real}");
    assert!(real.contains("<strong>127.0.0.1:8081</strong>"), "{real}");
}

/// The median of `samples`.
fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// `count` calls of `/api/me` with `access`, one after another: their median latency.
async fn me_median(http: &reqwest::Client, base: &str, access: &str, count: usize) -> Duration {
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let reply = send(http.get(format!("{base}/api/me")).bearer_auth(access)).await;
        samples.push(started.elapsed());
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    median(samples)
}

async fn many_keys_flood(server: &Server) {
    const WORKERS: usize = 4;
    const FLOOD: Duration = Duration::from_secs(4);
    let base = server.base.clone();
    let rsa = ProofKey::rsa(jsonwebtoken::Algorithm::RS256);
    let keys: Vec<Value> = (0..10)
        .map(|i| {
            let mut jwk = serde_json::to_value(&rsa.jwk).unwrap();
            jwk["kid"] = json!(format!("k{i}"));
            jwk
        })
        .collect();
    let registration = json!({
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": keys},
    });
    let registered = register(&base, &registration).await;
    let attacker = registered["client_id"].as_str().unwrap().to_owned();
    let tokens = password_grant(&base, DEMO, ALICE, "profile").await;
    let access = access_token(&tokens).to_owned();
    let http = http_client(WORKERS + 1);
    me_median(&http, &base, &access, 20).await;
    let idle = me_median(&http, &base, &access, 200).await;

    // Signed by a key the client does not have: without kid (every key would suit) and with.
    let stranger = ProofKey::es256(77);
    let forged = |kid: Option<&str>| {
        let claims = json!({"iss": attacker, "sub": attacker, "aud": base, "exp": u64::MAX / 2,
            "jti": "forged"});
        let mut signed = rsa.sign_with(&claims, |header| {
            header.typ = Some("JWT".to_owned());
            header.jwk = None;
            header.kid = kid.map(str::to_owned);
        });
        // The signature of another key, under this header and these claims.
        let other = stranger.sign(&claims);
        let cut = signed.rfind('.').unwrap();
        signed.truncate(cut);
        signed.push_str(&other[other.rfind('.').unwrap()..]);
        signed
    };
    let forged = [forged(None), forged(Some("k9"))];
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for worker in 0..WORKERS {
        let (http, base, assertion) = (http.clone(), base.clone(), forged[worker % 2].clone());
        tasks.spawn(async move {
            let mut answers = Vec::new();
            while started.elapsed() < FLOOD {
                let pairs = [
                    ("client_assertion_type", ASSERTION_TYPE),
                    ("client_assertion", assertion.as_str()),
                    ("token", "x"),
                ];
                let url = format!("{base}/api/oauth/introspect");
                answers.push(status_and_description(
                    &post_form(&http, &url, None, &pairs).await,
                ));
            }
            answers
        });
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The resource answers throughout (`me_median` asserts every answer is 200).
    let loaded = me_median(&http, &base, &access, 200).await;
    let mut answers = Vec::new();
    while let Some(done) = tasks.join_next().await {
        answers.extend(done.expect("a flood task"));
    }
    // For the record only: timing is the benchmarks' to hold, not a test's.
    eprintln!(
        "/api/me median {idle:?} idle, {loaded:?} under {} bad assertions in {:.1?}",
        answers.len(),
        started.elapsed()
    );
    // What keeps the flood cheap: each assertion is checked against one key at most. Without a
    // kid it is refused before any signature is checked (the client has ten keys for RS256);
    // with one, only that key's signature is checked.
    let kid_needed =
        "the client assertion must name its key with kid: this client has several keys for its alg";
    let bad_signature = "the client assertion is not signed by a key of this client";
    assert!(answers.len() >= WORKERS, "{answers:?}");
    for (status, description) in &answers {
        assert_eq!(
            *status, 401,
            "every forged assertion refused: {description}"
        );
        assert!(
            description == kid_needed || description == bad_signature,
            "{description}"
        );
    }
    assert!(answers.iter().any(|(_, d)| d == kid_needed));
    assert!(answers.iter().any(|(_, d)| d == bad_signature));
}

async fn user_code_flood(server: &Server) {
    const WORKERS: usize = 8;
    // `DeviceFlow::DEFAULT_USER_CODE_GUESSES` and a little more.
    const GUESSES: usize = 120;
    let base = server.base.clone();
    let started = post_form(
        &browser(),
        &format!("{base}/api/oauth/device_authorization"),
        None,
        &[("client_id", "device-client"), ("scope", "profile")],
    )
    .await;
    assert_eq!(started.status, 200, "{}", started.body);
    let started: Value = started.json();
    let user_code = started["user_code"].as_str().unwrap().to_owned();
    let device_code = started["device_code"].as_str().unwrap().to_owned();
    let wrong = if user_code == "BBBB-BBBB" {
        "CCCC-CCCC"
    } else {
        "BBBB-BBBB"
    };

    let http = http_client(WORKERS);
    let began = Instant::now();
    let mut tasks = JoinSet::new();
    for worker in 0..WORKERS {
        let (http, base) = (http.clone(), base.clone());
        tasks.spawn(async move {
            let mut bodies = Vec::new();
            for _ in (worker..GUESSES).step_by(WORKERS) {
                let url = format!("{base}/device");
                let reply = post_form(&http, &url, None, &[("user_code", wrong)]).await;
                assert_eq!(reply.status, 400, "{}", reply.body);
                bodies.push(reply.body);
            }
            bodies
        });
    }
    let mut asked_to_sign_in = 0;
    while let Some(done) = tasks.join_next().await {
        let bodies = done.expect("a flood task");
        asked_to_sign_in += bodies
            .iter()
            .filter(|b| b.contains("Sign in to enter your code"))
            .count();
    }
    eprintln!(
        "{GUESSES} wrong user codes in {:.1?}: {asked_to_sign_in} asked for a sign-in",
        began.elapsed()
    );
    // Guesses checked together may pass the limit by as many as run at once, so the count of
    // refusals varies; that the limit is spent does not.
    let url = format!("{base}/device");
    let after = post_form(&http, &url, None, &[("user_code", wrong)]).await;
    assert_eq!(after.status, 400, "{}", after.body);
    assert!(
        after.body.contains("Sign in to enter your code"),
        "{}",
        after.body
    );

    // Another browser: its right code alone is not taken now, but with the person's sign-in
    // it is, and the approval page follows.
    let browser_b = browser();
    let alone = post_form(&browser_b, &url, None, &[("user_code", user_code.as_str())]).await;
    assert_eq!(alone.status, 400, "{}", alone.body);
    let form = HtmlForm::parse(&alone.body);
    for name in ["user_code", "username", "password"] {
        assert!(
            form.inputs.iter().any(|i| i.name == name),
            "{name}: {}",
            alone.body
        );
    }
    let pairs = [
        ("user_code", user_code.as_str()),
        ("username", ALICE.0),
        ("password", ALICE.1),
    ];
    let approval = post_form(&browser_b, &url, None, &pairs).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    let done = decide(&browser_b, &base, &approval, "approve").await;
    assert!(done.body.contains("return to your device"), "{}", done.body);
    let tokens = token(
        &base,
        None,
        &[
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ("client_id", "device-client"),
            ("device_code", device_code.as_str()),
        ],
    )
    .await;
    assert_tokens(&tokens);
}

async fn push_flood(server: &Server) {
    const WORKERS: usize = 8;
    // `PushedRequests::DEFAULT_PER_CLIENT` and `DEFAULT_TOTAL`.
    const PER_CLIENT: usize = 1_000;
    const TOTAL: usize = 10_000;
    let base = server.base.clone();
    let mut attackers = Vec::new();
    for _ in 0..11 {
        let registration = json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        });
        let registered = register(&base, &registration).await;
        attackers.push(registered["client_id"].as_str().unwrap().to_owned());
    }
    let before = resident_kib(server.pid());
    let http = http_client(WORKERS);
    let began = Instant::now();
    // The first client pushes past its own budget; then each of the others pushes its
    // budget, until the budget all of them share is spent.
    let push_all = |client: String, count: usize| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            let mut tasks = JoinSet::new();
            for worker in 0..WORKERS {
                let (http, base, client) = (http.clone(), base.clone(), client.clone());
                tasks.spawn(async move {
                    let mut answers = Vec::new();
                    for _ in (worker..count).step_by(WORKERS) {
                        let pairs = [
                            ("client_id", client.as_str()),
                            ("response_type", "code"),
                            ("redirect_uri", CALLBACK),
                            (
                                "code_challenge",
                                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                            ),
                            ("code_challenge_method", "S256"),
                        ];
                        let url = format!("{base}/api/oauth/par");
                        let reply = post_form(&http, &url, None, &pairs).await;
                        answers.push(status_and_description(&reply));
                    }
                    answers
                });
            }
            let mut answers = Vec::new();
            while let Some(done) = tasks.join_next().await {
                answers.extend(done.expect("a flood task"));
            }
            answers
        }
    };
    let first = push_all(attackers[0].clone(), PER_CLIENT + 100).await;
    let pushed = first.iter().filter(|(status, _)| *status == 201).count();
    assert_eq!(pushed, PER_CLIENT, "one client's own budget");
    assert!(first.iter().any(|(status, d)| *status == 429
        && d == "too many pushed requests from this network; try again later"));
    let mut total = pushed;
    let mut shared_refusals = 0;
    for client in &attackers[1..] {
        let answers = push_all(client.clone(), PER_CLIENT).await;
        total += answers.iter().filter(|(status, _)| *status == 201).count();
        shared_refusals += answers
            .iter()
            .filter(|(status, d)| {
                *status == 429
                    && d == "too many pushed requests by self-registered clients; try again later"
            })
            .count();
    }
    let after = resident_kib(server.pid());
    eprintln!(
        "self-registered clients pushed {total} requests in {:.1?} ({shared_refusals} refused \
         for the shared budget); resident {before:?} -> {after:?} KiB",
        began.elapsed()
    );
    assert_eq!(total, TOTAL, "all self-registered clients together");
    assert_eq!(
        shared_refusals, PER_CLIENT,
        "the last client's pushes, past the total"
    );
    // demo-client has its own budget.
    let pushed = post_form(
        &browser(),
        &format!("{base}/api/oauth/par"),
        Some(DEMO),
        &[("response_type", "code"), ("redirect_uri", CALLBACK)],
    )
    .await;
    assert_eq!(pushed.status, 201, "{}", pushed.body);
}
