//! Registered clients in a map that readers never lock.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use crate::client::{Client, SecretVerifier};
use crate::clock::UnixTime;

type Map = HashMap<Box<str>, Arc<Client>>;

/// How many parts the map is split into.
const SHARDS: usize = 64;

/// Every token request looks its client up, so lookups take no lock: they read the current
/// snapshot of the client's part of the map, which a change replaces whole (copy-on-write).
/// The map is split into [`SHARDS`] parts by a hash of the client id, so a change (a
/// registration, an RFC 7592 update, which a self-registered client can send as often as it
/// likes) copies one part: a 64th of the clients. Measured on a 2-vCPU machine (release): an
/// update at 20,000 clients 11 µs (copying the whole map took 1.25 ms), at 100,000 clients
/// 63 µs.
pub(crate) struct Clients {
    shards: Box<[ArcSwap<Map>]>,
    hasher: std::hash::RandomState,
    /// Serializes writers, so that no change is lost between copying a part and publishing
    /// the copy. Readers never take it.
    writer: Mutex<()>,
}

impl Default for Clients {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| ArcSwap::default()).collect(),
            hasher: std::hash::RandomState::new(),
            writer: Mutex::new(()),
        }
    }
}

/// Whether a change applies to a client id that is registered or one that is not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    Registered,
    NotRegistered,
}

impl Clients {
    pub(crate) fn find(&self, client_id: &str) -> Option<Arc<Client>> {
        self.shard(client_id).load().get(client_id).cloned()
    }

    fn shard(&self, client_id: &str) -> &ArcSwap<Map> {
        // Truncating the hash is the point: it picks one of a few parts.
        #[allow(clippy::cast_possible_truncation)]
        let index = self.hasher.hash_one(client_id) as usize % SHARDS;
        &self.shards[index]
    }

    /// Puts `client` in the map if its id is registered or not, as `when` says; answers whether
    /// it did.
    pub(crate) fn put(&self, client: &Client, when: When) -> bool {
        self.update(client.id().as_str(), |map| {
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
        self.update(client_id, |map| {
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
        self.update(client_id, |map| map.remove(client_id).is_some())
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|shard| shard.load().len()).sum()
    }

    /// Publishes a changed copy of `client_id`'s part of the map (only when `change` changed
    /// it).
    fn update(&self, client_id: &str, change: impl FnOnce(&mut Map) -> bool) -> bool {
        let _writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let shard = self.shard(client_id);
        let mut map = Map::clone(&shard.load());
        let changed = change(&mut map);
        if changed {
            shard.store(Arc::new(map));
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
