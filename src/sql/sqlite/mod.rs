//! [`SqliteStore`]: every seam on an SQLite file (or an in-memory database), through
//! `rusqlite`.
//!
//! **Writes** run on one writer thread that owns the one connection that writes; the writes
//! that queue while a commit syncs to disk share the next transaction and its one commit, each
//! in a savepoint of its own (`writer.rs`). **Reads** (token checks, client and user lookups)
//! run on the caller's own thread, on a connection of a small pool: no thread hand-off at all,
//! and in WAL mode they never wait for the writer. SQLite answers a primary-key probe on a
//! cached page in microseconds, about what a thread hand-off costs; a read that must go to the
//! disk blocks its thread for as long as the disk takes, as a memory-mapped file would.
//!
//! An in-memory database (`sqlite::memory:`) has one connection, the writer's, so its reads go
//! to the writer thread too.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use super::bounds::ACQUIRE_TIMEOUT;
use crate::error::StoreError;

mod access;
mod accounts;
mod migrate;
mod query;
mod sign_on;
mod state;
#[cfg(test)]
mod tests;
mod tokens;
mod writer;

pub(crate) use query::{Columns, FromLite, from_lite, row, rows, run};
use writer::{Job, Message, Task};

/// How many idle reader connections a file store keeps; more are opened while more callers
/// read at once, and closed when they are done.
const IDLE_READERS: usize = 8;

/// SQLite's `synchronous` setting: when a commit counts as done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Synchronous {
    /// Every commit waits for the disk (`synchronous = FULL`): an answered write survives a
    /// power cut. The default.
    #[default]
    Full,
    /// Commits wait only at checkpoints (`synchronous = NORMAL`): faster, but the last commits
    /// before a power cut (not a crash of the process) may be lost.
    Normal,
}

/// Where and how [`SqliteStore::connect_with`] opens the database.
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    /// The file, or `None` for a database in memory.
    path: Option<PathBuf>,
    synchronous: Synchronous,
    busy_timeout: Duration,
}

impl SqliteOptions {
    /// The database file at `path` (created if missing).
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self {
            path: Some(path.into()),
            synchronous: Synchronous::Full,
            busy_timeout: ACQUIRE_TIMEOUT,
        }
    }

    /// A database in memory, living as long as the store.
    pub fn in_memory() -> Self {
        Self {
            path: None,
            ..Self::file("")
        }
    }

    /// Parses `sqlite:PATH`, `sqlite://PATH` or `sqlite::memory:`. Query parameters
    /// (`?mode=…`) are refused rather than ignored.
    pub fn from_url(url: &str) -> Result<Self, StoreError> {
        let rest = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .ok_or_else(|| StoreError::failed("an SQLite URL starts with `sqlite:`"))?;
        if rest.contains('?') {
            return Err(StoreError::failed(
                "SQLite URL options (`?…`) are not supported: use SqliteOptions",
            ));
        }
        match rest {
            ":memory:" => Ok(Self::in_memory()),
            "" => Err(StoreError::failed("the SQLite URL names no file")),
            path => Ok(Self::file(path)),
        }
    }

    /// When a commit counts as done (default [`Synchronous::Full`]).
    #[must_use]
    pub fn synchronous(mut self, synchronous: Synchronous) -> Self {
        self.synchronous = synchronous;
        self
    }

    /// How long a statement waits for another process's lock on the file (the `grantor`
    /// command, say) before the store answers unavailable; default
    /// [`ACQUIRE_TIMEOUT`].
    #[must_use]
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// Opens one connection with the store's settings.
    fn open(&self, writer: bool) -> Result<Connection, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = match &self.path {
            Some(path) => Connection::open_with_flags(path, flags),
            None => Connection::open_in_memory_with_flags(flags),
        }
        .map_err(query::store_error)?;
        conn.set_prepared_statement_cache_capacity(query::STATEMENT_CACHE);
        conn.busy_timeout(self.busy_timeout)
            .map_err(query::store_error)?;
        let synchronous = match self.synchronous {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        };
        if let Some(path) = self.path.as_ref().filter(|_| writer) {
            wal_mode(&conn, path)?;
        }
        if writer {
            // Each write runs in a savepoint, whose journal (the pages as they were before it,
            // to roll it back) SQLite spills to a temporary file past 64 KiB: a file created,
            // written and deleted for most batches. In memory instead, it holds at most the
            // pages one batch changes. It never decides what a commit keeps, so durability is
            // as before.
            conn.execute_batch("PRAGMA temp_store = MEMORY")
                .map_err(query::store_error)?;
        }
        conn.execute_batch(&format!("PRAGMA synchronous = {synchronous}"))
            .map_err(query::store_error)?;
        if !writer {
            // A reader never writes, whatever it is asked.
            conn.execute_batch("PRAGMA query_only = ON")
                .map_err(query::store_error)?;
        }
        Ok(conn)
    }
}

