//! actix-web glue (feature `actix`): grantor as a service configuration ([`routes`]: every
//! endpoint and the sign-in pages; [`endpoints`]: the endpoints alone; [`health`]: `/healthz`
//! and `/readyz` for the platform's probes), and the bearer-validated grant of a request as an extractor ([`Bearer`],
//! [`ScopedBearer`], and [`StepUpBearer`] for a resource that demands a strong or recent
//! sign-in, RFC 9470).
//!
//! Over mutual TLS, a request's client certificate is the
//! [`ClientCertificate`](crate::mtls::ClientCertificate) in its extensions, else in its
//! connection's data (`HttpServer::on_connect`): the endpoints bind tokens to it and the
//! extractors check a certificate-bound token against it (RFC 8705).
//!
//! ```no_run
//! # async fn run(server: grantor::AuthorizationServer) -> std::io::Result<()> {
//! use actix_web::{App, HttpServer, web};
//!
//! // Every endpoint at the server's paths, and the authorization endpoint's sign-in, approval
//! // and device pages in grantor's plain HTML; the host adds its API beside them (the server
//! // in the app data is for the extractors).
//! let site = grantor::signin::Site::new(&server);
//! HttpServer::new(move || {
//!     App::new()
//!         .app_data(web::Data::new(server.clone()))
//!         .configure(grantor::actix::routes(&site))
//! })
//! .bind("127.0.0.1:8080")?
//! .run()
//! .await
//! # }
//! ```
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use actix_web::{App, HttpResponse, web};
//! use grantor::AuthorizationServer;
//! use grantor::actix::{Bearer, RequiredAuthentication, RequiredScope, ScopedBearer, StepUpBearer};
//!
//! /// Handlers behind it need `profile`.
//! struct Profile;
//! impl RequiredScope for Profile {
//!     const SCOPE: &'static str = "profile";
//! }
//!
//! /// Handlers behind it need a second factor within five minutes (RFC 9470).
//! struct Strong;
//! impl RequiredAuthentication for Strong {
//!     const ACR_VALUES: &'static [&'static str] = &["urn:grantor:acr:mfa"];
//!     const MAX_AGE: Option<Duration> = Some(Duration::from_secs(300));
//! }
//!
//! async fn me(ScopedBearer(grant, ..): ScopedBearer<Profile>) -> HttpResponse {
//!     HttpResponse::Ok().body(grant.authorization.client_id.as_str().to_owned())
//! }
//!
//! async fn whoami(Bearer(grant): Bearer) -> String {
//!     grant.authorization.client_id.as_str().to_owned()
//! }
//!
//! async fn transfer(StepUpBearer(grant, ..): StepUpBearer<Strong>) -> String {
//!     grant.authorization.client_id.as_str().to_owned()
//! }
//!
//! fn app(server: AuthorizationServer) {
//!     // The extractors find the server in the app data (`web::Data` or the server itself).
//!     let _app = App::new()
//!         .app_data(web::Data::new(server))
//!         .route("/api/me", web::get().to(me))
//!         .route("/api/whoami", web::get().to(whoami))
//!         .route("/api/transfer", web::get().to(transfer));
//! }
//! ```

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpMessage, HttpRequest, HttpResponse, ResponseError, web};

use super::RoutePaths;
pub use super::{
    Bearer, READINESS_BOUND, Refusal, RequiredAuthentication, RequiredScope, ScopedBearer,
    StepUpBearer,
};
use crate::endpoint::bearer::{self, Presented, Required};
use crate::mtls::ClientCertificate;
use crate::server::AuthorizationServer;
use crate::signin::Site;
use crate::store::AccessGrant;

impl ResponseError for Refusal {
    fn status_code(&self) -> actix_web::http::StatusCode {
        status(&self.0)
    }

    fn error_response(&self) -> HttpResponse {
        builder(&self.0).body(self.0.body().clone())
    }
}

/// `response`'s status in actix-web's `http` 0.2 type (every `http` 1 status fits).
fn status(response: &http::Response<String>) -> actix_web::http::StatusCode {
    actix_web::http::StatusCode::from_u16(response.status().as_u16())
        .unwrap_or(actix_web::http::StatusCode::INTERNAL_SERVER_ERROR)
}

