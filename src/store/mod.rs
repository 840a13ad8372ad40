//! The host's seams: the traits a store implements, the records that cross them, and the
//! answers they give.
//!
//! grantor decides and mints; a store only keeps what it is handed and answers atomically.
//! Every code, token, `jti`, family id, session id and CSRF token comes from grantor's one
//! CSPRNG function; a store receives codes and tokens only as [`SecretDigest`]s, never in the
//! clear, and never revokes or rotates on its own initiative: it reports what it found
//! ([`CodeRedemption::Replayed`], [`Rotation::Reused`]) and grantor revokes.
//!
//! | seam | question it answers |
//! |---|---|
//! | [`ClientStore`] | which client is this? |
//! | [`UserStore`] | who is signing in? |
//! | [`TokenIssuer`] | what is this code or token, and is it still usable? |
//! | [`SessionStore`] | where is this browser in its sign-in? |
//! | [`UserSessionStore`] | is this browser signed in (single sign-on), since when, and what was it issued? |
//! | [`ConsentStore`] | what did this person already approve for this client? |
//! | [`PasswordVerifier`] | is this the password of this account (and should its hash be upgraded)? |
//! | [`SecondFactor`] | does this person have a second factor, and is this its code? |
//! | [`AttemptCounter`] | how many attempts has this key made lately? |
//! | [`SingleUseStore`] | has this value been used, and what did it carry? |
//! | [`KeyStore`] | which key seals and signs now? (secret at rest) |
//! | [`Admin`] | register, replace and remove clients |
//! | [`Purge`] | delete what expired |
//! | [`UserAdmin`] | keep a new account, change its password hash |
//!
//! Every trait is async, object-safe and `Send + Sync`, so a host holds `Arc<dyn …>`.
//! [`MemoryStore`](crate::memory::MemoryStore) implements them all in memory; the SQL stores
//! (`grantor::sql`, features `sqlite` and `postgres`) on a database that any number of nodes
//! share. With feature `test-util`, `grantor::store::contract` checks a store of the host's own
//! against the same rules grantor's stores pass.

pub(crate) mod client_cache;
#[cfg(feature = "test-util")]
pub mod contract;
mod credentials;
pub use client_cache::CLIENT_CACHE_CAPACITY;
mod keys;
pub(crate) mod metered;
pub mod namespace;
mod records;
pub(crate) mod seam;
mod second_factor;
mod sign_on;
mod state;

use std::sync::Arc;

use async_trait::async_trait;

// What crosses the seams besides the records: failures, digests, secrets and PKCE challenges.
pub use crate::error::{StoreError, StoreErrorKind};
pub use crate::hash::Verification;
pub use crate::pkce::{CodeChallenge, CodeChallengeMethod};
pub use crate::secret::{AccessToken, AuthorizationCode, RefreshToken, SecretDigest};
pub use credentials::{KnownHashes, PasswordVerifier};
#[cfg(feature = "cli")]
pub(crate) use keys::reseal;
pub(crate) use keys::{ClearKeys, EncryptedKeys};
pub use keys::{KeyEncryptionKey, KeyEncryptionKeyError, KeyStore};
pub use records::UserAuthentication;
#[cfg(feature = "test-util")]
pub(crate) use records::new_user;
pub(crate) use records::supported_claims;
pub use records::{
    AccessGrant, Account, Actor, AdminError, Authorization, CodeGrant, CodeRedemption, Family,
    FamilyId, Jti, JwkThumbprint, MAX_CLAIMS_BYTES, MIN_PASSWORD_CHARS, NewRefreshToken, NewTokens,
    RefreshGrant, Rotation, SignInFacts, TokenBinding, User, UserClaims, UserId, check_password,
    username_key,
};
pub use second_factor::SecondFactor;
pub use sign_on::{
    Consent, ConsentStore, MAX_SESSION_GRANTS, MAX_SESSIONS_PER_USER, MAX_SID_BYTES, UserSession,
    UserSessionStore,
};
pub use state::{
    AttemptCounter, Attempts, SINGLE_USE_BYTES_PER_KIND, SINGLE_USE_PER_KIND, Session,
    SessionStore, SingleUseStore,
};

use crate::client::Client;
use crate::clock::UnixTime;

