//! [`AuthorizationServer`]: the configured server and its builder.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Request, Response};

use crate::authorize::{self, Authorize, Decision, PendingAuthorization};
use crate::bearer;
use crate::clock::{Clock, SystemClock};
use crate::endpoint::form::Limits;
use crate::endpoint::token;
use crate::endpoint::{introspect, revoke};
use crate::grant::client_auth::SecretCache;
use crate::metadata::{self, EndpointPaths};
use crate::scope::Scope;
use crate::store::AccessGrant;
use crate::store::{ClientStore, TokenIssuer, UserId, UserStore};
use crate::throttle::SignInThrottle;

/// Which clients must use PKCE at the authorization endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PkcePolicy {
    /// Public clients must; confidential clients may (the default).
    PublicClients,
    /// Every client must use PKCE with `response_type=code` (RFC 9700 §2.1.1 recommends it).
    AllClients,
}

/// The authorization server: hand it requests, get responses.
///
/// Cheap to clone (an `Arc` inside); share one between a host's handlers.
#[derive(Clone)]
pub struct AuthorizationServer {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) config: Config,
    pub(crate) clients: Arc<dyn ClientStore>,
    pub(crate) users: Arc<dyn UserStore>,
    pub(crate) tokens: Arc<dyn TokenIssuer>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) secret_cache: SecretCache,
    pub(crate) throttle: SignInThrottle,
}

/// Settings with DESIGN.md's defaults.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) issuer: String,
    /// The issuer form-urlencoded, as the `iss` parameter of every authorization response.
    pub(crate) issuer_encoded: String,
    pub(crate) realm: String,
    pub(crate) basic_challenge: HeaderValue,
    pub(crate) bearer_refusals: bearer::Refusals,
    pub(crate) endpoints: EndpointPaths,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) code_lifetime: Duration,
    pub(crate) access_token_lifetime: Duration,
    pub(crate) refresh_token_lifetime: Duration,
    pub(crate) authorization_request_lifetime: Duration,
    pub(crate) limits: Limits,
    pub(crate) allow_plain_pkce: bool,
    pub(crate) pkce: PkcePolicy,
}

/// The longest code lifetime RFC 6749 §4.1.2 allows ("a maximum lifetime of 10 minutes is
/// RECOMMENDED"); the builder refuses more.
pub const MAX_CODE_LIFETIME: Duration = Duration::from_secs(600);

impl AuthorizationServer {
    /// Starts configuring a server.
    pub fn builder() -> AuthorizationServerBuilder {
        AuthorizationServerBuilder::default()
    }

    /// The authorization endpoint (RFC 6749 §3.1), `GET` with a query or `POST` with a form.
    ///
    /// Validates the request and answers one of: [`Authorize::SignIn`] with a pending
    /// authorization for the host's sign-in page; [`Authorize::Redirect`], an error the client
    /// receives at its redirect URI; [`Authorize::Reject`], an error the host shows without
    /// redirecting (unknown client, bad or unregistered redirect URI).
    pub async fn authorize<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Authorize {
        authorize::authorize(&self.inner, request).await
    }

    /// Completes a pending authorization after the host's sign-in (and approval page, when
    /// [`PendingAuthorization::needs_approval`]) with the signed-in user and their decision:
    /// the redirect to the client with a `code`, the implicit grant's token in the fragment, or
    /// an error such as `access_denied`.
    pub async fn decide(
        &self,
        pending: PendingAuthorization,
        user: &UserId,
        decision: Decision,
    ) -> Response<String> {
        authorize::decide(&self.inner, pending, user, decision).await
    }

