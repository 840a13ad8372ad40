//! What the framework glue shares: the extractors' types (each framework module implements its
//! traits for them), and the scope and the sign-in an extractor requires.

use std::marker::PhantomData;
use std::time::Duration;

use crate::endpoint::bearer::BearerRefusal;
use crate::scope::Scope;
use crate::server::AuthorizationServer;
use crate::settings::Settings;
use crate::step_up::StepUp;
use crate::store::AccessGrant;

/// How long `/readyz` waits for the stores ([`AuthorizationServer::ready`]) before it answers
/// 503: a load balancer's own probe timeout is usually a few seconds, so it hears the 503
/// rather than giving up.
pub const READINESS_BOUND: Duration = Duration::from_secs(2);

/// `/healthz`: the process answers, whatever its stores do (a liveness probe: restart the
/// process only when this fails).
pub(crate) fn healthz() -> http::Response<String> {
    probe_answer(http::StatusCode::OK, "ok")
}

/// `/readyz`: 200 when the stores answered a read through the client and the token seams
/// within [`READINESS_BOUND`], else 503 (a readiness probe: send no traffic here meanwhile).
/// The store's error goes to the host's log, never into the answer.
pub(crate) async fn readyz(server: &AuthorizationServer) -> http::Response<String> {
    match server.ready(tokio::time::sleep(READINESS_BOUND)).await {
        Ok(()) => probe_answer(http::StatusCode::OK, "ready"),
        Err(error) => {
            tracing::warn!(cause = %error, "grantor: not ready");
            probe_answer(http::StatusCode::SERVICE_UNAVAILABLE, "not ready")
        }
    }
}

/// A probe's plain-text answer, kept by no cache.
fn probe_answer(status: http::StatusCode, text: &'static str) -> http::Response<String> {
    let mut response = http::Response::new(text.to_owned());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    response
}

/// Where the glue serves each endpoint: the path of the URL the metadata gives it (the
/// issuer's own path, then the endpoint's [`EndpointPaths`](crate::settings::EndpointPaths) path).
pub(crate) struct RoutePaths {
    pub(crate) token: String,
    pub(crate) revocation: String,
    pub(crate) introspection: String,
    pub(crate) registration: String,
    /// Each registered client's configuration endpoint (RFC 7592): the registration path,
    /// `/`, and the client id as a route parameter.
    pub(crate) configuration: String,
    pub(crate) pushed_requests: String,
    pub(crate) device_authorization: String,
    /// The JWKS document's path, when the server signs (JWT access tokens or ID tokens; else
    /// nothing is served there).
    pub(crate) jwks: Option<String>,
    /// The UserInfo endpoint (OpenID Connect Core §5.3; 404 without OpenID Connect).
    pub(crate) userinfo: String,
    /// The discovery document (OpenID Connect Discovery 1.0 §4: the issuer's path, then
    /// `/.well-known/openid-configuration`), when OpenID Connect is served.
    pub(crate) openid_configuration: Option<String>,
}

impl RoutePaths {
    pub(crate) fn of(config: &Settings) -> Self {
        let paths = &config.endpoints;
        let registration = config.served_path(&paths.registration);
        Self {
            token: config.served_path(&paths.token),
            revocation: config.served_path(&paths.revocation),
            introspection: config.served_path(&paths.introspection),
            configuration: format!("{}/{{client_id}}", registration.trim_end_matches('/')),
            registration,
            pushed_requests: config.served_path(&paths.pushed_requests),
            device_authorization: config.served_path(&paths.device_authorization),
            jwks: (config.jwt_access_tokens || config.openid.is_some())
                .then(|| config.served_path(&paths.jwks)),
            userinfo: config.served_path(&paths.userinfo),
            openid_configuration: config
                .openid
                .is_some()
                .then(|| config.served_path("/.well-known/openid-configuration")),
        }
    }
}

