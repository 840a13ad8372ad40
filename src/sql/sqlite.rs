//! [`SqliteStore`]: connecting, the embedded migrations, which SQLite errors are transient, and
//! write transactions that take the write lock first (`BEGIN IMMEDIATE`): a deferred transaction
//! that read before writing would fail with `SQLITE_BUSY` instead of waiting for the lock.

use std::path::Path;
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
    /// The file holds digests of live tokens, sessions and (unless the server
    /// [encrypts keys at rest](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)) the
    /// keys that sign tokens, so on Unix it is kept to this user: a missing file is created
    /// with mode `0600` (SQLite gives its `-wal` and `-shm` files the database's mode), an
    /// existing one readable by others is narrowed to `0600`, and a path that is not a regular
    /// file owned by this user (a file or link another user planted in a shared directory such
    /// as `/tmp`) is refused.
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
        if !memory {
            private_file(options.get_filename())?;
        }
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

/// Keeps the database file at `path` (and its `-wal`, `-shm` and `-journal` companions, where
/// they exist) to this user before SQLite opens it; see [`SqliteStore::connect_with`].
#[cfg(unix)]
fn private_file(path: &Path) -> Result<(), StoreError> {
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt as _;
    let created = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match created {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut name = path.as_os_str().to_owned();
                name.push(suffix);
                adopt(Path::new(&name), !suffix.is_empty())?;
            }
            Ok(())
        }
        Err(error) => Err(StoreError::failed(format!(
            "cannot create the database file {}: {error}",
            path.display()
        ))),
    }
}

/// Accepts the existing file at `path` only as a regular file this user owns, narrowed to
/// `0600`; a missing one is fine when `optional`.
#[cfg(unix)]
fn adopt(path: &Path, optional: bool) -> Result<(), StoreError> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let refuse = |why: &str| {
        StoreError::failed(format!(
            "refusing the database file {}: {why}",
            path.display()
        ))
    };
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if optional && error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(refuse(&error.to_string())),
    };
    if !metadata.file_type().is_file() {
        return Err(refuse("it is not a regular file (a link or a directory?)"));
    }
    if metadata.uid() != rustix::process::geteuid().as_raw() {
        return Err(refuse(
            "it is owned by another user, who could read or replace what it holds",
        ));
    }
    if metadata.mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|error| refuse(&error.to_string()))?;
    }
    Ok(())
}

/// Elsewhere, the file is left to the operating system's defaults.
#[cfg(not(unix))]
fn private_file(_path: &Path) -> Result<(), StoreError> {
    Ok(())
}

/// Whether `options` name an in-memory database (`:memory:`, which sqlx names
/// `file:sqlx-in-memory-N`, or a `mode=memory` URI).
fn is_in_memory(options: &SqliteConnectOptions) -> bool {
    let name = options.get_filename().to_string_lossy();
    name == ":memory:" || name.starts_with("file:sqlx-in-memory-") || name.contains("mode=memory")
}
