//! One criterion group per OAuth flow, driven through grantor's public API over the in-memory
//! stores, plus `floor`: the unavoidable work of minting one secret. See `benches/README.md`.
//!
//! Every flow's first answer is checked in full before it is timed, every timed answer has its
//! status (or outcome) checked, and after each timed batch of a flow that mints or removes
//! something the store must have grown (or shrunk) by exactly the batch: a broken flow fails
//! the run instead of looking fast. Codes, refresh tokens and
//! tokens to revoke are made beforehand, untimed, through grantor's own endpoints, so every
//! timed iteration does real work that was never done before.
//!
//! `cargo bench -p grantor-benches --bench flows` runs it and prints a table of medians as ratios to `floor`;
//! `cargo test -p grantor-benches --benches` runs each flow once as a test.

mod common;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, measurement::WallTime};
use grantor::Scope;
use grantor::store::SecretDigest;
use rand::RngCore as _;
use tokio::runtime::Runtime;

use common::*;

/// Flows dominated by one Argon2id verification (tens of milliseconds each).
fn slow_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group
}

// ---------------------------------------------------------------------------------------------
// floor

/// The store's hashing of digests: their own first eight bytes, taken as they are.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = self.0.rotate_left(5) ^ value;
    }
}

type FloorMap = Mutex<HashMap<SecretDigest, u64, BuildHasherDefault<Prehashed>>>;

/// The unavoidable work of minting one secret: 32 bytes from a per-thread ChaCha12 CSPRNG
/// seeded by the OS (as grantor draws them), base64url, SHA-256, one insert into a
/// mutex-guarded map.
fn mint(map: &FloorMap, n: u64) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let secret = URL_SAFE_NO_PAD.encode(bytes);
    let digest = SecretDigest::of(&secret);
    map.lock().expect("unpoisoned").insert(digest, n);
    secret
}

fn floor(c: &mut Criterion) {
    let mut g = group(c, "floor");
    g.bench_function("mint_secret", |b| {
        b.iter_custom(|iters| {
            // A fresh map per sample: it grows (and resizes) as the store's maps do, without
            // growing for the whole run.
            let map = FloorMap::default();
            let start = Instant::now();
            for n in 0..iters {
                std::hint::black_box(mint(&map, n));
            }
            let elapsed = start.elapsed();
            assert_eq!(map.lock().expect("unpoisoned").len() as u64, iters);
            elapsed
        })
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// The authorization endpoint

fn authorize(c: &mut Criterion) {
    let rt = runtime();
    type MakeRequest = fn(&Bench) -> http::Request<String>;
    let flows: [(&str, &str, MakeRequest); 3] = [
        (
            "authorize_code",
            "confidential_client",
            Bench::authorize_code_request,
        ),
        (
            "authorize_code_pkce",
            "public_client_s256",
            Bench::authorize_pkce_request,
        ),
        (
            "implicit",
            "confidential_client",
            Bench::authorize_implicit_request,
        ),
    ];
    for (name, id, make_request) in flows {
        let bench = Bench::new();
        let first = rt.block_on(bench.authorize_and_approve(&make_request(&bench)));
        if name == "implicit" {
            check_implicit(&first);
        } else {
            code_of(&first);
        }
        let mut g = group(c, name);
        g.bench_function(id, |b| {
            b.iter_custom(|iters| {
                let bench = Bench::new();
                let request = make_request(&bench);
                let elapsed = time_cycled(&rt, iters, std::slice::from_ref(&request), async |r| {
                    let response = bench.authorize_and_approve(r).await;
                    assert_eq!(response.status(), 303);
                    response
                });
                let (access, _, codes) = bench.tokens.token_counts();
                let issued = if name == "implicit" { access } else { codes };
                assert_eq!(issued, iters as usize, "one code or token each");
                elapsed
            })
        });
        g.finish();
    }
}

// ---------------------------------------------------------------------------------------------
// The token endpoint

fn exchange(c: &mut Criterion) {
    let rt = runtime();

    let bench = Bench::new();
    let code = rt.block_on(bench.code());
    let first = rt.block_on(
        bench
            .server
            .token(&bench.exchange_confidential_request(&code)),
    );
    check_token_json(&first, true);
    let mut g = group(c, "exchange_code_confidential");
    g.bench_function("basic_digest", |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let codes = prepare(&rt, iters, async || bench.code().await);
            let requests =
                requests_round(&codes, iters, |c| bench.exchange_confidential_request(c));
            token_batch(&rt, &bench, iters, &requests)
        })
    });
    g.finish();

    let bench = Bench::new();
    let code = rt.block_on(bench.pkce_code());
    let first = rt.block_on(bench.server.token(&bench.exchange_public_request(&code)));
    check_token_json(&first, true);
    let mut g = group(c, "exchange_code_public_pkce");
    g.bench_function("client_id_s256", |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let codes = prepare(&rt, iters, async || bench.pkce_code().await);
            let requests = requests_round(&codes, iters, |c| bench.exchange_public_request(c));
            token_batch(&rt, &bench, iters, &requests)
        })
    });
    g.finish();
}

