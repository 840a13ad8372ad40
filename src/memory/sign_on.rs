//! Signed-in browsers and remembered approvals in memory, each bounded: only a signed-in user
//! makes either, but a store keeps no table without a bound. Both are indexed by expiry, so an
//! insert drops what has expired first (amortized O(log n)) and past the bound refuses.

use std::sync::Mutex;

use super::state::Expiring;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::store::{FamilyId, MAX_SESSION_GRANTS, UserId, UserSession};

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
pub(crate) struct UserSessions(Mutex<Expiring<SecretDigest, UserSession>>);

impl UserSessions {
    pub(crate) fn insert(
        &self,
        id: &SecretDigest,
        session: UserSession,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        let expires_at = session.expires_at;
        lock(&self.0)
            .insert(*id, session, expires_at, now, MAX_USER_SESSIONS)
            .map_err(|_| StoreError::unavailable("too many people are signed in; try again later"))
    }

    pub(crate) fn find(&self, id: &SecretDigest, now: UnixTime) -> Option<UserSession> {
        lock(&self.0).live(id, now).cloned()
    }

    pub(crate) fn add_grant(
        &self,
        id: &SecretDigest,
        client: &ClientId,
        family: FamilyId,
        now: UnixTime,
    ) -> bool {
        let mut sessions = lock(&self.0);
        let Some(session) = sessions.live_mut(id, now) else {
            return false;
        };
        if session.grants.len() >= MAX_SESSION_GRANTS {
            session.grants.remove(0);
        }
        session.grants.push((client.clone(), family));
        true
    }

    pub(crate) fn end(&self, id: &SecretDigest, now: UnixTime) -> Option<UserSession> {
        lock(&self.0).take(id, now)
    }

    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        lock(&self.0).purge(now)
    }
}

/// Remembered approvals by user and client.
#[derive(Default)]
pub(crate) struct Consents(Mutex<Expiring<(UserId, ClientId), Scope>>);

impl Consents {
    pub(crate) fn remember(
        &self,
        user: &UserId,
        client: &ClientId,
        scope: &Scope,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        let key = (user.clone(), client.clone());
        lock(&self.0)
            .insert(key, scope.clone(), expires_at, now, MAX_CONSENTS)
            .map_err(|_| StoreError::unavailable("too many approvals are remembered"))
    }

    pub(crate) fn find(&self, user: &UserId, client: &ClientId, now: UnixTime) -> Option<Scope> {
        let key = (user.clone(), client.clone());
        lock(&self.0).live(&key, now).cloned()
    }

    pub(crate) fn forget(&self, user: &UserId, client: &ClientId) -> bool {
        let key = (user.clone(), client.clone());
        lock(&self.0).remove(&key).is_some()
    }

    pub(crate) fn purge(&self, now: UnixTime) -> usize {
        lock(&self.0).purge(now)
    }
}
