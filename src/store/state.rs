//! The seams for state every node must share: sign-in sessions, attempt counters and single-use
//! values. Each keeps what it is handed until an expiry and answers atomically; with them on a
//! shared database, a browser's sign-in may reach a different node on every request and a
//! throttle counts the guesses made at every node.

use std::time::Duration;

use async_trait::async_trait;

use super::records::User;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;

/// A browser's sign-in in progress, kept under the digest of its session id (the host's
/// cookie) until [`Session::expires_at`].
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Session {
    /// The validated authorization request waiting for the user, as grantor wrote it: opaque
    /// to the store, which keeps it as it is (at most a few KiB).
    pub authorization: String,
    /// The digest of the CSRF token the session's forms carry.
    pub csrf: SecretDigest,
    /// The signed-in user, once the sign-in form succeeded.
    pub user: Option<User>,
    /// When the session stops being usable.
    pub expires_at: UnixTime,
}

impl Session {
    /// A session for `authorization` (grantor's serialized pending authorization) whose forms
    /// carry the CSRF token with digest `csrf`, nobody signed in yet.
    pub fn new(authorization: String, csrf: SecretDigest, expires_at: UnixTime) -> Self {
        Self {
            authorization,
            csrf,
            user: None,
            expires_at,
        }
    }

    /// The same session with `user` signed in.
    pub fn signed_in(mut self, user: User) -> Self {
        self.user = Some(user);
        self
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The authorization request may carry a `state` the client considers confidential.
        f.debug_struct("Session")
            .field(
                "authorization",
                &format_args!("<{} bytes>", self.authorization.len()),
            )
            .field("csrf", &self.csrf)
            .field("user", &self.user)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// Keeps sign-in sessions between the authorization request and the user's decision.
///
/// Sessions are keyed by the digest of their id, never the id itself. A session past its
/// `expires_at` is never answered. An implementation bounds what it keeps (the in-memory one
/// holds at most a fixed number and answers [`StoreError::unavailable`] past it; SQL stores
/// drop expired rows at [`Purge::purge_expired`](super::Purge::purge_expired)).
/// In memory, bounded (a database would keep a table keyed by the digest, and drop expired rows
/// when purging):
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// use grantor::async_trait;
/// use grantor::clock::UnixTime;
/// use grantor::store::{SecretDigest, Session, SessionStore, StoreError};
///
/// const MAX_SESSIONS: usize = 100_000;
///
/// #[derive(Default)]
/// struct Sessions(Mutex<HashMap<SecretDigest, Session>>);
///
/// #[async_trait]
/// impl SessionStore for Sessions {
///     async fn insert_session(&self, id: &SecretDigest, session: Session, now: UnixTime)
///         -> Result<(), StoreError> {
///         let mut sessions = self.0.lock().unwrap();
///         sessions.retain(|_, kept| kept.expires_at > now);
///         if sessions.len() >= MAX_SESSIONS {
///             return Err(StoreError::unavailable("too many sign-ins in progress"));
///         }
///         sessions.insert(*id, session);
///         Ok(())
///     }
///     async fn find_session(&self, id: &SecretDigest, now: UnixTime)
///         -> Result<Option<Session>, StoreError> {
///         let sessions = self.0.lock().unwrap();
///         Ok(sessions.get(id).filter(|s| s.expires_at > now).cloned())
///     }
///     async fn take_session(&self, id: &SecretDigest, now: UnixTime)
///         -> Result<Option<Session>, StoreError> {
///         let taken = self.0.lock().unwrap().remove(id); // one lock: one taker
///         Ok(taken.filter(|s| s.expires_at > now))
///     }
/// }
/// # let _ = Sessions::default();
/// ```
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Keeps a new session under `id` (`now` lets the store sweep expired ones meanwhile).
    async fn insert_session(
        &self,
        id: &SecretDigest,
        session: Session,
        now: UnixTime,
    ) -> Result<(), StoreError>;

    /// The live session under `id`, if any.
    async fn find_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError>;

    /// Removes the live session under `id` and answers it: of concurrent callers, exactly one
    /// gets it. grantor takes a session to finish it, and to move it to a new id at sign-in.
    async fn take_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError>;
}

/// A key's attempts in its current window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempts {
    /// Attempts counted in the window, this one included.
    pub count: u32,
    /// When the window ends and the count starts again from zero.
    pub resets_at: UnixTime,
}