/// Times `iters` token requests (going round `requests`) that each mint one access token, and
/// checks they all did.
fn token_batch(
    rt: &Runtime,
    bench: &Bench,
    iters: u64,
    requests: &[http::Request<String>],
) -> Duration {
    let (access, _, _) = bench.tokens.token_counts();
    let elapsed = time_cycled(rt, iters, requests, async |r| {
        let response = bench.server.token(r).await;
        assert_eq!(response.status(), 200);
        response
    });
    let (access_after, _, _) = bench.tokens.token_counts();
    assert_eq!(access_after, access + iters as usize, "one token each");
    elapsed
}

fn refresh(c: &mut Criterion) {
    let rt = runtime();

    let bench = Bench::new();
    let tokens = rt.block_on(bench.confidential_tokens());
    let first = rt.block_on(
        bench
            .server
            .token(&bench.refresh_confidential_request(&refresh_token(&tokens))),
    );
    let rotated = check_token_json(&first, true);
    assert_ne!(refresh_token(&rotated), refresh_token(&tokens), "rotation");
    let mut g = group(c, "refresh_confidential");
    g.bench_function("basic_digest_rotation", |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let tokens = prepare(&rt, iters, async || {
                refresh_token(&bench.confidential_tokens().await)
            });
            let requests =
                requests_round(&tokens, iters, |t| bench.refresh_confidential_request(t));
            token_batch(&rt, &bench, iters, &requests)
        })
    });
    g.finish();

    let bench = Bench::new();
    let tokens = rt.block_on(bench.public_tokens());
    let first = rt.block_on(
        bench
            .server
            .token(&bench.refresh_public_request(&refresh_token(&tokens))),
    );
    let rotated = check_token_json(&first, true);
    assert_ne!(refresh_token(&rotated), refresh_token(&tokens), "rotation");
    let mut g = group(c, "refresh_public");
    g.bench_function("client_id_rotation", |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let tokens = prepare(&rt, iters, async || {
                refresh_token(&bench.public_tokens().await)
            });
            let requests = requests_round(&tokens, iters, |t| bench.refresh_public_request(t));
            token_batch(&rt, &bench, iters, &requests)
        })
    });
    g.finish();
}

fn password(c: &mut Criterion) {
    let rt = runtime();
    let bench = Bench::new();
    let request = bench.password_request();
    let first = rt.block_on(bench.server.token(&request));
    check_token_json(&first, true);
    let mut g = slow_group(c, "password");
    g.bench_function("argon2id_user_hash", |b| {
        b.iter_custom(|iters| token_batch(&rt, &bench, iters, std::slice::from_ref(&request)))
    });
    g.finish();
}

