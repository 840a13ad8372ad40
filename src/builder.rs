//! The builder: [`AuthorizationServerBuilder`] with grantor's safe defaults, the one place that
//! knows every layer. It checks the settings into [`Settings`](crate::settings::Settings),
//! renders what the endpoints send once, and wires the seams, the features and the server
//! together; nothing below it imports it.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::events::Events;
use crate::exchange::ExchangePolicy;
use crate::hash::HashingPools;
use crate::registration::RegistrationPolicy;
use crate::scope::Scope;
use crate::server::AuthorizationServer;
use crate::settings::DeviceFlow;
use crate::settings::PushedRequests;
use crate::settings::{PkcePolicy, Profile};
use crate::store::{
    Admin, AttemptCounter, ClientStore, ConsentStore, KeyEncryptionKey, KeyStore, SessionStore,
    SingleUseStore, TokenIssuer, UserAdmin, UserSessionStore, UserStore,
};
use crate::throttle::{CLIENT_SECRETS, SignInThrottle};

mod build;
mod check;
mod protocols;
mod seams;

use crate::settings::EndpointPaths;

pub use check::ConfigError;

/// Configures an [`AuthorizationServer`](crate::AuthorizationServer). Defaults: code 60 s,
/// access token 1 h, refresh token 30 days, authorization request 10 min; request body ≤ 16
/// KiB, each parameter ≤ 4 KiB; PKCE `S256` required for public clients, `plain` refused; 10
/// failed sign-ins per account per 10 minutes; the system clock. Every seam comes from
/// [`store`](Self::store) or its own setter; the state every node shares (sessions, attempt
/// counts, single-use values) is never silently this process's memory: see
/// [`single_node`](Self::single_node).
#[must_use = "call .build() to get the server"]
pub struct AuthorizationServerBuilder {
    issuer: Option<String>,
    realm: Option<String>,
    endpoints: EndpointPaths,
    scopes_supported: Vec<String>,
    clients: Option<Arc<dyn ClientStore>>,
    client_cache: Option<Duration>,
    events: Option<Arc<dyn Events>>,
    users: Option<Arc<dyn UserStore>>,
    user_admin: Option<Arc<dyn UserAdmin>>,
    /// Whether `user_admin` came with `store`'s users (and goes if other users are set).
    user_admin_from_store: bool,
    /// Checks passwords against what the user store keeps.
    password_verifier: Option<Arc<dyn crate::store::PasswordVerifier>>,
    /// Whether a right password kept in an older scheme is rehashed with Argon2id.
    rehash_passwords: bool,
    usernames: crate::settings::Usernames,
    acr: crate::settings::AcrLevels,
    second_factor: Option<Arc<dyn crate::store::SecondFactor>>,
    tokens: Option<Arc<dyn TokenIssuer>>,
    /// The memory store handed to `store`, if it was one: called in place where it is a seam.
    memory: Option<Arc<crate::memory::MemoryStore>>,
    sessions: Option<Arc<dyn SessionStore>>,
    single_use: Option<Arc<dyn SingleUseStore>>,
    attempts: Option<Arc<dyn AttemptCounter>>,
    keys: Option<Arc<dyn KeyStore>>,
    user_sessions: Option<Arc<dyn UserSessionStore>>,
    consents: Option<Arc<dyn ConsentStore>>,
    /// Where outbound requests go (back-channel logout, client ID metadata documents).
    outbound: Option<Arc<dyn crate::outbound::Outbound>>,
    /// Set when client ID metadata documents are taken.
    client_documents: Option<crate::settings::ClientIdDocuments>,
    key_encryption: Option<KeyEncryptionKey>,
    /// The host said key material may rest in the clear in a durable key store.
    keys_in_clear: bool,
    single_node: bool,
    /// How long a browser stays signed in (zero: no single sign-on).
    session_ttl: Duration,
    /// How long an approval is remembered (zero: never).
    consent_ttl: Duration,
    /// The host said an `http://` issuer on a non-loopback host is meant.
    insecure_http_issuer: bool,
    clock: Arc<dyn Clock>,
    code_lifetime: Duration,
    access_token_lifetime: Duration,
    refresh_token_lifetime: Duration,
    authorization_request_lifetime: Duration,
    /// `None`: the profile's own ([`FAPI2_REFRESH_GRACE`] under FAPI 2.0, zero otherwise).
    refresh_grace: Option<Duration>,
    family_lifetime: Duration,
    max_body: usize,
    max_param: usize,
    /// `None`: the profile's own.
    pkce: Option<PkcePolicy>,
    throttle: SignInThrottle,
    client_throttle: SignInThrottle,
    hashing: HashingPools,
    profile: Profile,
    audience: Option<String>,
    resources: Vec<String>,
    /// JWT access tokens, DPoP, `private_key_jwt` key resolution: what the features were given.
    features: protocols::Features,
    /// Whether access tokens are bound to the token request's client certificate (RFC 8705).
    certificate_bound_tokens: bool,
    registration: Option<RegistrationPolicy>,
    registry: Option<Arc<dyn Admin>>,
    /// Whether `registry` came with `store`'s clients (and goes if other clients are set).
    registry_from_store: bool,
    /// Where uses of self-registered clients are recorded (with `registry`, from `store`).
    activity: Option<Arc<dyn crate::store::ClientActivity>>,
    pushed_requests: Option<PushedRequests>,
    device: Option<DeviceFlow>,
    exchange: Option<Arc<dyn ExchangePolicy>>,
    id_jag: Option<Arc<dyn crate::id_jag::IdJagPolicy>>,
}

