//! A bounded load test of the axum demo server over loopback: many concurrent password grants,
//! refreshes and code redemptions. No 5xx, no lost or duplicated tokens, exactly one winner per
//! code. Prints requests/s and latency percentiles (`-- --nocapture` shows them); asserts no
//! timing.

mod demo;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use demo::Server;
use reqwest::redirect::Policy;
use serde_json::Value;
use tokio::sync::Semaphore;

/// Concurrent requests in flight.
const CONCURRENCY: usize = 32;
const PASSWORD_GRANTS: usize = 64;
const REFRESH_CHAINS: usize = 32;
const REFRESHES_PER_CHAIN: usize = 10;
const CODES: usize = 24;
const RACERS_PER_CODE: usize = 8;
const REDIRECT: &str = "http://127.0.0.1:8081/callback";

/// One request's outcome: its kind, status, latency and JSON body.
struct Sample {
    kind: &'static str,
    status: u16,
    latency: Duration,
    body: Value,
}

#[derive(Clone)]
struct Load {
    http: reqwest::Client,
    base: String,
    gate: Arc<Semaphore>,
}

impl Load {
    async fn token(
        &self,
        kind: &'static str,
        basic: (&str, &str),
        form: &[(&str, &str)],
    ) -> Sample {
        let _permit = self.gate.acquire().await.expect("the gate stays open");
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let started = Instant::now();
        let response = self
            .http
            .post(format!("{}/api/oauth/token", self.base))
            .basic_auth(basic.0, Some(basic.1))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        let body = response.json().await.unwrap_or(Value::Null);
        Sample {
            kind,
            status,
            latency: started.elapsed(),
            body,
        }
    }

