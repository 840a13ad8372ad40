//! axum glue (feature `axum`): grantor as a [`Router`](::axum::Router) ([`router`]: every
//! endpoint and the sign-in pages; [`endpoints`]: the endpoints alone; [`health`]: `/healthz`
//! and `/readyz` for the platform's probes), and the
//! bearer-validated grant of a request as an extractor ([`Bearer`], [`ScopedBearer`], and
//! [`StepUpBearer`] for a resource that demands a strong or recent sign-in, RFC 9470).
//!
//! Over mutual TLS, a request's client certificate is the
//! [`ClientCertificate`](crate::mtls::ClientCertificate) in its extensions (put there by the
//! host's connection handling): the endpoints bind tokens to it and the extractors check a
//! certificate-bound token against it (RFC 8705).
//!
//! ```no_run
//! # async fn run(server: grantor::AuthorizationServer) -> std::io::Result<()> {
//! // Every endpoint at the server's paths, and the authorization endpoint's sign-in, approval
//! // and device pages in grantor's plain HTML; the host adds its API beside them.
//! let app: axum::Router = grantor::axum::router(&grantor::signin::Site::new(&server));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, app).await
//! # }
//! ```
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use axum::{Router, routing::get};
//! use grantor::AuthorizationServer;
//! use grantor::axum::{Bearer, RequiredAuthentication, RequiredScope, ScopedBearer, StepUpBearer};
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
//! async fn me(ScopedBearer(grant, ..): ScopedBearer<Profile>) -> String {
//!     grant.authorization.scope.as_str().to_owned()
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
//! fn routes(server: AuthorizationServer) -> Router {
//!     // The state gives the extractors the server (`FromRef`; here it is the state itself).
//!     Router::new()
//!         .route("/api/me", get(me))
//!         .route("/api/whoami", get(whoami))
//!         .route("/api/transfer", get(transfer))
//!         .with_state(server)
//! }
//! ```

#[cfg(feature = "tls")]
mod listener;

use std::marker::PhantomData;

use ::axum::Router;
use ::axum::body::Bytes;
use ::axum::extract::rejection::{BytesRejection, FailedToBufferBody};
use ::axum::extract::{DefaultBodyLimit, FromRef, FromRequestParts};
use ::axum::response::{IntoResponse, Response};
use ::axum::routing::{MethodRouter, any, get};
use http::request::Parts;

use super::RoutePaths;
pub use super::{
    Bearer, READINESS_BOUND, Refusal, RequiredAuthentication, RequiredScope, ScopedBearer,
    StepUpBearer,
};
use crate::endpoint::bearer::{Presented, Required};
use crate::server::AuthorizationServer;
use crate::signin::Site;
use crate::store::AccessGrant;
#[cfg(feature = "tls")]
pub use listener::{HANDSHAKE_TIMEOUT, MAX_HANDSHAKES, TlsListener, TlsPeer};

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (*self.0).map(::axum::body::Body::from)
    }
}

impl<S> FromRequestParts<S> for Bearer
where
    AuthorizationServer: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Refusal> {
        let server = AuthorizationServer::from_ref(state);
        check(&server, parts, Required::default()).await.map(Bearer)
    }
}

impl<S, R> FromRequestParts<S> for ScopedBearer<R>
where
    AuthorizationServer: FromRef<S>,
    S: Send + Sync,
    R: RequiredScope,
{
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Refusal> {
        let server = AuthorizationServer::from_ref(state);
        let required = super::required_scope::<R, Refusal>()?;
        let grant = check(&server, parts, Required::scope(Some(&required))).await?;
        Ok(ScopedBearer(grant, PhantomData))
    }
}

