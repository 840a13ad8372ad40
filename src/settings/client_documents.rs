//! [`ClientIdDocuments`]: how the server takes client ID metadata documents.

/// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, what MCP clients
/// use): a `client_id` that is an `https` URL with a path names a JSON document at that URL,
/// which the server fetches through its outbound seam and takes as the client's registration.
/// No registration step, no secret: such a client is public (`none`) or authenticates with
/// `private_key_jwt` and the `jwks` of its document.
///
/// Enable it with [`AuthorizationServerBuilder::client_id_metadata_documents`], beside an
/// [outbound seam](crate::AuthorizationServerBuilder::outbound) (which never reaches a private,
/// loopback, link-local or other special address, follows no redirect, reads at most
/// [`MAX_DOCUMENT_BYTES`](Self::MAX_DOCUMENT_BYTES) within
/// [`FETCH_TIMEOUT`](Self::FETCH_TIMEOUT)).
///
/// What anyone can make the server keep or do, and what bounds it: any request may name a
/// document URL, so a document is fetched for an unauthenticated caller.
/// - **Fetches in flight**: at most [`MAX_FETCHES`](Self::MAX_FETCHES) at once, at most
///   [`MAX_FETCHES_PER_HOST`](Self::MAX_FETCHES_PER_HOST) for one host name, and, with
///   `HttpOutbound`, at most its `MAX_FETCHES_PER_DESTINATION` to one server address however
///   many names point at it (wildcard DNS gives an attacker any number of names, not of
///   servers). Past any of them the request is refused (`temporarily_unavailable`) and
///   nothing is kept. Concurrent requests for one URL share one fetch. Each fetch in flight
///   holds its URL (at most [`MAX_URL_BYTES`](Self::MAX_URL_BYTES)) and a body of at most
///   [`MAX_DOCUMENT_BYTES`](Self::MAX_DOCUMENT_BYTES).
/// - **Documents**: kept in memory, at most [`capacity`](Self::capacity) of them (the least
///   recently used go first; each a URL and a client read from at most 5 KiB), each for its
///   `Cache-Control` `max-age` clamped to 5 minutes–1 day.
/// - **Refusals**: a document its host refused (a `4xx`), redirected, sent too large, not as a
///   JSON object, or breaking a rule is remembered for
///   [`FAILURE_CACHE`](Self::FAILURE_CACHE), so naming it again fetches nothing; at most
///   [`MAX_FAILURES`](Self::MAX_FAILURES) of them (each its URL and a reason, about 2.2 KiB at
///   most), in a cache of their own that never evicts a document. A fetch that failed for the
///   server's or the network's reason (`5xx`, timeout, no connection) is not remembered: the
///   next request fetches again. The error page says a document could not be fetched, never
///   what the URL answered (its status, size or body).
///
/// Clients registered in the stores are never looked up this way and never evicted by it: a
/// flood of documents costs other document clients a fetch at most.
///
/// The approval page always asks about such a client, whatever was approved before, and shows
/// the URL's host as unverified.
///
/// A document may say `subject_type: pairwise` when the server offers pairwise subjects
/// ([`OpenIdConnect::pairwise_secret`](crate::settings::OpenIdConnect::pairwise_secret)):
/// its sector is the host of its URL, which lists the client's redirect URIs as a
/// `sector_identifier_uri` would (so a document naming one is refused).
///
/// [`AuthorizationServerBuilder::client_id_metadata_documents`]: crate::AuthorizationServerBuilder::client_id_metadata_documents
///
/// ```
/// use grantor::settings::ClientIdDocuments;
///
/// // Only documents from these hosts; at most 500 kept.
/// let documents = ClientIdDocuments::new()
///     .allow_hosts(["app.example", "tools.example"])
///     .capacity(500);
/// # let _ = documents;
/// ```
#[derive(Debug, Clone)]
pub struct ClientIdDocuments {
    pub(crate) allow_hosts: Option<Vec<String>>,
    pub(crate) deny_hosts: Vec<String>,
    pub(crate) capacity: usize,
    pub(crate) scope: Option<String>,
}

impl Default for ClientIdDocuments {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientIdDocuments {
    /// The most bytes a document may have.
    pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
    /// How long a fetch may take, connecting included.
    pub const FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
    /// The longest `client_id` URL taken.
    pub const MAX_URL_BYTES: usize = 2048;
    /// The most fetches in flight at once.
    pub const MAX_FETCHES: usize = 128;
    /// The most fetches in flight at once from one host.
    pub const MAX_FETCHES_PER_HOST: usize = 4;
    /// The most refusals remembered (the least recently used go first).
    pub const MAX_FAILURES: usize = 1_000;
    /// How long a refusal by a document's host is remembered.
    pub const FAILURE_CACHE: std::time::Duration = std::time::Duration::from_secs(60);
    /// How many documents are kept by default.
    pub const DEFAULT_CAPACITY: usize = 1_000;
    /// The shortest time a document is kept (a `Cache-Control` asking less, or none).
    pub const MIN_CACHE: std::time::Duration = std::time::Duration::from_secs(300);
    /// The longest time a document is kept (a `Cache-Control` asking more).
    pub const MAX_CACHE: std::time::Duration = std::time::Duration::from_secs(86_400);

    /// Documents from any host that may be fetched, [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY)
    /// kept, for the scope [`scope`](Self::scope) says by default.
    pub fn new() -> Self {
        Self {
            allow_hosts: None,
            deny_hosts: Vec::new(),
            capacity: Self::DEFAULT_CAPACITY,
            scope: None,
        }
    }

    /// Takes documents only from these hosts (compared without case or a trailing dot); others
    /// are refused before any fetch.
    pub fn allow_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let hosts = hosts.into_iter().map(|h| normal_host(&h.into()));
        self.allow_hosts = Some(hosts.collect());
        self
    }

    /// Never takes documents from these hosts (compared without case or a trailing dot:
    /// `evil.example` denies `https://EVIL.example./…` too).
    pub fn deny_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let hosts = hosts.into_iter().map(|h| normal_host(&h.into()));
        self.deny_hosts.extend(hosts);
        self
    }

    /// How many documents are kept in memory (at least one).
    pub fn capacity(mut self, documents: usize) -> Self {
        self.capacity = documents.max(1);
        self
    }

    /// The scope such clients may ask for (space-separated). By default what a self-registered
    /// client may be granted ([`RegistrationPolicy::scope`]), and none without a registration
    /// policy: a scope an administrator grants (`admin`, say) is never a document's by default.
    /// `openid` needs no listing.
    ///
    /// [`RegistrationPolicy::scope`]: crate::settings::RegistrationPolicy::scope
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// Whether documents from `host` may be fetched.
    pub(crate) fn allows_host(&self, host: &str) -> bool {
        let host = normal_host(host);
        if self.deny_hosts.contains(&host) {
            return false;
        }
        self.allow_hosts
            .as_ref()
            .is_none_or(|allowed| allowed.contains(&host))
    }
}

/// A host name as the bounds and the host lists compare it: without case or a trailing dot
/// (`Evil.Example.` is `evil.example`).
pub(crate) fn normal_host(host: &str) -> String {
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}