fn client_credentials(c: &mut Criterion) {
    let rt = runtime();
    let bench = Bench::new();
    let digest = bench.client_credentials_request(&bench.conf_basic);
    check_token_json(&rt.block_on(bench.server.token(&digest)), false);
    // The Argon2id-verified client: its first call pays for Argon2id, and the server's
    // verification cache then remembers the (client, secret) pair for 10 minutes. Each sample
    // below makes that first call untimed, so every timed call is a cache hit; the group after
    // this one times the first call itself.
    let legacy = bench.client_credentials_request(&bench.legacy_basic);
    check_token_json(&rt.block_on(bench.server.token(&legacy)), false);

    let mut g = group(c, "client_credentials");
    g.bench_function("digest_client", |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let request = bench.client_credentials_request(&bench.conf_basic);
            token_batch(&rt, &bench, iters, std::slice::from_ref(&request))
        })
    });
    g.bench_function("argon2id_client_cached", |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let request = bench.client_credentials_request(&bench.legacy_basic);
            // Untimed: the first call verifies with Argon2id and fills the cache.
            let first = rt.block_on(bench.server.token(&request));
            assert_eq!(first.status(), 200);
            token_batch(&rt, &bench, iters, std::slice::from_ref(&request))
        })
    });
    g.finish();

    // The same request to a server that has never seen the secret: a real Argon2id check.
    let mut g = slow_group(c, "client_credentials_argon2id_uncached");
    g.bench_function("argon2id_client_first_call", |b| {
        b.iter_custom(|iters| {
            let servers: Vec<Bench> = (0..iters).map(|_| Bench::new()).collect();
            let elapsed = time_each(&rt, &servers, async |fresh| {
                let response = fresh.server.token(&legacy).await;
                assert_eq!(response.status(), 200);
                response
            });
            for fresh in &servers {
                assert_eq!(fresh.tokens.token_counts().0, 1);
            }
            elapsed
        })
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// Resource servers, introspection, revocation

/// How many distinct access tokens (from the whole code flow) bearer validation and
/// introspection go round: lookups spread over a store of this size miss the CPU caches as a
/// large store's do, instead of hitting one hot entry.
fn token_pool() -> u64 {
    if measuring() { 16 * 1024 } else { 16 }
}

fn bearer(c: &mut Criterion) {
    let rt = runtime();
    let bench = Bench::new();
    let required = Scope::parse("profile").expect("scope");
    let good: Vec<String> = prepare(&rt, token_pool(), async || {
        access_token(&bench.confidential_tokens().await)
    });
    let grant = rt
        .block_on(
            bench
                .server
                .bearer(&bearer_request(&good[0]), Some(&required)),
        )
        .expect("a valid token");
    assert_eq!(grant.authorization.client_id.as_str(), bench.conf_id);
    assert_eq!(grant.authorization.user.as_ref(), Some(&bench.alice));
    assert_eq!(grant.authorization.scope, required);
    let mut g = group(c, "bearer_guard");
    g.bench_function("valid_token", |b| {
        b.iter_custom(|iters| {
            let requests = requests_round(&good, iters, |t| bearer_request(t));
            time_each(&rt, &requests, async |r| {
                let grant = bench.server.bearer(r, Some(&required)).await;
                assert!(grant.is_ok());
                grant
            })
        })
    });
    g.finish();

    let unknown: Vec<String> = (0..token_pool())
        .map(|_| {
            let mut bytes = [0u8; 32];
            rand::rng().fill_bytes(&mut bytes);
            URL_SAFE_NO_PAD.encode(bytes)
        })
        .collect();
    let refusal = rt
        .block_on(
            bench
                .server
                .bearer(&bearer_request(&unknown[0]), Some(&required)),
        )
        .expect_err("an unknown token");
    assert_eq!(refusal.status(), 401);
    let challenge = refusal.headers()["www-authenticate"]
        .to_str()
        .expect("ASCII");
    assert!(challenge.starts_with("Bearer realm="), "{challenge}");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let mut g = group(c, "bearer_guard_reject");
    g.bench_function("unknown_token", |b| {
        b.iter_custom(|iters| {
            let requests = requests_round(&unknown, iters, |t| bearer_request(t));
            time_each(&rt, &requests, async |r| {
                let refusal = bench.server.bearer(r, Some(&required)).await;
                assert!(refusal.as_ref().is_err_and(|r| r.status() == 401));
                refusal
            })
        })
    });
    g.finish();
}

fn introspect(c: &mut Criterion) {
    let rt = runtime();
    let bench = Bench::new();
    let tokens: Vec<String> = prepare(&rt, token_pool(), async || {
        access_token(&bench.confidential_tokens().await)
    });
    let first = rt.block_on(
        bench
            .server
            .introspect(&bench.introspect_request(&tokens[0])),
    );
    assert_eq!(first.status(), 200);
    let body: serde_json::Value = serde_json::from_str(first.body()).expect("JSON");
    assert_eq!(body["active"], true, "{body}");
    assert_eq!(body["client_id"], bench.conf_id.as_str());
    assert_eq!(body["username"], ALICE);
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["scope"], "profile");
    let mut g = group(c, "introspect");
    g.bench_function("active_access_token", |b| {
        b.iter_custom(|iters| {
            let requests = requests_round(&tokens, iters, |t| bench.introspect_request(t));
            time_each(&rt, &requests, async |r| {
                let response = bench.server.introspect(r).await;
                assert!(response.body().starts_with(r#"{"active":true"#));
                response
            })
        })
    });
    g.finish();
}

fn revoke(c: &mut Criterion) {
    let rt = runtime();
    let bench = Bench::new();
    let required = Scope::parse("profile").expect("scope");
    let access = access_token(&rt.block_on(bench.confidential_tokens()));
    let first = rt.block_on(bench.server.revoke(&bench.revoke_request(&access)));
    assert_eq!(first.status(), 200);
    assert_eq!(first.body(), "{}");
    let after = rt.block_on(
        bench
            .server
            .bearer(&bearer_request(&access), Some(&required)),
    );
    assert!(after.is_err(), "a revoked token is refused");
    let mut g = group(c, "revoke");
    g.bench_function("own_access_token", |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let tokens = prepare(&rt, iters, async || {
                access_token(&bench.confidential_tokens().await)
            });
            let requests = requests_round(&tokens, iters, |t| bench.revoke_request(t));
            let (access, _, _) = bench.tokens.token_counts();
            let elapsed = time_each(&rt, &requests, async |r| {
                let response = bench.server.revoke(r).await;
                assert_eq!(response.status(), 200);
                response
            });
            let (access_after, _, _) = bench.tokens.token_counts();
            assert_eq!(access_after + iters as usize, access, "each one removed");
            elapsed
        })
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// The summary table

/// (group, function, target as a multiple of floor).
const ROWS: &[(&str, &str, Option<f64>)] = &[
    ("floor", "mint_secret", None),
    ("authorize_code", "confidential_client", Some(3.0)),
    ("authorize_code_pkce", "public_client_s256", Some(3.0)),
    ("implicit", "confidential_client", None),
    ("exchange_code_confidential", "basic_digest", Some(4.0)),
    ("exchange_code_public_pkce", "client_id_s256", None),
    ("refresh_confidential", "basic_digest_rotation", Some(4.0)),
    ("refresh_public", "client_id_rotation", Some(4.0)),
    ("client_credentials", "digest_client", Some(3.0)),
    ("client_credentials", "argon2id_client_cached", Some(3.0)),
    ("bearer_guard", "valid_token", Some(1.0)),
    ("bearer_guard_reject", "unknown_token", Some(1.0)),
    ("introspect", "active_access_token", None),
    ("revoke", "own_access_token", None),
    ("password", "argon2id_user_hash", None),
    (
        "client_credentials_argon2id_uncached",
        "argon2id_client_first_call",
        None,
    ),
];

fn summary(since: SystemTime) {
    let floor = median_ns("floor", "mint_secret", since);
    let mut lines = Vec::new();
    for (group, function, target) in ROWS {
        let Some(median) = median_ns(group, function, since) else {
            continue;
        };
        let ratio = floor.map(|f| median / f);
        let ratio_text = ratio.map_or("-".to_owned(), |r| format!("{r:.2}x"));
        let (target_text, met) = match (target, ratio) {
            (Some(t), Some(r)) => (format!("<= {t}x"), if r <= *t { "yes" } else { "NO" }),
            (Some(t), None) => (format!("<= {t}x"), "?"),
            (None, _) => ("-".to_owned(), "-"),
        };
        lines.push(format!(
            "| {group}/{function} | {} | {ratio_text} | {target_text} | {met} |",
            format_ns(median)
        ));
    }
    if lines.is_empty() {
        return;
    }
    println!("\nMedians of this run, as ratios to floor/mint_secret:\n");
    println!("| benchmark | median | / floor | target | met |");
    println!("|---|---|---|---|---|");
    for line in lines {
        println!("{line}");
    }
}

fn main() {
    let started = SystemTime::now();
    let mut criterion = Criterion::default().configure_from_args();
    floor(&mut criterion);
    authorize(&mut criterion);
    exchange(&mut criterion);
    refresh(&mut criterion);
    client_credentials(&mut criterion);
    bearer(&mut criterion);
    introspect(&mut criterion);
    revoke(&mut criterion);
    password(&mut criterion);
    criterion.final_summary();
    if measuring() {
        summary(started);
    }
}
