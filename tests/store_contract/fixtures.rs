//! Fresh SQL stores for the contract and the SQL-only rules, and what those rules read of them.

use std::time::Duration;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use async_trait::async_trait;
use grantor::Scope;
use grantor::client::ClientId;
use grantor::clock::UnixTime;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use grantor::sql;
use grantor::store::SecretDigest;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use grantor::store::StoreError;
use grantor::store::UserId;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use grantor::store::contract::ContractStore;
use grantor::store::{
    Authorization, CodeGrant, Family, FamilyId, Jti, NewRefreshToken, NewTokens, User, UserSession,
};

/// Says on the terminal, past the test harness's output capture, that a test did not run.
#[cfg(feature = "postgres")]
pub fn skipped(test: &str, why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}

/// The instant the tests start at.
pub const NOW: UnixTime = UnixTime::from_secs(1_800_000_000);

/// `NOW` plus `seconds`.
pub fn at(seconds: u64) -> UnixTime {
    NOW.plus(Duration::from_secs(seconds))
}

/// `client` authorized by Alice for `profile email`.
pub fn authorization() -> Authorization {
    let alice = User::new(UserId::new("u1"), "alice@example.com");
    let scope = Scope::parse("profile email").unwrap();
    Authorization::new(ClientId::new("client").unwrap(), Some(alice), scope)
}

/// A code for [`authorization`], redeemable for a minute.
pub fn code_grant() -> CodeGrant {
    CodeGrant::new(authorization(), "https://app.example/cb", None, NOW, at(60))
}

/// A new secret as grantor would mint one, and its digest.
pub fn secret(what: &str) -> (String, SecretDigest) {
    let secret = unique_name(what);
    let digest = SecretDigest::of(&secret);
    (secret, digest)
}

/// A new family id, as random as a digest.
pub fn family_id() -> FamilyId {
    let mut id = [0u8; 16];
    id.copy_from_slice(&secret("family").1.as_bytes()[..16]);
    FamilyId::from_bytes(id)
}

/// An access token for an hour and a refresh token for a day in `family`, for
/// [`authorization`], and the secrets they stand for (access, refresh).
pub fn tokens(family: Family) -> (NewTokens, [(String, SecretDigest); 2]) {
    let (access, refresh) = (secret("access"), secret("refresh"));
    let record = NewTokens::new(
        family,
        authorization(),
        NOW,
        access.1,
        Jti::new(unique_name("jti")),
        at(3600),
    )
    .with_refresh_token(NewRefreshToken::new(refresh.1, at(86_400)));
    (record, [access, refresh])
}

/// A name no other test of this run (or of a concurrent run) uses.
pub fn unique_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Every table of grantor's schema.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub const TABLES: [&str; 12] = [
    "grantor_clients",
    "grantor_users",
    "grantor_families",
    "grantor_codes",
    "grantor_access_tokens",
    "grantor_refresh_tokens",
    "grantor_sessions",
    "grantor_attempts",
    "grantor_single_use",
    "grantor_user_sessions",
    "grantor_session_grants",
    "grantor_consents",
];

/// Alice signed in by password now, until `expires_at`, as single sign-on keeps her browser.
pub fn user_session(expires_at: UnixTime) -> UserSession {
    let alice = User::new(UserId::new("u1"), "alice@example.com");
    UserSession::new(
        alice,
        unique_name("sid"),
        NOW,
        vec!["pwd".to_owned()],
        expires_at,
    )
}

/// A SQL store, and what the SQL-only rules read of it besides the seams.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[async_trait]
pub trait SqlStore: ContractStore + Clone {
    /// Every value of every row of grantor's tables, as bytes.
    async fn raw_values(&self) -> Vec<Vec<u8>>;
    /// How many rows `table` holds.
    async fn rows(&self, table: &str) -> i64;
    /// The one integer `sql` answers (a count, a sum cast to BIGINT).
    async fn scalar(&self, sql: &str) -> i64;
    /// Runs `sql`, a statement of the test's own.
    async fn execute(&self, sql: &str);
    /// Applies the migrations again.
    async fn migrate_again(&self) -> Result<(), StoreError>;
    /// Closes the pool, as if the database had gone.
    async fn close(&self);
}

#[cfg(feature = "sqlite")]
#[async_trait]
impl SqlStore for sql::SqliteStore {
    async fn raw_values(&self) -> Vec<Vec<u8>> {
        use sql::rusqlite::types::ValueRef;
        self.read_with(|conn| {
            let mut values = Vec::new();
            for table in TABLES {
                let mut statement = conn.prepare(&format!("SELECT * FROM {table}"))?;
                let columns = statement.column_count();
                let mut rows = statement.query([])?;
                while let Some(row) = rows.next()? {
                    for i in 0..columns {
                        match row.get_ref(i)? {
                            ValueRef::Null => {}
                            ValueRef::Integer(n) => values.push(n.to_string().into_bytes()),
                            ValueRef::Real(x) => values.push(x.to_string().into_bytes()),
                            ValueRef::Text(text) | ValueRef::Blob(text) => {
                                values.push(text.to_vec())
                            }
                        }
                    }
                }
            }
            Ok(values)
        })
        .await
        .unwrap()
    }

