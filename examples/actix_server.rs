//! The demo deployment on actix-web 4, exactly what `axum_server` serves: grantor's routes
//! (every endpoint, the sign-in, approval and device pages) plus the demo's home and API.
//!
//! ```sh
//! cargo run --example actix_server -- --addr 127.0.0.1:8080
//! ```

mod common;

use std::future::Future;
use std::time::Instant;

use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::header::ALLOW;
use actix_web::{App, HttpResponse, HttpServer, Resource, Route, guard, web};
use common::Settings;
use grantor::actix::{Bearer, StepUpBearer, respond};
use grantor::signin::Site;

fn main() {
    if let Err(error) = actix_web::rt::System::new().block_on(run()) {
        eprintln!("actix_server: {error}");
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
    let http = HttpServer::new(move || {
        let mut app = App::new()
            // For the `Bearer` extractor.
            .app_data(web::Data::new(server.clone()))
            .wrap_fn(log_request)
            .configure(grantor::actix::routes(&site))
            .configure(grantor::actix::health(&server));
        if let Some(metrics) = metrics.clone() {
            app = app.service(get("/metrics", move || {
                std::future::ready(respond(metrics.scrape()))
            }));
        }
        app.service(get("/", {
            let page = common::index(&site);
            move || std::future::ready(respond(page.clone()))
        }))
        // A valid bearer (or DPoP) token for the demo API, or grantor's RFC 6750 refusal.
        .service(get("/api/me", |Bearer(grant): Bearer| async move {
            respond(common::me(&grant))
        }))
        // The same for a token of a strong, recent sign-in, or grantor's RFC 9470 refusal.
        .service(get(
            "/api/me/strong",
            |StepUpBearer(grant, ..): StepUpBearer<common::StrongSignIn>| async move {
                respond(common::me(&grant))
            },
        ))
    });
    let http = match &settings.tls {
        // HTTPS: each request with the client certificate its connection presented, if any
        // (mutual TLS).
        Some(tls) => http
            .on_connect(grantor::actix::client_certificate_on_connect)
            .bind_rustls_0_23(settings.addr, tls.server_config()?)?,
        None => http.bind(settings.addr)?,
    };
    common::announce("actix", http.addrs()[0], &settings);
    // actix's server stops gracefully on SIGINT (Ctrl-C), SIGTERM and SIGQUIT by itself.
    http.run().await?;
    tracing::info!("stopped");
    Ok(())
}

/// `handler` for GET and HEAD at `path`; any other method gets 405 with `Allow`, as in axum.
fn get<F, Args>(path: &str, handler: F) -> Resource
where
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    let route: Route = web::route().guard(guard::Any(guard::Get()).or(guard::Head()));
    web::resource(path)
        .route(route.to(handler))
        .default_service(web::to(|| async {
            HttpResponse::MethodNotAllowed()
                .insert_header((ALLOW, "GET,HEAD"))
                .finish()
        }))
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
