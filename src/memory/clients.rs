//! [`MemoryClientStore`]: registered clients in a map that readers never lock.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use async_trait::async_trait;

use crate::client::Client;
use crate::error::StoreError;
use crate::store::ClientStore;

type Clients = HashMap<Box<str>, Arc<Client>>;

/// An in-memory [`ClientStore`].
///
/// Every token request looks its client up, so lookups take no lock: they read the current
/// snapshot of the map, which registration replaces whole (copy-on-write). Registering is
/// therefore linear in the number of clients: made for the handful to thousands of clients a
/// deployment has, read far more often than changed.
///
/// ```
/// use grantor::{Client, ClientCredentials, GrantType, MemoryClientStore};
///
/// let creds = ClientCredentials::generate().unwrap();
/// let clients = MemoryClientStore::new();
/// clients.insert(
///     Client::confidential(creds.client_id.as_str(), creds.verifier)
///         .grant_types([GrantType::ClientCredentials])
///         .scopes("reports")
///         .build()
///         .unwrap(),
/// );
/// ```
#[derive(Default)]
pub struct MemoryClientStore {
    clients: ArcSwap<Clients>,
    /// Serializes writers, so that no registration is lost between copying the map and
    /// publishing the copy. Readers never take it.
    writer: Mutex<()>,
}

impl MemoryClientStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `client`, replacing any client with the same id.
    pub fn insert(&self, client: Client) {
        self.update(|clients| {
            clients.insert(client.id().as_str().into(), Arc::new(client));
        });
    }

    /// Removes the client registered under `client_id`; returns whether there was one.
    pub fn remove(&self, client_id: &str) -> bool {
        let mut removed = false;
        self.update(|clients| removed = clients.remove(client_id).is_some());
        removed
    }

    /// Publishes a changed copy of the map.
    fn update(&self, change: impl FnOnce(&mut Clients)) {
        let _writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let mut clients = Clients::clone(&self.clients.load());
        change(&mut clients);
        self.clients.store(Arc::new(clients));
    }
}

#[async_trait]
impl ClientStore for MemoryClientStore {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        Ok(self.clients.load().get(client_id).cloned())
    }
}

impl fmt::Debug for MemoryClientStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryClientStore")
            .field("clients", &self.clients.load().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::GrantType;

    fn client(id: &str, scope: &str) -> Client {
        Client::public(id)
            .redirect_uri("https://app.example/cb")
            .grant_types([GrantType::AuthorizationCode])
            .scopes(scope)
            .build()
            .expect("a valid client")
    }

    async fn scope_of(store: &MemoryClientStore, id: &str) -> Option<String> {
        let client = store.find_client(id).await.expect("no store error")?;
        Some(client.scopes().as_str().to_owned())
    }

    #[tokio::test]
    async fn insert_replaces_and_remove_answers_whether_there_was_one() {
        let store = MemoryClientStore::new();
        store.insert(client("a", "profile"));
        store.insert(client("b", "email"));
        store.insert(client("a", "email profile"));
        assert_eq!(
            scope_of(&store, "a").await.as_deref(),
            Some("email profile")
        );
        assert_eq!(scope_of(&store, "b").await.as_deref(), Some("email"));
        assert!(store.remove("a"));
        assert!(!store.remove("a"));
        assert_eq!(scope_of(&store, "a").await, None);
        assert_eq!(format!("{store:?}"), "MemoryClientStore { clients: 1 }");
    }

    #[test]
    fn concurrent_registrations_are_all_kept() {
        let store = MemoryClientStore::new();
        std::thread::scope(|s| {
            for t in 0..4 {
                let store = &store;
                s.spawn(move || {
                    for i in 0..50 {
                        store.insert(client(&format!("client-{t}-{i}"), "profile"));
                    }
                });
            }
        });
        assert_eq!(store.clients.load().len(), 200);
    }
}