/// Puts the database in WAL mode (readers never wait for the writer, and a commit appends to
/// the log), saying so in the log when an existing database was in another mode: other
/// programs that open the host's file then need WAL support (no network file systems).
fn wal_mode(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let before: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .map_err(query::store_error)?;
    if before.eq_ignore_ascii_case("wal") {
        return Ok(());
    }
    let pages: i64 = conn
        .query_row("PRAGMA page_count", [], |row| row.get(0))
        .map_err(query::store_error)?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
        .map_err(query::store_error)?;
    if pages > 0 {
        tracing::warn!(
            path = %path.display(),
            was = %before,
            "the existing SQLite database's journal mode is now WAL"
        );
    }
    Ok(())
}

/// Every seam on SQLite: for one node, nothing to install (SQLite is compiled in).
///
/// Cloning is cheap (the connections are shared), so one store can be handed to the builder as
/// every seam at once.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    options: SqliteOptions,
    /// The writer thread's queue.
    writer: Sender<Message>,
    /// Idle reader connections (a file database only).
    readers: Mutex<Vec<Connection>>,
    closed: AtomicBool,
    /// Transactions the writer committed, for the tests.
    commits: Arc<AtomicU64>,
}

impl SqliteStore {
    /// Connects to `url` (`sqlite:PATH`, `sqlite://PATH`, or `sqlite::memory:` for a database
    /// that lives as long as the store), creating the file if it is missing, and applies pending
    /// migrations. See [`SqliteStore::connect_with`] for the settings, and for what it changes
    /// on an existing file (its mode, its journal mode: each logged).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(SqliteOptions::from_url(url)?).await
    }

    /// Opens the database `options` name, creating the file if it is missing, and applies
    /// pending migrations.
    ///
    /// The file holds digests of live tokens, sessions and (unless the server
    /// [encrypts keys at rest](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)) the
    /// keys that sign tokens, so on Unix it is kept to this user: a missing file is created
    /// with mode `0600` (SQLite gives its `-wal` and `-shm` files the database's mode), an
    /// existing one readable or writable by others is narrowed to `0600`, and a path that is
    /// not a regular file owned by this user (a file or link another user planted in a shared
    /// directory such as `/tmp`) is refused. Its `-wal`, `-shm` and `-journal` companions are
    /// held to the same rules, before SQLite opens them (for a new file too: another user may
    /// plant a log beside a file that does not exist yet) and again once it has.
    ///
    /// **On a database file the host already has**, this changes the file: its mode is
    /// narrowed to `0600` and its journal mode becomes WAL (every program that opens it then
    /// needs WAL support: no network file systems). Each change is logged at `warn` with the
    /// path and what it was; a file already private and in WAL mode is left as it is. A host
    /// that wants neither gives grantor a file of its own.
    ///
    /// A file database is put in WAL mode (readers never wait for the writer) and keeps
    /// SQLite's `synchronous = FULL` unless `options` say otherwise: a write is answered once
    /// its commit is on disk. Writes run on one thread and commit in groups (see the [module
    /// docs](crate::sql#group-commit-sqlite)); reads run on the caller's thread.
    pub async fn connect_with(options: SqliteOptions) -> Result<Self, StoreError> {
        Self::start(options, true).await
    }

    /// Opens the database `url` names as [`connect`](Self::connect) does, without migrating:
    /// refuses one whose schema is older than this build needs (run `grantor migrate`, or
    /// [`migrate`](Self::migrate), first).
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(SqliteOptions::from_url(url)?).await
    }

    /// [`open`](Self::open) with `options`.
    pub async fn open_with(options: SqliteOptions) -> Result<Self, StoreError> {
        Self::start(options, false).await
    }

    /// Starts the writer thread on the database, migrating it first or checking its schema.
    async fn start(options: SqliteOptions, migrate: bool) -> Result<Self, StoreError> {
        if let Some(path) = &options.path {
            private_file(path)?;
        }
        let (queue, jobs) = mpsc::channel();
        let (ready, started) = oneshot::channel();
        let commits = Arc::new(AtomicU64::new(0));
        let thread_options = options.clone();
        let thread_commits = Arc::clone(&commits);
        std::thread::Builder::new()
            .name("grantor-sqlite-writer".into())
            .spawn(move || {
                let opened = thread_options.open(true).and_then(|conn| {
                    if migrate {
                        migrate::run(&conn)?;
                    } else {
                        migrate::check(&conn)?;
                    }
                    if let Some(path) = &thread_options.path {
                        private_companions(path)?;
                    }
                    Ok(conn)
                });
                match opened {
                    Ok(conn) => {
                        let _ = ready.send(Ok(()));
                        writer::serve(conn, jobs, &thread_commits);
                    }
                    Err(error) => {
                        let _ = ready.send(Err(error));
                    }
                }
            })
            .map_err(|error| StoreError::unavailable(format!("no writer thread: {error}")))?;
        started
            .await
            .map_err(|_| StoreError::failed("the SQLite writer thread stopped"))??;
        Ok(Self {
            inner: Arc::new(Inner {
                options,
                writer: queue,
                readers: Mutex::new(Vec::new()),
                closed: AtomicBool::new(false),
                commits,
            }),
        })
    }

    /// Applies pending migrations (idempotent; safe to run from several processes at once).
    /// [`connect`](Self::connect) already has.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        self.send(Message::Alone, migrate::run).await
    }

    /// Commits the writes under way, then closes every connection: every later call answers
    /// [`StoreError::unavailable`](crate::store::StoreError::unavailable).
    pub async fn close(&self) {
        if self.inner.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.inner.readers.lock().map(|mut idle| idle.clear()).ok();
        let (done, closed) = oneshot::channel();
        if self.inner.writer.send(Message::Close(done)).is_ok() {
            let _ = closed.await;
        }
    }

    /// Runs `work` (the host's own statements) in the writer's next batch, in a savepoint of
    /// its own, and answers once it is committed; an error rolls back `work` alone.
    pub async fn write_with<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        F: FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
        T: Send + 'static,
    {
        self.write(move |conn| work(conn).map_err(query::store_error))
            .await
    }

    /// Runs `work` (the host's own queries) on a reader connection (`PRAGMA query_only`): it
    /// sees every committed write.
    pub async fn read_with<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        F: FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
        T: Send + 'static,
    {
        self.read(move |conn| work(conn).map_err(query::store_error))
            .await
    }

    /// Whether the database is a file (not in memory).
    pub(crate) fn is_file(&self) -> bool {
        self.inner.options.path.is_some()
    }

    /// How many transactions the writer has committed.
    #[cfg(test)]
    pub(crate) fn commits(&self) -> u64 {
        self.inner.commits.load(Ordering::Relaxed)
    }

    /// Runs one write's statements on the writer thread, in the next batch; answers once
    /// committed.
    pub(crate) async fn write<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        T: Send + 'static,
    {
        self.send(Message::Write, work).await
    }

    /// [`SqliteStore::write`] for a write of one statement: `work` runs at most one statement
    /// that changes the database and never fails after it succeeded, so it needs no
    /// savepoint of its own ([`Message::Statement`]).
    pub(crate) async fn write_statement<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        T: Send + 'static,
    {
        self.send(Message::Statement, work).await
    }

    /// Sends `work` to the writer thread as `message` says, and waits for its answer.
    async fn send<T, F>(
        &self,
        message: fn(Box<dyn Job>) -> Message,
        work: F,
    ) -> Result<T, StoreError>
    where
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        T: Send + 'static,
    {
        if self.inner.closed.load(Ordering::Relaxed) {
            return Err(closed());
        }
        let (answer, answered) = oneshot::channel();
        self.inner
            .writer
            .send(message(Box::new(Task { work, answer })))
            .map_err(|_| closed())?;
        match tokio::time::timeout(ACQUIRE_TIMEOUT, answered).await {
            Ok(Ok(answer)) => answer,
            // The writer dropped the write unanswered: it stopped, or the write panicked.
            Ok(Err(_)) => Err(StoreError::unavailable(
                "the SQLite writer stopped before answering",
            )),
            Err(_) => Err(StoreError::unavailable(
                "the SQLite writer did not answer within the acquire timeout",
            )),
        }
    }

    /// Runs one read on the caller's thread, on an idle reader connection (or a new one); on an
    /// in-memory database, on the writer thread.
    pub(crate) async fn read<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        T: Send + 'static,
    {
        if self.inner.options.path.is_none() {
            return self.write(work).await;
        }
        if self.inner.closed.load(Ordering::Relaxed) {
            return Err(closed());
        }
        let idle = self
            .inner
            .readers
            .lock()
            .map_err(|_| StoreError::failed("the reader pool was poisoned"))?
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.inner.options.open(false)?,
        };
        let answer = work(&conn);
        if let Ok(mut idle) = self.inner.readers.lock()
            && idle.len() < IDLE_READERS
            && !self.inner.closed.load(Ordering::Relaxed)
        {
            idle.push(conn);
        }
        answer
    }
}

