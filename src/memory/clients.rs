//! [`MemoryClientStore`]: registered clients in a map.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;

use crate::client::Client;
use crate::error::StoreError;
use crate::store::ClientStore;

/// An in-memory [`ClientStore`].
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
#[derive(Debug, Default)]
pub struct MemoryClientStore {
    clients: RwLock<HashMap<String, Arc<Client>>>,
}

impl MemoryClientStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `client`, replacing any client with the same id.
    pub fn insert(&self, client: Client) {
        let mut clients = self.clients.write().unwrap_or_else(|p| p.into_inner());
        clients.insert(client.id().as_str().to_owned(), Arc::new(client));
    }

    /// Removes the client registered under `client_id`; returns whether there was one.
    pub fn remove(&self, client_id: &str) -> bool {
        let mut clients = self.clients.write().unwrap_or_else(|p| p.into_inner());
        clients.remove(client_id).is_some()
    }
}

#[async_trait]
impl ClientStore for MemoryClientStore {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        let clients = self.clients.read().unwrap_or_else(|p| p.into_inner());
        Ok(clients.get(client_id).cloned())
    }
}
