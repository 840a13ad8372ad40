//! The demo servers under an attacker with no account who spends budgets in the name of
//! clients anyone can make or name (metadata documents) and of public clients, over real HTTP
//! on loopback, each check against `axum_server` and `actix_server`. Each flood is bounded in
//! count and time, and a real user's request succeeds after it:
//!
//! - eleven client ID metadata documents push requests with DPoP proofs until the pool all
//!   document clients share is spent: demo-client still pushes, Alice still gets a DPoP-bound
//!   token and calls `/api/me` with it;
//! - three documents with `private_key_jwt` spend their assertions until their pool is spent:
//!   a self-registered `private_key_jwt` client still authenticates;
//! - wrong secrets for `api-server` (its id is public) from one address: its right secret
//!   still works from another, while the flooding address stays refused;
//! - anonymous device authorizations as `device-client` and pushes as `public-client` from
//!   one address: a real TV and the real app on another address are served.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::task::JoinSet;

mod demo;
#[path = "demo/documents.rs"]
mod documents;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use demo::http::*;
use demo::{Server, resident_kib};
use documents::DocumentServer;
use keys::ProofKey;

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// `PushedRequests::DEFAULT_PER_CLIENT` and `DEFAULT_TOTAL` (the pool each tier shares).
const PUSHES_PER_CLIENT: usize = 1_000;
const PUSH_POOL: usize = 10_000;
/// `grantor::client_assertion::ASSERTIONS_PER_CLIENT` and `ASSERTIONS_SELF_REGISTERED`.
const ASSERTIONS_PER_CLIENT: usize = 10_000;
const ASSERTION_POOL: usize = 20_000;
/// `DeviceFlow::DEFAULT_PER_CLIENT`.
const DEVICE_STARTS_PER_CLIENT: usize = 1_000;
const WORKERS: usize = 8;
const DEADLINE: Duration = Duration::from_secs(150);

each_framework! {
    document_clients_spend_a_pool_of_their_own_and_deny_no_one => document_push_flood;
    document_assertions_spend_a_pool_of_their_own => document_assertion_flood;
    wrong_secrets_from_one_address_leave_the_right_one_working => wrong_secret_flood;
    anonymous_callers_of_a_public_client_refuse_none_of_its_users => anonymous_flood;
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An HTTP client whose requests leave from the loopback `address` (Linux answers all of
/// 127.0.0.0/8), so the demo sees them come from another caller.
fn http_from(address: Ipv4Addr) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(WORKERS)
        .local_address(IpAddr::V4(address))
        .no_proxy()
        .build()
        .unwrap()
}

const ATTACKER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
const USER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);

/// Runs `count` requests made by `request(i)` over `WORKERS` tasks until `stop` says so (or
/// the deadline passes): the status and description of each.
async fn flood<F, Fut>(count: usize, request: F) -> Vec<(u16, String)>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Reply> + Send,
{
    let request = Arc::new(request);
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for worker in 0..WORKERS {
        let request = request.clone();
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for i in (worker..count).step_by(WORKERS) {
                if started.elapsed() > DEADLINE {
                    break;
                }
                answers.push(status_and_description(&request(i).await));
            }
            answers
        });
    }
    let mut answers = Vec::new();
    while let Some(done) = tasks.join_next().await {
        answers.extend(done.expect("a flood task"));
    }
    assert_eq!(
        answers.len(),
        count,
        "the flood finished inside {DEADLINE:?}"
    );
    answers
}

fn count(answers: &[(u16, String)], status: u16, description: &str) -> usize {
    answers
        .iter()
        .filter(|(s, d)| *s == status && d.contains(description))
        .count()
}

