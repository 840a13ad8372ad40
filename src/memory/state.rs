//! Sign-in sessions, attempt counters and single-use values in memory, each bounded: an
//! unauthenticated request can add entries, so each map holds at most a fixed number and never
//! scans itself whole on a request. Sessions and single-use values are indexed by expiry, and
//! each insert first drops the entries that have expired (each entry is dropped once, so the
//! cost is amortized O(log n)); past the bound, new ones are refused. Attempt counters are kept
//! in order of count and last use, and past their bound the key counted least is forgotten
//! (server-wide counters never are).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::{Attempts, Session, namespace};

/// Sessions held at most; past it, new sessions are refused with
/// [`StoreError::unavailable`] (503 `temporarily_unavailable`) until some expire.
pub(crate) const MAX_SESSIONS: usize = 100_000;
/// Keys whose attempts are counted at most, server-wide counters apart; past it, the key with
/// the lowest count (the least recently used of those) is forgotten for each new one.
pub(crate) const MAX_COUNTED_KEYS: usize = 100_000;
/// Single-use values held at most of each kind; past it, new ones of that kind are refused
/// with [`StoreError::unavailable`] until some expire.
pub(crate) const MAX_SINGLE_USE: usize = crate::store::SINGLE_USE_PER_KIND;
/// Pieces of key material held at most of each kind (grantor keeps a handful: one sealing key a day, a few
/// signing keys, a DPoP nonce per period); past it, new ones are refused until some expire.
pub(crate) const MAX_KEYS: usize = 1_024;
/// The longest attempt-counter key accepted, in bytes.
pub(crate) const MAX_KEY_LEN: usize = 254;

/// A map whose entries expire, with an index by expiry so that expired entries are dropped
/// from the front without a scan.
pub(crate) struct Expiring<K, V> {
    map: HashMap<K, (V, UnixTime, u64)>,
    by_expiry: BTreeMap<(UnixTime, u64), K>,
    inserted: u64,
}

impl<K, V> Default for Expiring<K, V> {
    fn default() -> Self {
        Self {
            map: HashMap::new(),
            by_expiry: BTreeMap::new(),
            inserted: 0,
        }
    }
}

impl<K: std::hash::Hash + Eq + Clone, V> Expiring<K, V> {
    /// Drops every entry expired at `now`, soonest first: O(log n) per dropped entry.
    pub(crate) fn purge(&mut self, now: UnixTime) -> usize {
        let mut dropped = 0;
        while let Some(entry) = self.by_expiry.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            self.map.remove(&key);
            dropped += 1;
        }
        dropped
    }

    /// Keeps `value` under `key` until `expires_at`, after dropping what has expired; refused
    /// when `max` live entries are held.
    pub(crate) fn insert(
        &mut self,
        key: K,
        value: V,
        expires_at: UnixTime,
        now: UnixTime,
        max: usize,
    ) -> Result<(), StoreError> {
        self.purge(now);
        self.remove(&key);
        if self.map.len() >= max {
            return Err(StoreError::unavailable(
                "too many values are held; try again later",
            ));
        }
        self.inserted += 1;
        self.by_expiry
            .insert((expires_at, self.inserted), key.clone());
        self.map.insert(key, (value, expires_at, self.inserted));
        Ok(())
    }

    pub(crate) fn remove<Q>(&mut self, key: &Q) -> Option<(V, UnixTime)>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        let (value, expires_at, seq) = self.map.remove(key)?;
        self.by_expiry.remove(&(expires_at, seq));
        Some((value, expires_at))
    }

    pub(crate) fn live<Q>(&self, key: &Q, now: UnixTime) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.map
            .get(key)
            .filter(|(_, expires_at, _)| *expires_at > now)
            .map(|(value, _, _)| value)
    }

    /// Every live key at `now` with its expiry, in no order.
    pub(crate) fn live_expiries(&self, now: UnixTime) -> impl Iterator<Item = (&K, UnixTime)> {
        self.map
            .iter()
            .filter(move |(_, (_, expires_at, _))| *expires_at > now)
            .map(|(key, (_, expires_at, _))| (key, *expires_at))
    }

    /// Every live entry at `now`, in no order.
    pub(crate) fn live_entries(&self, now: UnixTime) -> impl Iterator<Item = (&K, &V)> {
        self.map
            .iter()
            .filter(move |(_, (_, expires_at, _))| *expires_at > now)
            .map(|(key, (value, _, _))| (key, value))
    }

    /// The live value under `key`, to change in place (its expiry stays).
    pub(crate) fn live_mut<Q>(&mut self, key: &Q, now: UnixTime) -> Option<&mut V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.map
            .get_mut(key)
            .filter(|(_, expires_at, _)| *expires_at > now)
            .map(|(value, _, _)| value)
    }

    pub(crate) fn take<Q>(&mut self, key: &Q, now: UnixTime) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        let (value, expires_at) = self.remove(key)?;
        (expires_at > now).then_some(value)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock means a panic elsewhere while it was held; every change here leaves the
    // maps consistent before anything that could panic.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sign-in sessions by the digest of their id.
