//! An HTTP load generator for a running demo server (examples/README.md): each flow in turn, over
//! `--connections` HTTP/1.1 keep-alive connections for `--duration` seconds, printed as one
//! Markdown row per flow (requests answered, req/s, p50, p99, non-2xx, errors).
//!
//! ```sh
//! cargo run --release --example axum_server -- --store memory --addr 127.0.0.1:8080 &
//! cargo run --release --example load -- --base http://127.0.0.1:8080
//! cargo run --release --example load -- --flow refresh --flow bearer --connections 8
//! ```
//!
//! `benches/http_load.sh` builds both, starts the demo on each store and runs every flow.
//! Whatever a flow consumes (refresh chains, access tokens to revoke, codes) is made before
//! its window, untimed, and each flow is warmed up before it is timed. Progress goes to
//! stderr, the table to stdout.

mod flows;
mod http;
mod measure;
mod setup;

use std::sync::Arc;
use std::time::Duration;

use flows::{Budget, Flow, Plan, Worker};
use http::{Conn, Target};

struct Options {
    target: Target,
    connections: usize,
    duration: Duration,
    warmup: Duration,
    flows: Vec<Flow>,
    threads: usize,
    budget: Budget,
    header: bool,
    /// A flow one more connection runs during each timed flow, reported in a row of its own.
    beside: Option<Flow>,
}

const USAGE: &str = "usage: load [--base URL] [--connections N] [--duration SECONDS]
            [--warmup SECONDS] [--flow NAME]... [--threads N]
            [--tokens N] [--codes N] [--scope SCOPE] [--setup-time SECONDS]
            [--beside FLOW] [--id-token-alg ALG] [--no-header]
  --base         the demo's base URL (default http://127.0.0.1:8080)
  --connections  keep-alive connections, one request in flight on each (default 32)
  --duration     timed seconds per flow (default 10); --warmup before it (default 1)
  --flow         client_credentials, introspection, bearer, refresh, password, revocation,
                 code_exchange, or all (default; repeat or separate with commas)
  --threads      the load generator's runtime threads (default 1, see benches/README.md)
  --tokens       at most this many access tokens minted for revocation (default 200000)
  --codes        at most this many codes made for code_exchange (default 2000): one sign-in,
                 then the authorization URL in its sign-on session
  --scope        the scope code_exchange's codes are for, spaces or commas between tokens
                 (default profile; openid,profile signs an RS256 ID token in every exchange)
  --setup-time   at most this many seconds minting tokens or making codes (default 20)
  --beside       one more connection runs this flow (not one that spends what it is given)
                 during each flow's warm-up and window, reported in a row of its own: the
                 latency one kind of request sees while another loads the server
  --id-token-alg code_exchange's ID tokens signed with RS256 (plain-client, the default), ES256
                 or EdDSA (a client registered for it, approved once in the sign-on session)
  --no-header    print only the rows";

fn options() -> Result<Options, String> {
    let mut base = "http://127.0.0.1:8080".to_owned();
    let mut options = Options {
        target: Target::parse(&base)?,
        connections: 32,
        duration: Duration::from_secs(10),
        warmup: Duration::from_secs(1),
        flows: Vec::new(),
        threads: 1,
        budget: Budget {
            scope: "profile".to_owned(),
            tokens: 200_000,
            codes: 2_000,
            time: Duration::from_secs(20),
            id_token_alg: None,
        },
        header: true,
        beside: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Err(USAGE.to_owned());
        }
        if arg == "--no-header" {
            options.header = false;
            continue;
        }
        let (name, value) = match arg.split_once('=') {
            Some((name, value)) => (name.to_owned(), value.to_owned()),
            None => {
                let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
                (arg, value)
            }
        };
        let count = |value: &str| -> Result<usize, String> {
            value
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{name} needs a positive whole number, not {value}"))
        };
        let seconds = |value: &str| -> Result<Duration, String> {
            value
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| format!("{name} needs seconds, not {value}"))
        };
        match name.as_str() {
            "--base" => base = value,
            "--connections" => options.connections = count(&value)?,
            "--duration" => options.duration = seconds(&value)?,
            "--warmup" => options.warmup = seconds(&value)?,
            "--threads" => options.threads = count(&value)?,
            "--tokens" => options.budget.tokens = count(&value)?,
            "--codes" => options.budget.codes = count(&value)?,
            "--setup-time" => options.budget.time = seconds(&value)?,
            // Commas for spaces, so that a shell variable can carry the scope unquoted.
            "--scope" => options.budget.scope = value.replace(',', " "),
            "--id-token-alg" => options.budget.id_token_alg = Some(value),
            "--beside" => {
                let flow = Flow::parse(&value)
                    .filter(|flow| !flow.consumes())
                    .ok_or_else(|| {
                        format!("--beside takes client_credentials, introspection, bearer, refresh or password, not {value}")
                    })?;
                options.beside = Some(flow);
            }
            "--flow" => {
                for name in value.split(',').filter(|name| !name.is_empty()) {
                    if name == "all" {
                        options.flows.extend(Flow::ALL);
                    } else {
                        let flow = Flow::parse(name)
                            .ok_or_else(|| format!("unknown flow {name}; try --help"))?;
                        options.flows.push(flow);
                    }
                }
            }
            other => return Err(format!("unknown argument {other}; try --help")),
        }
    }
    options.target = Target::parse(&base)?;
    if options.flows.is_empty() {
        options.flows.extend(Flow::ALL);
    }
    Ok(options)
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    // One thread by default: on a small machine the server under test needs the other cores,
    // and a single-threaded client has no cross-thread wake-ups of its own.
    let runtime = if options.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.threads)
            .enable_all()
            .build()
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("load: no tokio runtime: {error}");
            std::process::exit(1);
        }
    };
    let failed = runtime.block_on(run(options));
    // A flow that could not be set up is in the table; the exit status says so too.
    if failed > 0 {
        std::process::exit(1);
    }
}

