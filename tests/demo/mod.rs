//! The demo servers of `examples/` as child processes, for the tests that drive them over real
//! HTTP (`demo_http`, `demo_load`, `browser`).
#![allow(dead_code)]

pub mod http;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How to start a demo server: its arguments (besides `--addr`), extra environment, and a
/// port of the caller's choosing (else a free one).
pub struct Launch<'a> {
    pub args: &'a [&'a str],
    pub env: Vec<(&'a str, &'a str)>,
    pub port: Option<u16>,
}

impl<'a> Launch<'a> {
    pub fn new(args: &'a [&'a str]) -> Self {
        Self {
            args,
            env: Vec::new(),
            port: None,
        }
    }
}

/// A running demo server, killed when dropped.
pub struct Server {
    pub base: String,
    child: Mutex<Child>,
    /// Everything the server wrote to stderr (its request log).
    log: Arc<Mutex<String>>,
    /// Everything it wrote to stdout after its banner (its events).
    out: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `examples/{framework}_server` over a memory store on a free port and waits for
    /// its banner.
    pub fn start(framework: &str) -> Self {
        // Memory, so that servers running side by side share nothing.
        Self::start_with(framework, "memory")
    }

    /// Starts `examples/{framework}_server` with `--store {store}`.
    pub fn start_with(framework: &str, store: &str) -> Self {
        Self::start_with_args(framework, store, &[])
    }

    /// Starts `examples/{framework}_server` with `--store {store}` and `extra` arguments.
    pub fn start_with_args(framework: &str, store: &str, extra: &[&str]) -> Self {
        let mut args = vec!["--store", store];
        args.extend_from_slice(extra);
        Self::launch(framework, &Launch::new(&args))
    }