    /// The token endpoint (RFC 6749 §3.2): every grant, always a ready response (token JSON or
    /// an RFC 6749 §5.2 error).
    pub async fn token<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        token::token(&self.inner, request).await
    }

    /// Token revocation (RFC 7009), `POST`: a client revokes its own access or refresh token.
    /// Revoking a refresh token revokes its family and the access tokens issued from it.
    /// Unknown tokens, and other clients' tokens, answer 200 and are left alone.
    pub async fn revoke<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        revoke::revoke(&self.inner, request).await
    }

    /// Token introspection (RFC 7662), `POST`, client authentication required: an active
    /// token's `scope`, `client_id`, `username`, `token_type`, `exp`, `iat`, `sub`, `jti`;
    /// anything else is exactly `{"active":false}`.
    pub async fn introspect<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        introspect::introspect(&self.inner, request).await
    }

    /// Bearer token validation for resource servers (RFC 6750): the grant behind the request's
    /// `Authorization: Bearer` token, checked to carry every token of `required` scope, or the
    /// ready refusal: 401 with a bare `WWW-Authenticate: Bearer realm=".."` challenge without
    /// credentials, 401 `invalid_token` for a bad, expired or revoked token, 403
    /// `insufficient_scope` (with the `scope` needed), 400 `invalid_request` for a malformed
    /// header.
    pub async fn bearer<B>(
        &self,
        request: &Request<B>,
        required: Option<&Scope>,
    ) -> Result<AccessGrant, Response<String>> {
        bearer::check(&self.inner, request.headers(), required).await
    }

    /// [`AuthorizationServer::bearer`] on headers alone.
    pub async fn bearer_headers(
        &self,
        headers: &HeaderMap,
        required: Option<&Scope>,
    ) -> Result<AccessGrant, Response<String>> {
        bearer::check(&self.inner, headers, required).await
    }

    /// The authorization server metadata (RFC 8414) as `application/json`, for
    /// `GET /.well-known/oauth-authorization-server`.
    pub fn metadata(&self) -> Response<String> {
        metadata::document(&self.inner.config)
    }

    /// The largest request body the endpoints accept. A host that stops reading a body at this
    /// size answers with [`AuthorizationServer::payload_too_large`].
    pub fn max_body_bytes(&self) -> usize {
        self.inner.config.limits.max_input
    }

    /// The 413 `invalid_request` answer for a body over [`AuthorizationServer::max_body_bytes`],
    /// for hosts that cap the body while reading it.
    pub fn payload_too_large(&self) -> Response<String> {
        let error = crate::error::OAuthError::invalid_request(
            "the request is larger than this server accepts",
        )
        .with_status(http::StatusCode::PAYLOAD_TOO_LARGE);
        crate::endpoint::render::error(&error, &self.inner.config.basic_challenge)
    }

    /// The issuer identifier this server was built with.
    pub fn issuer(&self) -> &str {
        &self.inner.config.issuer
    }
}

impl fmt::Debug for AuthorizationServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationServer")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Configures an [`AuthorizationServer`]. Defaults: code 60 s, access token 1 h, refresh token
/// 30 days, authorization request 10 min; request body ≤ 16 KiB, each parameter ≤ 4 KiB; PKCE
/// `S256` required for public clients, `plain` refused; 10 failed sign-ins per account per 10
/// minutes; the system clock.
#[must_use = "call .build() to get the server"]
pub struct AuthorizationServerBuilder {
    issuer: Option<String>,
    realm: Option<String>,
    endpoints: EndpointPaths,
    scopes_supported: Vec<String>,
    clients: Option<Arc<dyn ClientStore>>,
    users: Option<Arc<dyn UserStore>>,
    tokens: Option<Arc<dyn TokenIssuer>>,
    clock: Arc<dyn Clock>,
    code_lifetime: Duration,
    access_token_lifetime: Duration,
    refresh_token_lifetime: Duration,
    authorization_request_lifetime: Duration,
    max_body: usize,
    max_param: usize,
    allow_plain_pkce: bool,
    pkce: PkcePolicy,
    throttle: SignInThrottle,
}

impl Default for AuthorizationServerBuilder {
    fn default() -> Self {
        Self {
            issuer: None,
            realm: None,
            endpoints: EndpointPaths::default(),
            scopes_supported: Vec::new(),
            clients: None,
            users: None,
            tokens: None,
            clock: Arc::new(SystemClock),
            code_lifetime: Duration::from_secs(60),
            access_token_lifetime: Duration::from_secs(3600),
            refresh_token_lifetime: Duration::from_secs(30 * 24 * 3600),
            authorization_request_lifetime: Duration::from_secs(600),
            max_body: 16 * 1024,
            max_param: 4 * 1024,
            allow_plain_pkce: false,
            pkce: PkcePolicy::PublicClients,
            throttle: SignInThrottle::default(),
        }
    }
}