fn closed() -> StoreError {
    StoreError::unavailable("the SQLite store is closed")
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let idle = self.inner.readers.lock().map_or(0, |idle| idle.len());
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.options.path)
            .field("synchronous", &self.inner.options.synchronous)
            .field("idle_readers", &idle)
            .field("commits", &self.inner.commits.load(Ordering::Relaxed))
            .field("closed", &self.inner.closed.load(Ordering::Relaxed))
            .finish()
    }
}

/// The files SQLite keeps beside the database: its write-ahead log, the log's shared-memory
/// index and the rollback journal. The log holds recent pages in full (signing keys among
/// them, without key encryption), so each is held to the database file's rules.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The path of `path`'s companion with `suffix`.
fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Keeps the database file at `path` and its `-wal`, `-shm` and `-journal` companions, where
/// they exist, to this user before SQLite opens them; see [`SqliteStore::connect_with`].
/// Companions are checked for a new file too: another user may have planted them beside a
/// file that did not exist yet.
#[cfg(unix)]
fn private_file(path: &Path) -> Result<(), StoreError> {
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt as _;
    for suffix in COMPANIONS {
        adopt(&companion(path, suffix), true)?;
    }
    let created = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match created {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => adopt(path, false),
        Err(error) => Err(StoreError::failed(format!(
            "cannot create the database file {}: {error}",
            path.display()
        ))),
    }
}