/// An actix response builder with `response`'s status and every header (repeated ones too).
/// actix-web writes the `Connection` header itself, so `Connection: close` becomes its
/// force-close.
fn builder(response: &http::Response<String>) -> actix_web::HttpResponseBuilder {
    let mut builder = HttpResponse::build(status(response));
    for (name, value) in response.headers() {
        if name == http::header::CONNECTION {
            if value.as_bytes().eq_ignore_ascii_case(b"close") {
                builder.force_close();
            }
            continue;
        }
        builder.append_header((name.as_str(), value.as_bytes()));
    }
    builder
}

type Extracted<T> = Pin<Box<dyn Future<Output = Result<T, Refusal>>>>;

impl FromRequest for Bearer {
    type Error = Refusal;
    type Future = Extracted<Self>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let found = Found::of(request);
        Box::pin(async move { found?.check(Required::default()).await.map(Bearer) })
    }
}

impl<R: RequiredScope> FromRequest for ScopedBearer<R> {
    type Error = Refusal;
    type Future = Extracted<Self>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let found = Found::of(request);
        Box::pin(async move {
            let required = super::required_scope::<R, Refusal>()?;
            let grant = found?.check(Required::scope(Some(&required))).await?;
            Ok(ScopedBearer(grant, PhantomData))
        })
    }
}

impl<R: RequiredAuthentication> FromRequest for StepUpBearer<R> {
    type Error = Refusal;
    type Future = Extracted<Self>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let found = Found::of(request);
        Box::pin(async move {
            let step_up = super::required_step_up::<R, Refusal>()?;
            let required = Required {
                scope: None,
                step_up: Some(&step_up),
            };
            let grant = found?.check(required).await?;
            Ok(StepUpBearer(grant, PhantomData))
        })
    }
}

/// What the check needs from the request, in `http` 1 types (actix-web 4 has its own): the
/// method and URI (for a DPoP proof), the headers it reads, and the client certificate (for a
/// certificate-bound token).
struct Found {
    server: AuthorizationServer,
    method: http::Method,
    uri: http::Uri,
    headers: http::HeaderMap,
    certificate: Option<ClientCertificate>,
}

impl Found {
    fn of(request: &HttpRequest) -> Result<Self, Refusal> {
        let server = request
            .app_data::<web::Data<AuthorizationServer>>()
            .map(|data| data.get_ref().clone())
            .or_else(|| request.app_data::<AuthorizationServer>().cloned())
            .ok_or_else(|| server_error("no AuthorizationServer in the app data"))?;
        let method = http::Method::from_bytes(request.method().as_str().as_bytes())
            .map_err(|_| server_error("an unreadable method"))?;
        let uri = http::Uri::try_from(request.uri().to_string())
            .map_err(|_| server_error("an unreadable URI"))?;
        // Only the headers the check reads: most requests carry a dozen others.
        let mut headers = http::HeaderMap::new();
        for name in bearer::READ_HEADERS {
            for value in request.headers().get_all(name.as_str()) {
                if let Ok(value) = http::HeaderValue::from_bytes(value.as_bytes()) {
                    headers.append(name.clone(), value);
                }
            }
        }
        Ok(Self {
            server,
            method,
            uri,
            headers,
            certificate: client_certificate(request),
        })
    }

    async fn check(self, required: Required<'_>) -> Result<AccessGrant, Refusal> {
        let presented = Presented {
            target: Some((&self.method, &self.uri)),
            headers: &self.headers,
            certificate: self.certificate.as_ref(),
        };
        self.server
            .check_bearer(presented, None, required)
            .await
            .map_err(Refusal::from)
    }
}

/// The client certificate of the request's connection (RFC 8705): the one the host put in the
/// request's extensions (a middleware, behind a TLS terminator it trusts), else the one in the
/// connection's data (set by `HttpServer::on_connect` from the TLS stream).
fn client_certificate(request: &HttpRequest) -> Option<ClientCertificate> {
    let certificate = request.extensions().get::<ClientCertificate>().cloned();
    certificate.or_else(|| request.conn_data::<ClientCertificate>().cloned())
}

