//! [`RegistrationPolicy`]: what a client that registers itself (RFC 7591) may get.
//!
//! The spec lets "some client application types … generate their own credentials"; everything
//! else an administrator agrees. The policy is that line: which grants, scopes and client
//! authentication methods a self-registered client may ask for, whether its users see the
//! approval page, whether an initial access token is required (RFC 7591 §3), and how many
//! registrations the server accepts per window, so that anonymous callers cannot make it keep
//! clients without bound.

use std::fmt;
use std::time::Duration;

use crate::client::{Approval, GrantType};
use crate::scope::Scope;
use crate::secret::SecretDigest;

mod names;

pub(crate) use names::is_hidden_or_reordering;

/// At most this many redirect URIs per registration (each also at most the server's
/// [parameter limit](crate::AuthorizationServerBuilder::max_parameter_bytes)).
pub const MAX_REDIRECT_URIS: usize = 10;

/// At most this many bytes of `client_name`.
pub const MAX_CLIENT_NAME_BYTES: usize = 200;

/// At most this many bytes of a `sector_identifier_uri`'s document (OIDC Registration §5),
/// fetched once per registration or update that names one, within 5 seconds, through the
/// outbound seam; a longer one is refused (`invalid_client_metadata`).
pub const MAX_SECTOR_DOCUMENT_BYTES: usize = 16 * 1024;

/// How long a self-registered client's previous secret keeps working after it asked for a new
/// one, by default ([`RegistrationPolicy::secret_rotation_overlap`]): a day, time for every
/// deployment of a client to pick the new secret up.
pub const DEFAULT_SECRET_ROTATION_OVERLAP: Duration = Duration::from_secs(24 * 3600);

/// How long a self-registered client may go unused by default before it is deleted
/// ([`RegistrationPolicy::idle_lifetime`]): 30 days.
pub const DEFAULT_IDLE_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);

/// What a client that registers itself may get, for
/// [`AuthorizationServerBuilder::registration`](crate::AuthorizationServerBuilder::registration).
///
/// Defaults: the `authorization_code` and `refresh_token` grants only (asking for `implicit`,
/// `password`, `client_credentials` or anything else is `invalid_client_metadata`: an
/// administrator agrees those); the approval page required; no
/// scope until [`scope`](Self::scope) names what such a client may be granted;
/// `token_endpoint_auth_method` `client_secret_basic` (a generated 256-bit secret, shown once)
/// or `none` (a public client, which must use PKCE); no initial access token; at most 60
/// registrations a minute across every node sharing the attempt counter.
///
/// ```
/// use std::time::Duration;
/// use grantor::{AuthorizationServer, MemoryStore, Scope};
/// use grantor::settings::RegistrationPolicy;
///
/// let policy = RegistrationPolicy::new()
///     .scope(&Scope::parse("profile email").unwrap())
///     .rate_limit(10, Duration::from_secs(60));
/// let server = AuthorizationServer::builder()
///     .issuer("https://auth.example")
///     .store(MemoryStore::new())
///     .registration(policy)
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct RegistrationPolicy {
    grant_types: Vec<GrantType>,
    scope: Option<Scope>,
    approval: Approval,
    public_clients: bool,
    initial_access_token: Option<SecretDigest>,
    max_registrations: u32,
    window: Duration,
    rotation_overlap: Duration,
    /// The [skeletons](names::skeleton) of the names self-registered clients may not take.
    reserved_names: Vec<String>,
    /// How long a self-registered client may go unused before it is deleted.
    idle_lifetime: Option<Duration>,
}

impl RegistrationPolicy {
    /// The default policy (see above).
    pub fn new() -> Self {
        Self {
            grant_types: vec![GrantType::AuthorizationCode, GrantType::RefreshToken],
            scope: None,
            approval: Approval::Required,
            public_clients: true,
            initial_access_token: None,
            max_registrations: 60,
            window: Duration::from_secs(60),
            rotation_overlap: DEFAULT_SECRET_ROTATION_OVERLAP,
            reserved_names: Vec::new(),
            idle_lifetime: Some(DEFAULT_IDLE_LIFETIME),
        }
    }

