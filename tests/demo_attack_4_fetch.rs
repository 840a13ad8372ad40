//! Hostile clients 4, the outbound part, against `axum_server` and `actix_server`: an attacker
//! with no account names client ID metadata documents on slow hosts, under as many names as
//! it likes, and a real developer's new document client is still served within the fetch
//! timeout; a document its host refused is fetched once a minute however often it is named,
//! and the error page says nothing of what the URL answered; a demo given only
//! `--fetch-ca-file` trusts the root but reaches no loopback address, for documents or
//! back-channel logout. Every attack is bounded in count and time, on loopback.

mod demo;
#[path = "demo/documents.rs"]
mod documents;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use demo::http::*;
use documents::DocumentServer;
use serde_json::Value;

each_framework! {
    slow_document_hosts_under_many_names_leave_room_for_a_new_client => slow_hosts;
    a_refused_document_is_fetched_once_a_minute_and_its_page_tells_no_status => refusals;
    a_ca_file_alone_reaches_no_loopback_document_or_back_channel => ca_file_alone;
}

/// How long the demo waits for a document (`ClientIdDocuments::FETCH_TIMEOUT`).
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// A loopback server on `address` that takes connections and never answers (a slow host);
/// its port, and how many connections it took.
async fn silent_server(address: &str) -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind((address, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let taken = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&taken);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            held.push(stream);
        }
    });
    (port, taken)
}

fn authorization(client_id: &str) -> Vec<(&str, &str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "profile"),
        ("state", "s-doc"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
}

