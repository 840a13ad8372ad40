//! [`MemoryUserStore`]: user accounts with Argon2id password hashes.

use std::collections::HashMap;
use std::fmt;
use std::sync::RwLock;

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::StoreError;
use crate::hash;
use crate::secret::{Password, random_bytes};
use crate::store::{AddUserError, User, UserId, UserStore, username_key};

/// An in-memory [`UserStore`]. Usernames are email addresses, matched case-insensitively;
/// passwords are kept only as Argon2id hashes.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use grantor::{MemoryUserStore, Password, UserStore};
///
/// let users = MemoryUserStore::new();
/// let alice = users.add("alice@example.com", &Password::new("alice-password-1")).unwrap();
/// let found = users
///     .authenticate("Alice@Example.com", &Password::new("alice-password-1"))
///     .await
///     .unwrap();
/// assert_eq!(found, Some(alice));
/// # }
/// ```
#[derive(Default)]
pub struct MemoryUserStore {
    accounts: RwLock<Accounts>,
}

#[derive(Default)]
struct Accounts {
    by_username: HashMap<String, Account>,
    /// Each account's user by id: signing in at the authorization endpoint looks it up once.
    by_id: HashMap<UserId, User>,
}

struct Account {
    user: User,
    password_hash: String,
}

impl MemoryUserStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an account with a random id, hashing `password` with Argon2id (slow by design).
    pub fn add(&self, username: &str, password: &Password) -> Result<User, AddUserError> {
        let id = UserId::new(URL_SAFE_NO_PAD.encode(random_bytes::<16>()?));
        let password_hash = hash::hash_password(password.expose_secret())?;
        self.insert(User::new(id, username), password_hash)
    }

    /// Adds an account whose Argon2id hash (a PHC string) the host already has.
    pub fn insert(&self, user: User, password_hash: String) -> Result<User, AddUserError> {
        let key = username_key(user.username()).ok_or(AddUserError::InvalidUsername)?;
        let mut accounts = self.accounts.write().unwrap_or_else(|p| p.into_inner());
        if accounts.by_username.contains_key(&key) {
            return Err(AddUserError::Taken);
        }
        accounts.by_id.insert(user.id().clone(), user.clone());
        let account = Account {
            user: user.clone(),
            password_hash,
        };
        accounts.by_username.insert(key, account);
        Ok(user)
    }
}

#[async_trait]
impl UserStore for MemoryUserStore {
    async fn authenticate(
        &self,
        username: &str,
        password: &Password,
    ) -> Result<Option<User>, StoreError> {
        let found = username_key(username).and_then(|key| {
            let accounts = self.accounts.read().unwrap_or_else(|p| p.into_inner());
            accounts
                .by_username
                .get(&key)
                .map(|a| (a.user.clone(), a.password_hash.clone()))
        });
        let Some((user, password_hash)) = found else {
            hash::verify_against_dummy(password.expose_secret()).await?;
            return Ok(None);
        };
        let verified = hash::verify_password(&password_hash, password.expose_secret()).await?;
        Ok(verified.then_some(user))
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        let accounts = self.accounts.read().unwrap_or_else(|p| p.into_inner());
        Ok(accounts.by_id.get(id).cloned())
    }
}

impl fmt::Debug for MemoryUserStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let accounts = self.accounts.read().unwrap_or_else(|p| p.into_inner());
        f.debug_struct("MemoryUserStore")
            .field("accounts", &accounts.by_username.len())
            .finish()
    }
}