/// Runs every chosen flow in turn; answers how many could not be set up.
async fn run(options: Options) -> usize {
    let mut workers: Vec<Worker> = (0..options.connections)
        .map(|_| Worker::new(Conn::new(options.target.clone())))
        .collect();
    if options.header {
        println!("{}", measure::HEADER);
    }
    let mut failed = 0;
    // The flow run beside the others, on a connection of its own, prepared once.
    let mut beside = None;
    if let Some(flow) = options.beside {
        let mut probe = vec![Worker::new(Conn::new(options.target.clone()))];
        match Plan::prepare(flow, &mut probe, options.budget.clone()).await {
            Ok(plan) => beside = Some((Arc::new(plan), probe)),
            Err(error) => {
                eprintln!("load: --beside {}: setup failed: {error}", flow.name());
                return 1;
            }
        }
    }
    let mut beside_rows = Vec::new();
    for flow in &options.flows {
        eprintln!("load: {}: preparing", flow.name());
        let plan = match Plan::prepare(*flow, &mut workers, options.budget.clone()).await {
            Ok(plan) => Arc::new(plan),
            Err(error) => {
                failed += 1;
                let error = error.replace('|', "/").replace('\n', " ");
                println!(
                    "| {} | - | - | - | - | - | - | setup failed: {error} |",
                    flow.name()
                );
                continue;
            }
        };
        eprintln!(
            "load: {}: {} connections, {:?} warm-up, {:?} timed",
            flow.name(),
            workers.len(),
            options.warmup,
            options.duration
        );
        let main = measure::measure(Arc::clone(&plan), workers, options.warmup, options.duration);
        let (back, row) = match &mut beside {
            Some((probe, probe_workers)) => {
                let probe_run = measure::measure(
                    Arc::clone(probe),
                    std::mem::take(probe_workers),
                    options.warmup,
                    options.duration,
                );
                let (main, (probe_back, probe_row)) = tokio::join!(main, probe_run);
                *probe_workers = probe_back;
                let name = format!("{} beside {}", probe.flow.name(), flow.name());
                beside_rows.push(probe_row.markdown(&name, "one connection"));
                main
            }
            None => main.await,
        };
        workers = back;
        let mut notes = vec![];
        if !plan.note.is_empty() {
            notes.push(plan.note.clone());
        }
        if plan.consumes() {
            notes.push(format!(
                "{} spent warming up, {} timed",
                row.warm_used, row.timed_used
            ));
            if row.exhausted {
                notes.push(format!(
                    "ran out after {:.3} s: the timed window stopped there",
                    row.elapsed.as_secs_f64()
                ));
            }
        }
        let restarts: usize = workers
            .iter_mut()
            .map(|w| std::mem::take(&mut w.restarts))
            .sum();
        if restarts > 0 {
            notes.push(format!("{restarts} refresh chains restarted"));
        }
        println!("{}", row.markdown(flow.name(), &notes.join("; ")));
        for row in beside_rows.drain(..) {
            println!("{row}");
        }
    }
    failed
}