async fn document_push_flood(framework: &str) {
    let documents = DocumentServer::start(&format!("push-{framework}")).await;
    let server = documents.demo(framework);
    let base = server.base.clone();
    let par = format!("{base}/api/oauth/par");
    let http = http_from(ATTACKER);
    // One document's pushes, each with a DPoP proof of a fresh key as the attack had, and
    // `state`.
    let push_as = |client: String, state: Arc<str>| {
        let (http, par) = (http.clone(), par.clone());
        flood(PUSHES_PER_CLIENT, move |i| {
            let (http, par, client, state) =
                (http.clone(), par.clone(), client.clone(), state.clone());
            async move {
                let key = ProofKey::es256((i % 250) as u8 + 1);
                let proof = key.proof("POST", &par, now());
                let pairs = [
                    ("client_id", client.as_str()),
                    ("response_type", "code"),
                    ("redirect_uri", CALLBACK),
                    ("code_challenge", CHALLENGE),
                    ("code_challenge_method", "S256"),
                    ("state", &*state),
                ];
                send(
                    http.post(&par)
                        .header("content-type", "application/x-www-form-urlencoded")
                        .header("dpop", proof)
                        .body(form(&pairs)),
                )
                .await
            }
        })
    };
    // What a kept push costs: the first document's pushes carry the costliest state a
    // request may (2048 characters that JSON doubles).
    let before = resident_kib(server.pid());
    let started = Instant::now();
    let first = documents.document("/push-0.json", "Pusher 0");
    let answers = push_as(first, "\"".repeat(2048).into()).await;
    assert_eq!(
        count(&answers, 201, ""),
        PUSHES_PER_CLIENT,
        "{:?}",
        &answers[..1]
    );
    let after = resident_kib(server.pid());
    // Then a new document per thousand pushes until the documents' pool refuses (a pool
    // counts per push lifetime, so a slow machine may need a few more than its ten thousand).
    let (mut pushed, mut pool, mut other) = (PUSHES_PER_CLIENT, 0, Vec::new());
    let mut named = 1;
    while pool == 0 && named < 40 && started.elapsed() < DEADLINE {
        let client = documents.document(&format!("/push-{named}.json"), "Pusher");
        named += 1;
        let answers = push_as(client, "flood".into()).await;
        pushed += count(&answers, 201, "");
        pool += count(
            &answers,
            429,
            "too many pushed requests by clients named by metadata documents",
        );
        other.extend(
            answers.into_iter().filter(|(s, d)| {
                *s != 201 && !d.contains("by clients named by metadata documents")
            }),
        );
    }
    eprintln!(
        "{framework}: {} pushes with DPoP proofs from {named} documents in {:.1?}: {pushed} \
         kept, {pool} refused for the documents' pool; a kept push with a 2 KiB state costs \
         {:?} KiB (resident {before:?} -> {after:?} KiB over the first thousand)",
        pushed + pool + other.len(),
        started.elapsed(),
        before
            .zip(after)
            .map(|(b, a)| a.saturating_sub(b) as f64 / PUSHES_PER_CLIENT as f64),
    );
    assert!(pool > 0, "the documents' pool refused the flood");
    assert!(
        pushed <= 2 * PUSH_POOL,
        "at most two windows of the pool: {pushed}"
    );
    assert!(
        other.is_empty(),
        "nothing else: {:?}",
        &other[..other.len().min(3)]
    );

    // demo-client, an administrator's, still pushes, with a DPoP proof.
    let http = browser();
    let key = ProofKey::es256(7);
    let par = format!("{base}/api/oauth/par");
    let pushed = send(
        http.post(&par)
            .basic_auth(DEMO.0, Some(DEMO.1))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("dpop", key.proof("POST", &par, now()))
            .body(form(&[
                ("response_type", "code"),
                ("redirect_uri", CALLBACK),
                ("state", "after"),
            ])),
    )
    .await;
    assert_eq!(pushed.status, 201, "{}", pushed.body);
    // Alice gets a DPoP-bound token and calls /api/me with it.
    let code = approved_code(&http, &base, DEMO.0, ALICE).await;
    let url = format!("{base}/api/oauth/token");
    let tokens = send(
        http.post(&url)
            .basic_auth(DEMO.0, Some(DEMO.1))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("dpop", key.proof("POST", &url, now()))
            .body(form(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", CALLBACK),
            ])),
    )
    .await;
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    let tokens = tokens.json();
    assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
    let token = tokens["access_token"].as_str().unwrap();
    let me = format!("{base}/api/me");
    let profile = send(
        http.get(&me)
            .header("authorization", format!("DPoP {token}"))
            .header("dpop", key.proof_for_token("GET", &me, now(), token)),
    )
    .await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    assert_eq!(profile.json()["email"], ALICE.0);
    server.assert_alive_and_calm();
}

