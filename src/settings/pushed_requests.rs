//! [`PushedRequests`]: how the server takes pushed authorization requests (RFC 9126).

use std::time::Duration;

/// Pushed authorization requests (RFC 9126): a client posts its authorization request to the
/// PAR endpoint, authenticated as at the token endpoint, and sends the browser to the
/// authorization endpoint with only `client_id` and the `request_uri` it got back. The request
/// never travels through the browser, so it cannot be read or altered there, and a client
/// can be required to push every request.
///
/// Enable it with [`AuthorizationServerBuilder::pushed_requests`]; the endpoint is
/// [`AuthorizationServer::par`](crate::AuthorizationServer::par), at
/// [`EndpointPaths::pushed_requests`](crate::settings::EndpointPaths::pushed_requests).
///
/// What an unauthenticated request can make the server keep: a public client authenticates
/// with its `client_id` alone, so anyone may push requests in its name. Each pushed request
/// lives in the [`SingleUseStore`](crate::store::SingleUseStore) for at most
/// [`lifetime`](Self::lifetime) (default 60 s, at most [`MAX_LIFETIME`](Self::MAX_LIFETIME)), and each client may
/// push at most [`per_client`](Self::per_client) requests in any window of that length (default
/// [`DEFAULT_PER_CLIENT`](Self::DEFAULT_PER_CLIENT); past it, 429 `temporarily_unavailable`).
/// Since anyone may register clients where self-registration is open, all self-registered
/// clients together may push at most [`total`](Self::total) (default
/// [`DEFAULT_TOTAL`](Self::DEFAULT_TOTAL), a tenth of the memory store's
/// [`MAX_SINGLE_USE`](crate::MemoryStore::MAX_SINGLE_USE)), so a flood of pushes cannot crowd out
/// sign-in forms or DPoP proofs; a client an administrator registered is held to its own
/// budget alone, so such a flood never refuses it. At most `total` plus `per_client` for each
/// administrator-registered client are held at once. A request a browser has visited waits for
/// its sign-in up to the authorization request lifetime from its push; first visits are
/// counted with the same two numbers in each such window, so as many more wait at most, and a
/// first visit past them is 429 (the request stays pushed).
///
/// [`AuthorizationServerBuilder::pushed_requests`]: crate::AuthorizationServerBuilder::pushed_requests
///
/// How the server takes them:
///
/// ```
/// use std::time::Duration;
/// use grantor::settings::PushedRequests;
///
/// // Every client must push; each `request_uri` lives 90 seconds.
/// let settings = PushedRequests::new()
///     .lifetime(Duration::from_secs(90))
///     .required(true);
/// assert!(settings.is_required());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PushedRequests {
    lifetime: Duration,
    required: bool,
    per_client: u32,
    total: u32,
}

impl Default for PushedRequests {
    fn default() -> Self {
        Self::new()
    }
}

impl PushedRequests {
    /// The prefix of every `request_uri` grantor hands out (RFC 9126 §2.2).
    pub const REQUEST_URI_PREFIX: &str = "urn:ietf:params:oauth:request_uri:";

    /// The longest a `request_uri` may live. RFC 9126 §2.2 expects "a relatively short time"; the
    /// builder refuses more than this.
    pub const MAX_LIFETIME: Duration = Duration::from_secs(600);

    /// How many requests one client may push in one lifetime window by default.
    pub const DEFAULT_PER_CLIENT: u32 = 1000;

    /// How many requests all self-registered clients together (and apart from them, all
    /// clients read from metadata documents together) may push in one lifetime window by
    /// default.
    pub const DEFAULT_TOTAL: u32 = 10_000;

    /// The largest [`total`](Self::total) the builder accepts: a tier's pool may be kept twice
    /// over at a window's edge, and that stays within half the in-memory store's bound for
    /// one kind of value ([`MemoryStore::MAX_SINGLE_USE`](crate::MemoryStore::MAX_SINGLE_USE)).
    pub const MAX_TOTAL: u32 = 25_000;

    /// Pushing is optional; a `request_uri` lives 60 seconds; a client may push
    /// [`DEFAULT_PER_CLIENT`](Self::DEFAULT_PER_CLIENT) requests per minute.
    pub fn new() -> Self {
        Self {
            lifetime: Duration::from_secs(60),
            required: false,
            per_client: Self::DEFAULT_PER_CLIENT,
            total: Self::DEFAULT_TOTAL,
        }
    }

    /// How long a `request_uri` may be used (the response's `expires_in`): whole seconds,
    /// more than zero and at most [`MAX_LIFETIME`](Self::MAX_LIFETIME).
    pub fn lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime;
        self
    }

    /// Whether every client must push its authorization requests (RFC 9126 §5,
    /// `require_pushed_authorization_requests` in the metadata). Without it, only clients
    /// registered with [`require_pushed_requests`](crate::client::ClientBuilder::require_pushed_requests)
    /// must.
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// How many requests one client may push in a window of [`lifetime`](Self::lifetime):
    /// what bounds the pushed requests held for one client.
    pub fn per_client(mut self, limit: u32) -> Self {
        self.per_client = limit;
        self
    }

    /// How many requests all self-registered clients together may push in a window of
    /// [`lifetime`](Self::lifetime), and apart from them all clients read from metadata
    /// documents together (at most [`MAX_TOTAL`](Self::MAX_TOTAL)): what bounds the pushed
    /// requests anyone who registers or names clients can make the server hold. Each tier's
    /// requests are a kind of their own in the store, so filling one pool refuses no other
    /// tier, and an administrator's clients have their own budgets only.
    pub fn total(mut self, limit: u32) -> Self {
        self.total = limit;
        self
    }

    /// Whether every client must push.
    pub fn is_required(&self) -> bool {
        self.required
    }

    pub(crate) fn lifetime_value(&self) -> Duration {
        self.lifetime
    }

    pub(crate) fn per_client_limit(&self) -> u32 {
        self.per_client
    }

    pub(crate) fn total_limit(&self) -> u32 {
        self.total
    }

    /// Whether the settings are usable.
    pub(crate) fn is_valid(&self) -> bool {
        self.lifetime.as_secs() > 0
            && self.lifetime <= Self::MAX_LIFETIME
            && self.lifetime.subsec_nanos() == 0
            && self.per_client > 0
            && self.total > 0
            && self.total <= Self::MAX_TOTAL
    }
}
