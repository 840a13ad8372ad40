//! Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a `client_id`
//! that is an `https` URL names the client's registration, a JSON document fetched from it
//! through the outbound seam, checked, and kept in a bounded cache. See
//! [`ClientIdDocuments`] for the rules and the bounds.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_channel::oneshot;
use lru::LruCache;

use crate::client::{
    Approval, Client, ClientBuilder, ClientKeys, GrantType, is_self_registrable_redirect_uri,
};
use crate::client_metadata::{self, MetadataError, Source};
use crate::clock::{Clock, UnixTime};
use crate::error::StoreError;
use crate::outbound::{FetchError, Outbound, OutboundGet};
use crate::request::{AuthMethod, ClientMetadata};
use crate::settings::ClientIdDocuments;
use crate::settings::normal_host;
use crate::store::ClientStore;

/// Why a document URL names no usable client; each says why in words an error page shows.
/// A failed fetch and a body that is no JSON object say the same generic words (its kind stays
/// in the value, for the host's logs): the page is no oracle of what a URL answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DocumentError {
    /// The URL breaks a rule of the draft (§3).
    #[error("the client_id is not a usable metadata document URL: {0}")]
    Url(&'static str),
    /// The host's policy refuses the URL's host.
    #[error("this server does not take client metadata documents from that host")]
    Host,
    /// Too many fetches are in flight.
    #[error("too many client metadata documents are being fetched; try again later")]
    Busy,
    /// The fetch failed.
    #[error("{UNFETCHED}")]
    Fetch(FetchError),
    /// The document is not a JSON object.
    #[error("{UNFETCHED}")]
    NotJson,
    /// The document breaks a rule.
    #[error("the client metadata document is invalid: {0}")]
    Invalid(Cow<'static, str>),
}

/// What an error page says of a document that could not be had.
const UNFETCHED: &str = "the client metadata document could not be fetched as a JSON object";

impl From<MetadataError> for DocumentError {
    fn from(error: MetadataError) -> Self {
        match error {
            MetadataError::NotAnObject => Self::NotJson,
            MetadataError::Invalid(error) => Self::Invalid(error.description().to_owned().into()),
        }
    }
}

/// A document's refusal for breaking a rule of its own (beyond those of client metadata).
fn invalid(why: &'static str) -> DocumentError {
    DocumentError::Invalid(Cow::Borrowed(why))
}

impl DocumentError {
    /// Whether the refusal is the document's host's own answer (a `4xx`, a redirect, a body
    /// too large, not JSON, or a document breaking a rule), remembered for
    /// [`ClientIdDocuments::FAILURE_CACHE`]; a failure for the server's or the network's
    /// reason (`5xx`, timeout, no connection) or this server's own (busy) is not, so the next
    /// request fetches again.
    fn is_remembered(&self) -> bool {
        match self {
            Self::Fetch(FetchError::Status(status)) => (400..500).contains(status),
            Self::Fetch(FetchError::Redirected | FetchError::TooLarge) => true,
            Self::NotJson | Self::Invalid(_) => true,
            _ => false,
        }
    }
}

/// A document's client, kept until `until`.
struct Cached {
    client: Arc<Client>,
    until: UnixTime,
}

/// What a caller waiting for a fetch gets.
type Answer = oneshot::Sender<Result<Arc<Client>, DocumentError>>;

/// A document's host's refusal, remembered until `until`.
struct Failed {
    error: DocumentError,
    until: UnixTime,
}

/// What is fetched and kept, behind one lock held for no await.
struct State {
    cache: LruCache<String, Cached>,
    /// Refusals remembered ([`DocumentError::is_remembered`]): a cache of its own, so a flood
    /// of failing URLs never evicts a good document.
    failures: LruCache<String, Failed>,
    /// The URLs being fetched, with the callers waiting for each.
    pending: HashMap<String, Vec<Answer>>,
    /// Fetches in flight by host (without case or a trailing dot).
    per_host: HashMap<String, usize>,
}

/// The documents a server takes: its settings, where it fetches, what it keeps.
pub(crate) struct Documents {
    settings: ClientIdDocuments,
    outbound: Arc<dyn Outbound>,
    /// The scope such clients may ask for.
    scope: String,
    /// Whether pairwise subjects are offered (a pairwise secret is set).
    pairwise: bool,
    state: Mutex<State>,
}

impl std::fmt::Debug for Documents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Documents")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // Every change leaves the maps consistent before anything that could panic.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `client_id` names a document rather than a registered client: any `https` URL
/// (checked further when it is fetched).
pub(crate) fn is_document_id(client_id: &str) -> bool {
    client_id
        .get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}

impl Documents {
    /// Documents as `settings` say, fetched through `outbound`; clients may ask for `scope`
    /// unless the settings name theirs, and for pairwise subjects when `pairwise`.
    pub(crate) fn new(
        settings: ClientIdDocuments,
        outbound: Arc<dyn Outbound>,
        scope: String,
        pairwise: bool,
    ) -> Self {
        let capacity =
            std::num::NonZeroUsize::new(settings.capacity).unwrap_or(std::num::NonZeroUsize::MIN);
        let failures = std::num::NonZeroUsize::new(ClientIdDocuments::MAX_FAILURES)
            .unwrap_or(std::num::NonZeroUsize::MIN);
        let scope = settings.scope.clone().unwrap_or(scope);
        Self {
            settings,
            outbound,
            scope,
            pairwise,
            state: Mutex::new(State {
                cache: LruCache::new(capacity),
                failures: LruCache::new(failures),
                pending: HashMap::new(),
                per_host: HashMap::new(),
            }),
        }
    }

    /// The client the document at `url` describes: kept, or fetched now (once for all the
    /// callers asking at the same time).
    pub(crate) async fn client(
        &self,
        url: &str,
        now: UnixTime,
    ) -> Result<Arc<Client>, DocumentError> {
        let host = normal_host(&check_url(url)?);
        if !self.settings.allows_host(&host) {
            return Err(DocumentError::Host);
        }
        loop {
            let waiting = {
                let mut state = lock(&self.state);
                if let Some(cached) = state.cache.get(url) {
                    if cached.until > now {
                        return Ok(Arc::clone(&cached.client));
                    }
                    state.cache.pop(url);
                }
                if let Some(failed) = state.failures.get(url) {
                    if failed.until > now {
                        return Err(failed.error.clone());
                    }
                    state.failures.pop(url);
                }
                if let Some(waiters) = state.pending.get_mut(url) {
                    let (sender, receiver) = oneshot::channel();
                    waiters.push(sender);
                    Some(receiver)
                } else {
                    let in_flight = state.per_host.get(&host).copied().unwrap_or(0);
                    if state.pending.len() >= ClientIdDocuments::MAX_FETCHES
                        || in_flight >= ClientIdDocuments::MAX_FETCHES_PER_HOST
                    {
                        return Err(DocumentError::Busy);
                    }
                    *state.per_host.entry(host.clone()).or_default() += 1;
                    state.pending.insert(url.to_owned(), Vec::new());
                    None
                }
            };
            match waiting {
                Some(receiver) => match receiver.await {
                    Ok(answer) => return answer,
                    // The caller fetching went away: this one tries.
                    Err(oneshot::Canceled) => continue,
                },
                None => break,
            }
        }
        let mut fetching = Fetching {
            documents: self,
            url,
            host: &host,
            done: false,
        };
        let fetched = self.fetch(url, &host).await;
        fetching.finish(fetched, now)
    }

    /// Fetches and reads the document at `url`, and how long it may be kept.
    async fn fetch(&self, url: &str, host: &str) -> Result<(Arc<Client>, Duration), DocumentError> {
        let get = OutboundGet::new(
            url,
            ClientIdDocuments::MAX_DOCUMENT_BYTES,
            ClientIdDocuments::FETCH_TIMEOUT,
        )
        .counted_as("client_document");
        let fetched = self.outbound.get(get).await.map_err(|error| match error {
            FetchError::Busy => DocumentError::Busy,
            error => DocumentError::Fetch(error),
        })?;
        let metadata = client_metadata::parse(&fetched.body, Source::Document)?;
        let client = read_document(url, host, metadata, &self.scope, self.pairwise)?;
        Ok((Arc::new(client), keep_for(fetched.cache_control.as_deref())))
    }
}

/// The caller fetching a URL: hands the answer to the callers waiting for it, and if it goes
/// away before that (its request dropped), frees the URL for the next caller.
struct Fetching<'a> {
    documents: &'a Documents,
    url: &'a str,
    host: &'a str,
    done: bool,
}