    /// A code for plain-client (no approval step) through the sign-in page.
    async fn code(&self) -> String {
        let jar = Arc::new(reqwest::cookie::Jar::default());
        let browser = reqwest::Client::builder()
            .redirect(Policy::none())
            .cookie_provider(jar)
            .build()
            .expect("a client");
        let authorize = format!(
            "{}/api/oauth/authorize?response_type=code&client_id=plain-client&redirect_uri={}",
            self.base,
            url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>()
        );
        let page = browser
            .get(authorize)
            .send()
            .await
            .expect("the sign-in page");
        let page = page.text().await.expect("HTML");
        let csrf = page
            .split("name=\"csrf\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("a CSRF token in the form");
        let form = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("csrf", csrf),
                ("username", "bob@example.com"),
                ("password", "bob-password-2"),
            ])
            .finish();
        let redirect = browser
            .post(format!("{}/signin", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .expect("the sign-in answer");
        assert_eq!(redirect.status(), 303, "sign-in redirects to the client");
        let location = redirect.headers()["location"].to_str().expect("ASCII");
        let location = url::Url::parse(location).expect("a URL");
        location
            .query_pairs()
            .find(|(name, _)| name == "code")
            .map(|(_, code)| code.into_owned())
            .expect("a code")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_grants_refreshes_and_redemptions_lose_nothing() {
    let server = Server::start("axum");
    let load = Load {
        http: reqwest::Client::builder()
            .redirect(Policy::none())
            .pool_max_idle_per_host(CONCURRENCY)
            .build()
            .expect("a client"),
        base: server.base.clone(),
        gate: Arc::new(Semaphore::new(CONCURRENCY)),
    };
    let codes: Vec<String> = futures_join((0..CODES).map(|_| {
        let load = load.clone();
        async move { load.code().await }
    }))
    .await;

    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    // Password grants whose refresh tokens then rotate, each chain in order.
    for chain in 0..PASSWORD_GRANTS {
        let load = load.clone();
        tasks.spawn(async move {
            let user = if chain % 2 == 0 {
                ("alice@example.com", "alice-password-1")
            } else {
                ("bob@example.com", "bob-password-2")
            };
            let form = [
                ("grant_type", "password"),
                ("username", user.0),
                ("password", user.1),
            ];
            let first = load
                .token("password", ("demo-client", "demo-secret"), &form)
                .await;
            let mut samples = vec![];
            let mut refresh = first.body["refresh_token"].as_str().map(str::to_owned);
            samples.push(first);
            if chain < REFRESH_CHAINS {
                for _ in 0..REFRESHES_PER_CHAIN {
                    let Some(token) = refresh.take() else { break };
                    let form = [
                        ("grant_type", "refresh_token"),
                        ("refresh_token", token.as_str()),
                    ];
                    let next = load
                        .token("refresh", ("demo-client", "demo-secret"), &form)
                        .await;
                    refresh = next.body["refresh_token"].as_str().map(str::to_owned);
                    samples.push(next);
                }
            }
            (None, samples)
        });
    }
    // Half the codes are redeemed by several clients at once (exactly one may win, and the
    // replays then revoke what it won, RFC 6749 §4.1.2); the other half once each.
    for (i, code) in codes.iter().enumerate() {
        let racers = if raced(i) { RACERS_PER_CODE } else { 1 };
        for _ in 0..racers {
            let (load, code) = (load.clone(), code.clone());
            tasks.spawn(async move {
                let form = [
                    ("grant_type", "authorization_code"),
                    ("code", code.as_str()),
                    ("redirect_uri", REDIRECT),
                ];
                let kind = if raced(i) { "raced code" } else { "code" };
                let sample = load
                    .token(kind, ("plain-client", "plain-secret"), &form)
                    .await;
                (Some(i), vec![sample])
            });
        }
    }
    let mut samples = Vec::new();
    let mut winners = vec![0usize; CODES];
    while let Some(done) = tasks.join_next().await {
        let (code, batch) = done.expect("a load task");
        for sample in &batch {
            if let (Some(code), 200) = (code, sample.status) {
                winners[code] += 1;
            }
        }
        samples.extend(batch);
    }
    let elapsed = started.elapsed();

    // No 5xx; every failure is a code race loss; every success carries a fresh token.
    let mut tokens = HashSet::new();
    for sample in &samples {
        assert!(
            sample.status < 500,
            "{} answered {}: {}",
            sample.kind,
            sample.status,
            sample.body
        );
        if sample.status == 200 {
            let access = sample.body["access_token"]
                .as_str()
                .expect("an access token");
            assert!(
                tokens.insert(access.to_owned()),
                "a duplicated access token"
            );
            if let Some(refresh) = sample.body["refresh_token"].as_str() {
                assert!(
                    tokens.insert(refresh.to_owned()),
                    "a duplicated refresh token"
                );
            }
        } else {
            assert_eq!(
                sample.kind, "raced code",
                "only code races may lose: {}",
                sample.body
            );
            assert_eq!(sample.body["error"], "invalid_grant");
        }
    }
    assert_eq!(winners, vec![1; CODES], "exactly one winner per code");
    let expected = PASSWORD_GRANTS + REFRESH_CHAINS * REFRESHES_PER_CHAIN + CODES;
    let successes = samples.iter().filter(|s| s.status == 200).count();
    assert_eq!(
        successes, expected,
        "every grant and refresh succeeded once"
    );

    // Nothing lost: every token issued is live, but those won in a code race, which the
    // replays revoked.
    for sample in samples.iter().filter(|s| s.status == 200) {
        let access = sample.body["access_token"]
            .as_str()
            .expect("an access token");
        let me = load
            .http
            .get(format!("{}/api/me", load.base))
            .bearer_auth(access)
            .send()
            .await
            .expect("the server answers");
        let expected = if sample.kind == "raced code" {
            401
        } else {
            200
        };
        assert_eq!(me.status(), expected, "{} token at /api/me", sample.kind);
    }
    report(&samples, elapsed);
}

/// Whether code `i` is raced by several redeemers.
fn raced(i: usize) -> bool {
    i.is_multiple_of(2)
}

/// Awaits all futures, concurrently.
async fn futures_join<T: Send + 'static>(
    futures: impl Iterator<Item = impl std::future::Future<Output = T> + Send + 'static>,
) -> Vec<T> {
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.expect("a task"));
    }
    out
}

fn report(samples: &[Sample], elapsed: Duration) {
    eprintln!(
        "load: {} requests in {:.2}s = {:.0} requests/s ({CONCURRENCY} in flight)",
        samples.len(),
        elapsed.as_secs_f64(),
        samples.len() as f64 / elapsed.as_secs_f64()
    );
    for kind in ["password", "refresh", "code", "raced code"] {
        let mut latencies: Vec<Duration> = samples
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| s.latency)
            .collect();
        latencies.sort();
        if latencies.is_empty() {
            continue;
        }
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
        eprintln!(
            "  {kind:>10}: {:>4} requests, p50 {:>7.2} ms, p99 {:>7.2} ms",
            latencies.len(),
            at(0.50).as_secs_f64() * 1e3,
            at(0.99).as_secs_f64() * 1e3
        );
    }
}
