//! [`MemoryStore`]: every seam in memory, for tests, demos, benchmarks and single-node
//! deployments whose state may be lost on restart.
//!
//! It is safe under concurrency with no global lock on the hot path: codes and tokens are
//! split over 64 independently locked shards, and every single-use step happens under one shard
//! lock; clients are read from a snapshot that registration replaces, without a lock.
//!
//! What an unauthenticated request can make it keep is bounded: at most 100,000 sign-in
//! sessions and 100,000 single-use values of each kind (pushed requests, DPoP proof ids, ...;
//! past that, new ones of that kind answer 503 `temporarily_unavailable` until some expire),
//! 1,024 pieces of key material of each kind in a table of their own, and attempt counters for at most 100,000 keys
//! (past that, the key counted least is forgotten; the server-wide limits and a locked
//! account's count are kept). Codes and tokens are minted
//! only for authenticated clients and signed-in users, and swept as they expire.

mod clients;
mod in_place;
mod sharded;
mod sign_on;
mod state;
mod tokens;
mod users;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::client::{Client, ClientId, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::Account;
use crate::store::{
    Admin, AdminError, AttemptCounter, Attempts, ClientActivity, Consent, ConsentStore, FamilyId,
    KeyStore, Purge, Session, SessionStore, SingleUseStore, User, UserAdmin, UserClaims, UserId,
    UserSession, UserSessionStore, UserStore,
};
use clients::{Clients, When};

/// Every seam in memory: clients, users, codes and tokens, sign-in sessions, attempt counters,
/// single-use values and key material. Cheap to clone (an `Arc` inside): hand one store to the builder as
/// every seam with [`AuthorizationServerBuilder::store`](crate::AuthorizationServerBuilder::store).
///
/// Keeps only SHA-256 digests of codes and tokens, and only Argon2id hashes of passwords.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use grantor::store::{Account, Admin as _, UserAdmin as _};
/// use grantor::{MemoryStore, Password};
/// use grantor::client::{Client, ClientCredentials, GrantType};
///
/// let store = MemoryStore::new();
/// let creds = ClientCredentials::generate().unwrap();
/// let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
///     .grant_types([GrantType::ClientCredentials])
///     .scopes("reports")
///     .build()
///     .unwrap();
/// store.register_client(&client).await.unwrap();
/// let alice = Account::generate("alice@example.com", &Password::new("alice-password-1")).unwrap();
/// store.insert_user(alice.user(), alice.password_hash()).await.unwrap();
/// # }
/// ```
#[derive(Clone, Default)]
pub struct MemoryStore {
    parts: Arc<Parts>,
}

#[derive(Default)]
struct Parts {
    clients: Clients,
    users: users::Users,
    tokens: tokens::Tokens,
    sessions: state::Sessions,
    counters: state::Counters,
    single_use: state::SingleUse,
    keys: state::Keys,
    user_sessions: sign_on::UserSessions,
    consents: sign_on::Consents,
    /// When each self-registered client was last used ([`ClientActivity`]): one entry per
    /// such client, gone with it.
    activity: std::sync::Mutex<std::collections::HashMap<Box<str>, UnixTime>>,
}

impl MemoryStore {
    /// Sessions held at most; past it, new sessions are refused with
    /// [`StoreError::unavailable`] (503 `temporarily_unavailable`) until some expire.
    pub const MAX_SESSIONS: usize = state::MAX_SESSIONS;
    /// Keys whose attempts are counted at most, the few server-wide limits apart (never
    /// forgotten); past it, the key with the lowest count, the least recently used of those,
    /// is forgotten for each new one, so a flood of new keys cannot reset a locked account.
    pub const MAX_COUNTED_KEYS: usize = state::MAX_COUNTED_KEYS;
    /// Single-use values held at most of each kind (pushed requests, client assertion ids,
    /// DPoP proof ids, ...); past it, new ones of that kind are refused with
    /// [`StoreError::unavailable`] until some expire, and no other kind is.
    pub const MAX_SINGLE_USE: usize = state::MAX_SINGLE_USE;
    /// Pieces of key material held at most; past it, new ones are refused with
    /// [`StoreError::unavailable`] until some expire.
    pub const MAX_KEYS: usize = state::MAX_KEYS;
    /// Signed-in browsers (single sign-on) held at most; past it, new sign-ins are refused
    /// with [`StoreError::unavailable`] until some expire.
    pub const MAX_USER_SESSIONS: usize = sign_on::MAX_USER_SESSIONS;
    /// Remembered approvals held at most; past it, new ones are refused with
    /// [`StoreError::unavailable`] until some expire or are forgotten.
    pub const MAX_CONSENTS: usize = sign_on::MAX_CONSENTS;

    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many live access tokens, refresh tokens and codes (including remembered redeemed
    /// ones) are held, in that order.
    pub fn token_counts(&self) -> (usize, usize, usize) {
        self.parts.tokens.len()
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (access, refresh, codes) = self.token_counts();
        f.debug_struct("MemoryStore")
            .field("clients", &self.parts.clients.len())
            .field("users", &self.parts.users.len())
            .field("access_tokens", &access)
            .field("refresh_tokens", &refresh)
            .field("codes", &codes)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl UserStore for MemoryStore {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        Ok(self.parts.users.find_account(username))
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        Ok(self.parts.users.find(id))
    }

    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        Ok(self.parts.users.claims(id))
    }
}

#[async_trait]
impl SessionStore for MemoryStore {
    async fn insert_session(
        &self,
        id: &SecretDigest,
        session: Session,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        self.parts.sessions.insert(id, session, now)
    }

