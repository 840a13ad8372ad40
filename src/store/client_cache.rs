//! [`AuthorizationServerBuilder::cache_clients`](crate::AuthorizationServerBuilder::cache_clients):
//! the clients the server looked up, remembered for a short time in front of the client store.
//!
//! Every request looks its client up; over a database that is a round trip of its own, often
//! half of the request's. The cache answers again, for `ttl`, what the store answered: found
//! clients only (an unknown `client_id` always asks the store, so a flood of made-up ids can
//! neither fill the cache nor push the real clients out), at most [`CLIENT_CACHE_CAPACITY`]
//! of them, the least recently used going first. Changes the server makes itself (registration
//! management, secret rotation) forget the client at once; a change made past the server, in the
//! database or on another node, is seen within `ttl`.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lru::LruCache;

use super::{AdminError, ClientStore};
use crate::client::{Client, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::StoreError;

/// How many clients the cache holds at most.
pub const CLIENT_CACHE_CAPACITY: usize = 10_000;

/// Found clients by id, each with the instant it is forgotten.
type Entries = LruCache<Box<str>, (Arc<Client>, Instant)>;

/// Found clients, each until its time is up.
pub(crate) struct ClientCache {
    store: Arc<dyn ClientStore>,
    ttl: Duration,
    entries: Mutex<Entries>,
}

impl ClientCache {
    pub(crate) fn new(store: Arc<dyn ClientStore>, ttl: Duration) -> Self {
        let capacity = NonZeroUsize::new(CLIENT_CACHE_CAPACITY).unwrap_or(NonZeroUsize::MIN);
        Self {
            store,
            ttl,
            entries: Mutex::new(LruCache::new(capacity)),
        }
    }

    /// Forgets `client_id`, so the next lookup asks the store.
    pub(crate) fn forget(&self, client_id: &str) {
        self.entries().pop(client_id);
    }

    fn entries(&self) -> MutexGuard<'_, Entries> {
        // A panic elsewhere while holding the lock left nothing half-done: the map is whole.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait]
impl ClientStore for ClientCache {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        let now = Instant::now();
        {
            let mut entries = self.entries();
            match entries.get(client_id) {
                Some((client, until)) if *until > now => return Ok(Some(Arc::clone(client))),
                Some(_) => {
                    entries.pop(client_id);
                }
                None => {}
            }
        }
        let found = self.store.find_client(client_id).await?;
        if let Some(client) = &found {
            self.entries()
                .put(client_id.into(), (Arc::clone(client), now + self.ttl));
        }
        Ok(found)
    }
}

/// The client registry, forgetting each client it changes in the cache.
pub(crate) struct ForgetfulRegistry {
    pub(crate) registry: Arc<dyn crate::store::Admin>,
    pub(crate) cache: Arc<ClientCache>,
}

#[async_trait]
impl crate::store::Admin for ForgetfulRegistry {
    async fn register_client(&self, client: &Client) -> Result<(), AdminError> {
        let done = self.registry.register_client(client).await;
        self.cache.forget(client.id().as_str());
        done
    }

    async fn replace_client(&self, client: &Client) -> Result<bool, StoreError> {
        let done = self.registry.replace_client(client).await;
        self.cache.forget(client.id().as_str());
        done
    }

    async fn rotate_client_secret(
        &self,
        client_id: &str,
        secret: &SecretVerifier,
        retire_until: UnixTime,
    ) -> Result<bool, StoreError> {
        let done = self
            .registry
            .rotate_client_secret(client_id, secret, retire_until)
            .await;
        self.cache.forget(client_id);
        done
    }

    async fn remove_client(&self, client_id: &str) -> Result<bool, StoreError> {
        let done = self.registry.remove_client(client_id).await;
        self.cache.forget(client_id);
        done
    }
}
