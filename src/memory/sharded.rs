//! Maps split over independently locked shards, for the codes and tokens.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Mutex, MutexGuard};

const SHARDS: usize = 64;

/// Hashes keys that are already uniformly random (digests, random ids) by taking their bits
/// as they are.
#[derive(Default)]
pub(crate) struct PrehashedHasher(u64);

impl Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = self.0.rotate_left(5) ^ value;
    }

    fn write_u128(&mut self, value: u128) {
        self.write_u64(value as u64 ^ (value >> 64) as u64);
    }
}

pub(crate) type PrehashedMap<K, V> = HashMap<K, V, BuildHasherDefault<PrehashedHasher>>;

struct Shard<K, V> {
    map: PrehashedMap<K, V>,
    /// The size after the last sweep of expired entries; a sweep runs when the shard has
    /// doubled since, which keeps cleanup amortized O(1) per insert.
    swept_len: usize,
}

/// A map split over independently locked shards, chosen by the key's own bits.
pub(crate) struct Sharded<K, V> {
    shards: Box<[Locked<K, V>]>,
}

/// A shard's lock on cache lines of its own: two threads working in different shards never
/// write to the same line (128 bytes covers the adjacent-line prefetcher as well).
#[repr(align(128))]
struct Locked<K, V>(Mutex<Shard<K, V>>);

/// Keys that pick their shard from their own (random) bits.
pub(crate) trait ShardKey: Hash + Eq {
    fn shard(&self) -> usize;
}

const MIN_SWEEP_LEN: usize = 1024;

impl<K: ShardKey, V> Sharded<K, V> {
    pub(crate) fn new() -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| {
                    Locked(Mutex::new(Shard {
                        map: PrehashedMap::default(),
                        swept_len: 0,
                    }))
                })
                .collect(),
        }
    }

    fn lock(&self, key: &K) -> MutexGuard<'_, Shard<K, V>> {
        lock(&self.shards[key.shard() % SHARDS].0)
    }

    /// Runs `f` on the key's entry under its shard lock.
    pub(crate) fn with<T>(&self, key: &K, f: impl FnOnce(&mut PrehashedMap<K, V>) -> T) -> T {
        f(&mut self.lock(key).map)
    }

    /// Inserts, first sweeping the shard of entries `expired` says are dead once it has doubled
    /// since its last sweep.
    pub(crate) fn insert(&self, key: K, value: V, expired: impl Fn(&V) -> bool) {
        let mut shard = self.lock(&key);
        if shard.map.len() >= MIN_SWEEP_LEN.max(shard.swept_len * 2) {
            shard.map.retain(|_, v| !expired(v));
            shard.swept_len = shard.map.len();
        }
        shard.map.insert(key, value);
    }

    /// Removes every entry `expired` says is dead, shard by shard; answers how many went.
    pub(crate) fn retain_live(&self, expired: impl Fn(&V) -> bool) -> usize {
        let mut removed = 0;
        for Locked(shard) in self.shards.iter() {
            let mut shard = lock(shard);
            let before = shard.map.len();
            shard.map.retain(|_, v| !expired(v));
            removed += before - shard.map.len();
            shard.swept_len = shard.map.len();
        }
        removed
    }

    /// Calls `f` on every entry, shard by shard (a scan: for rare administrator operations).
    pub(crate) fn for_each(&self, mut f: impl FnMut(&V)) {
        for Locked(shard) in self.shards.iter() {
            lock(shard).map.values().for_each(&mut f);
        }
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).map.len()).sum()
    }
}

/// Locks a shard. A poisoned lock means a panic elsewhere while it was held; the maps are only
/// changed by single `insert`/`remove`/`retain` calls, so the data is still consistent.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