/// Row 4: 144 authorization requests naming documents on 18 slow hosts (one server under
/// three names, `localhost`, `localhost.` and `127.0.0.1`, and fifteen more addresses), which
/// complete TLS, read the request and never answer, so each fetch is held until its timeout. Meanwhile 20 new document clients of a real developer, on
/// another address, each get their approval page within the fetch timeout, and the server
/// named three ways took no more fetches than one name would.
async fn slow_hosts(framework: &str) {
    let real = DocumentServer::start_on(&format!("{framework}-slow"), "127.0.0.200").await;
    let server = real.demo(framework);
    let base = server.base.clone();
    let (port, many_names) = real.slow_host("127.0.0.1").await;
    let mut slow: Vec<String> = ["localhost", "localhost.", "127.0.0.1"]
        .iter()
        .map(|host| format!("https://{host}:{port}"))
        .collect();
    let mut others = Vec::new();
    for n in 2..17 {
        let (port, reached) = real.slow_host(&format!("127.0.0.{n}")).await;
        slow.push(format!("https://127.0.0.{n}:{port}"));
        others.push(reached);
    }
    let started = Instant::now();
    // One client for the whole flood (a client each would spend the test's own thread on
    // loading certificate roots, not the demo's time).
    let attacker = browser();
    let flood: Vec<_> = slow
        .iter()
        .flat_map(|origin| (0..8).map(move |n| format!("{origin}/tool-{n}.json")))
        .map(|url| {
            let url = authorize_url(&base, &authorization(&url));
            let attacker = attacker.clone();
            tokio::spawn(async move { get(&attacker, &url).await.status })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut slowest = Duration::ZERO;
    let developer = browser();
    for n in 0..20 {
        let url = real.document(&format!("/new-{n}.json"), "New Tool");
        let asked = Instant::now();
        let page = get(&developer, &authorize_url(&base, &authorization(&url))).await;
        assert_eq!(page.status, 200, "new client {n}: {}", page.body);
        assert!(page.body.contains("New Tool"), "{}", page.body);
        slowest = slowest.max(asked.elapsed());
    }
    assert!(
        slowest < FETCH_TIMEOUT,
        "the slowest new client: {slowest:?}"
    );
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for request in flood {
        *statuses.entry(request.await.unwrap()).or_default() += 1;
    }
    let taken = many_names.load(Ordering::SeqCst);
    eprintln!(
        "{framework}: slowest of 20 new clients {slowest:?}; flood answers {statuses:?} in \
         {:?}; one server under three names took {taken} fetches",
        started.elapsed()
    );
    // Four fetches at most to one address, whatever it was called.
    assert!(
        taken <= 4,
        "{taken} fetches reached the server of three names"
    );
    for other in &others {
        assert!(other.load(Ordering::SeqCst) <= 4);
    }
    // The flood was answered (an error page or "busy"), never a 500, and within its bound.
    assert!(
        statuses.keys().all(|status| [400, 503].contains(status)),
        "{statuses:?}"
    );
    assert!(started.elapsed() < FETCH_TIMEOUT * 3);
    server.assert_alive_and_calm();
}

/// Item "failed fetches are never cached": naming a document its host refuses (404), thirty
/// times in a row, fetches it once, and the page names no status. A host's own failure (500)
/// is fetched again, and the real document the developer then serves is taken.
async fn refusals(framework: &str) {
    let documents = DocumentServer::start(&format!("{framework}-refusals")).await;
    let server = documents.demo(framework);
    let base = &server.base;
    let gone = documents.url("/gone.json");
    documents.serve("/gone.json", 404, "no such client");
    for _ in 0..30 {
        let page = get(&browser(), &authorize_url(base, &authorization(&gone))).await;
        assert_eq!(page.status, 400, "{}", page.body);
        assert!(page.location().is_none());
        assert!(page.body.contains("could not be fetched"), "{}", page.body);
        for detail in ["404", "status", "no such client", "Not Found"] {
            assert!(!page.body.contains(detail), "{detail}: {}", page.body);
        }
    }
    assert_eq!(
        documents.requests("/gone.json"),
        1,
        "a refusal is remembered"
    );
    // A server's own failure is not remembered: the next request fetches, and succeeds.
    let flaky = documents.url("/flaky.json");
    documents.serve("/flaky.json", 500, "");
    let page = get(&browser(), &authorize_url(base, &authorization(&flaky))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(!page.body.contains("500"), "{}", page.body);
    documents.document("/flaky.json", "Flaky Tool");
    let page = get(&browser(), &authorize_url(base, &authorization(&flaky))).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(documents.requests("/flaky.json"), 2);
    server.assert_alive_and_calm();
}

/// Row 5: a demo given only `--fetch-ca-file` trusts that root, yet refuses a document on
/// loopback (nothing reaches it) and posts no logout token to a loopback back-channel URI; a
/// real user signs in and out as ever.
async fn ca_file_alone(framework: &str) {
    let documents = DocumentServer::start(&format!("{framework}-ca-alone")).await;
    let server = documents.demo_with(framework, &[]);
    let base = &server.base;
    let url = documents.document("/tools/client.json", "Loopback Tool");
    let page = get(&browser(), &authorize_url(base, &authorization(&url))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.location().is_none());
    assert_eq!(documents.requests("/tools/client.json"), 0);
    assert_eq!(documents.served.load(Ordering::SeqCst), 0);

    // A self-registered client whose back-channel logout URI is on loopback.
    let (port, reached) = silent_server("127.0.0.1").await;
    let backchannel = format!("http://127.0.0.1:{port}/backchannel");
    let registered = register(
        base,
        &serde_json::json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
            "backchannel_logout_uri": backchannel,
        }),
    )
    .await;
    let client_id = registered["client_id"].as_str().expect("a client id");
    let params = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("nonce", "n-ca"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    let http = browser();
    let approval = sign_in_via_authorize(&http, base, &params, BOB).await;
    let code = callback_query(&decide(&http, base, &approval, "approve").await)["code"].clone();
    let tokens = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("client_id", client_id),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    let id_token = assert_tokens(&tokens)["id_token"]
        .as_str()
        .expect("an ID token")
        .to_owned();
    assert!(claims_of(&id_token)["sid"].is_string(), "a session to end");
    let hint = form(&[("id_token_hint", &id_token)]);
    let logout = get(&http, &format!("{base}/api/oauth/logout?{hint}")).await;
    assert_eq!(logout.status, 200, "{}", logout.body);
    let events = server.events_with("backchannel_logout_failed").await;
    assert!(events.contains("backchannel_logout_failed"), "{events}");
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "nothing reached loopback"
    );
    server.assert_alive_and_calm();
}

fn claims_of(jwt: &str) -> Value {
    let part = jwt.split('.').nth(1).expect("a JWS");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}