/// Looks up registered clients.
/// The host's own client registry, here a map it filled from its configuration, beside grantor's
/// memory store for everything else:
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::{Arc, Mutex};
///
/// use grantor::async_trait;
/// use grantor::client::Client;
/// use grantor::store::{ClientStore, StoreError};
///
/// #[derive(Default)]
/// struct Clients(Mutex<HashMap<String, Arc<Client>>>);
///
/// #[async_trait]
/// impl ClientStore for Clients {
///     async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
///         Ok(self.0.lock().unwrap().get(client_id).cloned())
///     }
/// }
///
/// let clients = Clients::default();
/// let app = Client::public("my-app").redirect_uri("https://app.example/cb").build()?;
/// clients.0.lock().unwrap().insert("my-app".to_owned(), Arc::new(app));
/// let server = grantor::AuthorizationServer::builder()
///     .issuer("https://auth.example")
///     .clients(Arc::new(clients)) // kept whatever the order: the store below keeps the rest
///     .store(grantor::MemoryStore::new())
///     .build()?;
/// # let _ = server;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[async_trait]
pub trait ClientStore: Send + Sync {
    /// The client registered under `client_id`, if any. Called on every request, so keep it
    /// cheap (the in-memory store answers from a map).
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError>;
}

/// Finds user accounts, in the host's own table. A lookup only: grantor verifies the password
/// against what the account keeps (through the [`PasswordVerifier`], on the server's hashing
/// threads, with a dummy check for an unknown username), counts failures per account and
/// upgrades an old hash through [`UserAdmin`], so a store over the host's own user database
/// needs none of that.
///
/// The id is the host's own, any string (the decimal of an integer key is fine): it is the
/// `sub` of ID tokens and userinfo for public clients (a pairwise client's is computed from
/// it), and of introspection, so keep it stable and never reuse it. Claims
/// may be computed from the row rather than stored. `grantor::store::contract::user_lookups`
/// (feature `test-util`) checks an implementation against accounts the table holds, naming
/// any rule it breaks with the value that broke it.
///
/// ```
/// use std::collections::BTreeMap;
///
/// use grantor::async_trait;
/// use grantor::store::{Account, StoreError, User, UserClaims, UserId, UserStore};
///
/// /// The host's `users` table: an integer key, a login, a bcrypt hash, a display name.
/// struct Users(BTreeMap<i64, (String, String, String)>);
///
/// #[async_trait]
/// impl UserStore for Users {
///     async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
///         let found = self.0.iter().find(|(_, (login, _, _))| login.eq_ignore_ascii_case(username));
///         Ok(found.map(|(id, (login, hash, _))| {
///             Account::new(User::new(UserId::new(id.to_string()), login), hash.clone())
///         }))
///     }
///
///     async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
///         let Ok(key) = id.as_str().parse::<i64>() else { return Ok(None) };
///         Ok(self.0.get(&key).map(|(login, _, _)| User::new(id.clone(), login)))
///     }
///
///     async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
///         let Ok(key) = id.as_str().parse::<i64>() else { return Ok(None) };
///         Ok(self.0.get(&key).map(|(_, _, name)| UserClaims::new().name(name.as_str())))
///     }
/// }
/// # let _ = Users(BTreeMap::new());
/// ```
///
/// grantor's own tests hold such a store to the contract the way a downstream crate would: a
/// host keeping its accounts in a `HashMap` behind a `Mutex` (with its [`UserAdmin`], as in that
/// trait's example) passes the contract's user rules, a copy that matches usernames in one case
/// only is named with the rule it breaks, and a server over it, with grantor's SQLite store for
/// everything else (`.users(...)`, `.user_admin(...)`, `.store(...)`), signs its users in. The
/// example host in grantor's repository (`host_app`) serves such a table over SQLite, with its
/// own second-factor page through the interaction API.
#[async_trait]
pub trait UserStore: Send + Sync {
    /// The account whose username is `username` (under the server's
    /// [`Usernames`](crate::settings::Usernames) rule: email addresses in any case by default,
    /// compared as [`username_key`] writes them), with what its table keeps of the password (a
    /// hash in any scheme the [`PasswordVerifier`] reads); `None` when there is none. Never
    /// verifies anything.
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError>;

    /// The account with this id, if it still exists.
    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError>;

    /// What the account says about its user for OpenID Connect (OIDC Core §5.1): its name,
    /// email and the like, released to a client by the scopes it was granted (userinfo, ID
    /// tokens). `None` when the account does not exist; the default keeps no claims.
    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        Ok(self.find_user(id).await?.map(|_| UserClaims::new()))
    }
}