#[derive(Default)]
pub(crate) struct Sessions(Mutex<Expiring<SecretDigest, Session>>);

impl Sessions {
    pub(crate) fn insert(
        &self,
        id: &SecretDigest,
        session: Session,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        let expires_at = session.expires_at;
        lock(&self.0)
            .insert(*id, session, expires_at, now, MAX_SESSIONS)
            .map_err(|_| {
                StoreError::unavailable("too many sign-ins are in progress; try again later")
            })
    }

    pub(crate) fn find(&self, id: &SecretDigest, now: UnixTime) -> Option<Session> {
        lock(&self.0).live(id, now).cloned()
    }

    pub(crate) fn take(&self, id: &SecretDigest, now: UnixTime) -> Option<Session> {
        lock(&self.0).take(id, now)
    }

    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        lock(&self.0).purge(now)
    }
}

/// Attempt counts by key, each in a window that ends at its `resets_at`.
///
/// The server-wide counters ([`namespace::is_server_wide`]: a fixed handful of names, such as
/// the registration limit) sit apart and are never forgotten. Every other key counts against
/// [`MAX_COUNTED_KEYS`]; past it, the key with the lowest count is forgotten, the least
/// recently used of those first. A flood of new keys (unknown usernames, say) thus forgets
/// only keys counted as rarely as its own, never a locked account (its count is past the
/// throttle's limit) unless the flood holds that many live keys at a higher count.
#[derive(Default)]
pub(crate) struct Counters(Mutex<CounterTable>);

#[derive(Default)]
struct CounterTable {
    server_wide: HashMap<Box<str>, Attempts>,
    keyed: HashMap<Arc<str>, (Attempts, u64)>,
    /// Every key of `keyed` by its count and last use: the first is forgotten next.
    order: BTreeMap<(u32, u64), Arc<str>>,
    uses: u64,
}

/// `attempts` with one more counted at `now`, in a window that starts again once passed.
fn counted(attempts: Option<Attempts>, window: Duration, now: UnixTime) -> Attempts {
    let mut attempts = attempts
        .filter(|a| a.resets_at > now)
        .unwrap_or_else(|| Attempts::new(0, now.plus(window)));
    attempts.count = attempts.count.saturating_add(1);
    attempts
}

impl CounterTable {
    fn record(&mut self, key: &str, window: Duration, now: UnixTime) -> Attempts {
        if namespace::is_server_wide(key) {
            let attempts = counted(self.server_wide.get(key).copied(), window, now);
            self.server_wide.insert(key.into(), attempts);
            return attempts;
        }
        self.uses += 1;
        let uses = self.uses;
        if let Some((attempts, used)) = self.keyed.get_mut(key) {
            let shared = self.order.remove(&(attempts.count, *used));
            *attempts = counted(Some(*attempts), window, now);
            *used = uses;
            let shared = shared.unwrap_or_else(|| key.into());
            self.order.insert((attempts.count, uses), shared);
            return *attempts;
        }
        while self.keyed.len() >= MAX_COUNTED_KEYS {
            let Some((_, forgotten)) = self.order.pop_first() else {
                break;
            };
            self.keyed.remove(&forgotten);
        }
        let attempts = counted(None, window, now);
        let shared: Arc<str> = key.into();
        self.order
            .insert((attempts.count, uses), Arc::clone(&shared));
        self.keyed.insert(shared, (attempts, uses));
        attempts
    }

    fn get(&self, key: &str) -> Option<Attempts> {
        match self.server_wide.get(key) {
            Some(attempts) => Some(*attempts),
            None => self.keyed.get(key).map(|(attempts, _)| *attempts),
        }
    }

    fn clear(&mut self, key: &str) {
        self.server_wide.remove(key);
        if let Some((attempts, used)) = self.keyed.remove(key) {
            self.order.remove(&(attempts.count, used));
        }
    }
}

impl Counters {
    pub(crate) fn record(
        &self,
        key: &str,
        window: Duration,
        now: UnixTime,
    ) -> Result<Attempts, StoreError> {
        if key.len() > MAX_KEY_LEN {
            return Err(StoreError::failed("an attempt-counter key is too long"));
        }
        Ok(lock(&self.0).record(key, window, now))
    }

    pub(crate) fn get(&self, key: &str, now: UnixTime) -> Option<Attempts> {
        lock(&self.0).get(key).filter(|a| a.resets_at > now)
    }