    /// How long a self-registered client may go without an authorization or token request
    /// before it is deleted with its tokens (default 30 days; `None`: never). MCP clients and
    /// the like register on every install, and most are never seen again: past the lifetime a
    /// client's next request is `401 invalid_client` (so it registers again, as RFC 7591
    /// clients do), and
    /// [`AuthorizationServer::forget_idle_clients`](crate::AuthorizationServer::forget_idle_clients)
    /// deletes those that never come back (call it now and then, as
    /// [`Purge::purge_expired`](crate::store::Purge::purge_expired)). Uses are recorded through
    /// the [`ClientActivity`](crate::store::ClientActivity) seam, which grantor's stores
    /// implement; a host with a [client registry](crate::AuthorizationServerBuilder::client_registry)
    /// of its own gives one with
    /// [`client_activity`](crate::AuthorizationServerBuilder::client_activity) or sets `None`.
    /// An event ([`EventKind::ClientExpired`](crate::events::EventKind::ClientExpired)) names
    /// each client deleted. A lifetime of zero is `None`.
    pub fn idle_lifetime(mut self, lifetime: Option<Duration>) -> Self {
        self.idle_lifetime = lifetime.filter(|l| !l.is_zero());
        self
    }

    /// How long a self-registered client may go unused, if it expires at all.
    pub(crate) fn idle(&self) -> Option<Duration> {
        self.idle_lifetime
    }

    /// The grant types a self-registered client may ask for (default `authorization_code` and
    /// `refresh_token`). The implicit and password grants are refused under
    /// [`Profile::OAuth21`](crate::settings::Profile::OAuth21) whatever this says, and
    /// `client_credentials` only ever goes to confidential clients.
    pub fn grant_types(mut self, grants: impl IntoIterator<Item = GrantType>) -> Self {
        self.grant_types = grants.into_iter().collect();
        self
    }

    /// Every scope a self-registered client may be granted (default: none). A registration
    /// asking for more is `invalid_client_metadata`; one asking for none gets all of it. On an
    /// OpenID Connect provider `openid` is every client's, so a registration may also name it.
    ///
    /// Nothing is assumed: listing a scope in
    /// [`scopes_supported`](crate::AuthorizationServerBuilder::scopes_supported) for the
    /// metadata does not hand it to clients anyone can register (an `admin` scope, say). Name
    /// here the scopes a client nobody vetted may ask a user for.
    pub fn scope(mut self, scope: &Scope) -> Self {
        self.scope = Some(scope.clone());
        self
    }