impl AuthorizationServerBuilder {
    /// The issuer identifier (RFC 8414 §2): an `http` or `https` URL without query or fragment.
    /// Required. Sent as `iss` in authorization responses (RFC 9207).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The realm of the `WWW-Authenticate` Basic and Bearer challenges (default: the issuer).
    pub fn realm(mut self, realm: impl Into<String>) -> Self {
        self.realm = Some(realm.into());
        self
    }

    /// Where the endpoints are served, for the metadata document (default: the
    /// `/api/oauth/...` paths).
    pub fn endpoints(mut self, endpoints: EndpointPaths) -> Self {
        self.endpoints = endpoints;
        self
    }

    /// The scopes listed as `scopes_supported` in the metadata (default: none listed).
    pub fn scopes_supported(mut self, scopes: &Scope) -> Self {
        self.scopes_supported = scopes.iter().map(str::to_owned).collect();
        self
    }

    /// The client store. Required.
    pub fn clients(mut self, clients: Arc<dyn ClientStore>) -> Self {
        self.clients = Some(clients);
        self
    }

    /// The user store. Required.
    pub fn users(mut self, users: Arc<dyn UserStore>) -> Self {
        self.users = Some(users);
        self
    }

    /// The token issuer. Required.
    pub fn tokens(mut self, tokens: Arc<dyn TokenIssuer>) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// The clock (default: [`SystemClock`]).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// How long an authorization code may be redeemed (default 60 s, at most 10 min).
    pub fn code_lifetime(mut self, lifetime: Duration) -> Self {
        self.code_lifetime = lifetime;
        self
    }

    /// How long an access token is valid (default 1 h).
    pub fn access_token_lifetime(mut self, lifetime: Duration) -> Self {
        self.access_token_lifetime = lifetime;
        self
    }

    /// How long a refresh token is valid (default 30 days); each rotation starts a new one.
    pub fn refresh_token_lifetime(mut self, lifetime: Duration) -> Self {
        self.refresh_token_lifetime = lifetime;
        self
    }

    /// How long a pending authorization may wait for the user's sign-in (default 10 min).
    pub fn authorization_request_lifetime(mut self, lifetime: Duration) -> Self {
        self.authorization_request_lifetime = lifetime;
        self
    }

    /// The largest request body (and authorization query) accepted, in bytes (default 16 KiB;
    /// larger bodies get 413).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// The largest decoded parameter accepted, in bytes (default 4 KiB).
    pub fn max_parameter_bytes(mut self, bytes: usize) -> Self {
        self.max_param = bytes;
        self
    }

    /// Accepts `code_challenge_method=plain` (RFC 7636 §4.2). Off by default: `plain` protects
    /// nothing once the authorization request leaks.
    pub fn allow_plain_pkce(mut self, allow: bool) -> Self {
        self.allow_plain_pkce = allow;
        self
    }

    /// Which clients must use PKCE (default [`PkcePolicy::PublicClients`]).
    pub fn pkce_policy(mut self, policy: PkcePolicy) -> Self {
        self.pkce = policy;
        self
    }

    /// How failed password attempts are throttled per account, at the password grant and in
    /// [`SignInFlow`](crate::SignInFlow) (default: 10 failures per 10 minutes).
    pub fn sign_in_throttle(mut self, throttle: SignInThrottle) -> Self {
        self.throttle = throttle;
        self
    }

