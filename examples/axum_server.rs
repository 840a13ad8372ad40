//! The demo deployment on axum 0.8: every path of the demo contract, hosted by grantor.
//!
//! ```sh
//! cargo run --example axum_server -- --addr 127.0.0.1:8080
//! ```

mod common;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Response};
use axum::middleware::{self, Next};
use axum::routing::{any, get, post};
use common::{Demo, Settings};

type App = State<Arc<Demo>>;

#[tokio::main]
async fn main() {
    if let Err(error) = run().await {
        eprintln!("axum_server: {error}");
        std::process::exit(2);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    init_logging();
    let settings = Settings::from_args_and_env()?;
    let demo = Arc::new(common::demo(&settings)?);
    let app = Router::new()
        .route("/", get(|State(demo): App| async move { demo.index() }))
        .route("/api/oauth/authorize", any(authorize))
        .route("/api/oauth/token", any(token))
        .route("/api/oauth/revoke", any(revoke))
        .route("/api/oauth/introspect", any(introspect))
        .route(
            "/.well-known/oauth-authorization-server",
            get(|State(demo): App| async move { demo.server.metadata() }),
        )
        .route("/api/me", get(me))
        .route("/signin", post(sign_in))
        .route("/approve", post(approve))
        .layer(middleware::from_fn(log_request))
        .with_state(demo);
    let listener = tokio::net::TcpListener::bind(settings.addr).await?;
    println!(
        "grantor demo (axum) listening on http://{} with issuer {}",
        listener.local_addr()?,
        settings.issuer
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    Ok(())
}

/// Reads the body up to grantor's limit; a larger one is answered with grantor's 413.
async fn read(
    demo: &Demo,
    request: Request,
) -> Result<http::Request<axum::body::Bytes>, Response<String>> {
    let (parts, body) = request.into_parts();
    match to_bytes(body, demo.server.max_body_bytes()).await {
        Ok(bytes) => Ok(http::Request::from_parts(parts, bytes)),
        Err(_) => Err(demo.server.payload_too_large()),
    }
}

async fn authorize(State(demo): App, request: Request) -> Response<String> {
    match read(&demo, request).await {
        Ok(request) => demo.render(demo.flow.authorize(&request).await),
        Err(too_large) => too_large,
    }
}

async fn token(State(demo): App, request: Request) -> Response<String> {
    match read(&demo, request).await {
        Ok(request) => demo.server.token(&request).await,
        Err(too_large) => too_large,
    }
}

async fn revoke(State(demo): App, request: Request) -> Response<String> {
    match read(&demo, request).await {
        Ok(request) => demo.server.revoke(&request).await,
        Err(too_large) => too_large,
    }
}

async fn introspect(State(demo): App, request: Request) -> Response<String> {
    match read(&demo, request).await {
        Ok(request) => demo.server.introspect(&request).await,
        Err(too_large) => too_large,
    }
}

async fn me(State(demo): App, headers: HeaderMap) -> Response<String> {
    demo.me(&headers).await
}

async fn sign_in(State(demo): App, request: Request) -> Response<String> {
    match read(&demo, request).await {
        Ok(request) => demo.sign_in(request.headers(), request.body()).await,
        Err(too_large) => too_large,
    }
}

async fn approve(State(demo): App, request: Request) -> Response<String> {
    match read(&demo, request).await {
        Ok(request) => demo.approve(request.headers(), request.body()).await,
        Err(too_large) => too_large,
    }
}

/// Logs method, path (never the query: it can hold codes and state), status and latency.
async fn log_request(request: Request<Body>, next: Next) -> axum::response::Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    tracing::info!(
        %method,
        %path,
        status = response.status().as_u16(),
        latency_us = started.elapsed().as_micros() as u64,
        "request"
    );
    response
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