impl AuthorizationServer {
    /// Starts configuring a server.
    ///
    /// ```
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.issuer(), "https://auth.example");
    /// ```
    pub fn builder() -> AuthorizationServerBuilder {
        AuthorizationServerBuilder::default()
    }
}

impl std::fmt::Debug for AuthorizationServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationServerBuilder")
            .field("issuer", &self.issuer)
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}

impl Default for AuthorizationServerBuilder {
    fn default() -> Self {
        Self {
            issuer: None,
            realm: None,
            endpoints: EndpointPaths::default(),
            scopes_supported: Vec::new(),
            clients: None,
            client_cache: None,
            events: None,
            users: None,
            user_admin: None,
            user_admin_from_store: false,
            password_verifier: None,
            rehash_passwords: true,
            usernames: crate::settings::Usernames::email(),
            acr: crate::settings::AcrLevels::default(),
            second_factor: None,
            tokens: None,
            memory: None,
            sessions: None,
            single_use: None,
            attempts: None,
            keys: None,
            user_sessions: None,
            consents: None,
            outbound: None,
            client_documents: None,
            key_encryption: None,
            keys_in_clear: false,
            single_node: false,
            session_ttl: Duration::from_secs(86_400),
            consent_ttl: Duration::from_secs(365 * 86_400),
            insecure_http_issuer: false,
            clock: Arc::new(SystemClock),
            code_lifetime: Duration::from_secs(60),
            access_token_lifetime: Duration::from_secs(3600),
            refresh_token_lifetime: Duration::from_secs(30 * 24 * 3600),
            authorization_request_lifetime: Duration::from_secs(600),
            refresh_grace: None,
            family_lifetime: Duration::from_secs(90 * 24 * 3600),
            max_body: 16 * 1024,
            max_param: 4 * 1024,
            pkce: None,
            throttle: SignInThrottle::default(),
            client_throttle: SignInThrottle::new(20, Duration::from_secs(300))
                .counted_as(CLIENT_SECRETS),
            hashing: HashingPools::default(),
            profile: Profile::OAuth2,
            audience: None,
            resources: Vec::new(),
            features: protocols::Features::default(),
            certificate_bound_tokens: false,
            registration: None,
            registry: None,
            registry_from_store: false,
            activity: None,
            pushed_requests: None,
            device: None,
            exchange: None,
            id_jag: None,
        }
    }
}

