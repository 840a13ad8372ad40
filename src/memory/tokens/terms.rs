//! The client, scope and audience of a family, kept once for every family that has the same
//! three: a client's client-credentials tokens each start a family of their own, and a million
//! of them would otherwise hold a million copies of the same 72 bytes.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault};
use std::sync::{Arc, Mutex};

use crate::audience::Audience;
use crate::client::ClientId;
use crate::memory::sharded::{PrehashedHasher, lock};
use crate::store::Authorization;

/// What a family was granted, besides its user: shared, never changed.
#[derive(PartialEq, Eq)]
pub(super) struct Terms {
    pub(super) client_id: ClientId,
    pub(super) scope: crate::scope::Scope,
    pub(super) audience: Audience,
}

impl Terms {
    fn of(authorization: &Authorization) -> Self {
        Self {
            client_id: authorization.client_id.clone(),
            scope: authorization.scope.clone(),
            audience: authorization.audience.clone(),
        }
    }
}

const SHARDS: usize = 16;

/// Below this many entries a shard is not swept.
const MIN_SWEEP_LEN: usize = 64;

/// The terms in use, by a keyed hash of their content (client ids and scopes come from
/// outside, so the hash is SipHash with this table's random keys). Split over a few locks, so
/// that threads minting for different clients seldom meet.
pub(super) struct Interned {
    hasher: std::hash::RandomState,
    shards: Box<[Mutex<Shard>]>,
}

#[derive(Default)]
struct Shard {
    terms: HashMap<u64, Arc<Terms>, BuildHasherDefault<PrehashedHasher>>,
    /// The size after the last sweep; the next runs when the shard has doubled since.
    swept_len: usize,
}

impl Default for Interned {
    fn default() -> Self {
        Self {
            hasher: std::hash::RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl Interned {
    /// The shared terms of `authorization`.
    pub(super) fn of(&self, authorization: &Authorization) -> Arc<Terms> {
        let hash = self.hasher.hash_one((
            authorization.client_id.as_str(),
            authorization.scope.as_str(),
            authorization.audience.as_str(),
        ));
        // Truncating the hash is the point: it picks one of a few shards.
        #[allow(clippy::cast_possible_truncation)]
        let mut shard = lock(&self.shards[hash as usize % SHARDS]);
        if let Some(terms) = shard.terms.get(&hash)
            && terms.client_id == authorization.client_id
            && terms.scope == authorization.scope
            && terms.audience == authorization.audience
        {
            return Arc::clone(terms);
        }
        let terms = Arc::new(Terms::of(authorization));
        if shard.terms.len() >= MIN_SWEEP_LEN.max(shard.swept_len * 2) {
            shard.sweep();
        }
        // A different value under the same 64-bit hash (not to be expected, and nobody can aim
        // at it) keeps the one already there: the new family's terms are then its own.
        shard
            .terms
            .entry(hash)
            .or_insert_with(|| Arc::clone(&terms));
        terms
    }

    /// Forgets the terms no family holds any more; answers how many went.
    pub(super) fn sweep(&self) -> usize {
        self.shards.iter().map(|shard| lock(shard).sweep()).sum()
    }
}

impl Shard {
    fn sweep(&mut self) -> usize {
        let before = self.terms.len();
        self.terms.retain(|_, terms| Arc::strong_count(terms) > 1);
        self.swept_len = self.terms.len();
        before - self.swept_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::Scope;

    fn authorization(client: &str, scope: &str) -> Authorization {
        Authorization::new(
            ClientId::new(client).unwrap(),
            None,
            Scope::parse(scope).unwrap(),
        )
    }

    #[test]
    fn the_same_terms_are_shared_and_different_ones_are_not() {
        let interned = Interned::default();
        let a = interned.of(&authorization("client-a", "profile"));
        let again = interned.of(&authorization("client-a", "profile"));
        let other_scope = interned.of(&authorization("client-a", "email"));
        let other_client = interned.of(&authorization("client-b", "profile"));
        assert!(Arc::ptr_eq(&a, &again));
        assert!(!Arc::ptr_eq(&a, &other_scope));
        assert!(!Arc::ptr_eq(&a, &other_client));
        assert_eq!(other_scope.scope.as_str(), "email");
        assert_eq!(other_client.client_id.as_str(), "client-b");
    }

    #[test]
    fn terms_no_family_holds_are_forgotten() {
        let interned = Interned::default();
        let kept = interned.of(&authorization("client-a", "profile"));
        drop(interned.of(&authorization("client-b", "profile")));
        assert_eq!(interned.sweep(), 1);
        assert!(Arc::ptr_eq(
            &kept,
            &interned.of(&authorization("client-a", "profile"))
        ));
    }
}