    async fn rows(&self, table: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        self.read_with(move |conn| conn.query_row(&sql, [], |row| row.get(0)))
            .await
            .unwrap()
    }

    async fn scalar(&self, sql: &str) -> i64 {
        let sql = sql.to_owned();
        self.read_with(move |conn| conn.query_row(&sql, [], |row| row.get(0)))
            .await
            .unwrap()
    }

    async fn execute(&self, sql: &str) {
        let sql = sql.to_owned();
        self.write_with(move |conn| conn.execute_batch(&sql))
            .await
            .unwrap();
    }

    async fn migrate_again(&self) -> Result<(), StoreError> {
        self.migrate().await
    }

    async fn close(&self) {
        // The writer thread and every reader connection.
        sql::SqliteStore::close(self).await;
    }
}

#[cfg(feature = "postgres")]
#[async_trait]
impl SqlStore for sql::PostgresStore {
    async fn raw_values(&self) -> Vec<Vec<u8>> {
        use sql::sqlx::Row as _;
        let mut values = Vec::new();
        for table in TABLES {
            // In a transaction, unnamed: safe behind a pooler in transaction mode too.
            let mut tx = self.pool().begin().await.unwrap();
            let rows = sql::sqlx::query(&format!("SELECT * FROM {table}"))
                .persistent(false)
                .fetch_all(&mut *tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            for row in rows {
                for i in 0..row.len() {
                    let value = if let Ok(text) = row.try_get::<Option<String>, _>(i) {
                        text.map(String::into_bytes)
                    } else if let Ok(bytes) = row.try_get::<Option<Vec<u8>>, _>(i) {
                        bytes
                    } else if let Ok(n) = row.try_get::<Option<i64>, _>(i) {
                        n.map(|n| n.to_string().into_bytes())
                    } else if let Ok(b) = row.try_get::<Option<bool>, _>(i) {
                        b.map(|b| b.to_string().into_bytes())
                    } else {
                        panic!("{table} column {i} has an unexpected type");
                    };
                    values.extend(value);
                }
            }
        }
        values
    }

    async fn rows(&self, table: &str) -> i64 {
        let mut tx = self.pool().begin().await.unwrap();
        let count = sql::sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .persistent(false)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        count
    }

    async fn scalar(&self, sql: &str) -> i64 {
        let mut tx = self.pool().begin().await.unwrap();
        let value = sql::sqlx::query_scalar(sql)
            .persistent(false)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        value
    }

    async fn execute(&self, sql: &str) {
        let mut tx = self.pool().begin().await.unwrap();
        sql::sqlx::query(sql)
            .persistent(false)
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    /// Behind a pooler in transaction mode the store refuses to migrate, saying where to:
    /// the database was migrated directly when it was made.
    async fn migrate_again(&self) -> Result<(), StoreError> {
        let migrated = self.migrate().await;
        if self.pooling() == sql::Pooling::Transaction {
            let refused = migrated.expect_err("no migrations through the pooler");
            assert!(refused.to_string().contains("grantor migrate"), "{refused}");
            return Ok(());
        }
        migrated
    }

    async fn close(&self) {
        sql::PostgresStore::close(self).await;
    }
}

/// Fresh SQLite databases, each a file in a directory of its own that goes when this does.
#[cfg(feature = "sqlite")]
pub struct SqliteFiles {
    dir: std::path::PathBuf,
}

#[cfg(feature = "sqlite")]
impl SqliteFiles {
    pub fn new() -> Self {
        let dir = std::env::temp_dir().join(unique_name("grantor_contract"));
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    /// The URL of a new database file, not yet made.
    pub fn new_url(&self) -> String {
        let path = self.dir.join(format!("{}.db", unique_name("store")));
        format!("sqlite:{}", path.display())
    }

    /// A store on a new database file.
    pub async fn fresh(&self) -> sql::SqliteStore {
        let path = self.dir.join(format!("{}.db", unique_name("store")));
        sql::SqliteStore::connect(&format!("sqlite:{}", path.display()))
            .await
            .unwrap()
    }
}

#[cfg(feature = "sqlite")]
impl Drop for SqliteFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Fresh PostgreSQL schemas in the database `GRANTOR_TEST_POSTGRES_URL` names, dropped by
/// [`PostgresSchemas::drop_all`]. With `GRANTOR_TEST_POSTGRES_POOLER` (the base URL of a
/// pgbouncer in transaction mode in front of that cluster, `.ci/pgbouncer`), each fresh store is
/// a database of its own instead (the pooler passes no `search_path`), migrated directly and
/// reached through the pooler with `pooler=transaction`, its session settings set on the
/// database.
#[cfg(feature = "postgres")]
pub struct PostgresSchemas {
    url: String,
    pooler: Option<String>,
    made: std::sync::Mutex<Vec<Made>>,
}

/// A schema or a database a test made.
#[cfg(feature = "postgres")]
#[derive(Clone)]
enum Made {
    Schema(String),
    Database(String),
}

#[cfg(feature = "postgres")]
impl PostgresSchemas {
    /// The database to make schemas in, or `None` (said on stderr for `test`) without one.
    pub fn from_env(test: &str) -> Option<Self> {
        let Ok(url) = std::env::var("GRANTOR_TEST_POSTGRES_URL") else {
            skipped(test, "GRANTOR_TEST_POSTGRES_URL not set");
            return None;
        };
        let pooler = std::env::var("GRANTOR_TEST_POSTGRES_POOLER")
            .ok()
            .filter(|url| !url.is_empty());
        Some(Self {
            url,
            pooler,
            made: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// A store in a new schema.
    pub async fn fresh(&self) -> sql::PostgresStore {
        self.fresh_with(&[]).await
    }

    /// A store in a new schema whose transactions are all `SERIALIZABLE`, and a second store
    /// (another node) on the same schema.
    pub async fn fresh_serializable(&self) -> (sql::PostgresStore, sql::PostgresStore) {
        let isolation = [("default_transaction_isolation", "serializable")];
        let first = self.fresh_with(&isolation).await;
        let made = self.made.lock().unwrap().last().cloned().unwrap();
        let second = match made {
            Made::Schema(schema) => {
                let options = self.options(&schema).options(isolation);
                sql::PostgresStore::connect_with(options).await.unwrap()
            }
            Made::Database(name) => sql::PostgresStore::connect(&self.through_pooler(&name))
                .await
                .unwrap(),
        };
        (first, second)
    }

    /// The URL of database `name` through the pooler.
    fn through_pooler(&self, name: &str) -> String {
        let pooler = self.pooler.as_deref().unwrap_or_default();
        format!("{}/{name}?pooler=transaction", pooler.trim_end_matches('/'))
    }

    /// A store in a new schema (or database, through the pooler), with more session settings.
    async fn fresh_with(&self, settings: &[(&str, &str)]) -> sql::PostgresStore {
        use sql::sqlx::Connection as _;
        use sql::sqlx::postgres::PgConnection;
        let name = unique_name("grantor_contract");
        let mut admin = PgConnection::connect(&self.url).await.unwrap();
        if self.pooler.is_none() {
            sql::sqlx::query(&format!("CREATE SCHEMA {name}"))
                .execute(&mut admin)
                .await
                .unwrap();
            let _ = admin.close().await;
            self.made.lock().unwrap().push(Made::Schema(name.clone()));
            let options = self.options(&name).options(settings.iter().copied());
            return sql::PostgresStore::connect_with(options).await.unwrap();
        }
        sql::sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .unwrap();
        self.made.lock().unwrap().push(Made::Database(name.clone()));
        for (setting, value) in settings {
            sql::sqlx::query(&format!("ALTER DATABASE {name} SET {setting} = '{value}'"))
                .execute(&mut admin)
                .await
                .unwrap();
        }
        let _ = admin.close().await;
        // Migrated directly, as `grantor migrate` would before a deploy.
        let (base, _) = self.url.rsplit_once('/').unwrap();
        sql::PostgresStore::connect(&format!("{base}/{name}"))
            .await
            .unwrap()
            .close()
            .await;
        sql::PostgresStore::connect(&self.through_pooler(&name))
            .await
            .unwrap()
    }

    /// The connection options of a new, empty schema.
    pub async fn empty(&self) -> sql::sqlx::postgres::PgConnectOptions {
        use sql::sqlx::Connection as _;
        let schema = unique_name("grantor_contract");
        let mut admin = sql::sqlx::postgres::PgConnection::connect(&self.url)
            .await
            .unwrap();
        sql::sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut admin)
            .await
            .unwrap();
        let _ = admin.close().await;
        self.made.lock().unwrap().push(Made::Schema(schema.clone()));
        self.options(&schema)
    }

    fn options(&self, schema: &str) -> sql::sqlx::postgres::PgConnectOptions {
        use std::str::FromStr as _;
        sql::sqlx::postgres::PgConnectOptions::from_str(&self.url)
            .unwrap()
            .options([("search_path", schema)])
    }

    /// Drops every schema and database [`PostgresSchemas::fresh`] made.
    pub async fn drop_all(self) {
        use sql::sqlx::Connection as _;
        let mut admin = sql::sqlx::postgres::PgConnection::connect(&self.url)
            .await
            .unwrap();
        for made in self.made.into_inner().unwrap() {
            let drop = match made {
                Made::Schema(schema) => format!("DROP SCHEMA {schema} CASCADE"),
                // The pooler may still hold server connections to it.
                Made::Database(name) => format!("DROP DATABASE {name} WITH (FORCE)"),
            };
            sql::sqlx::query(&drop).execute(&mut admin).await.unwrap();
        }
        let _ = admin.close().await;
    }
}