impl AuthorizationServerBuilder {
    /// The issuer identifier (RFC 8414 §2): an `https` URL without query or fragment, or an
    /// `http` one on a loopback host (`127.0.0.1`, `[::1]`, `localhost`) for development; any
    /// other `http` issuer is refused ([`ConfigError::InsecureIssuer`]) unless
    /// [`insecure_http_issuer`](Self::insecure_http_issuer) says it is meant. Required. Sent as
    /// `iss` in authorization responses (RFC 9207).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Accepts an `http://` issuer on a host that is not loopback: the host serves plain HTTP
    /// on purpose (a demo, a test network), knowing that tokens, codes and passwords then cross
    /// the network readable and that the sign-in cookie loses `Secure` and the `__Host-` prefix.
    /// Without it, [`build`](Self::build) refuses such an issuer (RFC 9700 §2.6, RFC 6749
    /// §3.1: TLS is required).
    ///
    /// ```
    /// use grantor::{AuthorizationServer, ConfigError, MemoryStore};
    ///
    /// let builder = || AuthorizationServer::builder()
    ///     .issuer("http://auth.internal")
    ///     .store(MemoryStore::new());
    /// assert_eq!(builder().build().unwrap_err(), ConfigError::InsecureIssuer);
    /// assert!(builder().insecure_http_issuer().build().is_ok());
    /// ```
    pub fn insecure_http_issuer(mut self) -> Self {
        self.insecure_http_issuer = true;
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

    /// How long a refresh token is valid (default 30 days): the idle (sliding) lifetime of a
    /// grant. Every refresh rotates the token and the new one lives this long again, so a grant
    /// used at least this often lives on, up to its absolute
    /// [`family_lifetime`](Self::family_lifetime), and one left unused this long is gone (as
    /// Duende's sliding and Keycloak's idle refresh lifetimes). Every store keeps each refresh
    /// token's own expiry, so nothing else needs keeping.
    #[doc(alias = "refresh_idle_ttl")]
    #[doc(alias = "sliding_refresh_token_lifetime")]
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

    /// PKCE (RFC 7636): which clients must use it and whether `plain` is taken (default: the
    /// profile's, [`PkcePolicy::PublicClients`] under [`Profile::OAuth2`] and
    /// [`PkcePolicy::AllClients`] under [`Profile::OAuth21`]). A policy the profile does not
    /// allow is refused by [`build`](Self::build), never overridden.
    ///
    /// ```
    /// use grantor::{AuthorizationServer, ConfigError, MemoryStore};
    /// use grantor::settings::{PkcePolicy, Profile};
    ///
    /// let builder = || {
    ///     AuthorizationServer::builder()
    ///         .issuer("https://auth.example")
    ///         .store(MemoryStore::new())
    /// };
    /// assert!(builder().pkce_policy(PkcePolicy::AllClients).build().is_ok());
    /// let conflicting = builder()
    ///     .profile(Profile::OAuth21)
    ///     .pkce_policy(PkcePolicy::PublicClients)
    ///     .build();
    /// assert_eq!(conflicting.unwrap_err(), ConfigError::PkceUnderOAuth21);
    /// ```
    pub fn pkce_policy(mut self, policy: PkcePolicy) -> Self {
        self.pkce = Some(policy);
        self
    }

    /// How failed authentications of a client with a host-supplied (Argon2id-verified) secret
    /// are throttled per client id, through the same attempt counter (default: 20 failures per
    /// 5 minutes). Past the limit the client's secrets are refused unchecked until the window
    /// ends, except one it authenticated with recently (remembered by this node): a flood of
    /// wrong secrets cannot keep the hashing threads busy, and a running client keeps working.
    pub fn client_auth_throttle(mut self, throttle: SignInThrottle) -> Self {
        self.client_throttle = throttle.counted_as(CLIENT_SECRETS);
        self
    }

    /// How long after a refresh token's rotation the same client may present it again as a
    /// retry of a lost answer (default zero: never; every reuse revokes the family; under a FAPI
    /// 2.0 [profile](Self::profile),
    /// [`FAPI2_REFRESH_GRACE`](crate::settings::FAPI2_REFRESH_GRACE)). Within the
    /// window the family rotates once more and the pair the lost answer carried is revoked, so
    /// exactly one pair stays live; past it, or from another client, reuse revokes the family
    /// (RFC 9700 §4.14.2). A few seconds cover a lost answer; keep it short: at most
    /// [`MAX_REFRESH_GRACE`](crate::settings::MAX_REFRESH_GRACE), since within the window a stolen, rotated token is taken for a
    /// retry instead of revealing the theft.
    pub fn refresh_grace(mut self, grace: Duration) -> Self {
        self.refresh_grace = Some(grace);
        self
    }

    /// How long a grant's refresh tokens may keep it alive in all, from its first refresh token
    /// (default 90 days): past it the family's tokens are refused however often they were
    /// refreshed, and no refresh token is issued to outlive it.
    pub fn family_lifetime(mut self, lifetime: Duration) -> Self {
        self.family_lifetime = lifetime;
        self
    }

    /// Which OAuth the server speaks (default [`Profile::OAuth2`]). Under
    /// [`Profile::OAuth21`], implicit and password are refused whatever a client was agreed,
    /// PKCE `S256` is required from every client, and a [PKCE policy](Self::pkce_policy) other
    /// than [`PkcePolicy::AllClients`] is a configuration error.
    ///
    /// ```
    /// use grantor::{AuthorizationServer, MemoryStore};
    /// use grantor::settings::Profile;
    ///
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example.com")
    ///     .store(MemoryStore::new())
    ///     .profile(Profile::OAuth21)
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The audience of the tokens the server issues (default: the issuer): the resource it
    /// serves, such as `https://example.com/api` (RFC 8707). A client registered as a
    /// [resource server](crate::client::ClientBuilder::resource_server) for it may introspect every
    /// token; introspection answers it as `aud`. A `resource` names it as it names the
    /// [other resources](Self::resources): after normalisation, and tokens carry it as written
    /// here.
    pub fn default_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// Resources besides the [default audience](Self::default_audience) that tokens may be
    /// aimed at with the `resource` parameter (RFC 8707): absolute URIs without a fragment.
    /// A `resource` naming anything else is `invalid_target`; a client may further be
    /// [limited](crate::client::ClientBuilder::resource) to some of them.
    ///
    /// A `resource` names a known resource when the two are equal after RFC 3986 §6.2.2 and
    /// §6.2.3 normalisation: scheme and host lowercased, the default port dropped (`:443` for
    /// `https`, `:80` for `http`), an empty path made `/`, percent-encoding normalised
    /// (unreserved characters decoded, hex digits uppercased) and dot segments removed. So
    /// `HTTPS://FILES.example:443` names `https://files.example/`. Paths stay distinct
    /// (`https://files.example/v1` is not `https://files.example/v1/`), a query is part of the
    /// resource, and a URI without an authority (`urn:example:files`) is compared after
    /// lowercasing its scheme alone. Every token carries the resource as registered here (in
    /// `aud`, at introspection and in JWT access tokens), never the request's spelling; of two
    /// registered spellings of one resource the first is kept.
    ///
    /// ```
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .default_audience("https://auth.example/api")
    ///     .resources(["https://files.example/"])
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn resources<I, S>(mut self, resources: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.resources.extend(resources.into_iter().map(Into::into));
        self
    }

    /// How many threads this server verifies passwords and Argon2id client secrets on, and how
    /// many checks may wait for them (default [`HashingPools::default`]: see
    /// [`crate::hash`]). The threads start at the server's first check and end when it is
    /// dropped; two servers in one process share none.
    ///
    /// ```
    /// use grantor::hash::HashingPools;
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// let mut pools = HashingPools::default();
    /// pools.user_threads = 2;
    /// pools.client_threads = 1;
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .hashing_pools(pools)
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn hashing_pools(mut self, pools: HashingPools) -> Self {
        self.hashing = pools;
        self
    }

    /// How failed password attempts are throttled per account, at the password grant and in
    /// [`AuthorizationServer::sign_in`](crate::AuthorizationServer::sign_in) (default: 10 failures per 10 minutes).
    pub fn sign_in_throttle(mut self, throttle: SignInThrottle) -> Self {
        self.throttle = throttle;
        self
    }

    /// Hands every [event](crate::events) (tokens issued, refreshed and revoked, replays and
    /// reuse detected, sign-ins, throttled accounts, refused client credentials, registered
    /// clients) to `events`. The default, [`TracingEvents`](crate::events::TracingEvents),
    /// emits them through `tracing` (target `grantor::events`).
    pub fn events(mut self, events: Arc<dyn Events>) -> Self {
        self.events = Some(events);
        self
    }
}
