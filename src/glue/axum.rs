//! axum glue (feature `axum`): the bearer-validated grant of a request as an extractor.
//!
//! ```no_run
//! use axum::{Router, routing::get};
//! use grantor::AuthorizationServer;
//! use grantor::axum::{Bearer, RequiredScope, ScopedBearer};
//!
//! /// Handlers behind it need `profile`.
//! struct Profile;
//! impl RequiredScope for Profile {
//!     const SCOPE: &'static str = "profile";
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
//! fn routes(server: AuthorizationServer) -> Router {
//!     // The state gives the extractors the server (`FromRef`; here it is the state itself).
//!     Router::new()
//!         .route("/api/me", get(me))
//!         .route("/api/whoami", get(whoami))
//!         .with_state(server)
//! }
//! ```

use std::marker::PhantomData;

use ::axum::extract::{FromRef, FromRequestParts};
use ::axum::response::{IntoResponse, Response};
use http::request::Parts;

pub use super::RequiredScope;
use crate::endpoint::bearer::{self, Presented};
use crate::scope::Scope;
use crate::server::AuthorizationServer;
use crate::store::AccessGrant;

/// The grant of a request's valid bearer (or DPoP) token for the server's default audience,
/// any scope. Refused with grantor's RFC 6750 answer ([`Refusal`]).
#[derive(Debug)]
pub struct Bearer(pub AccessGrant);

/// The same, requiring every scope token of `R::SCOPE`: a token without them is refused 403
/// `insufficient_scope` (RFC 6750 §3.1).
pub struct ScopedBearer<R: RequiredScope>(pub AccessGrant, pub PhantomData<R>);

impl<R: RequiredScope> std::fmt::Debug for ScopedBearer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ScopedBearer")
            .field(&self.0)
            .field(&R::SCOPE)
            .finish()
    }
}

/// An RFC 6750 refusal (401 with `WWW-Authenticate: Bearer …`, 400 or 403), as grantor
/// rendered it.
#[derive(Debug)]
pub struct Refusal(Box<http::Response<String>>);

impl Refusal {
    /// The refusal as grantor rendered it.
    pub fn response(&self) -> &http::Response<String> {
        &self.0
    }
}

impl From<http::Response<String>> for Refusal {
    fn from(response: http::Response<String>) -> Self {
        Self(Box::new(response))
    }
}

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
        check(&server, parts, None).await.map(Bearer)
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
        let grant = check(&server, parts, Some(&required)).await?;
        Ok(ScopedBearer(grant, PhantomData))
    }
}

async fn check(
    server: &AuthorizationServer,
    parts: &Parts,
    required: Option<&Scope>,
) -> Result<AccessGrant, Refusal> {
    let presented = Presented {
        target: Some((&parts.method, &parts.uri)),
        headers: &parts.headers,
    };
    bearer::check(&server.inner, presented, None, required)
        .await
        .map_err(Refusal::from)
}
