//! The demo deployment on axum 0.8: every path of the demo contract, hosted by grantor.
//!
//! ```sh
//! cargo run --example axum_server -- --addr 127.0.0.1:8080
//! ```

mod common;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, FailedToBufferBody};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Response};
use axum::middleware::{self, Next};
use axum::routing::{any, get, post};
use common::{Demo, Settings};

type App = State<Arc<Demo>>;

/// A request body read up to grantor's limit (the `DefaultBodyLimit` below), or why it could
/// not be read.
type Payload = Result<Bytes, BytesRejection>;

#[tokio::main]
async fn main() {
    if let Err(error) = run().await {
        eprintln!("axum_server: {error}");
        std::process::exit(2);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    common::init_logging();
    let settings = Settings::from_args_and_env()?;
    let demo = Arc::new(common::demo(&settings).await?);
    let limit = demo.server.max_body_bytes();
    let app = Router::new()
        .route("/", get(|State(demo): App| async move { demo.index() }))
        .route("/api/oauth/authorize", any(authorize))
        .route("/api/oauth/token", any(token))
        .route("/api/oauth/revoke", any(revoke))
        .route("/api/oauth/introspect", any(introspect))
        .route("/api/oauth/register", any(register))
        .route("/api/oauth/par", any(par))
        .route("/api/oauth/device_authorization", any(device_authorization))
        .route("/api/oauth/register/{client_id}", any(client_configuration))
        .route(
            "/.well-known/oauth-authorization-server",
            get(|State(demo): App| async move { demo.server.metadata() }),
        )
        .route(
            "/.well-known/jwks.json",
            get(|State(demo): App| async move { demo.jwks().await }),
        )
        .route("/api/me", get(me))
        .route("/signin", post(sign_in))
        .route("/approve", post(approve))
        .route("/device", get(device_page).post(device))
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn(log_request))
        .with_state(demo);
    let listener = tokio::net::TcpListener::bind(settings.addr).await?;
    common::announce("axum", listener.local_addr()?, &settings.issuer);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    Ok(())
}

/// Answers a body that could not be read: grantor's 413 for one over its limit, axum's 400 for
/// one that cannot be read (a broken chunked encoding, a client gone).
fn refuse(demo: &Demo, rejection: BytesRejection) -> Response<String> {
    if let BytesRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(_)) = rejection {
        return demo.server.payload_too_large();
    }
    let mut response = Response::new(rejection.body_text());
    *response.status_mut() = rejection.status();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

async fn authorize(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.render(demo.flow.authorize(&request).await),
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn token(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.server.token(&request).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn revoke(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.server.revoke(&request).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn introspect(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.server.introspect(&request).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn par(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.server.par(&request).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn device_authorization(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.server.device_authorization(&request).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn device_page(State(demo): App, parts: Parts) -> Response<String> {
    demo.device_page(parts.uri.query())
}

async fn device(State(demo): App, body: Payload) -> Response<String> {
    match body {
        Ok(body) => demo.device(&body).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn register(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.server.register(&request).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

/// RFC 7592: grantor reads the client id from the path itself.
async fn client_configuration(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.server.client_configuration(&request).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn me(State(demo): App, parts: Parts) -> Response<String> {
    demo.me(&http::Request::from_parts(parts, ())).await
}

async fn sign_in(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.sign_in(request.headers(), request.body()).await,
        Err(rejection) => refuse(&demo, rejection),
    }
}

async fn approve(State(demo): App, parts: Parts, body: Payload) -> Response<String> {
    match body.map(|body| http::Request::from_parts(parts, body)) {
        Ok(request) => demo.approve(request.headers(), request.body()).await,
        Err(rejection) => refuse(&demo, rejection),
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