/// Keeps and answers for every code and token grantor hands out.
///
/// grantor mints each code and token and hands the store only its [`SecretDigest`] and what it
/// grants. The store makes the single-use steps atomic: [`TokenIssuer::redeem_code`] answers
/// [`CodeRedemption::Redeemed`] to exactly one caller, and [`TokenIssuer::rotate_refresh_token`]
/// answers [`Rotation::Rotated`] to exactly one caller per refresh token.
///
/// Every code and token belongs to a *family*: the one authorization it descends from (a code
/// and everything exchanged for it and refreshed from that). A token whose family is revoked is
/// never found again. The store revokes only when told to ([`TokenIssuer::revoke_family`]).
/// A store of the host's own implements every method with the atomic steps above (the contract
/// of feature `test-util` checks them). A host may also wrap a store, here grantor's memory
/// store, to count what it revokes for its own metrics:
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// use grantor::async_trait;
/// use grantor::clock::UnixTime;
/// use grantor::store::{
///     AccessGrant, CodeGrant, CodeRedemption, FamilyId, NewTokens, RefreshGrant, Rotation,
///     SecretDigest, StoreError, TokenIssuer,
/// };
///
/// struct Counted {
///     inner: Arc<dyn TokenIssuer>,
///     revoked_families: AtomicU64,
/// }
///
/// #[async_trait]
/// impl TokenIssuer for Counted {
///     async fn insert_code(&self, code: &SecretDigest, family: FamilyId, grant: CodeGrant)
///         -> Result<(), StoreError> {
///         self.inner.insert_code(code, family, grant).await
///     }
///     async fn redeem_code(&self, code: &SecretDigest, now: UnixTime)
///         -> Result<CodeRedemption, StoreError> {
///         self.inner.redeem_code(code, now).await
///     }
///     async fn insert_tokens(&self, tokens: NewTokens) -> Result<(), StoreError> {
///         self.inner.insert_tokens(tokens).await
///     }
///     async fn find_refresh_token(&self, token: &SecretDigest, now: UnixTime)
///         -> Result<Option<RefreshGrant>, StoreError> {
///         self.inner.find_refresh_token(token, now).await
///     }
///     async fn rotate_refresh_token(&self, token: &SecretDigest, successor: NewTokens,
///         retry_since: Option<UnixTime>) -> Result<Rotation, StoreError> {
///         self.inner.rotate_refresh_token(token, successor, retry_since).await
///     }
///     async fn find_access_token(&self, token: &SecretDigest, now: UnixTime)
///         -> Result<Option<AccessGrant>, StoreError> {
///         self.inner.find_access_token(token, now).await
///     }
///     async fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError> {
///         self.inner.revoke_access_token(token).await
///     }
///     async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
///         self.revoked_families.fetch_add(1, Ordering::Relaxed);
///         self.inner.revoke_family(family).await
///     }
///     async fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError> {
///         let families = self.inner.revoke_client(client_id).await?;
///         self.revoked_families.fetch_add(families, Ordering::Relaxed);
///         Ok(families)
///     }
/// }
///
/// let tokens = Counted { inner: Arc::new(grantor::MemoryStore::new()), revoked_families: AtomicU64::new(0) };
/// let server = grantor::AuthorizationServer::builder()
///     .issuer("https://auth.example")
///     .tokens(Arc::new(tokens))
///     .store(grantor::MemoryStore::new())
///     .build()?;
/// # let _ = server;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[async_trait]
pub trait TokenIssuer: Send + Sync {
    /// Keeps a new authorization code under `code`, the digest of the code, starting `family`.
    async fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError>;