impl<S, R> FromRequestParts<S> for StepUpBearer<R>
where
    AuthorizationServer: FromRef<S>,
    S: Send + Sync,
    R: RequiredAuthentication,
{
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Refusal> {
        let server = AuthorizationServer::from_ref(state);
        let step_up = super::required_step_up::<R, Refusal>()?;
        let required = Required {
            scope: None,
            step_up: Some(&step_up),
        };
        let grant = check(&server, parts, required).await?;
        Ok(StepUpBearer(grant, PhantomData))
    }
}

async fn check(
    server: &AuthorizationServer,
    parts: &Parts,
    required: Required<'_>,
) -> Result<AccessGrant, Refusal> {
    let presented = Presented {
        target: Some((&parts.method, &parts.uri)),
        headers: &parts.headers,
        certificate: client_certificate(parts),
    };
    server
        .check_bearer(presented, None, required)
        .await
        .map_err(Refusal::from)
}

/// Every endpoint grantor serves, each where the metadata says it is (the issuer's own path,
/// if it has one, then the server's [`EndpointPaths`](crate::settings::EndpointPaths) path): token,
/// revocation, introspection, registration and each registered client's configuration (RFC
/// 7591, 7592), pushed authorization requests (RFC 9126), device authorization (RFC 8628), the
/// metadata at `/.well-known/oauth-authorization-server` followed by the issuer's path (RFC
/// 8414 §3.1), each known resource's metadata (RFC 9728 §3.1, at
/// `/.well-known/oauth-protected-resource` and the resource's path), with JWT access tokens or
/// OpenID Connect the JWKS, and with OpenID Connect
/// userinfo and `/.well-known/openid-configuration` (after the issuer's path). Every method reaches grantor, which
/// answers the ones an endpoint does not take with its own 405. Bodies are read up to
/// [`max_body_bytes`](AuthorizationServer::max_body_bytes): a longer one gets grantor's 413,
/// one that cannot be read axum's 400. Endpoints the server was not configured for answer 404.
///
/// A path nobody routes answers 404 through this router's own fallback. So a router merged
/// into it keeps its `.layer(...)` (`grantor::layer::RequireBearer`, feature `tower`, say,
/// which axum also wraps around the fallback) to its own routes: unknown paths do not become
/// 401 challenges. A router with a fallback of its own cannot be merged with this one (axum
/// panics: two fallbacks); set the host's fallback on the merged router instead, and prefer
/// [`route_layer`](::axum::Router::route_layer) for a guard that should cover routes only.
///
/// The authorization endpoint is not here: it hands over to the sign-in pages, which
/// [`router`] mounts too.
pub fn endpoints<S>(server: &AuthorizationServer) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let config = server.settings();
    let paths = &RoutePaths::of(config);
    let router = Router::new()
        .route(
            &paths.token,
            endpoint(server, server, |s, r| {
                Box::pin(async move { s.token(&r).await })
            }),
        )
        .route(
            &paths.revocation,
            endpoint(server, server, |s, r| {
                Box::pin(async move { s.revoke(&r).await })
            }),
        )
        .route(
            &paths.introspection,
            endpoint(server, server, |s, r| {
                Box::pin(async move { s.introspect(&r).await })
            }),
        )
        .route(
            &paths.registration,
            endpoint(server, server, |s, r| {
                Box::pin(async move { s.register(&r).await })
            }),
        )
        .route(
            &paths.configuration,
            endpoint(server, server, |s, r| {
                Box::pin(async move { s.client_configuration(&r).await })
            }),
        )
        .route(
            &paths.pushed_requests,
            endpoint(server, server, |s, r| {
                Box::pin(async move { s.par(&r).await })
            }),
        )
        .route(
            &paths.device_authorization,
            endpoint(server, server, |s, r| {
                Box::pin(async move { s.device_authorization(&r).await })
            }),
        )
        .route(
            &paths.userinfo,
            endpoint(server, server, |s, r| {
                Box::pin(async move { s.userinfo(&r).await })
            }),
        );
    let metadata = server.clone();
    let mut router = router.route(
        &config.metadata_path(),
        get(move || std::future::ready(metadata.metadata())),
    );
    // RFC 9728 §3.1: each known resource's metadata, where its identifier puts it.
    for path in server.resource_metadata_paths() {
        let (resources, at) = (server.clone(), path.clone());
        router = router.route(
            &path,
            get(move || {
                let document = resources.resource_metadata_at(&at);
                std::future::ready(document.unwrap_or_else(crate::endpoint::render::not_found))
            }),
        );
    }
    let router = match &paths.openid_configuration {
        Some(path) => {
            let discovery = server.clone();
            router.route(
                path,
                get(move || std::future::ready(discovery.openid_configuration())),
            )
        }
        None => router,
    };
    let router = match &paths.jwks {
        Some(path) => {
            let jwks = server.clone();
            router.route(
                path,
                get(move || {
                    let jwks = jwks.clone();
                    async move { jwks.jwks().await }
                }),
            )
        }
        None => router,
    };
    router
        .layer(DefaultBodyLimit::max(server.max_body_bytes()))
        .fallback(|| std::future::ready(crate::endpoint::render::not_found()))
}