    /// A server of `framework` with `--store memory` and `args`, shared by every test of this
    /// binary that asks for the same: the first starts it, the others reuse it, so a file of
    /// many short tests pays for one start per framework. It is never dropped: it ends with the
    /// test binary, however that ends (see [`Self::ends_with_this_process`]). Tests that share
    /// it must leave nothing another relies on (each signs in with a browser of its own).
    pub fn shared(framework: &str, args: &[&str]) -> &'static Server {
        static SHARED: Mutex<Vec<(String, &'static Server)>> = Mutex::new(Vec::new());
        let key = format!("{framework} {}", args.join(" "));
        // Held while a server starts, so that two tests asking at once start one.
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, server)) = shared.iter().find(|(started, _)| *started == key) {
            return server;
        }
        let mut all = vec!["--store", "memory"];
        all.extend_from_slice(args);
        let server: &'static Server =
            Box::leak(Box::new(Self::launch(framework, &Launch::new(&all))));
        server.ends_with_this_process();
        shared.push((key, server));
        server
    }

    /// A watchdog that kills the server once this process is gone: a shell reading a pipe whose
    /// only writer is this process, so the read ends (and the kill runs) when the process exits,
    /// whether it returns from `main`, panics or is killed.
    fn ends_with_this_process(&self) {
        let mut watchdog = Command::new("sh")
            .args(["-c", "read _; kill \"$0\"", &self.pid().to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("a shell for the watchdog");
        // Never closed by hand: the pipe must stay open exactly as long as this process.
        std::mem::forget(watchdog.stdin.take());
        // Reaped if it ever ends first (say, a kill by someone else).
        std::thread::spawn(move || watchdog.wait());
    }

    /// Starts `examples/{framework}_server` as `launch` says.
    pub fn launch(framework: &str, launch: &Launch<'_>) -> Self {
        let binary = examples_dir().join(format!("{framework}_server"));
        let mut failures = Vec::new();
        // A free port can be taken by someone else before the server binds it: try again
        // (unless the caller chose the port).
        let tries = if launch.port.is_some() { 1 } else { 3 };
        for _ in 0..tries {
            match Self::try_start(framework, &binary, launch) {
                Ok(server) => return server,
                Err(failure) => failures.push(failure),
            }
        }
        panic!(
            "{framework}_server did not start:\n{}",
            failures.join("\n---\n")
        );
    }

    fn try_start(framework: &str, binary: &Path, launch: &Launch<'_>) -> Result<Self, String> {
        let port = launch.port.unwrap_or_else(free_port);
        let extra = launch.args;
        let mut child = Command::new(binary)
            .args(["--addr", &format!("127.0.0.1:{port}")])
            .args(extra)
            .envs(launch.env.iter().copied())
            .env("RUST_LOG", "info")
            .env_remove("GRANTOR_ISSUER")
            .env_remove("GRANTOR_CODE_TTL")
            .env_remove("GRANTOR_STORE")
            .env_remove("GRANTOR_PROFILE")
            .env_remove("GRANTOR_REFRESH_GRACE")
            .env_remove("GRANTOR_ACCESS_TOKENS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let mut log = sink.lock().unwrap_or_else(|p| p.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let (lines, banner) = mpsc::channel();
        let out = Arc::new(Mutex::new(String::new()));
        let events = Arc::clone(&out);
        std::thread::spawn(move || {
            let mut stdout = stdout.lines().map_while(Result::ok);
            if let Some(first) = stdout.next() {
                let _ = lines.send(first);
            }
            // After the banner: the demo's events, one JSON object a line.
            for line in stdout {
                let mut events = events.lock().unwrap_or_else(|p| p.into_inner());
                events.push_str(&line);
                events.push('\n');
            }
        });
        let scheme = if extra.contains(&"--tls-cert") {
            "https"
        } else {
            "http"
        };
        let base = format!("{scheme}://127.0.0.1:{port}");
        let server = Self {
            base,
            child: Mutex::new(child),
            log,
            out,
        };
        let issuer = extra
            .windows(2)
            .find(|pair| pair[0] == "--issuer")
            .map_or(server.base.as_str(), |pair| pair[1]);
        match banner.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                assert_eq!(
                    line,
                    format!(
                        "grantor demo ({framework}) listening on {base} with issuer {issuer}",
                        base = server.base
                    ),
                    "the banner"
                );
                Ok(server)
            }
            Err(_) => {
                server.kill();
                std::thread::sleep(Duration::from_millis(200));
                Err(format!("no banner; stderr:\n{}", server.log()))
            }
        }
    }

    /// The server's standard output after its banner so far: its events as JSON lines.
    pub fn events(&self) -> String {
        self.out.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits (up to 5 s) until the events hold `needle`; answers them.
    pub async fn events_with(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let events = self.events();
            if events.contains(needle) || Instant::now() > deadline {
                return events;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The server's stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits (up to 5 s) until the log holds `needle`; answers the log.
    pub async fn log_with(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let log = self.log();
            if log.contains(needle) || Instant::now() > deadline {
                return log;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kills the server and waits for it.
    pub fn kill(&self) {
        let mut child = self.lock_child();
        let _ = child.kill();
        let _ = child.wait();
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.lock_child().id()
    }

    /// Its exit status, if it has exited.
    pub fn try_wait(&self) -> Option<std::process::ExitStatus> {
        self.lock_child().try_wait().expect("the server's status")
    }

    /// Still running, and nothing panicked.
    pub fn assert_alive_and_calm(&self) {
        let log = self.log();
        assert!(!log.contains("panicked"), "{} panicked:\n{log}", self.base);
        let exited = self.try_wait();
        assert!(
            exited.is_none(),
            "{} exited ({exited:?}):\n{log}",
            self.base
        );
    }

    fn lock_child(&self) -> std::sync::MutexGuard<'_, Child> {
        self.child.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("--- demo server output ---\n{}", self.log());
        }
    }
}

/// What [`enabled_features`] answers in a test built with `--all-features`.
const ALL_DEMO_FEATURES: [&str; 9] = [
    "actix",
    "tower",
    "sqlite",
    "postgres",
    "dpop",
    "jwt",
    "private-key-jwt",
    "oidc",
    "outbound",
];

/// The crate features enabled for this test binary.
fn enabled_features() -> Vec<&'static str> {
    let mut features = Vec::new();
    if cfg!(feature = "actix") {
        features.push("actix");
    }
    if cfg!(feature = "tower") {
        features.push("tower");
    }
    if cfg!(feature = "sqlite") {
        features.push("sqlite");
    }
    if cfg!(feature = "postgres") {
        features.push("postgres");
    }
    if cfg!(feature = "dpop") {
        features.push("dpop");
    }
    if cfg!(feature = "jwt") {
        features.push("jwt");
    }
    if cfg!(feature = "private-key-jwt") {
        features.push("private-key-jwt");
    }
    if cfg!(feature = "oidc") {
        features.push("oidc");
    }
    if cfg!(feature = "outbound") {
        features.push("outbound");
    }
    features
}

/// `<target dir>`, from this test binary's path (`<target dir>/<profile>/deps/<test>-<hash>`).
pub fn target_dir() -> PathBuf {
    examples_dir()
        .parent()
        .and_then(Path::parent)
        .expect("<target dir>/<profile>/examples")
        .to_path_buf()
}

/// A loopback port free at the time of asking.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Builds both examples once per test binary (a no-op when they are fresh) and answers the
/// directory holding them: `<target dir>/<profile>/examples`, found from this test's own path
/// (`<target dir>/<profile>/deps/demo_http-…`).
pub fn examples_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_examples(&["axum_server", "actix_server"]))
}

