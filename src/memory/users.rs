//! User accounts with Argon2id password hashes.

use std::collections::HashMap;
use std::sync::RwLock;

use crate::error::StoreError;
use crate::hash;
use crate::secret::Password;
use crate::store::{AdminError, User, UserId, username_key};

/// Usernames are email addresses, matched case-insensitively; passwords are kept only as
/// Argon2id hashes.
#[derive(Default)]
pub(crate) struct Users {
    accounts: RwLock<Accounts>,
}

#[derive(Default)]
struct Accounts {
    /// The username key of each account.
    by_username: HashMap<String, UserId>,
    by_id: HashMap<UserId, Account>,
}

struct Account {
    user: User,
    password_hash: String,
}

impl Users {
    pub(crate) fn insert(&self, user: &User, password_hash: &str) -> Result<(), AdminError> {
        let key = username_key(user.username()).ok_or(AdminError::InvalidUsername)?;
        let mut accounts = self.accounts.write().unwrap_or_else(|p| p.into_inner());
        if accounts.by_username.contains_key(&key) || accounts.by_id.contains_key(user.id()) {
            return Err(AdminError::UsernameTaken);
        }
        accounts.by_username.insert(key, user.id().clone());
        let account = Account {
            user: user.clone(),
            password_hash: password_hash.to_owned(),
        };
        accounts.by_id.insert(user.id().clone(), account);
        Ok(())
    }

    pub(crate) fn set_password_hash(&self, id: &UserId, password_hash: &str) -> bool {
        let mut accounts = self.accounts.write().unwrap_or_else(|p| p.into_inner());
        match accounts.by_id.get_mut(id) {
            Some(account) => {
                account.password_hash = password_hash.to_owned();
                true
            }
            None => false,
        }
    }

    pub(crate) async fn authenticate(
        &self,
        username: &str,
        password: &Password,
    ) -> Result<Option<User>, StoreError> {
        let found = username_key(username).and_then(|key| {
            let accounts = self.accounts.read().unwrap_or_else(|p| p.into_inner());
            let account = accounts.by_id.get(accounts.by_username.get(&key)?)?;
            Some((account.user.clone(), account.password_hash.clone()))
        });
        let Some((user, password_hash)) = found else {
            hash::verify_against_dummy(password.expose_secret()).await?;
            return Ok(None);
        };
        let verified = hash::verify_password(&password_hash, password.expose_secret()).await?;
        Ok(verified.then_some(user))
    }

    pub(crate) fn find(&self, id: &UserId) -> Option<User> {
        let accounts = self.accounts.read().unwrap_or_else(|p| p.into_inner());
        accounts.by_id.get(id).map(|a| a.user.clone())
    }

    pub(crate) fn len(&self) -> usize {
        self.accounts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .by_id
            .len()
    }
}
