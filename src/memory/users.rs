//! User accounts with Argon2id password hashes.

use std::collections::HashMap;
use std::sync::RwLock;

use crate::store::{Account, AdminError, User, UserClaims, UserId, username_key};

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
    by_id: HashMap<UserId, Kept>,
}

/// An account as kept here.
struct Kept {
    user: User,
    password_hash: String,
    claims: UserClaims,
}

impl Users {
    pub(crate) fn insert(&self, user: &User, password_hash: &str) -> Result<(), AdminError> {
        let key = username_key(user.username()).ok_or(AdminError::InvalidUsername)?;
        let mut accounts = self.accounts.write().unwrap_or_else(|p| p.into_inner());
        if accounts.by_username.contains_key(&key) || accounts.by_id.contains_key(user.id()) {
            return Err(AdminError::UsernameTaken);
        }
        accounts.by_username.insert(key, user.id().clone());
        let account = Kept {
            user: user.clone(),
            password_hash: password_hash.to_owned(),
            claims: UserClaims::new(),
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

    pub(crate) fn set_claims(&self, id: &UserId, claims: &UserClaims) -> bool {
        let mut accounts = self.accounts.write().unwrap_or_else(|p| p.into_inner());
        match accounts.by_id.get_mut(id) {
            Some(account) => {
                account.claims = claims.clone();
                true
            }
            None => false,
        }
    }

    pub(crate) fn claims(&self, id: &UserId) -> Option<UserClaims> {
        let accounts = self.accounts.read().unwrap_or_else(|p| p.into_inner());
        accounts.by_id.get(id).map(|a| a.claims.clone())
    }

    pub(crate) fn find_account(&self, username: &str) -> Option<Account> {
        let key = username_key(username)?;
        let accounts = self.accounts.read().unwrap_or_else(|p| p.into_inner());
        let account = accounts.by_id.get(accounts.by_username.get(&key)?)?;
        Some(Account::new(
            account.user.clone(),
            account.password_hash.clone(),
        ))
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