impl Attempts {
    /// `count` attempts in a window that ends at `resets_at`.
    pub fn new(count: u32, resets_at: UnixTime) -> Self {
        Self { count, resets_at }
    }
}

/// Counts attempts per key in fixed windows, for throttling (failed sign-ins per account, say).
///
/// Keys are ASCII strings grantor builds, at most 254 bytes; a store may refuse longer ones. A
/// key's window starts at its first attempt and lasts `window`; once it has passed, the next
/// attempt starts a new one.
///
/// grantor counts an attempt *before* the work it throttles (a password hash), so concurrent
/// attempts are all counted. Unauthenticated requests create keys, so an implementation bounds
/// them: the in-memory one keeps at most
/// [`MAX_COUNTED_KEYS`](crate::MemoryStore::MAX_COUNTED_KEYS) and past it forgets the key
/// with the lowest count (never the whole table). An implementation that forgets keys under
/// pressure must not forget a key with a higher count for one with a lower (a locked account
/// would be unlocked) nor the server-wide counters (the registration limit, the limits all
/// self-registered clients share, wrong device user codes): forgetting one resets a limit for
/// everybody. SQL stores forget nothing early; they drop expired windows at
/// [`Purge::purge_expired`](super::Purge::purge_expired).
/// In memory (unbounded here for brevity: a real one bounds its keys as said above):
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
/// use std::time::Duration;
///
/// use grantor::async_trait;
/// use grantor::clock::UnixTime;
/// use grantor::store::{AttemptCounter, Attempts, StoreError};
///
/// #[derive(Default)]
/// struct Counter(Mutex<HashMap<String, Attempts>>);
///
/// #[async_trait]
/// impl AttemptCounter for Counter {
///     async fn record_attempt(&self, key: &str, window: Duration, now: UnixTime)
///         -> Result<Attempts, StoreError> {
///         let mut counts = self.0.lock().unwrap();
///         let fresh = Attempts::new(0, now.plus(window));
///         let attempts = counts.entry(key.to_owned()).or_insert(fresh);
///         if attempts.resets_at <= now {
///             *attempts = fresh; // the window passed: a new one starts with this attempt
///         }
///         *attempts = Attempts::new(attempts.count.saturating_add(1), attempts.resets_at);
///         Ok(*attempts)
///     }
///     async fn attempts(&self, key: &str, now: UnixTime) -> Result<Option<Attempts>, StoreError> {
///         let counts = self.0.lock().unwrap();
///         Ok(counts.get(key).filter(|a| a.resets_at > now).copied())
///     }
///     async fn clear_attempts(&self, key: &str) -> Result<(), StoreError> {
///         self.0.lock().unwrap().remove(key);
///         Ok(())
///     }
/// }
/// # let _ = Counter::default();
/// ```
#[async_trait]
pub trait AttemptCounter: Send + Sync {
    /// Counts one attempt against `key` and answers the count, atomically: of `n` concurrent
    /// calls on a fresh key, each sees a different count from 1 to `n`.
    async fn record_attempt(
        &self,
        key: &str,
        window: Duration,
        now: UnixTime,
    ) -> Result<Attempts, StoreError>;

    /// The attempts of `key` in its live window, without counting one; `None` when it has none.
    async fn attempts(&self, key: &str, now: UnixTime) -> Result<Option<Attempts>, StoreError>;

    /// Forgets `key`'s attempts.
    async fn clear_attempts(&self, key: &str) -> Result<(), StoreError>;
}

/// One-time values grantor's stores keep at most of each kind
/// ([`namespace`](super::namespace)'s kinds: pushed requests, DPoP proof ids, client assertion
/// ids, device flows, …), expired ones not yet dropped included: past it, a new value of that
/// kind is refused with [`StoreError::unavailable`] (503 `temporarily_unavailable`) until some
/// expire, and no other kind is refused. A live value is never evicted to make room.
pub const SINGLE_USE_PER_KIND: usize = 100_000;