    /// Whether users approve a self-registered client's requests (default: required; a client
    /// nobody vetted should not act for a user who has not seen its name).
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approval = approval;
        self
    }

    /// Whether a client may register with `token_endpoint_auth_method` `none` (a public client,
    /// PKCE required; default: yes).
    pub fn public_clients(mut self, allowed: bool) -> Self {
        self.public_clients = allowed;
        self
    }

    /// Requires an initial access token (RFC 7591 §3) as `Authorization: Bearer`, given by its
    /// SHA-256 digest ([`SecretDigest::of`]); the token itself is never kept. Use a
    /// high-entropy token (say 256 random bits): it is compared as a digest, in constant time,
    /// and is not throttled. Without one, registration is open to anyone.
    pub fn initial_access_token(mut self, digest: SecretDigest) -> Self {
        self.initial_access_token = Some(digest);
        self
    }

    /// At most `max` registrations per `window` across the server (default 60 a minute),
    /// counted through the [attempt counter](crate::store::AttemptCounter) under one key, so
    /// every node sharing it shares the limit. Past it, registration answers `429 Too Many
    /// Requests` with `Retry-After` until the window ends. It bounds how fast anonymous callers
    /// can make the server keep clients, not who gets the slots: a host that wants a
    /// per-caller limit puts one in front (it sees the peer address; grantor does not). An
    /// update (RFC 7592) naming a `sector_identifier_uri` counts too, before its document is
    /// fetched, so the limit also bounds how often anyone makes the server fetch one.
    pub fn rate_limit(mut self, max: u32, window: Duration) -> Self {
        self.max_registrations = max.max(1);
        self.window = window.max(Duration::from_secs(1));
        self
    }

    /// How long a confidential self-registered client's previous secret keeps working after the
    /// client asks for a new one (default [`DEFAULT_SECRET_ROTATION_OVERLAP`], a day; zero ends
    /// it at once).
    ///
    /// RFC 7592 §2.2 lets the server hand out a new `client_secret` in the answer to an update;
    /// grantor does when the update (`PUT` with the registration access token) carries
    /// `"rotate_client_secret": true`, an extension member that servers without it ignore (RFC
    /// 7591 §2). The answer holds the new secret once; the previous one authenticates until
    /// this overlap ends, so the client's deployments can switch one by one.
    pub fn secret_rotation_overlap(mut self, overlap: Duration) -> Self {
        self.rotation_overlap = overlap;
        self
    }

    /// Names a self-registered client may not take, nor anything a person could mistake for
    /// one of them: the names of the administrator's clients, typically, and the host's own.
    /// A `client_name` that folds to the same skeleton as one of these (case, spaces and
    /// punctuation ignored; full-width, accented, Cyrillic or Greek look-alike letters read as
    /// the Latin ones; `0`/`o`, `1`/`l`) is `invalid_client_metadata`. Without them, the
    /// approval page still marks a self-registered client unverified and names where the answer
    /// goes, but a person who skims trusts a familiar name.
    ///
    /// ```
    /// use grantor::settings::RegistrationPolicy;
    ///
    /// let policy = RegistrationPolicy::new().reserved_client_names(["Demo Client", "Acme Pay"]);
    /// # let _ = policy;
    /// ```
    pub fn reserved_client_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let skeletons = names.into_iter().map(|name| names::skeleton(name.as_ref()));
        self.reserved_names
            .extend(skeletons.filter(|skeleton| !skeleton.is_empty()));
        self
    }

    /// Whether `name` is, or looks like, one of the [reserved](Self::reserved_client_names)
    /// names.
    pub(crate) fn reserves(&self, name: &str) -> bool {
        let skeleton = names::skeleton(name);
        self.reserved_names.contains(&skeleton)
    }

    pub(crate) fn rotation_overlap(&self) -> Duration {
        self.rotation_overlap
    }

    pub(crate) fn allows(&self, grant: GrantType) -> bool {
        self.grant_types.contains(&grant)
    }

    /// The policy's scope: none unless the host named it.
    pub(crate) fn allowed_scope(&self) -> Scope {
        self.scope.clone().unwrap_or_default()
    }

    pub(crate) fn approval_of_clients(&self) -> Approval {
        self.approval
    }

    pub(crate) fn allows_public_clients(&self) -> bool {
        self.public_clients
    }

    pub(crate) fn initial_access_token_digest(&self) -> Option<&SecretDigest> {
        self.initial_access_token.as_ref()
    }

    pub(crate) fn limit(&self) -> (u32, Duration) {
        (self.max_registrations, self.window)
    }
}

impl Default for RegistrationPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for RegistrationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistrationPolicy")
            .field("grant_types", &self.grant_types)
            .field("scope", &self.scope)
            .field("approval", &self.approval)
            .field("public_clients", &self.public_clients)
            .field(
                "initial_access_token",
                &self.initial_access_token.map(|_| "<redacted>"),
            )
            .field("max_registrations", &self.max_registrations)
            .field("window", &self.window)
            .field("rotation_overlap", &self.rotation_overlap)
            .field("reserved_names", &self.reserved_names.len())
            .finish()
    }
}