    /// Consumes the code whose digest is `code`, atomically. A code seen before answers
    /// [`CodeRedemption::Replayed`] with its family (until at least an hour past the code's
    /// expiry), so grantor can revoke what the first redemption issued; an unknown, expired or
    /// revoked code answers [`CodeRedemption::Invalid`].
    async fn redeem_code(
        &self,
        code: &SecretDigest,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError>;

    /// Keeps an access token, and a refresh token when [`NewTokens::refresh_token`] is set, in
    /// a new family or the existing family of a redeemed code ([`NewTokens::family`]).
    async fn insert_tokens(&self, tokens: NewTokens) -> Result<(), StoreError>;

    /// Reads a refresh token without using it: current or already rotated, or `None` when it is
    /// unknown, expired or its family is revoked.
    async fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError>;

    /// Rotates the current refresh token `token` atomically: retires it and keeps `successor`
    /// (a new access token and refresh token in the same family), and remembers when, which
    /// generation it replaced and the successor's access token. A token already rotated answers
    /// [`Rotation::Reused`] with its family and keeps nothing; grantor then revokes the family
    /// (RFC 9700 §4.14.2) — unless `retry_since` is given, `token` is the very token the
    /// family's current one replaced, and that rotation happened at or after `retry_since`:
    /// then, in the same transaction, the current access token is removed, the current refresh
    /// token becomes stale, `successor` becomes current, and the answer is
    /// [`Rotation::Retried`]. Of concurrent callers, each rotation or retry happens once.
    async fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError>;

    /// What an active access token grants, or `None` when it is unknown, expired or revoked.
    async fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError>;

    /// [`find_access_token`](Self::find_access_token) for checking a token alone (bearer
    /// validation, introspection), never for a step that changes state (a token exchange, a
    /// revocation): a store may answer it from a read replica, which can lag behind the
    /// primary, as long as it asks the primary when the replica knows no such token (a token
    /// issued a moment ago). By default, `find_access_token`.
    async fn check_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        self.find_access_token(token, now).await
    }

    /// Revokes one access token at once (RFC 7009 §2.1); other tokens of its family stay.
    async fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError>;

    /// Revokes every code and token of a family.
    async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError>;

    /// Revokes every family of the client `client_id` (its codes, access and refresh tokens
    /// stop working): grantor calls it when a client is deleted (RFC 7592 §2.3), so a removed
    /// client's tokens die with it. Answers how many families were revoked. Rare (a deletion),
    /// so a scan is fine where there is no index.
    async fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError>;
}

/// What an administrator does to a store's clients, the same on every store: register, replace
/// and remove them. Store-only: grantor mints client credentials and checks a registration
/// before it reaches this seam.
/// grantor's stores implement it over the registry they keep. A host wrapping one, here to keep
/// an audit line of every change its administrators make:
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// use grantor::async_trait;
/// use grantor::client::{Client, SecretVerifier};
/// use grantor::clock::UnixTime;
/// use grantor::store::{Admin, AdminError, StoreError};
///
/// struct Audited {
///     inner: Arc<dyn Admin>,
///     log: Mutex<Vec<String>>,
/// }
///
/// impl Audited {
///     fn note(&self, line: String) {
///         self.log.lock().unwrap().push(line);
///     }
/// }
///
/// #[async_trait]
/// impl Admin for Audited {
///     async fn register_client(&self, client: &Client) -> Result<(), AdminError> {
///         self.inner.register_client(client).await?;
///         self.note(format!("registered {}", client.id()));
///         Ok(())
///     }
///     async fn replace_client(&self, client: &Client) -> Result<bool, StoreError> {
///         let replaced = self.inner.replace_client(client).await?;
///         self.note(format!("replaced {}: {replaced}", client.id()));
///         Ok(replaced)
///     }
///     async fn rotate_client_secret(&self, client_id: &str, secret: &SecretVerifier,
///         retire_until: UnixTime) -> Result<bool, StoreError> {
///         let rotated = self.inner.rotate_client_secret(client_id, secret, retire_until).await?;
///         self.note(format!("rotated the secret of {client_id}: {rotated}")); // never the secret
///         Ok(rotated)
///     }
///     async fn remove_client(&self, client_id: &str) -> Result<bool, StoreError> {
///         let removed = self.inner.remove_client(client_id).await?;
///         self.note(format!("removed {client_id}: {removed}"));
///         Ok(removed)
///     }
/// }
/// # let _ = Audited { inner: Arc::new(grantor::MemoryStore::new()), log: Mutex::default() };
/// ```
#[async_trait]
pub trait Admin: Send + Sync {
    /// Registers a new client; [`AdminError::ClientIdTaken`] if its id is registered.
    async fn register_client(&self, client: &Client) -> Result<(), AdminError>;

    /// Replaces the client registered under `client`'s id; `false` if there was none (nothing
    /// is registered then).
    async fn replace_client(&self, client: &Client) -> Result<bool, StoreError>;

