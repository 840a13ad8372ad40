//! Throughput of the confidential code exchange and of bearer validation from 1 and from 2
//! threads over one shared server and store. Each thread runs its own tokio current-thread
//! runtime, as a host's worker threads would; its inputs are made before the clock starts.
//!
//! `cargo bench -p grantor-benches --bench scaling` prints ops/s per thread count and the 2-thread/1-thread ratio
//! (the goal is at least 1.7x on two cores). Rounds are short and 1- and 2-thread rounds
//! alternate, so that work elsewhere on the machine lands on both; the medians and the best
//! round of each are printed (other work only ever slows a round down, so the best rounds show
//! what the code can do, the medians what this run saw). Nothing here asserts a time: on a
//! shared machine the ratio is a measurement, not a test. `cargo test -p grantor-benches --benches` runs it once,
//! small, as a smoke test.

mod common;

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use grantor::Scope;

use common::*;

/// One flow: what every round shares, what each thread makes untimed, and the timed work.
struct Flow<S, T> {
    name: &'static str,
    /// Operations per thread per round.
    per_thread: usize,
    /// Made once per flow, shared by every round and thread.
    setup: fn(&Bench, usize) -> S,
    /// Made by each thread before the clock starts: (bench, shared, operations, thread index).
    prepare: fn(&Bench, &S, usize, usize) -> T,
    /// The timed work; answers how many operations it did.
    run: fn(&Bench, T) -> usize,
}

/// One round: `threads` threads over the same server each prepare, wait for each other, then
/// run; answers operations per second of all threads together.
fn round<S: Send + Sync + 'static, T: 'static>(
    bench: &Arc<Bench>,
    shared: &Arc<S>,
    flow: &Flow<S, T>,
    threads: usize,
) -> f64 {
    let barrier = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|i| {
            let bench = Arc::clone(bench);
            let shared = Arc::clone(shared);
            let barrier = Arc::clone(&barrier);
            let (prepare, run, n) = (flow.prepare, flow.run, flow.per_thread);
            thread::spawn(move || {
                let inputs = prepare(&bench, &shared, n, i);
                barrier.wait();
                let start = Instant::now();
                let done = run(&bench, inputs);
                (done, start.elapsed())
            })
        })
        .collect();
    let mut total = 0;
    let mut slowest = Duration::ZERO;
    for worker in workers {
        let (done, elapsed) = worker.join().expect("the worker finished");
        total += done;
        slowest = slowest.max(elapsed);
    }
    total as f64 / slowest.as_secs_f64()
}

// The confidential code exchange: each thread redeems codes of its own.

fn no_setup(_: &Bench, _: usize) {}

fn prepare_exchanges(bench: &Bench, _: &(), n: usize, _: usize) -> Vec<http::Request<String>> {
    let codes: Vec<String> = runtime().block_on(async {
        let mut codes = Vec::with_capacity(n);
        for _ in 0..n {
            codes.push(bench.code().await);
        }
        codes
    });
    codes
        .iter()
        .map(|code| bench.exchange_confidential_request(code))
        .collect()
}

fn run_exchanges(bench: &Bench, requests: Vec<http::Request<String>>) -> usize {
    runtime().block_on(async {
        for request in &requests {
            let response = bench.server.token(request).await;
            assert_eq!(response.status(), 200, "{}", response.body());
        }
    });
    requests.len()
}

// Bearer validation: each thread goes round its own half of a pool of live tokens.

/// Live access tokens from the whole code flow.
struct Pool(Vec<String>);

fn token_pool(bench: &Bench, size: usize) -> Pool {
    Pool(runtime().block_on(async {
        let mut tokens = Vec::with_capacity(size);
        for _ in 0..size {
            tokens.push(access_token(&bench.confidential_tokens().await));
        }
        tokens
    }))
}

fn prepare_validations(
    _: &Bench,
    Pool(pool): &Pool,
    n: usize,
    thread: usize,
) -> Vec<http::Request<()>> {
    let half = pool.len() / 2;
    pool[thread * half..(thread + 1) * half]
        .iter()
        .cycle()
        .take(n)
        .map(|token| bearer_request(token))
        .collect()
}

fn run_validations(bench: &Bench, requests: Vec<http::Request<()>>) -> usize {
    let required = Scope::parse("profile").expect("scope");
    runtime().block_on(async {
        for request in &requests {
            let grant = bench.server.bearer(request, Some(&required)).await;
            assert!(grant.is_ok());
        }
    });
    requests.len()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

fn measure<S: Send + Sync + 'static, T: 'static>(flow: Flow<S, T>, rounds: usize, pool: usize) {
    // One server and store for every round and thread: the threads share its locks and maps.
    let bench = Arc::new(Bench::new());
    let shared = Arc::new((flow.setup)(&bench, pool));
    round(&bench, &shared, &flow, 2); // warm-up, untimed
    let (mut one, mut two) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        one.push(round(&bench, &shared, &flow, 1));
        two.push(round(&bench, &shared, &flow, 2));
    }
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (best_one, best_two) = (best(&one), best(&two));
    let (one, two) = (median(&mut one), median(&mut two));
    println!(
        "{:<27} median: 1 thread {:>9.0} ops/s, 2 threads {:>9.0} ops/s, ratio {:.2}x",
        flow.name,
        one,
        two,
        two / one
    );
    println!(
        "{:<27} best:   1 thread {:>9.0} ops/s, 2 threads {:>9.0} ops/s, ratio {:.2}x  (goal >= 1.7x)",
        "",
        best_one,
        best_two,
        best_two / best_one
    );
}

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    // (exchanges per thread per round, validations per thread per round, rounds, token pool)
    let (exchanges, validations, rounds, pool) = if measuring {
        (8_000, 100_000, 15, 8_192)
    } else {
        (20, 200, 1, 16)
    };
    let started = Instant::now();
    println!(
        "scaling: {rounds} alternating rounds per thread count, {} available cores{}",
        thread::available_parallelism().map_or(1, |n| n.get()),
        if measuring {
            ""
        } else {
            " (smoke run: too small to measure anything; `cargo bench` measures)"
        }
    );
    measure(
        Flow {
            name: "exchange_code_confidential",
            per_thread: exchanges,
            setup: no_setup,
            prepare: prepare_exchanges,
            run: run_exchanges,
        },
        rounds,
        pool,
    );
    measure(
        Flow {
            name: "bearer_guard",
            per_thread: validations,
            setup: token_pool,
            prepare: prepare_validations,
            run: run_validations,
        },
        rounds,
        pool,
    );
    println!("scaling: done in {:.1} s", started.elapsed().as_secs_f64());
}
