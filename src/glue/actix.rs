//! actix-web glue (feature `actix`): the bearer-validated grant of a request as an extractor.
//!
//! ```no_run
//! use actix_web::{App, HttpResponse, web};
//! use grantor::AuthorizationServer;
//! use grantor::actix::{Bearer, RequiredScope, ScopedBearer};
//!
//! /// Handlers behind it need `profile`.
//! struct Profile;
//! impl RequiredScope for Profile {
//!     const SCOPE: &'static str = "profile";
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
//! fn app(server: AuthorizationServer) {
//!     // The extractors find the server in the app data (`web::Data` or the server itself).
//!     let _app = App::new()
//!         .app_data(web::Data::new(server))
//!         .route("/api/me", web::get().to(me))
//!         .route("/api/whoami", web::get().to(whoami));
//! }
//! ```

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, HttpResponse, ResponseError, web};

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

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bearer token refused ({})", self.0.status())
    }
}

impl ResponseError for Refusal {
    fn status_code(&self) -> actix_web::http::StatusCode {
        actix_web::http::StatusCode::from_u16(self.0.status().as_u16())
            .unwrap_or(actix_web::http::StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let mut builder = HttpResponse::build(self.status_code());
        for (name, value) in self.0.headers() {
            builder.append_header((name.as_str(), value.as_bytes()));
        }
        builder.body(self.0.body().clone())
    }
}

type Extracted<T> = Pin<Box<dyn Future<Output = Result<T, Refusal>>>>;

impl FromRequest for Bearer {
    type Error = Refusal;
    type Future = Extracted<Self>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let found = Found::of(request);
        Box::pin(async move { found?.check(None).await.map(Bearer) })
    }
}

impl<R: RequiredScope> FromRequest for ScopedBearer<R> {
    type Error = Refusal;
    type Future = Extracted<Self>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let found = Found::of(request);
        Box::pin(async move {
            let required = super::required_scope::<R, Refusal>()?;
            let grant = found?.check(Some(&required)).await?;
            Ok(ScopedBearer(grant, PhantomData))
        })
    }
}

/// What the check needs from the request, in `http` 1 types (actix-web 4 has its own).
struct Found {
    server: AuthorizationServer,
    method: http::Method,
    uri: http::Uri,
    headers: http::HeaderMap,
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
        let mut headers = http::HeaderMap::new();
        for (name, value) in request.headers() {
            if let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(name.as_str().as_bytes()),
                http::HeaderValue::from_bytes(value.as_bytes()),
            ) {
                headers.append(name, value);
            }
        }
        Ok(Self {
            server,
            method,
            uri,
            headers,
        })
    }

    async fn check(self, required: Option<&Scope>) -> Result<AccessGrant, Refusal> {
        let presented = Presented {
            target: Some((&self.method, &self.uri)),
            headers: &self.headers,
        };
        bearer::check(&self.server.inner, presented, None, required)
            .await
            .map_err(Refusal::from)
    }
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