    /// Rotates a confidential client's secret in one atomic step: its current verifier becomes
    /// the retiring one, accepted until `retire_until` (replacing any earlier retiring one), and
    /// `secret` becomes current. `false`, changing nothing, if no confidential client is
    /// registered under `client_id`. Only verifiers cross this seam, never a secret.
    async fn rotate_client_secret(
        &self,
        client_id: &str,
        secret: &crate::client::SecretVerifier,
        retire_until: UnixTime,
    ) -> Result<bool, StoreError>;

    /// Removes the client registered under `client_id`; `false` if there was none.
    async fn remove_client(&self, client_id: &str) -> Result<bool, StoreError>;
}

/// When each self-registered client last made an authorization or token request: what lets a
/// [registration policy](crate::registration::RegistrationPolicy::idle_lifetime) forget the
/// clients nobody uses (an MCP client registers on every install; most are never seen again).
/// A client idle for the policy's lifetime is refused at its next request (`invalid_client`)
/// and deleted with its tokens, and
/// [`AuthorizationServer::forget_idle_clients`](crate::AuthorizationServer::forget_idle_clients)
/// deletes the others a host never hears from again. grantor records a use at most once a
/// [`CLIENT_TOUCH_INTERVAL`] per client and node, so the cost is a write per client per
/// interval, never one per request. Administered clients are never recorded nor idle.
///
/// Every store of grantor's implements it; a host with a [client registry](Admin) of its own
/// implements it beside, or turns expiry off
/// ([`RegistrationPolicy::idle_lifetime`](crate::registration::RegistrationPolicy::idle_lifetime)
/// `None`).
/// Beside a registry of the host's own, a map of last uses (only self-registered clients get
/// here; a real registry keeps the time in the client's row, with an index):
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// use grantor::async_trait;
/// use grantor::clock::UnixTime;
/// use grantor::store::{ClientActivity, StoreError};
///
/// #[derive(Default)]
/// struct LastUses(Mutex<HashMap<String, UnixTime>>);
///
/// #[async_trait]
/// impl ClientActivity for LastUses {
///     async fn touch_client(&self, client_id: &str, at: UnixTime) -> Result<(), StoreError> {
///         // A real registry first checks that `client_id` is a self-registered client of its own.
///         let mut uses = self.0.lock().unwrap();
///         let last = uses.entry(client_id.to_owned()).or_insert(at);
///         *last = (*last).max(at);
///         Ok(())
///     }
///     async fn client_last_used(&self, client_id: &str) -> Result<Option<UnixTime>, StoreError> {
///         Ok(self.0.lock().unwrap().get(client_id).copied())
///     }
///     async fn idle_clients(&self, before: UnixTime, limit: usize)
///         -> Result<Vec<String>, StoreError> {
///         let uses = self.0.lock().unwrap();
///         let mut idle: Vec<_> = uses.iter().filter(|(_, at)| **at < before).collect();
///         idle.sort_by_key(|(_, at)| **at); // the longest idle first
///         Ok(idle.into_iter().take(limit).map(|(id, _)| id.clone()).collect())
///     }
/// }
/// # let _ = LastUses::default();
/// ```
#[async_trait]
pub trait ClientActivity: Send + Sync {
    /// Records that the self-registered client `client_id` was used at `at`; nothing for an
    /// unknown or administered client, nor when a later use is recorded already.
    async fn touch_client(&self, client_id: &str, at: UnixTime) -> Result<(), StoreError>;

    /// When the self-registered client `client_id` was last used as recorded; `None` when no
    /// use is (a client kept before the store recorded uses: its clock starts at its next
    /// request), or for an unknown or administered client.
    async fn client_last_used(&self, client_id: &str) -> Result<Option<UnixTime>, StoreError>;

    /// At most `limit` self-registered clients whose recorded last use is before `before`, the
    /// longest idle first.
    async fn idle_clients(&self, before: UnixTime, limit: usize)
    -> Result<Vec<String>, StoreError>;
}

/// How often grantor records a use of one self-registered client, at most, per node
/// ([`ClientActivity`]): an hour.
pub const CLIENT_TOUCH_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3_600);