/// A 500 for the host's own mistakes (no server in the app data).
fn server_error(why: &'static str) -> Refusal {
    let mut response = http::Response::new(format!(
        r#"{{"error":"server_error","error_description":"{why}"}}"#
    ));
    *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Refusal::from(response)
}

/// Every endpoint grantor serves, for [`App::configure`](actix_web::App::configure), each
/// where the metadata says it is (the issuer's own path, if it has one, then the server's
/// [`EndpointPaths`](crate::settings::EndpointPaths) path): token, revocation, introspection,
/// registration and each registered client's configuration (RFC 7591, 7592), pushed
/// authorization requests (RFC 9126), device authorization (RFC 8628), the metadata at
/// `/.well-known/oauth-authorization-server` followed by the issuer's path (RFC 8414 §3.1),
/// with JWT access tokens or OpenID Connect the JWKS, and with OpenID Connect userinfo and
/// `/.well-known/openid-configuration` (after the issuer's path).
/// Every method reaches grantor, which answers the ones an endpoint does not take with its own
/// 405. Bodies are read up to [`max_body_bytes`](AuthorizationServer::max_body_bytes): a longer
/// one gets grantor's 413. Endpoints the server was not configured for answer 404.
///
/// The authorization endpoint is not here: it hands over to the sign-in pages, which
/// [`routes`] mounts too.
pub fn endpoints(server: &AuthorizationServer) -> impl Fn(&mut web::ServiceConfig) + Clone {
    let server = server.clone();
    move |config: &mut web::ServiceConfig| {
        let settings = server.settings();
        let paths = &RoutePaths::of(settings);
        let routes: [(&str, Endpoint<AuthorizationServer>); 8] = [
            (&paths.token, |s, r| {
                Box::pin(async move { s.token(&r).await })
            }),
            (&paths.revocation, |s, r| {
                Box::pin(async move { s.revoke(&r).await })
            }),
            (&paths.introspection, |s, r| {
                Box::pin(async move { s.introspect(&r).await })
            }),
            (&paths.registration, |s, r| {
                Box::pin(async move { s.register(&r).await })
            }),
            (&paths.configuration, |s, r| {
                Box::pin(async move { s.client_configuration(&r).await })
            }),
            (&paths.pushed_requests, |s, r| {
                Box::pin(async move { s.par(&r).await })
            }),
            (&paths.device_authorization, |s, r| {
                Box::pin(async move { s.device_authorization(&r).await })
            }),
            (&paths.userinfo, |s, r| {
                Box::pin(async move { s.userinfo(&r).await })
            }),
        ];
        for (path, call) in routes {
            config.service(resource(path, &server, &server, call));
        }
        let metadata = server.clone();
        config.service(document(
            &settings.metadata_path(),
            web::route().to(move || {
                let response = metadata.metadata();
                async move { respond(response) }
            }),
        ));
        // RFC 9728 §3.1: each known resource's metadata, where its identifier puts it.
        for path in server.resource_metadata_paths() {
            let (resources, at) = (server.clone(), path.clone());
            config.service(document(
                &path,
                web::route().to(move || {
                    let response = resources.resource_metadata_at(&at);
                    let response = response.unwrap_or_else(crate::endpoint::render::not_found);
                    async move { respond(response) }
                }),
            ));
        }
        if let Some(path) = &paths.openid_configuration {
            let discovery = server.clone();
            config.service(document(
                path,
                web::route().to(move || {
                    let response = discovery.openid_configuration();
                    async move { respond(response) }
                }),
            ));
        }
        if let Some(path) = &paths.jwks {
            let jwks = server.clone();
            config.service(document(
                path,
                web::route().to(move || {
                    let jwks = jwks.clone();
                    async move { respond(jwks.jwks().await) }
                }),
            ));
        }
    }
}