/// Everything grantor serves, the browser's side too: [`endpoints`], and `site`'s
/// authorization endpoint, sign-in and approval forms and (with the device authorization
/// grant) device verification page, rendered with its [`Pages`](crate::signin::Pages). The host adds
/// its own routes (its API, its home page) beside them.
///
/// The endpoints are where the metadata says, the forms at the site's paths as given. To
/// serve grantor under a prefix, give the issuer that path (`https://host/auth`: the
/// endpoints, the metadata and the device page move under it) and the forms the prefix
/// (`Site::sign_in_path("/auth/signin")`), and merge this router at the root rather than
/// `nest` it: the pages' forms post to the paths they were given.
///
/// ```no_run
/// # async fn run(server: grantor::AuthorizationServer) -> std::io::Result<()> {
/// use grantor::signin::{PlainPages, Site};
///
/// let site = Site::new(&server).pages(PlainPages);
/// let app: axum::Router = grantor::axum::router(&site);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
pub fn router<S>(site: &Site) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let server = site.server();
    let mut router = Router::new()
        .route(
            site.authorization_path(),
            endpoint(server, site, |s, r| {
                Box::pin(async move { s.authorize(&r).await })
            }),
        )
        .route(
            site.approval_at(),
            endpoint(server, site, |s, r| {
                Box::pin(async move { s.approve(&r).await })
            }),
        );
    // A host that signs people in itself serves its own form at the sign-in path.
    if site.serves_own_forms() {
        router = router
            .route(
                site.sign_in_at(),
                endpoint(server, site, |s, r| {
                    Box::pin(async move { s.sign_in(&r).await })
                }),
            )
            .route(
                site.second_factor_at(),
                endpoint(server, site, |s, r| {
                    Box::pin(async move { s.second_factor(&r).await })
                }),
            );
    }
    if let Some(device) = site.device_path() {
        router = router.route(
            device,
            endpoint(server, site, |s, r| {
                Box::pin(async move { s.device(&r).await })
            }),
        );
    }
    if server.settings().openid.is_some() {
        router = router.route(
            site.end_session_path(),
            endpoint(server, site, |s, r| {
                Box::pin(async move { s.logout(&r).await })
            }),
        );
    }
    router
        .layer(DefaultBodyLimit::max(server.max_body_bytes()))
        .merge(endpoints(server))
}

