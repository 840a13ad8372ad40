//! The builder: [`AuthorizationServerBuilder`] with DESIGN.md's defaults, the one place that
//! knows every layer. It checks the settings into [`Settings`](crate::settings::Settings),
//! renders what the endpoints send once, and wires the seams, the features and the server
//! together; nothing below it imports it.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::device::DeviceFlow;
use crate::events::Events;
use crate::exchange::ExchangePolicy;
use crate::hash::HashingPools;
use crate::par::PushedRequests;
use crate::registration::RegistrationPolicy;
use crate::scope::Scope;
use crate::server::AuthorizationServer;
use crate::settings::{PkcePolicy, Profile};
use crate::store::{
    Admin, AttemptCounter, ClientStore, KeyEncryptionKey, KeyStore, SessionStore, SingleUseStore,
    TokenIssuer, UserAdmin, UserStore,
};
use crate::throttle::SignInThrottle;

mod build;
mod check;

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
    tokens: Option<Arc<dyn TokenIssuer>>,
    sessions: Option<Arc<dyn SessionStore>>,
    single_use: Option<Arc<dyn SingleUseStore>>,
    attempts: Option<Arc<dyn AttemptCounter>>,
    keys: Option<Arc<dyn KeyStore>>,
    key_encryption: Option<KeyEncryptionKey>,
    single_node: bool,
    clock: Arc<dyn Clock>,
    code_lifetime: Duration,
    access_token_lifetime: Duration,
    refresh_token_lifetime: Duration,
    authorization_request_lifetime: Duration,
    refresh_grace: Duration,
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
    #[cfg(feature = "jwt")]
    jwt: Option<crate::jwt::JwtAccessTokens>,
    #[cfg(feature = "dpop")]
    dpop: Option<crate::dpop::Dpop>,
    registration: Option<RegistrationPolicy>,
    registry: Option<Arc<dyn Admin>>,
    par: Option<PushedRequests>,
    device: Option<DeviceFlow>,
    exchange: Option<Arc<dyn ExchangePolicy>>,
    #[cfg(feature = "private-key-jwt")]
    client_keys: Option<Arc<dyn crate::client_assertion::ClientKeyResolver>>,
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
            tokens: None,
            sessions: None,
            single_use: None,
            attempts: None,
            keys: None,
            key_encryption: None,
            single_node: false,
            clock: Arc::new(SystemClock),
            code_lifetime: Duration::from_secs(60),
            access_token_lifetime: Duration::from_secs(3600),
            refresh_token_lifetime: Duration::from_secs(30 * 24 * 3600),
            authorization_request_lifetime: Duration::from_secs(600),
            refresh_grace: Duration::ZERO,
            family_lifetime: Duration::from_secs(90 * 24 * 3600),
            max_body: 16 * 1024,
            max_param: 4 * 1024,
            pkce: None,
            throttle: SignInThrottle::default(),
            client_throttle: SignInThrottle::new(20, Duration::from_secs(300)),
            hashing: HashingPools::default(),
            profile: Profile::OAuth2,
            audience: None,
            resources: Vec::new(),
            #[cfg(feature = "jwt")]
            jwt: None,
            #[cfg(feature = "dpop")]
            dpop: None,
            registration: None,
            registry: None,
            par: None,
            device: None,
            exchange: None,
            #[cfg(feature = "private-key-jwt")]
            client_keys: None,
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

    /// Where [`AuthorizationServer::add_user`](crate::AuthorizationServer::add_user) and
    /// [`set_password`](crate::AuthorizationServer::set_password) keep accounts: the
    /// store-only side of the [`users`](Self::users) seam. Set by [`store`](Self::store) with
    /// the users; without it those calls are refused.
    pub fn user_admin(mut self, admin: Arc<dyn UserAdmin>) -> Self {
        self.user_admin = Some(admin);
        self
    }

    /// The token issuer. Required.
    pub fn tokens(mut self, tokens: Arc<dyn TokenIssuer>) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Every seam from one store that implements them all, such as
    /// [`MemoryStore`](crate::MemoryStore) or the SQL stores: clients, users, tokens, sign-in
    /// sessions, attempt counters and single-use values, and its [`Admin`] API as the
    /// [client registry](Self::client_registry).
    ///
    /// A seam set before, whatever the order of the calls, is kept: `.users(mine).store(sql)`
    /// signs users in against `mine` and keeps everything else in `sql`, as
    /// `.store(sql).users(mine)` does. The store's [`Admin`] API becomes the client registry
    /// only when its clients are the server's (no [`clients`](Self::clients) set before), and
    /// its [`UserAdmin`] the [user admin](Self::user_admin) only when its users are, so
    /// registration never writes where lookups do not read.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// let users = Arc::new(MemoryStore::new()); // the host's own user store, say
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .users(users)
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn store<S>(mut self, store: S) -> Self
    where
        S: ClientStore
            + UserStore
            + UserAdmin
            + TokenIssuer
            + SessionStore
            + AttemptCounter
            + SingleUseStore
            + KeyStore
            + Admin
            + 'static,
    {
        let store = Arc::new(store);
        if self.clients.is_none() {
            self.clients = Some(store.clone());
            self.registry.get_or_insert(store.clone());
        }
        if self.users.is_none() {
            self.users = Some(store.clone());
            self.user_admin.get_or_insert(store.clone());
        }
        self.tokens.get_or_insert(store.clone());
        self.sessions.get_or_insert(store.clone());
        self.single_use.get_or_insert(store.clone());
        self.keys.get_or_insert(store.clone());
        self.attempts.get_or_insert(store);
        self
    }

    /// This server is the deployment's only node: the [sessions](Self::sessions),
    /// [attempt counter](Self::attempt_counter), [single-use values](Self::single_use) and
    /// [key material](Self::keys) not given may live in this process's memory. Without it, [`build`](Self::build) refuses
    /// ([`ConfigError::SharedState`]) to start with any of them missing, since a second node
    /// would see none of it: a form sealed by one node would not open on another, and each
    /// node would count password guesses on its own. [`store`](Self::store) sets them all.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use grantor::{AuthorizationServer, ConfigError, MemoryStore};
    ///
    /// let store = Arc::new(MemoryStore::new()); // say, the host's own durable stores
    /// let builder = || {
    ///     AuthorizationServer::builder()
    ///         .issuer("https://auth.example")
    ///         .clients(store.clone())
    ///         .users(store.clone())
    ///         .tokens(store.clone())
    /// };
    /// assert_eq!(builder().build().unwrap_err(), ConfigError::SharedState("sessions"));
    /// assert!(builder().single_node().build().is_ok());
    /// ```
    pub fn single_node(mut self) -> Self {
        self.single_node = true;
        self
    }

    /// Where single-use values live: the marks that make each sign-in form, DPoP proof and
    /// client assertion serve once, pushed requests, device flows. Required unless
    /// [`single_node`](Self::single_node) (then this process's memory by default); give every
    /// node the same shared store, or a proof spent on one node is fresh on another.
    pub fn single_use(mut self, single_use: Arc<dyn SingleUseStore>) -> Self {
        self.single_use = Some(single_use);
        self
    }

    /// Where key material lives: the keys that seal sign-in forms, the JWT signing keys of
    /// [`JwtAccessTokens::rotating`](crate::jwt::JwtAccessTokens::rotating), the DPoP nonces.
    /// Required unless [`single_node`](Self::single_node) (then this process's memory by
    /// default); give every node the same shared store, or a form sealed by one node does not
    /// open on another. What it keeps is secret at rest: see
    /// [`encrypt_keys_at_rest`](Self::encrypt_keys_at_rest).
    pub fn keys(mut self, keys: Arc<dyn KeyStore>) -> Self {
        self.keys = Some(keys);
        self
    }

    /// Encrypts every piece of key material under `key` (XChaCha20-Poly1305, bound to its
    /// name) before it reaches the [key seam](Self::keys), so that whoever reads the database
    /// without `key` can neither open sign-in forms nor sign tokens, and whoever writes it
    /// cannot plant a key. Keep `key` outside the database.
    ///
    /// Material the store already holds in the clear (from before encryption was turned on)
    /// does not open: each request that needs it fails with 503 until it expires (a sealing
    /// key after three days, a signing key after its period) or is deleted from the key table
    /// (`grantor_keys`), after which fresh material is made under `key`.
    ///
    /// ```
    /// use grantor::store::KeyEncryptionKey;
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// // In a deployment, read from a secret the database never sees.
    /// let key = KeyEncryptionKey::from_base64(&KeyEncryptionKey::generate_base64().unwrap()).unwrap();
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .encrypt_keys_at_rest(key)
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn encrypt_keys_at_rest(mut self, key: KeyEncryptionKey) -> Self {
        self.key_encryption = Some(key);
        self
    }

    /// Where sign-in sessions live. Required unless [`single_node`](Self::single_node) (then
    /// this process's memory by default, which needs sticky sessions behind a load balancer);
    /// give every node the same shared store.
    pub fn sessions(mut self, sessions: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// Where the throttle counts failed sign-ins. Required unless
    /// [`single_node`](Self::single_node) (then this process's memory by default, so each node
    /// would count on its own); give every node the same shared store.
    pub fn attempt_counter(mut self, attempts: Arc<dyn AttemptCounter>) -> Self {
        self.attempts = Some(attempts);
        self
    }

    /// Where self-registered clients are registered, replaced and removed (RFC 7591, RFC
    /// 7592): the [`Admin`] API of the store behind [`clients`](Self::clients). Set by
    /// [`store`](Self::store); required with a [`registration`](Self::registration) policy.
    pub fn client_registry(mut self, registry: Arc<dyn Admin>) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Serves dynamic client registration (RFC 7591) and client management (RFC 7592) under
    /// `policy`, at the [registration path](EndpointPaths::registration), and lists it as
    /// `registration_endpoint` in the metadata. Without it (the default),
    /// [`register`](crate::AuthorizationServer::register) and
    /// [`client_configuration`](crate::AuthorizationServer::client_configuration) answer 404.
    pub fn registration(mut self, policy: RegistrationPolicy) -> Self {
        self.registration = Some(policy);
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
        self.client_throttle = throttle;
        self
    }

    /// How long after a refresh token's rotation the same client may present it again as a
    /// retry of a lost answer (default zero: never; every reuse revokes the family). Within the
    /// window the family rotates once more and the pair the lost answer carried is revoked, so
    /// exactly one pair stays live; past it, or from another client, reuse revokes the family
    /// (RFC 9700 §4.14.2). A few seconds cover a lost answer; keep it short: at most
    /// [`MAX_REFRESH_GRACE`](crate::settings::MAX_REFRESH_GRACE), since within the window a stolen, rotated token is taken for a
    /// retry instead of revealing the theft.
    pub fn refresh_grace(mut self, grace: Duration) -> Self {
        self.refresh_grace = grace;
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
    /// token; introspection answers it as `aud`.
    pub fn default_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// Resources besides the [default audience](Self::default_audience) that tokens may be
    /// aimed at with the `resource` parameter (RFC 8707): absolute URIs without a fragment.
    /// A `resource` naming anything else is `invalid_target`; a client may further be
    /// [limited](crate::client::ClientBuilder::resource) to some of them.
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

    /// Issues access tokens as JWTs (RFC 9068) signed by `settings`' keys, publishes those
    /// keys ([`AuthorizationServer::jwks`](crate::AuthorizationServer::jwks), `jwks_uri` in the metadata), and validates bearer
    /// JWTs by their signature and claims. The keys' rotation period must be at least the
    /// access-token lifetime. Feature `jwt`; see [`crate::jwt`].
    #[cfg(feature = "jwt")]
    pub fn jwt_access_tokens(mut self, settings: crate::jwt::JwtAccessTokens) -> Self {
        self.jwt = Some(settings);
        self
    }

    /// Accepts DPoP proofs (RFC 9449) with `settings`: bound access tokens (`token_type: DPoP`),
    /// bound refresh tokens for public clients, `Authorization: DPoP` at
    /// [`bearer`](crate::AuthorizationServer::bearer), and
    /// `dpop_signing_alg_values_supported` in the metadata. Without it a `DPoP` header is
    /// ignored (RFC 9449 §5). Proof ids are spent in the single-use store, so nodes sharing it
    /// refuse each other's replays. Feature `dpop`; see [`crate::dpop`].
    #[cfg(feature = "dpop")]
    pub fn dpop(mut self, settings: crate::dpop::Dpop) -> Self {
        self.dpop = Some(settings);
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
}

impl AuthorizationServerBuilder {
    /// Remembers each client the client store found for `ttl`, so that a request does not look
    /// its client up again (over a database, a round trip saved on nearly every request). Off
    /// by default. Only found clients are kept, at most
    /// [`CLIENT_CACHE_CAPACITY`](crate::store::CLIENT_CACHE_CAPACITY), the least recently used going
    /// first; an unknown `client_id` always asks the store. Changes through the server
    /// (registration management, [secret
    /// rotation](crate::AuthorizationServer::rotate_client_secret)) forget the client at once;
    /// a change made past the server (in the database, by another node or process) is seen
    /// within `ttl`, so a removed client may be served for up to `ttl` more: keep it short (a
    /// second or two). A `ttl` of zero turns the cache off.
    pub fn cache_clients(mut self, ttl: Duration) -> Self {
        self.client_cache = (!ttl.is_zero()).then_some(ttl);
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

#[cfg(feature = "private-key-jwt")]
impl AuthorizationServerBuilder {
    /// Resolves `jwks_uri`s of `private_key_jwt` clients (default: none, so such clients must
    /// register their `jwks` itself).
    pub fn client_key_resolver(
        mut self,
        resolver: Arc<dyn crate::client_assertion::ClientKeyResolver>,
    ) -> Self {
        self.client_keys = Some(resolver);
        self
    }
}

impl AuthorizationServerBuilder {
    /// Takes pushed authorization requests (RFC 9126) at
    /// [`EndpointPaths::pushed_requests`](crate::settings::EndpointPaths::pushed_requests), and
    /// `request_uri` at the authorization endpoint. Off by default.
    pub fn pushed_requests(mut self, settings: PushedRequests) -> Self {
        self.par = Some(settings);
        self
    }

    /// Serves the device authorization grant (RFC 8628): the device authorization endpoint at
    /// [`EndpointPaths::device_authorization`](crate::settings::EndpointPaths::device_authorization),
    /// its grant at the token endpoint, and the user's verification through
    /// [`AuthorizationServer::enter_user_code`](crate::AuthorizationServer::enter_user_code). Off by default.
    pub fn device_flow(mut self, settings: DeviceFlow) -> Self {
        self.device = Some(settings);
        self
    }
}

impl AuthorizationServerBuilder {
    /// Offers token exchange (RFC 8693) at the token endpoint under `policy`, and lists
    /// `urn:ietf:params:oauth:grant-type:token-exchange` in the metadata's
    /// `grant_types_supported`. A confidential client agreed the grant type
    /// ([`GrantType::TokenExchange`](crate::client::GrantType::TokenExchange)) may then trade an active
    /// access token grantor issued for another one, for a resource the server knows, with at
    /// most the subject token's scope, when `policy` allows it. Without a policy (the default)
    /// every exchange is answered `unsupported_grant_type`.
    pub fn token_exchange(mut self, policy: Arc<dyn ExchangePolicy>) -> Self {
        self.exchange = Some(policy);
        self
    }
}