    async fn find_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        Ok(self.parts.sessions.find(id, now))
    }

    async fn take_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        Ok(self.parts.sessions.take(id, now))
    }
}

#[async_trait]
impl AttemptCounter for MemoryStore {
    async fn record_attempt(
        &self,
        key: &str,
        window: Duration,
        now: UnixTime,
    ) -> Result<Attempts, StoreError> {
        self.parts.counters.record(key, window, now)
    }

    async fn attempts(&self, key: &str, now: UnixTime) -> Result<Option<Attempts>, StoreError> {
        Ok(self.parts.counters.get(key, now))
    }

    async fn clear_attempts(&self, key: &str) -> Result<(), StoreError> {
        self.parts.counters.clear(key);
        Ok(())
    }
}

#[async_trait]
impl SingleUseStore for MemoryStore {
    async fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        self.parts
            .single_use
            .insert_once(key, value, expires_at, now)
    }

    async fn peek(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.parts.single_use.peek(key, now))
    }

    async fn take(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.parts.single_use.take(key, now))
    }
}

/// Key material lives in this process's memory, in the clear, apart from the single-use values
/// (a flood of those cannot crowd a key out).
#[async_trait]
impl KeyStore for MemoryStore {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        self.parts.keys.insert_once(name, material, expires_at, now)
    }

    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.parts.keys.peek(name, now))
    }

    async fn key_names(&self, now: UnixTime) -> Result<Vec<(String, UnixTime)>, StoreError> {
        Ok(self.parts.keys.names(now))
    }

    async fn replace_key(
        &self,
        name: &str,
        material: &[u8],
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        Ok(self.parts.keys.replace(name, material, now))
    }

    /// Gone with the process: the builder asks no choice of how keys rest.
    fn is_durable(&self) -> bool {
        false
    }
}

#[async_trait]
impl Admin for MemoryStore {
    async fn register_client(&self, client: &Client) -> Result<(), AdminError> {
        if self.parts.clients.put(client, When::NotRegistered) {
            Ok(())
        } else {
            Err(AdminError::ClientIdTaken)
        }
    }

    async fn replace_client(&self, client: &Client) -> Result<bool, StoreError> {
        Ok(self.parts.clients.put(client, When::Registered))
    }

    async fn rotate_client_secret(
        &self,
        client_id: &str,
        secret: &SecretVerifier,
        retire_until: UnixTime,
    ) -> Result<bool, StoreError> {
        Ok(self
            .parts
            .clients
            .rotate_secret(client_id, secret, retire_until))
    }