/// A document served to `GET` and `HEAD` (actix sends no body to `HEAD`); any other method
/// gets 405 with `Allow`, as axum's `get` answers.
fn document(path: &str, route: actix_web::Route) -> actix_web::Resource {
    use actix_web::guard;
    web::resource(path)
        .route(route.guard(guard::Any(guard::Get()).or(guard::Head())))
        .default_service(web::to(|| async {
            HttpResponse::MethodNotAllowed()
                .insert_header((actix_web::http::header::ALLOW, "GET,HEAD"))
                .finish()
        }))
}

/// The probes a platform asks (Kubernetes, a load balancer), for
/// [`App::configure`](actix_web::App::configure) beside [`routes`]: `GET /healthz` answers
/// 200 while the process serves; `GET /readyz` answers 200 when the stores answer a read
/// through the client and token seams within [`READINESS_BOUND`],
/// else 503 ([`AuthorizationServer::ready`]). Both answer `text/plain`, kept by no cache.
///
/// ```no_run
/// # fn app(server: grantor::AuthorizationServer) {
/// use actix_web::App;
///
/// let site = grantor::signin::Site::new(&server);
/// let app = App::new()
///     .configure(grantor::actix::routes(&site))
///     .configure(grantor::actix::health(&server));
/// # let _ = app;
/// # }
/// ```
pub fn health(server: &AuthorizationServer) -> impl Fn(&mut web::ServiceConfig) + Clone {
    let server = server.clone();
    move |config: &mut web::ServiceConfig| {
        config.service(document(
            "/healthz",
            web::route().to(|| async { respond(super::healthz()) }),
        ));
        let server = server.clone();
        config.service(document(
            "/readyz",
            web::route().to(move || {
                let server = server.clone();
                async move { respond(super::readyz(&server).await) }
            }),
        ));
    }
}

/// Everything grantor serves, the browser's side too, for
/// [`App::configure`](actix_web::App::configure): [`endpoints`], and `site`'s authorization
/// endpoint, sign-in and approval forms and (with the device authorization grant) device
/// verification page, rendered with its [`Pages`](crate::signin::Pages). The host adds its own routes
/// beside them. (A service configuration rather than a `Scope`: a scope at `/` would answer
/// 404 for every path after it, the host's own included.)
///
/// The endpoints are where the metadata says, the forms at the site's paths as given. To
/// serve grantor under a prefix, give the issuer that path (`https://host/auth`: the
/// endpoints, the metadata and the device page move under it) and the forms the prefix
/// (`Site::sign_in_path("/auth/signin")`), and configure the app with these routes at its
/// root, not inside a `web::scope`: the pages' forms post to the paths they were given.
///
/// ```no_run
/// # async fn run(server: grantor::AuthorizationServer) -> std::io::Result<()> {
/// use actix_web::{App, HttpServer};
/// use grantor::signin::Site;
///
/// let site = Site::new(&server);
/// HttpServer::new(move || App::new().configure(grantor::actix::routes(&site)))
///     .bind("127.0.0.1:8080")?
///     .run()
///     .await
/// # }
/// ```
pub fn routes(site: &Site) -> impl Fn(&mut web::ServiceConfig) + Clone {
    let site = site.clone();
    move |config: &mut web::ServiceConfig| {
        let server = site.server();
        let pages: [(&str, Endpoint<Site>); 2] = [
            (site.authorization_path(), |s, r| {
                Box::pin(async move { s.authorize(&r).await })
            }),
            (site.approval_at(), |s, r| {
                Box::pin(async move { s.approve(&r).await })
            }),
        ];
        for (path, call) in pages {
            config.service(resource(path, server, &site, call));
        }
        // A host that signs people in itself serves its own form at the sign-in path.
        if site.serves_own_forms() {
            let forms: [(&str, Endpoint<Site>); 2] = [
                (site.sign_in_at(), |s, r| {
                    Box::pin(async move { s.sign_in(&r).await })
                }),
                (site.second_factor_at(), |s, r| {
                    Box::pin(async move { s.second_factor(&r).await })
                }),
            ];
            for (path, call) in forms {
                config.service(resource(path, server, &site, call));
            }
        }
        if let Some(device) = site.device_path() {
            config.service(resource(device, server, &site, |s, r| {
                Box::pin(async move { s.device(&r).await })
            }));
        }
        if server.settings().openid.is_some() {
            config.service(resource(site.end_session_path(), server, &site, |s, r| {
                Box::pin(async move { s.logout(&r).await })
            }));
        }
        endpoints(server)(config);
    }
}