/// Checks again, once SQLite holds the database open, the companions it made or found: a file
/// planted between [`private_file`]'s check and SQLite's open is refused before any secret
/// is written to it.
#[cfg(unix)]
fn private_companions(path: &Path) -> Result<(), StoreError> {
    COMPANIONS
        .iter()
        .try_for_each(|suffix| adopt(&companion(path, suffix), true))
}

/// Accepts the existing file at `path` only as a regular file this user owns, narrowed to
/// `0600` (saying so in the log: it may be a host's own file); a missing one is fine when
/// `optional`.
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
        return Err(refuse(
            "it is not a regular file (a link or a directory?): remove it, or choose another path",
        ));
    }
    if metadata.uid() != rustix::process::geteuid().as_raw() {
        return Err(refuse(
            "it is owned by another user, who could read or replace what it holds: remove it, \
             or choose a directory only this user can write",
        ));
    }
    let mode = metadata.mode() & 0o777;
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|error| refuse(&error.to_string()))?;
        tracing::warn!(
            path = %path.display(),
            was = %format_args!("{mode:o}"),
            "the SQLite file was readable or writable by others: its mode is now 0600"
        );
    }
    Ok(())
}

/// Elsewhere, the file is left to the operating system's defaults.
#[cfg(not(unix))]
fn private_file(_path: &Path) -> Result<(), StoreError> {
    Ok(())
}

/// Elsewhere, the companions are left to the operating system's defaults.
#[cfg(not(unix))]
fn private_companions(_path: &Path) -> Result<(), StoreError> {
    Ok(())
}
