//! [`SqliteStore`]: connecting, the embedded migrations, which SQLite errors are transient, and
//! write transactions that take the write lock first (`BEGIN IMMEDIATE`): a deferred transaction
//! that read before writing would fail with `SQLITE_BUSY` instead of waiting for the lock.

use std::str::FromStr as _;

use sqlx::Sqlite;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};

#[cfg(doc)]
use super::SqliteStore;
use super::backend::Backend;
use super::columns::store_error;
use super::{ACQUIRE_TIMEOUT, SqlStore};
use crate::error::StoreError;

/// `src/sql/migrations/sqlite/`, embedded at build time.
static MIGRATOR: Migrator = sqlx::migrate!("src/sql/migrations/sqlite");

impl Backend for Sqlite {
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";
    const INSERT_FAMILY_WITH_ACCESS: &'static str = super::text::INSERT_FAMILY_THEN_ACCESS;
    const ONE_STATEMENT_FAMILY: bool = false;
    const ONE_STATEMENT_TOKENS: Option<(&'static str, &'static str)> = None;

    fn migrator() -> &'static Migrator {
        &MIGRATOR
    }

    fn rows_affected(result: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        result.rows_affected()
    }

    /// SQLite result codes that mean "try again later": `SQLITE_BUSY` (5), `SQLITE_LOCKED` (6),
    /// `SQLITE_FULL` (13) and `SQLITE_CANTOPEN` (14); extended codes carry them in their low byte.
    fn transient(code: &str) -> bool {
        code.parse::<i32>()
            .is_ok_and(|code| matches!(code & 0xff, 5 | 6 | 13 | 14))
    }
}

impl SqlStore<Sqlite> {
    /// Connects to `url` (`sqlite:PATH`, `sqlite://PATH`, or `sqlite::memory:` for a database
    /// that lives as long as the store), creating the file if it is missing, and applies pending
    /// migrations. See [`SqliteStore::connect_with`] for the settings.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url).map_err(StoreError::failed)?;
        Self::connect_with(options).await
    }

    /// Connects with `options`, creating the file if it is missing, and applies pending
    /// migrations.
    ///
    /// A file database is put in WAL mode (readers never wait for the writer), gets one
    /// connection for every write, whose writes commit in groups (see the [module
    /// docs](crate::sql#group-commit-sqlite-files)), beside a pool for reads, keeps SQLite's
    /// `synchronous = FULL` (a write is answered once it is on disk;
    /// `options.synchronous(SqliteSynchronous::Normal)` trades the last commits before a power
    /// loss for speed), and waits at most
    /// [`ACQUIRE_TIMEOUT`] for a busy database or a free connection. An in-memory database gets
    /// one connection that is never closed, so it lives as long as the store.
    pub async fn connect_with(options: SqliteConnectOptions) -> Result<Self, StoreError> {
        let memory = is_in_memory(&options);
        let options = options
            .create_if_missing(true)
            .busy_timeout(ACQUIRE_TIMEOUT);
        let pool = if memory {
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
        } else {
            SqlitePoolOptions::new()
        };
        let options = if memory {
            options
        } else {
            options.journal_mode(SqliteJournalMode::Wal)
        };
        let pool = pool
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(store_error::<Sqlite>)?;
        let store = if memory {
            Self::from_pool(pool)
        } else {
            // One writer connection: SQLite takes one writer at a time anyway, and writers that
            // queue for the connection wait in order, where writers that contend for the lock
            // get `SQLITE_BUSY` and sleep before retrying.
            let writer = SqlitePoolOptions::new()
                .max_connections(1)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options)
                .await
                .map_err(store_error::<Sqlite>)?;
            Self::with_writer(pool, writer)
        };
        store.migrate().await?;
        Ok(store)
    }
}

/// Whether `options` name an in-memory database (`:memory:`, which sqlx names
/// `file:sqlx-in-memory-N`, or a `mode=memory` URI).
fn is_in_memory(options: &SqliteConnectOptions) -> bool {
    let name = options.get_filename().to_string_lossy();
    name == ":memory:" || name.starts_with("file:sqlx-in-memory-") || name.contains("mode=memory")
}