/// The probes a platform asks (Kubernetes, a load balancer), for the host to mount beside
/// [`router`]: `GET /healthz` answers 200 while the process serves; `GET /readyz` answers 200
/// when the stores answer a read through the client and token seams within
/// [`READINESS_BOUND`], else 503
/// ([`AuthorizationServer::ready`]). Both answer `text/plain`, kept by no cache.
///
/// ```no_run
/// # fn app(server: grantor::AuthorizationServer) -> axum::Router {
/// let site = grantor::signin::Site::new(&server);
/// grantor::axum::router(&site).merge(grantor::axum::health(&server))
/// # }
/// ```
pub fn health<S>(server: &AuthorizationServer) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let server = server.clone();
    Router::new()
        .route("/healthz", get(|| std::future::ready(super::healthz())))
        .route(
            "/readyz",
            get(move || {
                let server = server.clone();
                async move { super::readyz(&server).await }
            }),
        )
}

/// A boxed endpoint call (boxed once per request, as axum boxes handlers anyway).
type Call = std::pin::Pin<Box<dyn std::future::Future<Output = http::Response<String>> + Send>>;

/// An endpoint taking any method: the request with its body read, handed to `call` with
/// `state` (the server, or the [`Site`]).
fn endpoint<T, S>(
    server: &AuthorizationServer,
    state: &T,
    call: fn(T, http::Request<Bytes>) -> Call,
) -> MethodRouter<S>
where
    T: Clone + Send + Sync + 'static,
    S: Clone + Send + Sync + 'static,
{
    let server = server.clone();
    let state = state.clone();
    any(
        move |mut parts: Parts, body: Result<Bytes, BytesRejection>| {
            let state = state.clone();
            let server = server.clone();
            async move {
                caller_address(&mut parts);
                match body {
                    Ok(body) => call(state, http::Request::from_parts(parts, body)).await,
                    Err(rejection) => refuse(&server, rejection),
                }
            }
        },
    )
}

/// The caller's address for grantor ([`CallerAddress`](crate::CallerAddress)), from axum's
/// `ConnectInfo<SocketAddr>` when the app is served with
/// `into_make_service_with_connect_info::<SocketAddr>()` (or `ConnectInfo<TlsPeer>` over a
/// `TlsListener`, feature `tls`, which also gives the request its client certificate); a
/// host that set a `CallerAddress` or a `ClientCertificate` itself (behind a proxy it trusts)
/// keeps its own.
fn caller_address(parts: &mut Parts) {
    #[cfg(feature = "tls")]
    if let Some(peer) = parts
        .extensions
        .get::<axum::extract::ConnectInfo<TlsPeer>>()
        .map(|info| info.0.clone())
    {
        if parts
            .extensions
            .get::<crate::budget::CallerAddress>()
            .is_none()
        {
            let caller = crate::budget::CallerAddress::new(peer.address.ip());
            parts.extensions.insert(caller);
        }
        if let Some(certificate) = peer.certificate
            && parts
                .extensions
                .get::<crate::mtls::ClientCertificate>()
                .is_none()
        {
            parts.extensions.insert(certificate);
        }
        return;
    }
    if parts
        .extensions
        .get::<crate::budget::CallerAddress>()
        .is_some()
    {
        return;
    }
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip());
    if let Some(peer) = peer {
        parts
            .extensions
            .insert(crate::budget::CallerAddress::new(peer));
    }
}

/// The client certificate of a request: one the host set in its extensions (behind a proxy
/// it trusts), else the one its TLS connection presented (`ConnectInfo<TlsPeer>`, feature
/// `tls`).
fn client_certificate(parts: &Parts) -> Option<&crate::mtls::ClientCertificate> {
    let set = parts.extensions.get::<crate::mtls::ClientCertificate>();
    #[cfg(feature = "tls")]
    let set = set.or_else(|| {
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<TlsPeer>>()?;
        peer.0.certificate.as_ref()
    });
    set
}

/// A body that could not be read: grantor's 413 for one over its limit, axum's 400 otherwise.
fn refuse(server: &AuthorizationServer, rejection: BytesRejection) -> http::Response<String> {
    if let BytesRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(_)) = rejection {
        return server.payload_too_large();
    }
    let mut response = http::Response::new(rejection.body_text());
    *response.status_mut() = rejection.status();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