/// The grant of a request's valid bearer (or DPoP) token for the server's default audience,
/// any scope: an extractor for axum and actix-web handlers. Refused with grantor's RFC 6750
/// answer ([`Refusal`]).
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

/// The same, its sign-in satisfying what `R` demands (RFC 9470): an authentication context
/// class among `R::ACR_VALUES`, at most `R::MAX_AGE` ago. A token that falls short (no user
/// sign-in, another class, too long ago) is refused 401 `insufficient_user_authentication`, its
/// challenge naming the `acr_values` and `max_age` demanded (RFC 9470 §3).
pub struct StepUpBearer<R: RequiredAuthentication>(pub AccessGrant, pub PhantomData<R>);

impl<R: RequiredAuthentication> std::fmt::Debug for StepUpBearer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StepUpBearer")
            .field(&self.0)
            .field(&R::ACR_VALUES)
            .field(&R::MAX_AGE)
            .finish()
    }
}

/// An RFC 6750 refusal (401 with `WWW-Authenticate: Bearer …`, 400 or 403), as grantor
/// rendered it: the extractors' rejection.
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

impl From<BearerRefusal> for Refusal {
    fn from(refusal: BearerRefusal) -> Self {
        Self(Box::new(refusal.into_response()))
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bearer token refused ({})", self.0.status())
    }
}

/// The scope a [`ScopedBearer`] extractor requires, as a type (one
/// per set of handlers): `const SCOPE: &str = "profile email";`.
pub trait RequiredScope: Send + Sync + 'static {
    /// Space-separated scope tokens (RFC 6749 §3.3), all of which the token must carry.
    const SCOPE: &'static str;
}

/// The sign-in a [`StepUpBearer`] extractor demands (RFC 9470), as a type (one per set of
/// handlers):
///
/// ```
/// use std::time::Duration;
/// use grantor::RequiredAuthentication;
///
/// /// A sign-in with a second factor within the last five minutes.
/// struct Strong;
/// impl RequiredAuthentication for Strong {
///     const ACR_VALUES: &'static [&'static str] = &["urn:grantor:acr:mfa"];
///     const MAX_AGE: Option<Duration> = Some(Duration::from_secs(300));
/// }
/// ```
pub trait RequiredAuthentication: Send + Sync + 'static {
    /// The acceptable authentication context classes (`acr`), in the order the resource
    /// prefers them; empty (the default): any class. Each as [`StepUp::acr_values`] takes it.
    const ACR_VALUES: &'static [&'static str] = &[];
    /// The oldest the sign-in may be; `None` (the default): any age.
    const MAX_AGE: Option<Duration> = None;
}

/// `R::SCOPE` parsed; a malformed one is the host's mistake, answered 500 rather than let
/// through.
fn required_scope<R: RequiredScope, E: From<http::Response<String>>>() -> Result<Scope, E> {
    Scope::parse(R::SCOPE)
        .map_err(|_| E::from(host_mistake("the handler's required scope is malformed")))
}

/// What `R` demands, as a [`StepUp`]; a malformed class is the host's mistake, answered 500
/// rather than let through.
fn required_step_up<R: RequiredAuthentication, E: From<http::Response<String>>>()
-> Result<StepUp, E> {
    let step_up = StepUp::new()
        .acr_values(R::ACR_VALUES.iter().copied())
        .map_err(|_| {
            E::from(host_mistake(
                "the handler's required acr value is malformed",
            ))
        })?;
    Ok(match R::MAX_AGE {
        Some(max_age) => step_up.max_age(max_age),
        None => step_up,
    })
}

/// The 500 for a mistake in the host's own code (`why`: grantor's fixed text, nothing to
/// escape).
fn host_mistake(why: &'static str) -> http::Response<String> {
    let mut response = http::Response::new(format!(
        r#"{{"error":"server_error","error_description":"{why}"}}"#
    ));
    *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(feature = "axum")]
pub mod axum;

#[cfg(feature = "actix")]
pub mod actix;
