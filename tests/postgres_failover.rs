//! A failover under load: a PostgreSQL primary with a synchronous standby (`.ci/postgres-pair`),
//! grantor reaching it through a TCP proxy (as it would through a virtual address or a pooler
//! that follows the primary), client credentials requests running from 8 tasks. The primary
//! is stopped at once (a crash), the standby promoted, the proxy pointed at it. Then:
//!
//! - every token answered 200 before, during or after the switch is still active on the new
//!   primary (a commit waited for the standby: an acknowledged token is never lost);
//! - every other answer was 503 `temporarily_unavailable` with `Retry-After`, never a 500;
//! - the store reconnected by itself, and the longest time without a token issued is bounded.
//!
//! Needs `GRANTOR_TEST_POSTGRES_PAIR` (the path of `.ci/postgres-pair`; `.ci/run` sets it);
//! without it the test says it is skipped. It stops the pair's primary: run nothing else on it.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::time::{Duration, Instant};

use common::{basic, token_request};
use grantor::AuthorizationServer;
use grantor::client::{Client, ClientCredentials, GrantType};
use grantor::sql::PostgresStore;
use grantor::store::Admin as _;
use tokio::net::{TcpListener, TcpStream};

/// How long the service may stay unavailable around the switch.
const GAP_BOUND: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promoted_standby_keeps_every_acknowledged_token_and_clients_see_only_503s() {
    let Ok(pair) = std::env::var("GRANTOR_TEST_POSTGRES_PAIR") else {
        eprintln!(
            "a_promoted_standby_keeps_every_acknowledged_token_and_clients_see_only_503s: \
             skipped: GRANTOR_TEST_POSTGRES_PAIR not set"
        );
        return;
    };
    run(&pair, &["stop"]);
    let urls = run(&pair, &["start"]);
    let mut urls = urls.split_whitespace();
    let (primary, standby) = (
        port_of(urls.next().expect("the primary's URL")),
        port_of(urls.next().expect("the standby's URL")),
    );

    let target = Arc::new(AtomicU16::new(primary));
    let proxy = proxy(Arc::clone(&target)).await;
    let store = PostgresStore::connect(&format!(
        "postgres://grantor@127.0.0.1:{proxy}/grantor_test"
    ))
    .await
    .expect("the store connects through the proxy");
    let credentials = ClientCredentials::generate().unwrap();
    let client = Client::confidential(credentials.client_id.as_str(), credentials.verifier)
        .grant_types([GrantType::ClientCredentials])
        .build()
        .unwrap();
    store.register_client(&client).await.unwrap();
    let server = AuthorizationServer::builder()
        .issuer("https://auth.example")
        .store(store.clone())
        .keys_in_clear()
        .build()
        .unwrap();
    let authorization = basic(
        credentials.client_id.as_str(),
        credentials.secret.expose_secret(),
    );

    let running = Arc::new(AtomicBool::new(true));
    let mut load = Vec::new();
    for _ in 0..8 {
        let (server, authorization, running) =
            (server.clone(), authorization.clone(), Arc::clone(&running));
        load.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            while running.load(Ordering::Relaxed) {
                let request = token_request(Some(&authorization), "grant_type=client_credentials");
                let response = server.token(&request).await;
                answers.push((Instant::now(), answer(&response)));
                if response.status() != 200 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
            answers
        }));
    }

    tokio::time::sleep(Duration::from_secs(2)).await;
    let crash = Instant::now();
    run(&pair, &["promote"]);
    target.store(standby, Ordering::SeqCst);
    let switched = crash.elapsed();
    // Until every task has been served again, then a second more.
    let deadline = Instant::now() + GAP_BOUND;
    loop {
        let request = token_request(Some(&authorization), "grant_type=client_credentials");
        if server.token(&request).await.status() == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not served again within {GAP_BOUND:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    running.store(false, Ordering::Relaxed);

    let mut answers = Vec::new();
    for task in load {
        answers.extend(task.await.unwrap());
    }
    answers.sort_by_key(|(at, _)| *at);
    let mut issued = Vec::new();
    let mut unavailable = 0;
    for (_, outcome) in &answers {
        match outcome {
            Answer::Issued(token) => issued.push(token.clone()),
            Answer::Unavailable => unavailable += 1,
            Answer::Other(what) => panic!("an answer other than 200 or 503: {what}"),
        }
    }
    // The outage as clients saw it: the longest time without a token issued.
    let served: Vec<Instant> = answers
        .iter()
        .filter(|(_, outcome)| matches!(outcome, Answer::Issued(_)))
        .map(|(at, _)| *at)
        .collect();
    assert!(
        served.first().is_some_and(|at| *at < crash) && served.last().is_some_and(|at| *at > crash),
        "tokens issued before the crash and after the switch"
    );
    let gap = served
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .max()
        .unwrap_or_default();
    assert!(gap < GAP_BOUND, "unavailable for {gap:?}");
    assert!(unavailable > 0, "the load met the failover");

    // Every acknowledged token is active on the promoted standby.
    let mut lost = 0;
    for token in &issued {
        let request = http::Request::get("/api/me")
            .header("authorization", format!("Bearer {token}"))
            .body(())
            .unwrap();
        if server.bearer(&request, None).await.is_err() {
            lost += 1;
        }
    }
    eprintln!(
        "failover: {} tokens issued, {unavailable} answers 503, the promotion took {switched:?}, \
         no token issued for {gap:?}, {lost} tokens lost",
        issued.len()
    );
    assert_eq!(lost, 0, "acknowledged tokens lost in the failover");
    store.close().await;
    run(&pair, &["stop"]);
}

/// What one token request was answered.
enum Answer {
    Issued(String),
    Unavailable,
    Other(String),
}

fn answer(response: &http::Response<String>) -> Answer {
    let status = response.status().as_u16();
    let body: serde_json::Value = serde_json::from_str(response.body()).unwrap_or_default();
    match status {
        200 => Answer::Issued(body["access_token"].as_str().unwrap_or_default().to_owned()),
        503 if body["error"] == "temporarily_unavailable"
            && response.headers().contains_key("retry-after") =>
        {
            Answer::Unavailable
        }
        _ => Answer::Other(format!("{status} {}", response.body())),
    }
}

/// Runs the pair script with `args`; answers its standard output.
fn run(script: &str, args: &[&str]) -> String {
    let output = std::process::Command::new(script)
        .args(args)
        .output()
        .expect("the pair script runs");
    assert!(
        output.status.success(),
        "{script} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn port_of(url: &str) -> u16 {
    let address = url.split('@').nth(1).expect("user@host:port");
    let port = address.split([':', '/']).nth(1).expect("a port");
    port.parse().expect("a port number")
}

/// A TCP proxy on a loopback port of its own, forwarding each connection to the port `target`
/// holds when the connection is made; answers its port.
async fn proxy(target: Arc<AtomicU16>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let upstream = target.load(Ordering::SeqCst);
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", upstream)).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    port
}