impl Fetching<'_> {
    fn finish(
        &mut self,
        fetched: Result<(Arc<Client>, Duration), DocumentError>,
        now: UnixTime,
    ) -> Result<Arc<Client>, DocumentError> {
        self.done = true;
        let answer = fetched.map(|(client, keep)| (client, now.plus(keep)));
        let waiters = {
            let mut state = lock(&self.documents.state);
            let waiters = self.release(&mut state);
            match &answer {
                Ok((client, until)) => {
                    let cached = Cached {
                        client: Arc::clone(client),
                        until: *until,
                    };
                    state.cache.put(self.url.to_owned(), cached);
                }
                // What the page does not say, for the host's logs (the URL is a public id).
                Err(error) if error.is_remembered() => {
                    tracing::debug!(
                        client_id = self.url,
                        ?error,
                        "a metadata document was refused (remembered)"
                    );
                    let failed = Failed {
                        error: error.clone(),
                        until: now.plus(ClientIdDocuments::FAILURE_CACHE),
                    };
                    state.failures.put(self.url.to_owned(), failed);
                }
                Err(error) => {
                    tracing::debug!(
                        client_id = self.url,
                        ?error,
                        "a metadata document could not be fetched"
                    );
                }
            }
            waiters
        };
        let answer = answer.map(|(client, _)| client);
        for waiter in waiters {
            // A waiter that went away needs no answer.
            let _ = waiter.send(answer.clone());
        }
        answer
    }

    /// Frees the URL and the host's fetch; answers who was waiting.
    fn release(&self, state: &mut State) -> Vec<Answer> {
        if let Some(count) = state.per_host.get_mut(self.host) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                state.per_host.remove(self.host);
            }
        }
        state.pending.remove(self.url).unwrap_or_default()
    }
}

