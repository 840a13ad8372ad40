//! Exact counts per call, for `valgrind --tool=callgrind` (see `benches/README.md`,
//! "Reproducing"): prepares `N` inputs of one flow through grantor's public API over the
//! in-memory stores, then makes each call once inside [`measured`], counting the heap
//! allocations the calls make. Callgrind, told to collect inside `measured` alone, then counts
//! their instructions; no time is taken.
//!
//! ```sh
//! cargo bench -p grantor-benches --bench count --no-run   # prints the binary's path
//! valgrind --tool=callgrind --toggle-collect='*count::measured*' <binary> bearer 2000
//! ```
//!
//! Flows: `bearer`, `client_credentials`, `exchange` (the confidential code exchange),
//! `refresh` (the confidential refresh). Prints the allocations and bytes allocated per call.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use grantor::Scope;
use http::Request;

/// The system allocator, counting what is allocated.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` or `realloc` above, that is from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: as for `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What one flow's calls consume, made beforehand.
enum Inputs {
    Token(Vec<Request<String>>),
    Bearer(Vec<Request<()>>, Scope),
}

/// The calls counted: each input used once, every answer checked for success.
#[inline(never)]
fn measured(bench: &Bench, rt: &tokio::runtime::Runtime, inputs: &Inputs) {
    rt.block_on(async {
        match inputs {
            Inputs::Token(requests) => {
                for request in requests {
                    let response = bench.server.token(request).await;
                    assert_eq!(response.status(), 200);
                }
            }
            Inputs::Bearer(requests, required) => {
                for request in requests {
                    let grant = bench.server.bearer(request, Some(required)).await;
                    assert!(grant.is_ok());
                }
            }
        }
    });
}

fn main() {
    // `cargo bench` passes `--bench` (and criterion's flags) to every benchmark: not ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let flow = args.first().map_or("bearer", String::as_str);
    let n: u64 = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let rt = runtime();
    let bench = Bench::new();
    let inputs = match flow {
        "bearer" => {
            let tokens = prepare(&rt, n, async || {
                access_token(&bench.confidential_tokens().await)
            });
            let required = Scope::parse("profile").expect("scope");
            Inputs::Bearer(tokens.iter().map(|t| bearer_request(t)).collect(), required)
        }
        "client_credentials" => Inputs::Token(
            (0..n)
                .map(|_| bench.client_credentials_request(&bench.conf_basic))
                .collect(),
        ),
        "exchange" => {
            let codes = prepare(&rt, n, async || bench.code().await);
            Inputs::Token(
                codes
                    .iter()
                    .map(|code| bench.exchange_confidential_request(code))
                    .collect(),
            )
        }
        "refresh" => {
            let tokens = prepare(&rt, n, async || {
                refresh_token(&bench.confidential_tokens().await)
            });
            Inputs::Token(
                tokens
                    .iter()
                    .map(|token| bench.refresh_confidential_request(token))
                    .collect(),
            )
        }
        other => panic!("no flow {other}: bearer, client_credentials, exchange or refresh"),
    };
    let (allocations, bytes) = (
        ALLOCATIONS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    measured(&bench, &rt, &inputs);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
    let bytes = BYTES.load(Ordering::Relaxed) - bytes;
    println!(
        "{flow}: {n} calls, {:.2} allocations and {:.0} bytes allocated per call",
        allocations as f64 / n as f64,
        bytes as f64 / n as f64
    );
}
