//! Registered clients in a map that readers never lock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use crate::client::{Client, SecretVerifier};
use crate::clock::UnixTime;

type Map = HashMap<Box<str>, Arc<Client>>;

/// Every token request looks its client up, so lookups take no lock: they read the current
/// snapshot of the map, which registration replaces whole (copy-on-write). Registering is
/// therefore linear in the number of clients: made for the handful to thousands of clients a
/// deployment has, read far more often than changed.
#[derive(Default)]
pub(crate) struct Clients {
    map: ArcSwap<Map>,
    /// Serializes writers, so that no registration is lost between copying the map and
    /// publishing the copy. Readers never take it.
    writer: Mutex<()>,
}

/// Whether a change applies to a client id that is registered or one that is not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    Registered,
    NotRegistered,
}

impl Clients {
    pub(crate) fn find(&self, client_id: &str) -> Option<Arc<Client>> {
        self.map.load().get(client_id).cloned()
    }

    /// Puts `client` in the map if its id is registered or not, as `when` says; answers whether
    /// it did.
    pub(crate) fn put(&self, client: &Client, when: When) -> bool {
        self.update(|map| {
            let registered = map.contains_key(client.id().as_str());
            let apply = registered == (when == When::Registered);
            if apply {
                map.insert(client.id().as_str().into(), Arc::new(client.clone()));
            }
            apply
        })
    }

    /// Rotates the secret of the confidential client `client_id` (see
    /// [`Admin::rotate_client_secret`](crate::store::Admin::rotate_client_secret)); answers
    /// whether there was one. Under the writer lock, so no concurrent change is lost.
    pub(crate) fn rotate_secret(
        &self,
        client_id: &str,
        secret: &SecretVerifier,
        until: UnixTime,
    ) -> bool {
        self.update(|map| {
            let rotated = map
                .get(client_id)
                .and_then(|client| client.with_rotated_secret(secret.clone(), until));
            match rotated {
                Some(client) => {
                    map.insert(client_id.into(), Arc::new(client));
                    true
                }
                None => false,
            }
        })
    }

    /// Removes the client registered under `client_id`; answers whether there was one.
    pub(crate) fn remove(&self, client_id: &str) -> bool {
        self.update(|map| map.remove(client_id).is_some())
    }

    pub(crate) fn len(&self) -> usize {
        self.map.load().len()
    }

    /// Publishes a changed copy of the map (only when `change` changed it).
    fn update(&self, change: impl FnOnce(&mut Map) -> bool) -> bool {
        let _writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let mut map = Map::clone(&self.map.load());
        let changed = change(&mut map);
        if changed {
            self.map.store(Arc::new(map));
        }
        changed
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

    #[test]
    fn concurrent_registrations_are_all_kept() {
        let clients = Clients::default();
        std::thread::scope(|s| {
            for t in 0..4 {
                let clients = &clients;
                s.spawn(move || {
                    for i in 0..50 {
                        let id = format!("client-{t}-{i}");
                        assert!(clients.put(&client(&id, "profile"), When::NotRegistered));
                    }
                });
            }
        });
        assert_eq!(clients.len(), 200);
        assert!(!clients.put(&client("client-0-0", "email"), When::NotRegistered));
        assert!(clients.put(&client("client-0-0", "email"), When::Registered));
        assert_eq!(
            clients.find("client-0-0").unwrap().scopes().as_str(),
            "email"
        );
    }
}
