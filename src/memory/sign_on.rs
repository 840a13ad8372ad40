//! Signed-in browsers and remembered approvals in memory, each bounded: only a signed-in user
//! makes either, but a store keeps no table without a bound. Both are indexed by expiry, so an
//! insert drops what has expired first (amortized O(log n)) and past the bound refuses. A user's
//! own sessions are bounded too: a sign-in past `MAX_SESSIONS_PER_USER` forgets their oldest.

use std::collections::HashMap;
use std::sync::Mutex;

use super::state::Expiring;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::{
    Consent, FamilyId, MAX_SESSION_GRANTS, MAX_SESSIONS_PER_USER, UserId, UserSession,
};

/// Signed-in browsers held at most; past it, new sign-ins are refused with
/// [`StoreError::unavailable`] until some expire.
pub(crate) const MAX_USER_SESSIONS: usize = 100_000;
/// Remembered approvals held at most; past it, new ones are refused with
/// [`StoreError::unavailable`] until some expire or are forgotten.
pub(crate) const MAX_CONSENTS: usize = 100_000;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every change leaves the map consistent before anything that could panic.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Signed-in browsers by the digest of their cookie.
#[derive(Default)]
pub(crate) struct UserSessions(Mutex<SessionTable>);

/// The sessions, and which digests each user's are under (checked against `sessions` when
/// read, so an ended or replaced one is skipped; dropped at purge).
#[derive(Default)]
struct SessionTable {
    sessions: Expiring<SecretDigest, UserSession>,
    by_user: HashMap<UserId, Vec<SecretDigest>>,
}

impl UserSessions {
    /// Keeps `session` under `id`; a user already holding [`MAX_SESSIONS_PER_USER`] live
    /// sessions besides it loses the one signed in longest ago.
    pub(crate) fn insert(
        &self,
        id: &SecretDigest,
        session: UserSession,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        let mut table = lock(&self.0);
        let SessionTable { sessions, by_user } = &mut *table;
        let user = session.user.id().clone();
        let mine = by_user.entry(user.clone()).or_default();
        mine.retain(|d| d != id && is_users(sessions, d, &user, now));
        while mine.len() >= MAX_SESSIONS_PER_USER {
            let oldest = (0..mine.len()).min_by_key(|&i| {
                sessions
                    .live(&mine[i], now)
                    .map(|session| session.auth_time)
            });
            let Some(oldest) = oldest else { break };
            sessions.remove(&mine.swap_remove(oldest));
        }
        let expires_at = session.expires_at;
        sessions
            .insert(*id, session, expires_at, now, MAX_USER_SESSIONS)
            .map_err(|_| {
                StoreError::unavailable("too many people are signed in; try again later")
            })?;
        mine.push(*id);
        Ok(())
    }

    pub(crate) fn find(&self, id: &SecretDigest, now: UnixTime) -> Option<UserSession> {
        lock(&self.0).sessions.live(id, now).cloned()
    }

    pub(crate) fn add_grant(
        &self,
        id: &SecretDigest,
        client: &ClientId,
        family: FamilyId,
        now: UnixTime,
    ) -> bool {
        let mut table = lock(&self.0);
        let Some(session) = table.sessions.live_mut(id, now) else {
            return false;
        };
        if session.grants.len() >= MAX_SESSION_GRANTS {
            session.grants.remove(0);
        }
        session.grants.push((client.clone(), family));
        true
    }

    pub(crate) fn end(&self, id: &SecretDigest, now: UnixTime) -> Option<UserSession> {
        lock(&self.0).sessions.take(id, now)
    }

    /// Ends every live session of `user`, under one lock: each goes to one caller.
    pub(crate) fn end_all(&self, user: &UserId, now: UnixTime) -> Vec<UserSession> {
        let mut table = lock(&self.0);
        let SessionTable { sessions, by_user } = &mut *table;
        let Some(mine) = by_user.remove(user) else {
            return Vec::new();
        };
        // A digest another user's session took since is left to it.
        let mut ended = Vec::with_capacity(mine.len());
        for id in &mine {
            if is_users(sessions, id, user, now) {
                ended.extend(sessions.take(id, now));
            }
        }
        ended
    }

    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        let mut table = lock(&self.0);
        let SessionTable { sessions, by_user } = &mut *table;
        let purged = sessions.purge(now);
        by_user.retain(|user, mine| {
            mine.retain(|d| is_users(sessions, d, user, now));
            !mine.is_empty()
        });
        purged
    }
}

/// Whether a live session of `user` is under `id`.
fn is_users(
    sessions: &Expiring<SecretDigest, UserSession>,
    id: &SecretDigest,
    user: &UserId,
    now: UnixTime,
) -> bool {
    sessions
        .live(id, now)
        .is_some_and(|session| session.user.id() == user)
}

/// Remembered approvals by user and client.
#[derive(Default)]
pub(crate) struct Consents(Mutex<Expiring<(UserId, ClientId), Consent>>);

impl Consents {
    pub(crate) fn remember(
        &self,
        user: &UserId,
        client: &ClientId,
        consent: &Consent,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        let key = (user.clone(), client.clone());
        lock(&self.0)
            .insert(key, consent.clone(), expires_at, now, MAX_CONSENTS)
            .map_err(|_| StoreError::unavailable("too many approvals are remembered"))
    }

    pub(crate) fn find(&self, user: &UserId, client: &ClientId, now: UnixTime) -> Option<Consent> {
        let key = (user.clone(), client.clone());
        lock(&self.0).live(&key, now).cloned()
    }

    /// `user`'s live approvals, by client id. A scan: an administrator's listing, never a
    /// request's path.
    pub(crate) fn of_user(&self, user: &UserId, now: UnixTime) -> Vec<(ClientId, Consent)> {
        let consents = lock(&self.0);
        let mut found: Vec<(ClientId, Consent)> = consents
            .live_entries(now)
            .filter(|((of, _), _)| of == user)
            .map(|((_, client), consent)| (client.clone(), consent.clone()))
            .collect();
        found.sort_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));
        found
    }

    pub(crate) fn forget(&self, user: &UserId, client: &ClientId) -> bool {
        let key = (user.clone(), client.clone());
        lock(&self.0).remove(&key).is_some()
    }

    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        lock(&self.0).purge(now)
    }
}