impl Drop for Fetching<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Dropping the senders wakes the waiters, which try again themselves.
            let mut state = lock(&self.documents.state);
            drop(self.release(&mut state));
        }
    }
}

/// The URL's host, if `url` is a document URL the draft allows (§3): `https`, a host, a path
/// other than `/`, no fragment, userinfo, query or dot segment (raw or percent-encoded), and at
/// most [`ClientIdDocuments::MAX_URL_BYTES`].
pub(crate) fn check_url(url: &str) -> Result<String, DocumentError> {
    if url.len() > ClientIdDocuments::MAX_URL_BYTES {
        return Err(DocumentError::Url("it is too long"));
    }
    if url.contains('#') {
        return Err(DocumentError::Url("it has a fragment"));
    }
    if url.contains('?') {
        return Err(DocumentError::Url("it has a query"));
    }
    let rest = url
        .get(8..)
        .filter(|_| is_document_id(url))
        .ok_or(DocumentError::Url("it is not https"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.contains('@') {
        return Err(DocumentError::Url("it has userinfo"));
    }
    if path.is_empty() || path == "/" {
        return Err(DocumentError::Url("it has no path"));
    }
    for segment in path.split('/') {
        let decoded = segment.replace("%2e", ".").replace("%2E", ".");
        if decoded == "." || decoded == ".." {
            return Err(DocumentError::Url("it has a dot segment"));
        }
    }
    let parsed = url::Url::parse(url).map_err(|_| DocumentError::Url("it is malformed"))?;
    // The parser normalises; a URL it changes was not in its plain form.
    if parsed.as_str() != url {
        return Err(DocumentError::Url("it is not in its normal form"));
    }
    parsed
        .host_str()
        .map(str::to_owned)
        .ok_or(DocumentError::Url("it has no host"))
}

/// How long a document may be kept: its `Cache-Control` `max-age`, clamped to
/// [`ClientIdDocuments::MIN_CACHE`]–[`ClientIdDocuments::MAX_CACHE`]; the least without one
/// (or with `no-store` or `no-cache`).
fn keep_for(cache_control: Option<&str>) -> Duration {
    let mut max_age = None;
    for directive in cache_control.unwrap_or_default().split(',') {
        let directive = directive.trim().to_ascii_lowercase();
        if directive == "no-store" || directive == "no-cache" {
            return ClientIdDocuments::MIN_CACHE;
        }
        if let Some(seconds) = directive.strip_prefix("max-age=") {
            max_age = seconds.trim_matches('"').parse::<u64>().ok();
        }
    }
    max_age.map_or(ClientIdDocuments::MIN_CACHE, |seconds| {
        Duration::from_secs(seconds)
            .clamp(ClientIdDocuments::MIN_CACHE, ClientIdDocuments::MAX_CACHE)
    })
}

/// The client a document (fetched from `url`, on `host`) describes, its `metadata` read as
/// every client metadata is, if it keeps the draft's rules (§4): its `client_id` is `url`;
/// `redirect_uris` are `https` or loopback `http`; `token_endpoint_auth_method` is `none` or
/// `private_key_jwt` with `jwks`; the grants are the authorization code's, with refresh
/// tokens. `subject_type: pairwise` (when `pairwise` subjects are offered) puts it in the
/// sector of the document's host ([`pairwise_sector`]). Its `scope` is the server's, never
/// the document's.
fn read_document(
    url: &str,
    host: &str,
    metadata: ClientMetadata,
    scope: &str,
    pairwise: bool,
) -> Result<Client, DocumentError> {
    if metadata.client_id.as_deref() != Some(url) {
        return Err(invalid("its client_id is not the URL it was fetched from"));
    }
    let sector = pairwise_sector(&metadata, host, pairwise)?;
    let redirect_uris = metadata.redirect_uris.unwrap_or_default();
    if redirect_uris.is_empty() {
        return Err(invalid("redirect_uris must hold 1 to 10 URIs"));
    }
    if !redirect_uris
        .iter()
        .all(|uri| is_self_registrable_redirect_uri(uri))
    {
        return Err(invalid(
            "redirect_uris must be https, or http on a loopback host",
        ));
    }
    let grants = grant_types(metadata.grant_types.unwrap_or_default())?;
    let response_types = metadata.response_types.unwrap_or_default();
    if response_types
        .iter()
        .any(|grant| *grant != GrantType::AuthorizationCode)
    {
        return Err(invalid("response_types may hold code alone"));
    }
    let mut builder = authenticated_as(url, metadata.auth_method, metadata.keys)?
        .name(metadata.client_name.unwrap_or_else(|| host.to_owned()))
        .grant_types(grants)
        .scopes(scope)
        .approval(Approval::Required)
        .read_from_document();
    for uri in redirect_uris {
        builder = builder.redirect_uri(uri);
    }
    if let Some(sector) = sector {
        builder = builder.pairwise_subjects(sector);
    }
    // JARM §3, RFC 9701 §6: how its signed answers are signed.
    if let Some(alg) = metadata.authorization_alg {
        builder = builder.authorization_signing_algorithm(alg);
    }
    if let Some(alg) = metadata.introspection_alg {
        builder = builder.introspection_signing_algorithm(alg);
    }
    // RFC 9101 §10.2: the one algorithm the client's request objects may be signed with.
    if let Some(alg) = metadata.request_object_alg {
        builder = builder.request_object_signing_algorithm(alg);
    }
    builder
        .build()
        .map_err(|_| invalid("it does not describe a valid client"))
}

/// A document's client, as it authenticates: public (`none`, the default), or with
/// `private_key_jwt` and its keys in `jwks`, never a secret (draft §4.1). Never with a TLS
/// client certificate (RFC 8705 §2): grantor keeps those methods to clients that were
/// registered, so a certificate's subject is one someone agreed to.
fn authenticated_as(
    url: &str,
    method: Option<AuthMethod>,
    keys: Option<ClientKeys>,
) -> Result<ClientBuilder, DocumentError> {
    match (method, keys) {
        (None | Some(AuthMethod::None), _) => Ok(Client::public(url)),
        (Some(AuthMethod::PrivateKeyJwt), Some(keys @ ClientKeys::Jwks(_))) => {
            Ok(Client::private_key_jwt(url, keys))
        }
        (Some(AuthMethod::PrivateKeyJwt), _) => {
            Err(invalid("private_key_jwt needs the client's keys in jwks"))
        }
        _ => Err(invalid(
            "token_endpoint_auth_method must be none or private_key_jwt",
        )),
    }
}

/// The grants of a document's client: the authorization code grant, and refresh tokens when
/// `asked` names them; no other.
fn grant_types(asked: Vec<GrantType>) -> Result<Vec<GrantType>, DocumentError> {
    let mut grants = vec![GrantType::AuthorizationCode];
    for grant in asked {
        match grant {
            GrantType::AuthorizationCode => {}
            GrantType::RefreshToken => grants.push(GrantType::RefreshToken),
            _ => {
                return Err(invalid(
                    "grant_types may hold authorization_code and refresh_token",
                ));
            }
        }
    }
    Ok(grants)
}

/// The sector of a document asking for `subject_type: pairwise` (OIDC Core §8.1): the host of
/// the document's URL. The document is the client's list of its redirect URIs, fetched over
/// `https` from a host its owner controls: what a `sector_identifier_uri` is, so it is not
/// taken beside it (a second fetch per document for no more assurance). `None` for public.
fn pairwise_sector(
    metadata: &ClientMetadata,
    host: &str,
    pairwise: bool,
) -> Result<Option<String>, DocumentError> {
    if metadata.sector_identifier_uri.is_some() {
        return Err(invalid(
            "sector_identifier_uri is not taken: a document's sector is its own host",
        ));
    }
    match (metadata.pairwise, pairwise) {
        (false, _) => Ok(None),
        (true, true) => Ok(Some(host.to_owned())),
        (true, false) => Err(invalid(
            "subject_type pairwise is not offered by this server",
        )),
    }
}

/// The server's clients: those the stores keep, and with documents on, those whose id is a
/// document URL, fetched and kept by [`Documents`].
pub(crate) struct DocumentClients {
    pub(crate) inner: Arc<dyn ClientStore>,
    pub(crate) documents: Arc<Documents>,
    pub(crate) clock: Arc<dyn Clock>,
}

#[async_trait]
impl ClientStore for DocumentClients {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        if !is_document_id(client_id) {
            return self.inner.find_client(client_id).await;
        }
        let now = self.clock.now();
        Ok(self.documents.client(client_id, now).await.ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_urls_keep_the_drafts_rules() {
        assert_eq!(
            check_url("https://app.example/client.json").as_deref(),
            Ok("app.example")
        );
        for (url, why) in [
            ("http://app.example/client.json", "https"),
            ("https://app.example", "path"),
            ("https://app.example/", "path"),
            ("https://app.example/c#x", "fragment"),
            ("https://app.example/c?x=1", "query"),
            ("https://user@app.example/c", "userinfo"),
            ("https://app.example/a/../c", "dot segment"),
            ("https://app.example/a/%2e%2E/c", "dot segment"),
            ("https://app.example/./c", "dot segment"),
            ("https://APP.example/c", "normal form"),
            ("https://app.example:443/c", "normal form"),
        ] {
            let refused = check_url(url).unwrap_err().to_string();
            assert!(refused.contains(why), "{url}: {refused}");
        }
        let long = format!("https://app.example/{}", "a".repeat(2100));
        assert!(check_url(&long).is_err());
    }

    #[test]
    fn a_pairwise_documents_sector_is_its_own_host() {
        let sector = |members: serde_json::Value, offered| {
            let body = members.to_string();
            let metadata = client_metadata::parse(body.as_bytes(), Source::Document)?;
            pairwise_sector(&metadata, "app.example", offered)
        };
        assert_eq!(sector(serde_json::json!({}), true), Ok(None));
        let public = serde_json::json!({"subject_type": "public"});
        assert_eq!(sector(public, true), Ok(None));
        let pairwise = || serde_json::json!({"subject_type": "pairwise"});
        assert_eq!(sector(pairwise(), true), Ok(Some("app.example".to_owned())));
        let refused = sector(pairwise(), false).unwrap_err().to_string();
        assert!(refused.contains("not offered"), "{refused}");
        let unknown = serde_json::json!({"subject_type": "secret"});
        assert!(sector(unknown, true).is_err());
        let with_uri = serde_json::json!({
            "subject_type": "pairwise",
            "sector_identifier_uri": "https://other.example/uris.json",
        });
        let refused = sector(with_uri, true).unwrap_err().to_string();
        assert!(refused.contains("sector_identifier_uri"), "{refused}");
    }

    #[test]
    fn cache_control_is_clamped_to_five_minutes_and_a_day() {
        let minutes = |d: Duration| d.as_secs() / 60;
        assert_eq!(minutes(keep_for(None)), 5);
        assert_eq!(minutes(keep_for(Some("max-age=60"))), 5);
        assert_eq!(minutes(keep_for(Some("public, max-age=3600"))), 60);
        assert_eq!(minutes(keep_for(Some("max-age=999999"))), 24 * 60);
        assert_eq!(minutes(keep_for(Some("no-store, max-age=3600"))), 5);
        assert_eq!(minutes(keep_for(Some("max-age=junk"))), 5);
    }
}
