//! The demo deployment on actix-web 4: every path of the demo contract, hosted by grantor. It
//! serves exactly what `axum_server` serves; only the mapping between the framework and the
//! `http` types differs.
//!
//! ```sh
//! cargo run --example actix_server -- --addr 127.0.0.1:8080
//! ```

mod common;

use std::future::Future;
use std::time::Instant;

use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::StatusCode;
use actix_web::http::header::{ALLOW, HeaderName, HeaderValue};
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, Resource, Route, guard};
use common::{Demo, Settings};

type AppState = web::Data<Demo>;

/// A request body read up to grantor's limit (the `PayloadConfig` below), or why it could not
/// be read.
type Payload = Result<Bytes, actix_web::Error>;

#[actix_web::main]
async fn main() {
    if let Err(error) = run().await {
        eprintln!("actix_server: {error}");
        std::process::exit(2);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    common::init_logging();
    let settings = Settings::from_args_and_env()?;
    let demo = web::Data::new(common::demo(&settings).await?);
    let limit = demo.server.max_body_bytes();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(demo.clone())
            .app_data(web::PayloadConfig::new(limit))
            .wrap_fn(log_request)
            .service(only(
                "/",
                "GET,HEAD",
                get().to(|demo: AppState| async move { reply(demo.index()) }),
            ))
            .route("/api/oauth/authorize", web::route().to(authorize))
            .route("/api/oauth/token", web::route().to(token))
            .route("/api/oauth/revoke", web::route().to(revoke))
            .route("/api/oauth/introspect", web::route().to(introspect))
            .route("/api/oauth/register", web::route().to(register))
            .route("/api/oauth/par", web::route().to(par))
            .route(
                "/api/oauth/device_authorization",
                web::route().to(device_authorization),
            )
            .route(
                "/api/oauth/register/{client_id}",
                web::route().to(client_configuration),
            )
            .service(only(
                "/.well-known/oauth-authorization-server",
                "GET,HEAD",
                get().to(|demo: AppState| async move { reply(demo.server.metadata()) }),
            ))
            .service(only(
                "/.well-known/jwks.json",
                "GET,HEAD",
                get().to(|demo: AppState| async move { reply(demo.jwks().await) }),
            ))
            .service(only("/api/me", "GET,HEAD", get().to(me)))
            .service(only("/signin", "POST", web::post().to(sign_in)))
            .service(only("/approve", "POST", web::post().to(approve)))
            .service(
                web::resource("/device")
                    .route(get().to(device_page))
                    .route(web::post().to(device))
                    .default_service(web::to(|| async {
                        HttpResponse::MethodNotAllowed()
                            .insert_header((ALLOW, "GET,HEAD,POST"))
                            .finish()
                    })),
            )
    })
    .bind(settings.addr)?;
    for addr in server.addrs() {
        common::announce("actix", addr, &settings.issuer);
    }
    // actix's server stops gracefully on SIGINT (Ctrl-C), SIGTERM and SIGQUIT by itself.
    server.run().await?;
    tracing::info!("stopped");
    Ok(())
}

/// GET, and HEAD as axum's `get` answers it too.
fn get() -> Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// `route` at `path`; any other method gets 405 with `Allow`, as in axum.
fn only(path: &str, allow: &'static str, route: Route) -> Resource {
    web::resource(path)
        .route(route)
        .default_service(web::to(move || async move {
            HttpResponse::MethodNotAllowed()
                .insert_header((ALLOW, allow))
                .finish()
        }))
}

/// The request as `http` types, with its body; a body over grantor's limit is answered with
/// grantor's 413, one that cannot be read (a broken chunked encoding, a client gone) with
/// actix's 400.
fn read(
    demo: &Demo,
    request: &HttpRequest,
    body: Payload,
) -> Result<http::Request<Bytes>, HttpResponse> {
    match body {
        Ok(body) => to_http(request, body),
        Err(error) => Err(match error.as_error::<PayloadError>() {
            Some(PayloadError::Overflow) => reply(demo.server.payload_too_large()),
            _ => error.error_response(),
        }),
    }
}

/// actix-web 4 is on `http` 0.2: method, URI and headers are carried over as text and bytes
/// (every header, repeated ones too).
fn to_http(request: &HttpRequest, body: Bytes) -> Result<http::Request<Bytes>, HttpResponse> {
    let mut builder = http::Request::builder()
        .method(request.method().as_str())
        .uri(request.uri().to_string());
    for (name, value) in request.headers() {
        builder = builder.header(name.as_str(), value.as_bytes());
    }
    // Cannot fail: actix parsed the same grammar.
    builder
        .body(body)
        .map_err(|_| HttpResponse::BadRequest().finish())
}

/// Grantor's answer as an actix response: status, every header (repeated ones too), body.
fn reply(response: http::Response<String>) -> HttpResponse {
    let (parts, body) = response.into_parts();
    let status =
        StatusCode::from_u16(parts.status.as_u16()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut builder = HttpResponse::build(status);
    for (name, value) in &parts.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_str().as_bytes()),
            HeaderValue::from_bytes(value.as_bytes()),
        ) {
            builder.append_header((name, value));
        }
    }
    builder.body(body)
}

async fn authorize(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.render(demo.flow.authorize(&request).await)),
        Err(response) => response,
    }
}

async fn token(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.server.token(&request).await),
        Err(response) => response,
    }
}

async fn revoke(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.server.revoke(&request).await),
        Err(response) => response,
    }
}

async fn introspect(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.server.introspect(&request).await),
        Err(response) => response,
    }
}

async fn par(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.server.par(&request).await),
        Err(response) => response,
    }
}

async fn device_authorization(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.server.device_authorization(&request).await),
        Err(response) => response,
    }
}

async fn device_page(demo: AppState, request: HttpRequest) -> HttpResponse {
    reply(demo.device_page(request.uri().query()))
}

async fn device(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.device(request.body()).await),
        Err(response) => response,
    }
}

async fn register(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.server.register(&request).await),
        Err(response) => response,
    }
}

/// RFC 7592: grantor reads the client id from the path itself.
async fn client_configuration(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.server.client_configuration(&request).await),
        Err(response) => response,
    }
}

async fn me(demo: AppState, request: HttpRequest) -> HttpResponse {
    match to_http(&request, Bytes::new()) {
        Ok(request) => reply(demo.me(&request).await),
        Err(response) => response,
    }
}

async fn sign_in(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.sign_in(request.headers(), request.body()).await),
        Err(response) => response,
    }
}

async fn approve(demo: AppState, request: HttpRequest, body: Payload) -> HttpResponse {
    match read(&demo, &request, body) {
        Ok(request) => reply(demo.approve(request.headers(), request.body()).await),
        Err(response) => response,
    }
}

/// Logs method, path (never the query: it can hold codes and state), status and latency.
fn log_request<S>(
    request: ServiceRequest,
    service: &S,
) -> impl Future<Output = Result<ServiceResponse, actix_web::Error>> + use<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse, Error = actix_web::Error>,
{
    let method = request.method().clone();
    let path = request.path().to_owned();
    let started = Instant::now();
    let response = service.call(request);
    async move {
        let response = response.await;
        let status = match &response {
            Ok(response) => response.status(),
            Err(error) => error.as_response_error().status_code(),
        };
        tracing::info!(
            %method,
            %path,
            status = status.as_u16(),
            latency_us = started.elapsed().as_micros() as u64,
            "request"
        );
        response
    }
}