    async fn remove_client(&self, client_id: &str) -> Result<bool, StoreError> {
        self.activity().remove(client_id);
        Ok(self.parts.clients.remove(client_id))
    }
}

impl MemoryStore {
    fn activity(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<Box<str>, UnixTime>> {
        self.parts
            .activity
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl ClientActivity for MemoryStore {
    async fn touch_client(&self, client_id: &str, at: UnixTime) -> Result<(), StoreError> {
        let self_registered = self
            .parts
            .clients
            .find(client_id)
            .is_some_and(|c| c.tier() == crate::client::ClientTier::SelfRegistered);
        if self_registered {
            let mut activity = self.activity();
            let last = activity.entry(client_id.into()).or_insert(at);
            *last = (*last).max(at);
        }
        Ok(())
    }

    async fn client_last_used(&self, client_id: &str) -> Result<Option<UnixTime>, StoreError> {
        Ok(self.activity().get(client_id).copied())
    }

    async fn idle_clients(
        &self,
        before: UnixTime,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let mut idle: Vec<(UnixTime, String)> = self
            .activity()
            .iter()
            .filter(|(_, last)| **last < before)
            .map(|(id, last)| (*last, id.to_string()))
            .collect();
        idle.sort();
        Ok(idle.into_iter().take(limit).map(|(_, id)| id).collect())
    }
}

#[async_trait]
impl UserAdmin for MemoryStore {
    async fn insert_user(&self, user: &User, password_hash: &str) -> Result<User, AdminError> {
        self.parts.users.insert(user, password_hash)?;
        Ok(user.clone())
    }

    async fn set_password_hash(
        &self,
        user: &UserId,
        password_hash: &str,
    ) -> Result<bool, StoreError> {
        Ok(self.parts.users.set_password_hash(user, password_hash))
    }

    async fn set_claims(&self, user: &UserId, claims: &UserClaims) -> Result<bool, StoreError> {
        Ok(self.parts.users.set_claims(user, claims))
    }
}

#[async_trait]
impl UserSessionStore for MemoryStore {
    async fn insert_user_session(
        &self,
        id: &SecretDigest,
        session: UserSession,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        self.parts.user_sessions.insert(id, session, now)
    }

    async fn find_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        Ok(self.parts.user_sessions.find(id, now))
    }

    async fn add_session_grant(
        &self,
        id: &SecretDigest,
        client: &ClientId,
        family: FamilyId,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        Ok(self.parts.user_sessions.add_grant(id, client, family, now))
    }

    async fn end_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        Ok(self.parts.user_sessions.end(id, now))
    }

    async fn end_user_sessions(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<UserSession>, StoreError> {
        Ok(self.parts.user_sessions.end_all(user, now))
    }
}

#[async_trait]
impl ConsentStore for MemoryStore {
    async fn remember_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        consent: &Consent,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        self.parts
            .consents
            .remember(user, client, consent, expires_at, now)
    }

    async fn find_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        now: UnixTime,
    ) -> Result<Option<Consent>, StoreError> {
        Ok(self.parts.consents.find(user, client, now))
    }

    async fn forget_consent(&self, user: &UserId, client: &ClientId) -> Result<bool, StoreError> {
        Ok(self.parts.consents.forget(user, client))
    }

    async fn consents(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<(ClientId, Consent)>, StoreError> {
        Ok(self.parts.consents.of_user(user, now))
    }
}

#[async_trait]
impl Purge for MemoryStore {
    async fn purge_expired(&self, now: UnixTime) -> Result<u64, StoreError> {
        let parts = &self.parts;
        let removed = parts.tokens.purge_expired(now)
            + parts.sessions.purge(now)
            + parts.counters.purge(now)
            + parts.single_use.purge(now)
            + parts.keys.purge(now)
            + parts.user_sessions.purge(now)
            + parts.consents.purge(now);
        Ok(removed as u64)
    }
}