/// Keeps user accounts for the administrator: the store-only side of [`UserStore`].
/// [`AuthorizationServer::add_user`](crate::AuthorizationServer::add_user) and
/// [`set_password`](crate::AuthorizationServer::set_password) check the username, mint the id
/// and hash the password on the server's hashing threads, then call it; a tool without a
/// server does the same with [`Account::generate`]. A store never mints or hashes.
/// Over the host's own accounts (a map here, by [`username_key`], as its [`UserStore`] finds
/// them), keeping the id grantor minted:
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// use grantor::async_trait;
/// use grantor::store::{
///     Account, AdminError, StoreError, User, UserAdmin, UserClaims, UserId, username_key,
/// };
///
/// #[derive(Default)]
/// struct Accounts(Mutex<HashMap<String, (Account, UserClaims)>>);
///
/// #[async_trait]
/// impl UserAdmin for Accounts {
///     async fn insert_user(&self, user: &User, password_hash: &str) -> Result<User, AdminError> {
///         let key = username_key(user.username()).ok_or(AdminError::InvalidUsername)?;
///         let mut accounts = self.0.lock().unwrap();
///         let id_taken = accounts.values().any(|(a, _)| a.user().id() == user.id());
///         if id_taken || accounts.contains_key(&key) {
///             return Err(AdminError::UsernameTaken);
///         }
///         let account = Account::new(user.clone(), password_hash.to_owned());
///         accounts.insert(key, (account, UserClaims::new()));
///         Ok(user.clone())
///     }
///     async fn set_password_hash(&self, user: &UserId, password_hash: &str)
///         -> Result<bool, StoreError> {
///         let mut accounts = self.0.lock().unwrap();
///         let Some((account, _)) = accounts.values_mut().find(|(a, _)| a.user().id() == user) else {
///             return Ok(false);
///         };
///         *account = Account::new(account.user().clone(), password_hash.to_owned());
///         Ok(true)
///     }
///     async fn set_claims(&self, user: &UserId, claims: &UserClaims) -> Result<bool, StoreError> {
///         let mut accounts = self.0.lock().unwrap();
///         let found = accounts.values_mut().find(|(a, _)| a.user().id() == user);
///         Ok(found.map(|(_, kept)| *kept = claims.clone()).is_some())
///     }
/// }
/// # let _ = Accounts::default();
/// ```
#[async_trait]
pub trait UserAdmin: Send + Sync {
    /// Keeps a new account for `user` with a password hash (grantor's Argon2id PHC string), and
    /// answers the user as kept: `user` itself for a store that keeps the id grantor minted,
    /// or `user`'s username under an id of the store's own (the decimal of an integer key,
    /// say) for one that assigns ids. [`AdminError::UsernameTaken`] if an account has this
    /// username in any case, or this id.
    async fn insert_user(&self, user: &User, password_hash: &str) -> Result<User, AdminError>;

    /// Replaces an account's password hash; `false` if there is no such account.
    async fn set_password_hash(
        &self,
        user: &UserId,
        password_hash: &str,
    ) -> Result<bool, StoreError>;

    /// Replaces an account's claims (what [`UserStore::claims`] answers); `false` if there is
    /// no such account.
    async fn set_claims(&self, user: &UserId, claims: &UserClaims) -> Result<bool, StoreError>;
}

/// Deletes what expired: the maintenance every store that keeps codes, tokens or shared state
/// offers, apart from the seams the server reads.
/// A store of the host's own deletes from each of its tables; a host may also call grantor's
/// from a timer, as here:
///
/// ```no_run
/// use std::time::{Duration, SystemTime};
///
/// use grantor::clock::UnixTime;
/// use grantor::store::Purge;
///
/// async fn purge_hourly(store: impl Purge) {
///     loop {
///         match store.purge_expired(UnixTime::from(SystemTime::now())).await {
///             Ok(gone) => tracing::info!(gone, "purged"),
///             Err(error) => tracing::warn!(%error, "purge failed; trying again next hour"),
///         }
///         tokio::time::sleep(Duration::from_secs(3_600)).await;
///     }
/// }
/// # let _ = purge_hourly(grantor::MemoryStore::new());
/// ```
#[async_trait]
pub trait Purge: Send + Sync {
    /// Deletes what can never be used again: expired codes (an hour past their expiry, once no
    /// replay needs them), expired tokens, families with nothing live left and everything of
    /// revoked ones, expired sessions, attempt windows and single-use values. Answers how many
    /// entries went. Lookups never find expired entries anyway; call it now and then (say
    /// hourly), from one node or from all.
    async fn purge_expired(&self, now: UnixTime) -> Result<u64, StoreError>;
}
