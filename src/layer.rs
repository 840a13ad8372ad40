//! A tower [`Layer`] that guards a service with bearer validation (RFC 6750), so an axum (or any
//! tower) service protects routes in one line:
//!
//! ```ignore
//! let app = Router::new()
//!     .route("/api/me", get(me))
//!     .route_layer(RequireBearer::new(server.clone()).scope(Scope::parse("profile")?));
//! ```
//!
//! With axum, prefer `route_layer` to `layer`: `Router::layer` also wraps the router's
//! fallback, so every path the router does not know would answer a 401 challenge instead of
//! 404, and a router merged into another hands its fallback on. grantor's own routers (the
//! `axum` glue) answer unknown paths with a fallback of their own, whatever is merged into them.
//!
//! Requests with a valid token reach the inner service with the token's [`AccessGrant`] in their
//! extensions; the others get grantor's 400/401/403 answer without reaching it, its challenge
//! naming the resource's metadata (RFC 9728 §5.1). A resource may demand a strong or recent
//! sign-in as well ([`RequireBearer::step_up`], RFC 9470). The layer answers `GET` of that metadata
//! itself (`/.well-known/oauth-protected-resource` and the resource's path) when the request
//! reaches it, so a client that meets the resource first finds the authorization server; under
//! `route_layer` only routed paths reach it, and grantor's axum router (or the host's own route)
//! serves the document.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};
use tower_layer::Layer;
use tower_service::Service;

use crate::endpoint::bearer::{Presented, Required};
use crate::scope::Scope;
use crate::server::AuthorizationServer;
use crate::step_up::StepUp;
use crate::store::AccessGrant;

/// The layer: wraps services in [`BearerService`].
#[derive(Debug, Clone)]
pub struct RequireBearer {
    server: AuthorizationServer,
    scope: Option<Scope>,
    audience: Option<String>,
    step_up: Option<StepUp>,
}

impl RequireBearer {
    /// Requires a valid bearer token from `server`.
    pub fn new(server: AuthorizationServer) -> Self {
        Self {
            server,
            scope: None,
            audience: None,
            step_up: None,
        }
    }

    /// Requires tokens meant for `audience` rather than the server's default audience
    /// (RFC 8707): the guarded service is that resource.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// Also requires every token of `scope`.
    pub fn scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope);
        self
    }

    /// Also demands of the token's sign-in what `step_up` says (RFC 9470): a token that falls
    /// short is answered 401 `insufficient_user_authentication`, its challenge naming the
    /// `acr_values` and `max_age` demanded (see
    /// [`AuthorizationServer::bearer_step_up`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, _) = grantor::doc_fixture::server().await;
    /// use std::time::Duration;
    /// use grantor::StepUp;
    /// use grantor::layer::RequireBearer;
    ///
    /// let strong = StepUp::new()
    ///     .acr_values(["urn:grantor:acr:mfa"])
    ///     .unwrap()
    ///     .max_age(Duration::from_secs(300));
    /// let layer = RequireBearer::new(server).step_up(strong);
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn step_up(mut self, step_up: StepUp) -> Self {
        self.step_up = Some(step_up);
        self
    }

    /// The metadata of the guarded resource (RFC 9728), when `request` is a `GET` or `HEAD` of
    /// its well-known path.
    fn metadata<B>(&self, request: &Request<B>) -> Option<Response<String>> {
        if !matches!(*request.method(), http::Method::GET | http::Method::HEAD) {
            return None;
        }
        let path = request.uri().path();
        if !path.starts_with(crate::endpoint::resource_metadata::WELL_KNOWN) {
            return None;
        }
        let resource = match &self.audience {
            Some(audience) => audience.as_str(),
            None => self.server.settings().resources.default.as_str(),
        };
        let url = self.server.resource_metadata_url(resource)?;
        url.ends_with(path)
            .then(|| self.server.protected_resource_metadata(resource))
    }
}

impl<S> Layer<S> for RequireBearer {
    type Service = BearerService<S>;

    fn layer(&self, service: S) -> Self::Service {
        BearerService {
            service,
            guard: self.clone(),
        }
    }
}

/// A service that lets through only requests with a valid bearer token.
#[derive(Debug, Clone)]
pub struct BearerService<S> {
    service: S,
    guard: RequireBearer,
}

impl<S, B, ResBody> Service<Request<B>> for BearerService<S>
where
    S: Service<Request<B>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
    ResBody: From<String>,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.service.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The clone that was polled ready is the one that must be called (tower's usual swap).
        let clone = self.service.clone();
        let mut service = std::mem::replace(&mut self.service, clone);
        let guard = self.guard.clone();
        if let Some(document) = guard.metadata(&request) {
            return Box::pin(async move { Ok(document.map(ResBody::from)) });
        }
        Box::pin(async move {
            let required = Required {
                scope: guard.scope.as_ref(),
                step_up: guard.step_up.as_ref(),
            };
            // Checked without the body, which need not be `Sync` to be held across the await.
            let (parts, body) = request.into_parts();
            let head = Request::from_parts(parts, ());
            let presented = Presented::of(&head);
            let audience = guard.audience.as_deref();
            let checked = guard
                .server
                .check_bearer(presented, audience, required)
                .await;
            let (parts, ()) = head.into_parts();
            let mut request = Request::from_parts(parts, body);
            match checked {
                Ok(grant) => {
                    request.extensions_mut().insert::<AccessGrant>(grant);
                    service.call(request).await
                }
                Err(refusal) => Ok(refusal.into_response().map(ResBody::from)),
            }
        })
    }
}
