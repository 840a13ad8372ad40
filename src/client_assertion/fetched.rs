//! `jwks_uri` resolved through the server's outbound seam: the [`ClientKeyResolver`] a server
//! uses when the host set an [`Outbound`] and no resolver of its own, for client assertions
//! and request objects alike.
//!
//! **What it keeps**: at most [`MAX_KEPT_SETS`] key sets, each at most
//! [`MAX_JWKS_BYTES`](crate::client::MAX_JWKS_BYTES) (16 MiB in all), in this process only
//! (a cache: every node fetches for itself), the least recently used dropped first. A set is
//! kept for [`KEYS_KEPT`]; a URL that answered no usable set is remembered as such for
//! [`FAILURE_KEPT`], so a flood of requests naming a client whose `jwks_uri` fails costs one
//! fetch per that time. A JWS naming a `kid` the kept set lacks (the client rotated its keys)
//! fetches the set again, at most once per [`REFRESH_AFTER`] per URL. At most
//! [`MAX_KEY_FETCHES`] fetches are in flight; past that a request
//! that needs one is answered `temporarily_unavailable` and nothing is kept.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lru::LruCache;

use super::ClientKeyResolver;
use crate::client::{ClientId, ClientKeys, MAX_JWKS_BYTES};
use crate::error::StoreError;
use crate::outbound::{FetchError, Outbound, OutboundGet};

/// The most key sets kept.
pub const MAX_KEPT_SETS: usize = 1024;

/// How long a fetched key set is used before it is fetched again (a client that adds a key
/// waits at most this long for it to be seen).
pub const KEYS_KEPT: Duration = Duration::from_secs(300);

/// How long a `jwks_uri` that answered no usable key set is not fetched again.
pub const FAILURE_KEPT: Duration = Duration::from_secs(30);

/// How long after a fetch a set is not fetched again for a `kid` it lacks: a flood of JWSs
/// naming unknown `kid`s costs one fetch per URL this often.
pub(crate) const REFRESH_AFTER: Duration = Duration::from_secs(10);

/// The most key sets fetched at once.
pub const MAX_KEY_FETCHES: usize = 8;

/// How long one fetch may take.
pub const KEY_FETCH_TIMEOUT: Duration = Duration::from_secs(5);

// What is kept stays within 16 MiB.
const _: () = assert!(MAX_KEPT_SETS * MAX_JWKS_BYTES <= 16 * 1024 * 1024);

/// Key sets fetched from clients' `jwks_uri`s, kept for a while.
pub(crate) struct FetchedKeys {
    outbound: Arc<dyn Outbound>,
    state: Mutex<State>,
}

struct State {
    /// By `jwks_uri`: the set (`None`: the URL answered none usable), until when, and when
    /// it was fetched.
    sets: LruCache<String, (Option<Arc<str>>, Instant, Instant)>,
    in_flight: usize,
}

impl FetchedKeys {
    /// Key sets fetched through `outbound`.
    pub(crate) fn new(outbound: Arc<dyn Outbound>) -> Self {
        let capacity =
            std::num::NonZeroUsize::new(MAX_KEPT_SETS).unwrap_or(std::num::NonZeroUsize::MIN);
        Self {
            outbound,
            state: Mutex::new(State {
                sets: LruCache::new(capacity),
                in_flight: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every change leaves the state consistent before anything that could panic.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The set kept for `jwks_uri`, or a turn to fetch it.
    fn kept_or_turn(&self, jwks_uri: &str) -> Result<Option<Option<Arc<str>>>, StoreError> {
        let mut state = self.lock();
        if let Some((set, until, _)) = state.sets.get(jwks_uri) {
            if *until > Instant::now() {
                return Ok(Some(set.clone()));
            }
            state.sets.pop(jwks_uri);
        }
        if state.in_flight >= MAX_KEY_FETCHES {
            return Err(StoreError::unavailable(
                "too many client key sets are being fetched",
            ));
        }
        state.in_flight += 1;
        Ok(None)
    }

    /// Fetches the set at `jwks_uri`: `None` when it answers none usable.
    async fn fetch(&self, jwks_uri: &str) -> Result<Option<Arc<str>>, StoreError> {
        let _turn = Turn(self);
        let get = OutboundGet::new(jwks_uri, MAX_JWKS_BYTES, KEY_FETCH_TIMEOUT).counted_as("jwks");
        let set = match self.outbound.get(get).await {
            Ok(fetched) => String::from_utf8(fetched.body)
                .ok()
                .filter(|text| ClientKeys::jwks(text).is_ok())
                .map(Arc::from),
            // The outbound client's own bound, not the URL's fault: nothing is remembered.
            Err(FetchError::Busy) => {
                return Err(StoreError::unavailable(
                    "too many client key sets are being fetched",
                ));
            }
            Err(_) => None,
        };
        let kept_for = if set.is_some() {
            KEYS_KEPT
        } else {
            FAILURE_KEPT
        };
        let fetched = Instant::now();
        self.lock().sets.put(
            jwks_uri.to_owned(),
            (set.clone(), fetched + kept_for, fetched),
        );
        Ok(set)
    }

    /// A turn to fetch `jwks_uri` again, unless it was fetched within [`REFRESH_AFTER`] (or
    /// is being fetched by as many as may be).
    fn refresh_turn(&self, jwks_uri: &str) -> bool {
        let mut state = self.lock();
        let recent = state
            .sets
            .peek(jwks_uri)
            .is_some_and(|(_, _, fetched)| fetched.elapsed() < REFRESH_AFTER);
        if recent || state.in_flight >= MAX_KEY_FETCHES {
            return false;
        }
        state.in_flight += 1;
        true
    }
}

/// A fetch in flight, counted until it ends (or its request is dropped).
struct Turn<'a>(&'a FetchedKeys);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
    }
}

impl FetchedKeys {
    /// The key set at `jwks_uri`: kept, or fetched now.
    pub(crate) async fn set(&self, jwks_uri: &str) -> Result<String, StoreError> {
        let set = match self.kept_or_turn(jwks_uri)? {
            Some(kept) => kept,
            None => self.fetch(jwks_uri).await?,
        };
        set.map(|set| set.to_string())
            .ok_or_else(|| StoreError::failed("the jwks_uri answered no usable JWK Set"))
    }

