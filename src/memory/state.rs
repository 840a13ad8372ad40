//! Sign-in sessions, attempt counters and single-use values in memory, each bounded: an
//! unauthenticated request can add entries, so each map holds at most a fixed number, sweeps
//! expired entries once it has doubled since its last sweep, and refuses or evicts past its
//! bound as each type says.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::{Attempts, Session};

/// Sessions held at most; past it, new sessions are refused with
/// [`StoreError::unavailable`] (503 `temporarily_unavailable`) until some expire.
pub const MAX_SESSIONS: usize = 100_000;
/// Keys whose attempts are counted at most; past it, expired windows are dropped, then the
/// windows that end soonest (the oldest) until a tenth of the room is free.
pub const MAX_COUNTED_KEYS: usize = 100_000;
/// Single-use values held at most; past it, new ones are refused with
/// [`StoreError::unavailable`] until some expire.
pub const MAX_SINGLE_USE: usize = 100_000;

/// A map whose entries expire, swept when it has doubled since the last sweep.
struct Expiring<K, V> {
    map: HashMap<K, (V, UnixTime)>,
    swept_len: usize,
}

impl<K: std::hash::Hash + Eq, V> Default for Expiring<K, V> {
    fn default() -> Self {
        Self {
            map: HashMap::new(),
            swept_len: 0,
        }
    }
}

impl<K: std::hash::Hash + Eq, V> Expiring<K, V> {
    /// Drops expired entries once the map has doubled since the last sweep, or is at `max`.
    fn sweep_if_grown(&mut self, now: UnixTime, max: usize) {
        let len = self.map.len();
        if len >= 1024.max(self.swept_len * 2) || len >= max {
            self.purge(now);
        }
    }

    fn purge(&mut self, now: UnixTime) -> usize {
        let before = self.map.len();
        self.map.retain(|_, (_, expires_at)| *expires_at > now);
        self.swept_len = self.map.len();
        before - self.map.len()
    }

    fn live<Q>(&self, key: &Q, now: UnixTime) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.map
            .get(key)
            .filter(|(_, expires_at)| *expires_at > now)
            .map(|(value, _)| value)
    }

    fn take<Q>(&mut self, key: &Q, now: UnixTime) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        let (value, expires_at) = self.map.remove(key)?;
        (expires_at > now).then_some(value)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock means a panic elsewhere while it was held; every change here is one map
    // call, so the map is still consistent.
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
        let mut sessions = lock(&self.0);
        sessions.sweep_if_grown(now, MAX_SESSIONS);
        if sessions.map.len() >= MAX_SESSIONS {
            return Err(StoreError::unavailable(
                "too many sign-ins are in progress; try again later",
            ));
        }
        let expires_at = session.expires_at;
        sessions.map.insert(*id, (session, expires_at));
        Ok(())
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

/// Attempt counts by key, each in a window that ends at its expiry.
#[derive(Default)]
pub(crate) struct Counters(Mutex<Expiring<Box<str>, u32>>);

impl Counters {
    pub(crate) fn record(&self, key: &str, window: Duration, now: UnixTime) -> Attempts {
        let mut counters = lock(&self.0);
        counters.sweep_if_grown(now, MAX_COUNTED_KEYS);
        if counters.map.len() >= MAX_COUNTED_KEYS && !counters.map.contains_key(key) {
            evict_soonest(&mut counters.map, MAX_COUNTED_KEYS / 10);
        }
        let entry = counters
            .map
            .entry(key.into())
            .or_insert((0, now.plus(window)));
        if entry.1 <= now {
            *entry = (0, now.plus(window));
        }
        entry.0 = entry.0.saturating_add(1);
        Attempts::new(entry.0, entry.1)
    }

    pub(crate) fn get(&self, key: &str, now: UnixTime) -> Option<Attempts> {
        let counters = lock(&self.0);
        let (count, resets_at) = counters.map.get(key).filter(|(_, end)| *end > now)?;
        Some(Attempts::new(*count, *resets_at))
    }

    pub(crate) fn clear(&self, key: &str) {
        lock(&self.0).map.remove(key);
    }

    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        lock(&self.0).purge(now)
    }
}

/// Removes the `count` entries whose windows end soonest: they would have been forgotten first.
fn evict_soonest(map: &mut HashMap<Box<str>, (u32, UnixTime)>, count: usize) {
    let mut ends: Vec<UnixTime> = map.values().map(|(_, end)| *end).collect();
    let Some(cut) = count.checked_sub(1) else {
        return;
    };
    if cut >= ends.len() {
        map.clear();
        return;
    }
    let (_, &mut threshold, _) = ends.select_nth_unstable(cut);
    let mut left = count;
    map.retain(|_, (_, end)| {
        let evict = left > 0 && *end <= threshold;
        left -= usize::from(evict);
        !evict
    });
}

/// Single-use values by key.
#[derive(Default)]
pub(crate) struct SingleUse(Mutex<Expiring<Box<str>, Vec<u8>>>);

impl SingleUse {
    pub(crate) fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let mut values = lock(&self.0);
        if values.live(key, now).is_some() {
            return Ok(false);
        }
        values.sweep_if_grown(now, MAX_SINGLE_USE);
        if values.map.len() >= MAX_SINGLE_USE {
            return Err(StoreError::unavailable(
                "too many single-use values are held; try again later",
            ));
        }
        values.map.insert(key.into(), (value.to_vec(), expires_at));
        Ok(true)
    }

    pub(crate) fn peek(&self, key: &str, now: UnixTime) -> Option<Vec<u8>> {
        lock(&self.0).live(key, now).cloned()
    }

    pub(crate) fn take(&self, key: &str, now: UnixTime) -> Option<Vec<u8>> {
        lock(&self.0).take(key, now)
    }

    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        lock(&self.0).purge(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: UnixTime = UnixTime::from_secs(1_000);

    #[test]
    fn the_counter_table_evicts_the_oldest_windows_and_never_clears_itself() {
        let counters = Counters::default();
        for i in 0..MAX_COUNTED_KEYS {
            let at = T0.plus(Duration::from_secs(i as u64 / 1000));
            counters.record(&format!("k{i}"), Duration::from_secs(600), at);
        }
        let later = T0.plus(Duration::from_secs(200));
        counters.record("newcomer", Duration::from_secs(600), later);
        let held = lock(&counters.0).map.len();
        assert!(held <= MAX_COUNTED_KEYS, "{held}");
        assert!(held >= MAX_COUNTED_KEYS - MAX_COUNTED_KEYS / 10, "{held}");
        assert!(counters.get("newcomer", later).is_some());
        assert!(
            counters
                .get(&format!("k{}", MAX_COUNTED_KEYS - 1), later)
                .is_some()
        );
        assert!(
            counters.get("k0", later).is_none(),
            "the oldest window went first"
        );
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