/// A `private_key_jwt` assertion of `client` for `aud` signed by `key`, with a fresh `jti`.
fn assertion(key: &ProofKey, client: &str, aud: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = now();
    let claims = json!({
        "iss": client, "sub": client, "aud": aud, "iat": now, "exp": now + 60,
        "jti": format!("doc-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)),
    });
    key.sign_with(&claims, |header| {
        header.typ = Some("JWT".to_owned());
        header.jwk = None;
    })
}

async fn introspect_as(http: &reqwest::Client, base: &str, key: &ProofKey, client: &str) -> Reply {
    let signed = assertion(key, client, base);
    let pairs = [
        ("client_id", client),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", signed.as_str()),
        ("token", "not-a-token"),
    ];
    post_form(http, &format!("{base}/api/oauth/introspect"), None, &pairs).await
}

async fn document_assertion_flood(framework: &str) {
    let documents = DocumentServer::start(&format!("assert-{framework}")).await;
    let server = documents.demo(framework);
    let base = server.base.clone();
    let key = Arc::new(ProofKey::eddsa(31));
    let jwk = serde_json::to_value(&key.jwk).unwrap();
    let clients: Vec<String> = (0..3)
        .map(|i| {
            let path = format!("/keyed-{i}.json");
            let url = documents.url(&path);
            let body = json!({
                "client_id": url,
                "client_name": format!("Keyed {i}"),
                "redirect_uris": [CALLBACK],
                "token_endpoint_auth_method": "private_key_jwt",
                "jwks": {"keys": [jwk]},
            });
            documents.serve(&path, 200, &body.to_string());
            url
        })
        .collect();
    let before = resident_kib(server.pid());
    let started = Instant::now();
    let http = http_from(ATTACKER);
    let total = ASSERTION_POOL + 500;
    let clients = Arc::new(clients);
    let answers = {
        let (base, key) = (base.clone(), key.clone());
        flood(total, move |i| {
            let (http, base, key, clients) =
                (http.clone(), base.clone(), key.clone(), clients.clone());
            async move {
                let client = &clients[i % clients.len()];
                introspect_as(&http, &base, &key, client).await
            }
        })
        .await
    };
    let accepted = count(&answers, 200, "");
    let pool = count(
        &answers,
        429,
        "too many client assertions by clients named by metadata documents",
    );
    eprintln!(
        "{framework}: {total} assertions from 3 documents in {:.1?}: {accepted} accepted, {pool} \
         refused for the documents' pool; resident {before:?} -> {:?} KiB",
        started.elapsed(),
        resident_kib(server.pid())
    );
    assert!(accepted <= ASSERTION_POOL && accepted > 3 * ASSERTIONS_PER_CLIENT / 2);
    assert!(pool > 0, "the documents' pool refused the flood");
    assert_eq!(accepted + pool, total, "nothing else: {:?}", &answers[..3]);

    // A self-registered private_key_jwt client authenticates; demo-client pushes.
    let neighbour_key = ProofKey::eddsa(32);
    let registration = json!({
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": [serde_json::to_value(&neighbour_key.jwk).unwrap()]},
    });
    let neighbour: Value = register(&base, &registration).await;
    let neighbour = neighbour["client_id"].as_str().unwrap();
    let reply = introspect_as(&browser(), &base, &neighbour_key, neighbour).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let pushed = post_form(
        &browser(),
        &format!("{base}/api/oauth/par"),
        Some(DEMO),
        &[("response_type", "code"), ("redirect_uri", CALLBACK)],
    )
    .await;
    assert_eq!(pushed.status, 201, "{}", pushed.body);
    server.assert_alive_and_calm();
}

async fn introspect_with_secret(http: &reqwest::Client, base: &str, secret: &str) -> Reply {
    let url = format!("{base}/api/oauth/introspect");
    post_form(http, &url, Some(("api-server", secret)), &[("token", "t")]).await
}

async fn wrong_secret_flood(framework: &str) {
    let server = Server::start(framework);
    let base = server.base.clone();
    let attacker = http_from(ATTACKER);
    let mut refused = 0;
    for i in 0..25 {
        let reply = introspect_with_secret(&attacker, &base, &format!("guess-{i}")).await;
        assert_oauth_error(&reply, 401, "invalid_client");
        let (_, description) = status_and_description(&reply);
        if description.contains("too many failed authentications") {
            refused += 1;
        }
    }
    assert!(refused > 0, "the flooding address is refused unchecked");
    // The flooding address is refused even the right secret, for the window...
    let locked = introspect_with_secret(&attacker, &base, "api-secret").await;
    assert_oauth_error(&locked, 401, "invalid_client");
    // ...while api-server itself, on another address, authenticates.
    let user = http_from(USER);
    let reply = introspect_with_secret(&user, &base, "api-secret").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["active"], false);
    server.assert_alive_and_calm();
}