    /// Checks the configuration and builds the server.
    pub fn build(self) -> Result<AuthorizationServer, ConfigError> {
        let issuer = self.issuer.ok_or(ConfigError::Missing("issuer"))?;
        check_issuer(&issuer)?;
        let realm = self.realm.unwrap_or_else(|| issuer.clone());
        let basic_challenge = basic_challenge(&realm)?;
        let bearer_refusals = bearer::Refusals::new(&realm).ok_or(ConfigError::Realm)?;
        if self.code_lifetime.is_zero() || self.code_lifetime > MAX_CODE_LIFETIME {
            return Err(ConfigError::CodeLifetime);
        }
        let lifetimes = [
            self.access_token_lifetime,
            self.refresh_token_lifetime,
            self.authorization_request_lifetime,
        ];
        if lifetimes.iter().any(|l| l.as_secs() == 0) {
            return Err(ConfigError::ZeroLifetime);
        }
        if self.max_param == 0 || self.max_body < self.max_param {
            return Err(ConfigError::Limits);
        }
        let paths = &self.endpoints;
        let all_paths = [
            &paths.authorization,
            &paths.token,
            &paths.revocation,
            &paths.introspection,
        ];
        if !all_paths.iter().all(|p| check_path(p)) {
            return Err(ConfigError::EndpointPath);
        }
        let config = Config {
            issuer_encoded: url::form_urlencoded::byte_serialize(issuer.as_bytes()).collect(),
            issuer,
            realm,
            basic_challenge,
            bearer_refusals,
            endpoints: self.endpoints,
            scopes_supported: self.scopes_supported,
            code_lifetime: self.code_lifetime,
            access_token_lifetime: self.access_token_lifetime,
            refresh_token_lifetime: self.refresh_token_lifetime,
            authorization_request_lifetime: self.authorization_request_lifetime,
            limits: Limits {
                max_input: self.max_body,
                max_param: self.max_param,
            },
            allow_plain_pkce: self.allow_plain_pkce,
            pkce: self.pkce,
        };
        Ok(AuthorizationServer {
            inner: Arc::new(Inner {
                config,
                clients: self.clients.ok_or(ConfigError::Missing("clients"))?,
                users: self.users.ok_or(ConfigError::Missing("users"))?,
                tokens: self.tokens.ok_or(ConfigError::Missing("tokens"))?,
                clock: self.clock,
                secret_cache: SecretCache::new(),
                throttle: self.throttle,
            }),
        })
    }
}

fn check_issuer(issuer: &str) -> Result<(), ConfigError> {
    let url = url::Url::parse(issuer).map_err(|_| ConfigError::Issuer)?;
    let ok = matches!(url.scheme(), "http" | "https")
        && url.host().is_some()
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none();
    if ok { Ok(()) } else { Err(ConfigError::Issuer) }
}

/// An absolute path: it joins the issuer into an absolute URL.
fn check_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.starts_with("//")
        && path
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'?' | b'#' | b'"' | b'\\'))
}

fn basic_challenge(realm: &str) -> Result<HeaderValue, ConfigError> {
    if realm
        .chars()
        .any(|c| c == '"' || c == '\\' || !(' '..='~').contains(&c))
    {
        return Err(ConfigError::Realm);
    }
    HeaderValue::from_str(&format!("Basic realm=\"{realm}\"")).map_err(|_| ConfigError::Realm)
}

/// A configuration the builder refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A required setting is missing.
    #[error("the {0} setting is required")]
    Missing(&'static str),
    /// The issuer is not an http(s) URL without query, fragment or credentials.
    #[error("the issuer must be an http(s) URL without query, fragment or credentials")]
    Issuer,
    /// The realm holds a quote, backslash or non-printable character.
    #[error("the realm must be printable ASCII without '\"' or '\\'")]
    Realm,
    /// The code lifetime is zero or over ten minutes.
    #[error("the code lifetime must be between 1 second and 10 minutes")]
    CodeLifetime,
    /// An endpoint path is not an absolute path without query or fragment.
    #[error("endpoint paths must start with '/' and carry no query or fragment")]
    EndpointPath,
    /// A lifetime is under one second.
    #[error("lifetimes must be at least one second")]
    ZeroLifetime,
    /// The parameter limit is zero or over the body limit.
    #[error("the parameter limit must be positive and no larger than the body limit")]
    Limits,
}