    /// The key set at `jwks_uri` fetched again, unless it was fetched within
    /// [`REFRESH_AFTER`]: `None` then, or when it answers none usable.
    pub(crate) async fn set_again(&self, jwks_uri: &str) -> Result<Option<String>, StoreError> {
        if !self.refresh_turn(jwks_uri) {
            return Ok(None);
        }
        Ok(self.fetch(jwks_uri).await?.map(|set| set.to_string()))
    }
}

#[async_trait]
impl ClientKeyResolver for FetchedKeys {
    async fn resolve(&self, _client_id: &ClientId, jwks_uri: &str) -> Result<String, StoreError> {
        self.set(jwks_uri).await
    }

    async fn refresh(
        &self,
        _client_id: &ClientId,
        jwks_uri: &str,
    ) -> Result<Option<String>, StoreError> {
        self.set_again(jwks_uri).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::outbound::{Delivery, FetchFuture, Fetched, OutboundPost};

    /// Answers `body` to every `GET`, counting them.
    struct Serving {
        body: &'static str,
        gets: AtomicUsize,
    }

    impl Outbound for Serving {
        fn post(&self, _post: OutboundPost, _done: Box<dyn FnOnce(Delivery) + Send>) {}

        fn get(&self, get: OutboundGet) -> FetchFuture<'_> {
            self.gets.fetch_add(1, Ordering::Relaxed);
            let answer = if self.body.len() > get.max_bytes {
                Err(FetchError::TooLarge)
            } else {
                Ok(Fetched::new(self.body))
            };
            Box::pin(std::future::ready(answer))
        }
    }

    fn resolver(body: &'static str) -> (FetchedKeys, Arc<Serving>) {
        let serving = Arc::new(Serving {
            body,
            gets: AtomicUsize::new(0),
        });
        (FetchedKeys::new(Arc::clone(&serving) as _), serving)
    }

    #[tokio::test]
    async fn a_key_set_is_fetched_once_and_kept() {
        let set = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
        let (keys, serving) = resolver(set);
        let client = ClientId::new("c").unwrap();
        for _ in 0..3 {
            let resolved = keys.resolve(&client, "https://app.example/jwks").await;
            assert_eq!(resolved.unwrap(), set);
        }
        assert_eq!(serving.gets.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn a_url_without_a_usable_set_fails_and_is_not_fetched_again_at_once() {
        let (keys, serving) = resolver(r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#);
        let client = ClientId::new("c").unwrap();
        for _ in 0..3 {
            assert!(
                keys.resolve(&client, "https://app.example/jwks")
                    .await
                    .is_err()
            );
        }
        assert_eq!(serving.gets.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn a_set_is_fetched_again_for_an_unknown_kid_at_most_every_refresh_after() {
        let set = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
        let (keys, serving) = resolver(set);
        let client = ClientId::new("c").unwrap();
        let uri = "https://app.example/jwks";
        keys.resolve(&client, uri).await.unwrap();
        // Fetched a moment ago: not again, however many ask.
        for _ in 0..3 {
            assert_eq!(keys.refresh(&client, uri).await.unwrap(), None);
        }
        assert_eq!(serving.gets.load(Ordering::Relaxed), 1);
        // Fetched long enough ago: once more.
        if let Some((_, _, fetched)) = keys.lock().sets.get_mut(uri) {
            *fetched -= REFRESH_AFTER;
        }
        assert_eq!(
            keys.refresh(&client, uri).await.unwrap().as_deref(),
            Some(set)
        );
        assert_eq!(keys.refresh(&client, uri).await.unwrap(), None);
        assert_eq!(serving.gets.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn fetches_in_flight_are_bounded() {
        let (keys, _) = resolver("{}");
        for _ in 0..MAX_KEY_FETCHES {
            assert!(matches!(keys.kept_or_turn("https://a.example/"), Ok(None)));
        }
        assert!(keys.kept_or_turn("https://b.example/").is_err());
    }
}