async fn anonymous_flood(framework: &str) {
    let server = Server::start(framework);
    let base = server.base.clone();
    let attacker = http_from(ATTACKER);
    let started = Instant::now();
    let answers = {
        let (http, url) = (
            attacker.clone(),
            format!("{base}/api/oauth/device_authorization"),
        );
        flood(DEVICE_STARTS_PER_CLIENT + 1, move |_| {
            let (http, url) = (http.clone(), url.clone());
            async move {
                let pairs = [("client_id", "device-client"), ("scope", "profile")];
                post_form(&http, &url, None, &pairs).await
            }
        })
        .await
    };
    let started_flows = count(&answers, 200, "");
    let refused = count(
        &answers,
        429,
        "too many device authorizations from this network",
    );
    assert_eq!(
        (started_flows, refused),
        (DEVICE_STARTS_PER_CLIENT, 1),
        "the flooding network spent its budget"
    );
    let answers = {
        let (http, url) = (attacker.clone(), format!("{base}/api/oauth/par"));
        flood(PUSHES_PER_CLIENT + 1, move |_| {
            let (http, url) = (http.clone(), url.clone());
            async move {
                let pairs = [
                    ("client_id", "public-client"),
                    ("response_type", "code"),
                    ("redirect_uri", CALLBACK),
                    ("code_challenge", CHALLENGE),
                    ("code_challenge_method", "S256"),
                ];
                post_form(&http, &url, None, &pairs).await
            }
        })
        .await
    };
    assert_eq!(
        count(&answers, 429, "too many pushed requests from this network"),
        1,
        "the flooding network spent its budget"
    );
    eprintln!(
        "{framework}: {} anonymous device starts and {} pushes in {:.1?}",
        DEVICE_STARTS_PER_CLIENT + 1,
        PUSHES_PER_CLIENT + 1,
        started.elapsed()
    );
    // A real TV and the real app, elsewhere, are served.
    let user = http_from(USER);
    let tv = post_form(
        &user,
        &format!("{base}/api/oauth/device_authorization"),
        None,
        &[("client_id", "device-client"), ("scope", "profile")],
    )
    .await;
    assert_eq!(tv.status, 200, "{}", tv.body);
    assert!(tv.json()["user_code"].is_string());
    let app = post_form(
        &user,
        &format!("{base}/api/oauth/par"),
        None,
        &[
            ("client_id", "public-client"),
            ("response_type", "code"),
            ("redirect_uri", CALLBACK),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ],
    )
    .await;
    assert_eq!(app.status, 201, "{}", app.body);
    server.assert_alive_and_calm();
}