    pub(crate) fn clear(&self, key: &str) {
        lock(&self.0).clear(key);
    }

    /// Drops expired windows: a scan, for the host's periodic purge, never a request.
    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        let mut table = lock(&self.0);
        let before = table.server_wide.len() + table.keyed.len();
        table.server_wide.retain(|_, a| a.resets_at > now);
        let expired: Vec<Arc<str>> = table
            .keyed
            .iter()
            .filter(|(_, (a, _))| a.resets_at <= now)
            .map(|(key, _)| Arc::clone(key))
            .collect();
        for key in &expired {
            table.clear(key);
        }
        before - table.server_wide.len() - table.keyed.len()
    }
}

/// Values kept once under a key until they expire, at most `MAX` of each kind
/// ([`namespace::kind`]: pushed requests, DPoP proof ids, client assertion ids, ...), so that
/// filling one kind refuses no other: the single-use values and, apart from them, the key
/// material.
pub(crate) struct Once<const MAX: usize>(Mutex<HashMap<&'static str, Values>>);

/// The values of one kind.
type Values = Expiring<Box<str>, Vec<u8>>;

/// Single-use values by key.
pub(crate) type SingleUse = Once<MAX_SINGLE_USE>;
/// Key material by name.
pub(crate) type Keys = Once<MAX_KEYS>;

impl<const MAX: usize> Default for Once<MAX> {
    fn default() -> Self {
        Self(Mutex::default())
    }
}

impl<const MAX: usize> Once<MAX> {
    pub(crate) fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let mut kinds = lock(&self.0);
        let values = kinds.entry(namespace::kind(key)).or_default();
        if values.live(key, now).is_some() {
            return Ok(false);
        }
        values
            .insert(key.into(), value.to_vec(), expires_at, now, MAX)
            .map_err(|_| {
                StoreError::unavailable("too many values of this kind are held; try again later")
            })?;
        Ok(true)
    }

    pub(crate) fn peek(&self, key: &str, now: UnixTime) -> Option<Vec<u8>> {
        let kinds = lock(&self.0);
        kinds.get(namespace::kind(key))?.live(key, now).cloned()
    }

    pub(crate) fn take(&self, key: &str, now: UnixTime) -> Option<Vec<u8>> {
        let mut kinds = lock(&self.0);
        kinds.get_mut(namespace::kind(key))?.take(key, now)
    }

    /// Every live key at `now` with its expiry, by key. A scan: for an administrator.
    pub(crate) fn names(&self, now: UnixTime) -> Vec<(String, UnixTime)> {
        let kinds = lock(&self.0);
        let mut names: Vec<(String, UnixTime)> = kinds
            .values()
            .flat_map(|values| values.live_expiries(now))
            .map(|(key, expires_at)| (key.to_string(), expires_at))
            .collect();
        names.sort();
        names
    }

    /// Replaces the live value under `key`, its expiry unchanged; `false` when none lives.
    pub(crate) fn replace(&self, key: &str, value: &[u8], now: UnixTime) -> bool {
        let mut kinds = lock(&self.0);
        let Some(values) = kinds.get_mut(namespace::kind(key)) else {
            return false;
        };
        match values.live_mut(key, now) {
            Some(kept) => {
                *kept = value.to_vec();
                true
            }
            None => false,
        }
    }

    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        let mut kinds = lock(&self.0);
        kinds.values_mut().map(|values| values.purge(now)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: UnixTime = UnixTime::from_secs(1_000);

    #[test]
    fn a_flood_of_new_keys_forgets_keys_counted_once_never_a_locked_account_or_a_server_wide_limit()
    {
        let counters = Counters::default();
        let window = Duration::from_secs(600);
        for _ in 0..11 {
            counters.record("signin:locked", window, T0).unwrap();
        }
        counters
            .record(namespace::REGISTRATIONS, window, T0)
            .unwrap();
        counters.record("twice", window, T0).unwrap();
        counters.record("twice", window, T0).unwrap();
        // Twice the table's bound of keys counted once each, the flood of unknown usernames.
        for i in 0..2 * MAX_COUNTED_KEYS {
            counters.record(&format!("k{i}"), window, T0).unwrap();
        }
        assert_eq!(lock(&counters.0).keyed.len(), MAX_COUNTED_KEYS);
        assert_eq!(counters.get("signin:locked", T0).map(|a| a.count), Some(11));
        assert_eq!(counters.get("twice", T0).map(|a| a.count), Some(2));
        let registrations = counters.get(namespace::REGISTRATIONS, T0);
        assert_eq!(registrations.map(|a| a.count), Some(1));
        // The oldest of the flood went first; the newest stay.
        assert!(counters.get("k0", T0).is_none());
        let newest = format!("k{}", 2 * MAX_COUNTED_KEYS - 1);
        assert!(counters.get(&newest, T0).is_some());
    }

    #[test]
    fn among_keys_counted_alike_the_least_recently_used_is_forgotten() {
        let counters = Counters::default();
        let window = Duration::from_secs(600);
        for i in 0..MAX_COUNTED_KEYS {
            counters.record(&format!("k{i}"), window, T0).unwrap();
        }
        counters.clear("k0");
        counters.record("k0", window, T0).unwrap();
        counters.record("newcomer", window, T0).unwrap();
        assert_eq!(lock(&counters.0).keyed.len(), MAX_COUNTED_KEYS);
        assert!(counters.get("k0", T0).is_some(), "used again, kept");
        assert!(
            counters.get("k1", T0).is_none(),
            "the least recently used went"
        );
        assert!(counters.get("k2", T0).is_some(), "only one key went");
    }

    #[test]
    fn purge_drops_expired_windows_of_both_kinds_of_counter() {
        let counters = Counters::default();
        let window = Duration::from_secs(60);
        counters.record("k", window, T0).unwrap();
        counters
            .record(namespace::REGISTRATIONS, window, T0)
            .unwrap();
        assert_eq!(counters.purge(T0), 0);
        assert_eq!(counters.purge(T0.plus(window)), 2);
        let table = lock(&counters.0);
        assert!(table.keyed.is_empty() && table.order.is_empty() && table.server_wide.is_empty());
    }

    #[test]
    fn counter_keys_longer_than_254_bytes_are_refused() {
        let counters = Counters::default();
        let window = Duration::from_secs(60);
        assert!(counters.record(&"k".repeat(254), window, T0).is_ok());
        assert!(counters.record(&"k".repeat(255), window, T0).is_err());
    }

    #[test]
    fn a_counter_window_starts_again_once_it_has_passed() {
        let counters = Counters::default();
        let window = Duration::from_secs(60);
        counters.record("k", window, T0).unwrap();
        assert_eq!(counters.record("k", window, T0).unwrap().count, 2);
        let later = T0.plus(window);
        assert_eq!(counters.record("k", window, later).unwrap().count, 1);
    }

    #[test]
    fn expired_single_use_values_are_dropped_on_insert_without_a_sweep() {
        let values = SingleUse::default();
        let soon = T0.plus(Duration::from_secs(1));
        let late = T0.plus(Duration::from_secs(86_400));
        assert!(values.insert_once("long", b"v", late, T0).unwrap());
        for i in 0..1000 {
            assert!(
                values
                    .insert_once(&format!("s{i}"), b"v", soon, T0)
                    .unwrap()
            );
        }
        values.insert_once("next", b"v", late, soon).unwrap();
        assert_eq!(
            lock(&values.0)["other"].map.len(),
            2,
            "expired values behind a long one went"
        );
    }

    #[test]
    fn one_kind_of_single_use_value_filled_refuses_no_other() {
        let values = SingleUse::default();
        let late = T0.plus(Duration::from_secs(600));
        for i in 0..MAX_SINGLE_USE {
            let key = format!("grantor:assertion:{i}");
            assert!(values.insert_once(&key, b"", late, T0).unwrap());
        }
        let refused = values.insert_once("grantor:assertion:x", b"", late, T0);
        assert_eq!(
            refused.unwrap_err().kind(),
            crate::error::StoreErrorKind::Unavailable
        );
        for key in ["grantor:par:r", "grantor:signed-in:f", "grantor:device:d"] {
            assert!(values.insert_once(key, b"v", late, T0).unwrap(), "{key}");
            assert_eq!(values.take(key, T0).as_deref(), Some(&b"v"[..]));
        }
    }

    #[test]
    fn sessions_past_the_bound_are_refused_until_some_expire() {
        let sessions = Sessions::default();
        let session = |at: UnixTime| Session::new(String::new(), SecretDigest::of("c"), at);
        let expires = T0.plus(Duration::from_secs(60));
        for i in 0..MAX_SESSIONS {
            let id = SecretDigest::of(&i.to_string());
            sessions.insert(&id, session(expires), T0).unwrap();
        }
        let extra = SecretDigest::of("extra");
        let refused = sessions.insert(&extra, session(expires), T0).unwrap_err();
        assert_eq!(refused.kind(), crate::error::StoreErrorKind::Unavailable);
        let later = expires.plus(Duration::from_secs(1));
        let far = later.plus(Duration::from_secs(60));
        sessions.insert(&extra, session(far), later).unwrap();
        assert_eq!(lock(&sessions.0).map.len(), 1);
    }
}