/// Bytes of values the SQL stores keep at most of each kind of one-time value (256 MiB), on top
/// of [`SINGLE_USE_PER_KIND`] entries: with keys (at most 128 bytes) and the row's overhead, a
/// kind's table share stays within about 300 MiB. Past it, as past the entries, new values of
/// that kind are refused. (The in-memory store bounds entries only.)
pub const SINGLE_USE_BYTES_PER_KIND: u64 = 256 << 20;

/// Keeps values that may be used once, until an expiry: DPoP proof ids, client assertion ids,
/// spent sign-in forms, pushed authorization requests, device flows. Never key material (that
/// is the [`KeyStore`](super::KeyStore)'s).
///
/// An implementation bounds what it keeps **per kind** ([`namespace`](super::namespace) lists
/// the kinds; a name grantor does not make is of kind `other`), so that a flood of one kind
/// (pushes through self-registered clients, proofs of fresh DPoP keys) refuses no other: the
/// in-memory and SQL stores keep at most [`SINGLE_USE_PER_KIND`] values of each kind (the SQL
/// stores also at most [`SINGLE_USE_BYTES_PER_KIND`] bytes) and answer
/// [`StoreError::unavailable`] past it, never evicting a live value.
///
/// A value is inserted once and taken once. [`peek`](Self::peek) looks without spending: a
/// pushed request is checked against the client presenting it before it is taken (so another
/// client naming it cannot spend it), and a device flow is read by each poll until the user
/// answers. Keys are short ASCII strings grantor builds (at most 128 bytes, listed with their
/// bounds in [`namespace`](super::namespace)), values at most a few KiB.
/// In memory (a sketch bounding the whole map at [`SINGLE_USE_PER_KIND`]; a real store bounds
/// each kind [`namespace`](super::namespace) lists):
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// use grantor::async_trait;
/// use grantor::clock::UnixTime;
/// use grantor::store::{SINGLE_USE_PER_KIND, SingleUseStore, StoreError};
///
/// #[derive(Default)]
/// struct OneTime(Mutex<HashMap<String, (Vec<u8>, UnixTime)>>);
///
/// #[async_trait]
/// impl SingleUseStore for OneTime {
///     async fn insert_once(&self, key: &str, value: &[u8], expires_at: UnixTime, now: UnixTime)
///         -> Result<bool, StoreError> {
///         let mut values = self.0.lock().unwrap();
///         if values.get(key).is_some_and(|(_, until)| *until > now) {
///             return Ok(false); // a live value holds the key
///         }
///         values.retain(|_, (_, until)| *until > now);
///         if values.len() >= SINGLE_USE_PER_KIND {
///             return Err(StoreError::unavailable("too many one-time values"));
///         }
///         values.insert(key.to_owned(), (value.to_vec(), expires_at));
///         Ok(true)
///     }
///     async fn peek(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
///         let values = self.0.lock().unwrap();
///         Ok(values.get(key).filter(|(_, until)| *until > now).map(|(v, _)| v.clone()))
///     }
///     async fn take(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
///         let taken = self.0.lock().unwrap().remove(key);
///         Ok(taken.filter(|(_, until)| *until > now).map(|(v, _)| v))
///     }
/// }
/// # let _ = OneTime::default();
/// ```
#[async_trait]
pub trait SingleUseStore: Send + Sync {
    /// Keeps `value` under `key` until `expires_at`, unless a live value holds `key` already:
    /// answers whether it was kept. Of concurrent callers with one key, exactly one is.
    async fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError>;

    /// The live value under `key`, leaving it there.
    async fn peek(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError>;

    /// Removes the live value under `key` and answers it: of concurrent callers, exactly one
    /// gets it.
    async fn take(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_debug_shows_neither_the_authorization_request_nor_the_csrf_digest() {
        let authorization = r#"{"state":"client-secret-state"}"#;
        let session = Session::new(
            authorization.to_owned(),
            SecretDigest::of("csrf"),
            UnixTime::from_secs(10),
        );
        let shown = format!("{session:?}");
        assert!(!shown.contains("client-secret-state"), "{shown}");
        let size = format!("<{} bytes>", authorization.len());
        assert!(shown.contains(&size), "{shown}");
        assert!(shown.contains("SecretDigest(<redacted>)"), "{shown}");
    }
}