/// An endpoint call on the request in `http` types, with the server or the [`Site`].
type Endpoint<T> =
    fn(T, http::Request<Bytes>) -> Pin<Box<dyn Future<Output = http::Response<String>>>>;

/// `call` at `path`, for every method, with the body read up to the server's limit.
fn resource<T: Clone + 'static>(
    path: &str,
    server: &AuthorizationServer,
    state: &T,
    call: Endpoint<T>,
) -> actix_web::Resource {
    let limit = web::PayloadConfig::new(server.max_body_bytes());
    let server = server.clone();
    let state = state.clone();
    web::resource(path).app_data(limit).route(web::route().to(
        move |request: HttpRequest, body: Result<Bytes, actix_web::Error>| {
            let server = server.clone();
            let state = state.clone();
            async move { answer(&server, state, &request, body, call).await }
        },
    ))
}

async fn answer<T>(
    server: &AuthorizationServer,
    state: T,
    request: &HttpRequest,
    body: Result<Bytes, actix_web::Error>,
    call: Endpoint<T>,
) -> HttpResponse {
    let body = match body {
        Ok(body) => body,
        Err(error) => {
            return match error.as_error::<PayloadError>() {
                Some(PayloadError::Overflow) => respond(server.payload_too_large()),
                _ => error.error_response(),
            };
        }
    };
    let mut builder = http::Request::builder()
        .method(request.method().as_str())
        .uri(request.uri().to_string());
    for (name, value) in request.headers() {
        builder = builder.header(name.as_str(), value.as_bytes());
    }
    // The caller's address for grantor: one the host set (behind a proxy it trusts), else the
    // connection's peer.
    let caller = request
        .extensions()
        .get::<crate::budget::CallerAddress>()
        .copied()
        .or_else(|| {
            request
                .peer_addr()
                .map(|peer| crate::budget::CallerAddress::new(peer.ip()))
        });
    if let Some(caller) = caller {
        builder = builder.extension(caller);
    }
    if let Some(certificate) = client_certificate(request) {
        builder = builder.extension(certificate);
    }
    match builder.body(body) {
        Ok(request) => respond(call(state, request).await),
        // actix parsed the same grammar: nothing to refuse here in practice.
        Err(_) => HttpResponse::BadRequest().finish(),
    }
}

/// Hands each request of a TLS connection the client certificate it presented (features
/// `actix` and `tls`), for grantor's routes and extractors: give it to
/// [`HttpServer::on_connect`](actix_web::HttpServer::on_connect) of a server bound with
/// `bind_rustls_0_23` and a [`server_config`](crate::tls::server_config). A connection
/// without TLS, or without a certificate, gets none.
///
/// ```no_run
/// # fn run(config: rustls::ServerConfig) -> std::io::Result<()> {
/// use actix_web::{App, HttpServer};
///
/// let server = HttpServer::new(App::new)
///     .on_connect(grantor::actix::client_certificate_on_connect)
///     .bind_rustls_0_23("127.0.0.1:8443", config)?;
/// # Ok(()) }
/// ```
#[cfg(feature = "tls")]
pub fn client_certificate_on_connect(
    connection: &dyn std::any::Any,
    extensions: &mut actix_web::dev::Extensions,
) {
    type Tls = actix_tls::accept::rustls_0_23::TlsStream<actix_web::rt::net::TcpStream>;
    if let Some(stream) = connection.downcast_ref::<Tls>()
        && let Some(certificate) = crate::tls::client_certificate(stream.get_ref().1)
    {
        extensions.insert(certificate);
    }
}

/// A grantor answer (any `http::Response<String>` its calls return) as an actix-web response:
/// status, every header (repeated ones too), body. For the host's own routes around grantor's
/// calls.
pub fn respond(response: http::Response<String>) -> HttpResponse {
    builder(&response).body(response.into_body())
}
