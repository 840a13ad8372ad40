//! The host's own `users` table, in a SQLite file of its own, as grantor's user seams:
//! [`UserStore`] (grantor reads accounts from it) and [`UserAdmin`] (grantor writes an upgraded
//! password hash, or an account added through the server, back into it). The table is the
//! host's: integer ids, a `login` compared without case, a hash in whatever scheme the legacy
//! application wrote, a display name, a TOTP secret. grantor never sees the last column.
//!
//! `tests/host_app.rs` includes this file as it is, so that grantor's store contract runs
//! against the very type the example serves.

use std::path::Path;
use std::sync::{Arc, Mutex};

use grantor::settings::Usernames;
use grantor::sql::rusqlite::{self, Connection, OptionalExtension as _, params};
use grantor::store::{
    Account, AdminError, StoreError, User, UserAdmin, UserClaims, UserId, UserStore,
};

/// The table as the legacy application created it.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY,
    login TEXT UNIQUE NOT NULL COLLATE NOCASE,
    password_hash TEXT NOT NULL,
    display_name TEXT,
    totp_secret TEXT
)";

/// Logins are 3 to 32 of `[A-Za-z0-9_]`, one account per login in any case: the key is the
/// login lowercased, as the column's `COLLATE NOCASE` compares them.
pub fn logins() -> Usernames {
    Usernames::custom("Login", |name| {
        let allowed = (3..=32).contains(&name.len())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        allowed.then(|| name.to_ascii_lowercase())
    })
}

/// The host's users, over one SQLite connection.
///
/// Every call runs on tokio's blocking pool (`spawn_blocking`), so a slow disk stalls no
/// request task; one mutex serialises them, which is plenty for a demo (a busy host would pool
/// connections, as grantor's own SQLite store does).
#[derive(Clone)]
pub struct HostUsers {
    db: Arc<Mutex<Connection>>,
}

impl HostUsers {
    /// Opens (creating if need be) the database at `path` and its `users` table.
    pub fn open(path: &Path) -> Result<Self, rusqlite::Error> {
        let db = Connection::open(path)?;
        // The test reads the file while the server writes it: wait for a lock, never fail.
        db.busy_timeout(std::time::Duration::from_secs(5))?;
        db.execute_batch(SCHEMA)?;
        Ok(Self {
            db: Arc::new(Mutex::new(db)),
        })
    }

    /// Runs `query` on the connection, off the async threads.
    pub async fn with_db<T, F>(&self, query: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let db = Arc::clone(&self.db);
        let run = tokio::task::spawn_blocking(move || {
            // A panic while holding the lock leaves the connection as SQLite left it: usable.
            let db = db.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            query(&db)
        });
        match run.await {
            Ok(answer) => answer.map_err(StoreError::failed),
            Err(join) => Err(StoreError::failed(join)),
        }
    }

    /// The user's display name, if the row has one.
    pub async fn display_name(&self, id: &UserId) -> Result<Option<String>, StoreError> {
        let Some(key) = row_id(id) else {
            return Ok(None);
        };
        self.with_db(move |db| {
            db.query_row(
                "SELECT display_name FROM users WHERE id = ?1",
                [key],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
        })
        .await
    }

    /// The user's TOTP secret (base32, as their authenticator app was given it), if they
    /// enrolled one.
    pub async fn totp_secret(&self, id: &UserId) -> Result<Option<String>, StoreError> {
        let Some(key) = row_id(id) else {
            return Ok(None);
        };
        self.with_db(move |db| {
            db.query_row(
                "SELECT totp_secret FROM users WHERE id = ?1",
                [key],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
        })
        .await
    }
}

/// The row's key for a user id grantor hands back: the decimal of the integer key, and nothing
/// else (an id of another form names no row).
fn row_id(id: &UserId) -> Option<i64> {
    let key: i64 = id.as_str().parse().ok()?;
    // `parse` also takes "+1" and "01": those are not the decimal this table answers.
    (key.to_string() == id.as_str()).then_some(key)
}

/// The user as grantor knows them: the decimal of the key, and the login as the row keeps it.
fn user_of(id: i64, login: String) -> User {
    User::new(UserId::new(id.to_string()), login)
}

#[grantor::async_trait]
impl UserStore for HostUsers {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        // grantor passes the name as typed; the column compares it without case.
        let login = username.trim().to_owned();
        self.with_db(move |db| {
            db.query_row(
                "SELECT id, login, password_hash FROM users WHERE login = ?1",
                [login],
                |row| {
                    Ok(Account::new(
                        user_of(row.get(0)?, row.get(1)?),
                        row.get::<_, String>(2)?,
                    ))
                },
            )
            .optional()
        })
        .await
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        let Some(key) = row_id(id) else {
            return Ok(None);
        };
        self.with_db(move |db| {
            db.query_row("SELECT login FROM users WHERE id = ?1", [key], |row| {
                Ok(user_of(key, row.get(0)?))
            })
            .optional()
        })
        .await
    }

    /// Computed from the row (OIDC Core §5.1 `name`), never stored apart.
    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        if self.find_user(id).await?.is_none() {
            return Ok(None);
        }
        let claims = match self.display_name(id).await? {
            Some(name) => UserClaims::new().name(name),
            None => UserClaims::new(),
        };
        Ok(Some(claims))
    }
}

#[grantor::async_trait]
impl UserAdmin for HostUsers {
    /// The table assigns the id (its next integer key): grantor's minted one is not kept.
    async fn insert_user(&self, user: &User, password_hash: &str) -> Result<User, AdminError> {
        let login = user.username().to_owned();
        let hash = password_hash.to_owned();
        let inserted = self
            .with_db(move |db| {
                let added = db.execute(
                    "INSERT INTO users (login, password_hash) VALUES (?1, ?2) \
                     ON CONFLICT (login) DO NOTHING",
                    params![login, hash],
                )?;
                Ok((added == 1).then(|| user_of(db.last_insert_rowid(), login)))
            })
            .await?;
        inserted.ok_or(AdminError::UsernameTaken)
    }

    async fn set_password_hash(&self, id: &UserId, hash: &str) -> Result<bool, StoreError> {
        let Some(key) = row_id(id) else {
            return Ok(false);
        };
        let hash = hash.to_owned();
        self.with_db(move |db| {
            let changed = db.execute(
                "UPDATE users SET password_hash = ?1 WHERE id = ?2",
                params![hash, key],
            )?;
            Ok(changed == 1)
        })
        .await
    }

    /// Claims are computed from the row ([`UserStore::claims`]): nothing to keep.
    async fn set_claims(&self, _: &UserId, _: &UserClaims) -> Result<bool, StoreError> {
        Ok(false)
    }
}
