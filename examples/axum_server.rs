//! The demo deployment on axum 0.8: grantor's router (every endpoint, the sign-in, approval and
//! device pages in grantor's plain HTML) plus the demo's home page and API.
//!
//! ```sh
//! cargo run --example axum_server -- --addr 127.0.0.1:8080
//! ```

mod common;

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use common::Settings;
use grantor::axum::{Bearer, StepUpBearer};
use grantor::signin::Site;

#[tokio::main]
async fn main() {
    if let Err(error) = run().await {
        eprintln!("axum_server: {error}");
        std::process::exit(2);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let _log = common::init_logging()?;
    let settings = Settings::from_args_and_env()?;
    // Before the server is built, so that every series reaches the recorder.
    let metrics = settings
        .metrics
        .then(common::Metrics::install)
        .transpose()?;
    let server = common::demo(&settings).await?;
    let site = Site::new(&server);
    let mut app = grantor::axum::router(&site)
        .merge(grantor::axum::health(&server))
        .route("/", get(move || async move { common::index(&site) }));
    if let Some(metrics) = metrics {
        app = app.route("/metrics", get(move || async move { metrics.scrape() }));
    }
    let app = app
        // A valid bearer (or DPoP) token for the demo API, or grantor's RFC 6750 refusal.
        .route(
            "/api/me",
            get(|Bearer(grant): Bearer| async move { common::me(&grant) }),
        )
        // The same for a token of a strong, recent sign-in, or grantor's RFC 9470 refusal.
        .route(
            "/api/me/strong",
            get(
                |StepUpBearer(grant, ..): StepUpBearer<common::StrongSignIn>| async move {
                    common::me(&grant)
                },
            ),
        )
        .layer(middleware::from_fn(log_request))
        .with_state(server);
    let listener = tokio::net::TcpListener::bind(settings.addr).await?;
    common::announce("axum", listener.local_addr()?, &settings);
    match &settings.tls {
        // HTTPS: each request with the peer's address and the client certificate it
        // presented, if any (mutual TLS).
        Some(tls) => {
            let listener = grantor::axum::TlsListener::new(listener, tls.server_config()?);
            let app = app.into_make_service_with_connect_info::<grantor::axum::TlsPeer>();
            axum::serve(listener, app)
                .with_graceful_shutdown(common::shutdown_signal())
                .await?;
        }
        // With the peer's address, which grantor counts anonymous callers by.
        None => {
            let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
            axum::serve(listener, app)
                .with_graceful_shutdown(common::shutdown_signal())
                .await?;
        }
    }
    Ok(())
}

/// Logs method, path (never the query: it can hold codes and state), status and latency.
async fn log_request(request: Request, next: Next) -> Response {
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