/// Builds `examples/{name}` the way the demo servers are built (same profile, features and
/// target directory) and answers its path.
pub fn example(name: &str) -> PathBuf {
    build_examples(&[name]).join(name)
}

/// The grantor package the demo servers are examples of: this test's own, or, for a package
/// nested in its `tests/` (the relying-party tests), the nearest one above holding the demo.
fn demo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("examples/axum_server.rs").is_file())
        .expect("the grantor package above")
}

fn build_examples(names: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("<target dir>/<profile>/deps/");
    let target_dir = profile_dir.parent().expect("<target dir>/<profile>");
    let mut cargo = Command::new(env!("CARGO"));
    cargo.current_dir(demo_root()).arg("build");
    for name in names {
        cargo.args(["--example", name]);
    }
    cargo.arg("--target-dir").arg(target_dir);
    match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") | None => {}
        Some(profile) => {
            cargo.args(["--profile", profile]);
        }
    }
    // The features this test was built with, so the build reuses the library `cargo test`
    // already built for it (under `--all-features` it is a no-op). From another package of the
    // workspace (the suite, the relying-party tests), those `--all-features` gives grantor's
    // tests, so all build the same demo (`actix` for the actix-web demo).
    let mut features = enabled_features();
    if demo_root() != Path::new(env!("CARGO_MANIFEST_DIR")) {
        features = ALL_DEMO_FEATURES.to_vec();
    }
    if !features.is_empty() {
        cargo.args(["--features", &features.join(",")]);
    }
    let status = cargo.status().expect("cargo runs");
    assert!(status.success(), "cargo build of the examples: {status}");
    profile_dir.join("examples")
}

/// One test module per rule of "Under attack", with a test against each demo: `rule => check;`
/// starts the demo, runs `check(&server)` and then asserts the server is alive and calm.
#[macro_export]
macro_rules! under_attack {
    ($($rule:ident => $check:ident;)*) => {$(
        mod $rule {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn axum() {
                let server = super::Server::start("axum");
                super::$check(&server).await;
                server.assert_alive_and_calm();
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn actix() {
                let server = super::Server::start("actix");
                super::$check(&server).await;
                server.assert_alive_and_calm();
            }
        }
    )*};
}

/// The resident memory of `pid` in KiB (Linux), if readable.
#[allow(dead_code, reason = "used by the attack tests only")]
pub fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One test module per rule, with a test against each demo: `rule => check;` runs
/// `check("axum")` and `check("actix")`.
#[macro_export]
macro_rules! each_framework {
    ($($rule:ident => $check:ident;)*) => {$(
        mod $rule {
            #[tokio::test]
            async fn axum() {
                super::$check("axum").await;
            }

            #[tokio::test]
            async fn actix() {
                super::$check("actix").await;
            }
        }
    )*};
}
