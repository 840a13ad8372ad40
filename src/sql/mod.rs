//! SQL stores: every seam of [`crate::store`] on SQLite (feature `sqlite`) and PostgreSQL
//! (feature `postgres`), through [`sqlx`].
//!
//! One type, [`SqlStore`], implements them all over a connection pool: [`ClientStore`],
//! [`UserStore`], [`TokenIssuer`], [`SessionStore`], [`UserSessionStore`], [`ConsentStore`],
//! [`AttemptCounter`], [`SingleUseStore`], [`KeyStore`], [`Admin`], [`UserAdmin`] and
//! [`Purge`](crate::store::Purge). `SqliteStore` serves one node (the database is a file
//! beside the service; nothing to install), and `PostgresStore` any number of identical nodes
//! over one database: a sign-in may reach a different node on every request, and a throttle
//! counts the guesses made at every node. Both run the same SQL text; only the schema's column
//! types differ (`src/sql/migrations/sqlite/` and `src/sql/migrations/postgres/`, embedded in
//! the library with [`sqlx::migrate!`]).
//!
//! ```no_run
//! # #[cfg(feature = "sqlite")]
//! # async fn start() -> Result<(), Box<dyn std::error::Error>> {
//! use grantor::sql::SqliteStore;
//! use grantor::store::Purge as _;
//! use grantor::{AuthorizationServer, Password};
//!
//! // Connects, creating the file if missing, and applies pending migrations.
//! let store = SqliteStore::connect("sqlite:/var/lib/auth/grantor.db").await?;
//! let server = AuthorizationServer::builder()
//!     .issuer("https://auth.example")
//!     .store(store.clone()) // every seam: clients, users, tokens, sessions, attempt counters
//!     .build()?;
//! server.add_user("alice@example.com", &Password::new("alice-password-1")).await?;
//! // …and now and then, say hourly:
//! store.purge_expired(grantor::clock::UnixTime::from(std::time::SystemTime::now())).await?;
//! # Ok(()) }
//! ```
//!
//! # What is kept
//!
//! grantor mints every code, token, `jti`, family id, session id and CSRF token; these stores
//! only keep what they are handed. Codes, tokens, session ids, CSRF tokens and the cookies of
//! signed-in browsers arrive and are kept only as SHA-256 digests
//! ([`crate::store::SecretDigest`]), the primary keys every lookup probes; client secrets as
//! [`SecretVerifier::to_stored`](crate::client::SecretVerifier::to_stored) strings and
//! passwords as Argon2id PHC strings ([`crate::hash::hash_password`]). Keys of attempt counters
//! and single-use values are strings grantor builds, never a secret. A database dump hands out
//! nothing usable.
//!
//! # Atomic single use, across nodes
//!
//! Each single-use step is one statement that changes a row only while it is still in the state
//! it expects, so the database itself picks exactly one winner, whichever node asks:
//!
//! - a code is consumed by `UPDATE grantor_codes SET redeemed = TRUE WHERE digest = $1 AND NOT
//!   redeemed AND … RETURNING …`; every other caller finds it redeemed and gets
//!   [`CodeRedemption::Replayed`] with its family. The redeemed row stays as a tombstone until an
//!   hour past the code's expiry, so late replays still name what was issued;
//! - a refresh token is rotated by `UPDATE grantor_families SET generation = generation + 1
//!   WHERE NOT revoked AND id = … AND generation = <the token's generation> RETURNING …`, and the
//!   successor tokens are inserted in the same transaction, so a rotation either happens whole
//!   or not at all. A caller whose token is no longer its family's current generation gets
//!   [`Rotation::Reused`] with the family and keeps nothing; the store never revokes on its own
//!   (grantor does, with [`TokenIssuer::revoke_family`]);
//! - revocation sets `grantor_families.revoked`, and every lookup joins the family and skips
//!   revoked ones, so a token whose family is revoked is never found again;
//! - a sign-in session or a single-use value is taken by `DELETE … WHERE … AND expires_at > $now
//!   RETURNING …`: one caller gets the row, the others find none;
//! - a signed-in browser is ended (logout) the same way, its grants deleted and answered in the
//!   same transaction; a grant is added to it by `UPDATE grantor_user_sessions SET last_grant =
//!   last_grant + 1 … RETURNING last_grant`, which numbers it and holds the session's row until
//!   its commit: concurrent grants each insert a row of their own (none is lost), the oldest
//!   beyond [`MAX_SESSION_GRANTS`](crate::store::MAX_SESSION_GRANTS) is deleted in the same
//!   transaction, and a logout racing them either ends them too or comes first; a new
//!   browser's insert deletes, in its transaction, the user's sessions beyond the newest
//!   [`MAX_SESSIONS_PER_USER`](crate::store::MAX_SESSIONS_PER_USER) and their grants;
//! - a remembered approval is kept by one `INSERT … ON CONFLICT (user_id, client_id) DO
//!   UPDATE`, replacing the one before whole;
//! - an attempt is counted by one `INSERT … ON CONFLICT (key) DO UPDATE SET count = CASE WHEN
//!   <the window is over> THEN 1 ELSE count + 1 END … RETURNING count, resets_at`, so concurrent
//!   attempts each see a different count;
//! - a single-use value is kept by `INSERT … ON CONFLICT (key) DO UPDATE … WHERE <the held value
//!   expired>`: of concurrent callers exactly one changes a row.
//!
//! Writes of more than one statement (a code with its family, tokens with their family, a
//! rotation with its successor) run in one transaction. On SQLite it begins with `BEGIN
//! IMMEDIATE`, taking the write lock first: a transaction that read and then wrote could fail
//! with `SQLITE_BUSY` instead of waiting.
//!
//! # Group commit (SQLite files)
//!
//! With `synchronous = FULL` every SQLite commit waits for the disk, so one commit per write
//! would cap a store at the disk's sync rate. A SQLite file store therefore writes through one
//! connection and commits in groups: each write runs its statements inside the transaction open
//! on that connection (beginning one if none is), seeing every write before it, then queues
//! again, first come, first served, and either finds its batch committed by a writer ahead of
//! it or commits it, for every write since the transaction began. A write is answered only
//! once it is committed, so an acknowledged token survives a power cut, and under load one sync
//! covers the dozens of writes that arrived during the previous one.
//!
//! - A write whose statements fail rolls its batch back and answers its error; the others of
//!   that batch, not yet answered, run their statements again in the next (at most three times
//!   each). A failed commit fails every write of its batch.
//! - A write whose future is dropped halfway leaves nothing: sqlx rolls the transaction back,
//!   and the rest of its batch runs again. One dropped after its statements is committed with
//!   its batch, as if it had been answered and the answer lost.
//! - A write waits for the writer connection at most [`ACQUIRE_TIMEOUT`], then answers
//!   [`StoreError::unavailable`](crate::store::StoreError::unavailable).
//! - What a batch holds is bounded by the writes under way, that is by the requests the host
//!   serves at once: the store keeps nothing of its own per write beyond the open transaction.
//!
//! PostgreSQL commits every write on its own connection from the pool (PostgreSQL groups
//! concurrent commits to its log itself).
//!
//! # Indexes and purging
//!
//! Lookups on the request path are primary-key or unique-index probes (digest, family id,
//! client id, user id, lowercase username, key): O(log n). [`Purge::purge_expired`](crate::store::Purge::purge_expired) deletes
//! expired codes (after their tombstone hour), tokens and families, the rows of revoked
//! families, and expired sessions, attempt windows, single-use values, keys, signed-in browsers
//! (with their grants) and remembered approvals, through indexes on their expiry and on
//! `family_id`; call it from a timer (say hourly). Expired rows are never *found* before that:
//! every lookup checks expiry itself.
//!
//! # Migrations
//!
//! [`SqlStore::connect`] applies pending migrations; [`SqlStore::from_pool`] does not, and
//! [`SqlStore::migrate`] applies them explicitly. Migrations are versioned (sqlx records them in
//! `_sqlx_migrations` and checks their checksums) and idempotent: running them again, from any
//! number of nodes at once, changes nothing (PostgreSQL serializes concurrent runs with an
//! advisory lock; on SQLite a run that loses the race retries once and finds everything
//! applied).
//!
//! # Failures
//!
//! A database that is down, a pool with no connection free within [`ACQUIRE_TIMEOUT`], a broken
//! connection or a busy SQLite file become
//! [`StoreError::unavailable`](crate::store::StoreError::unavailable) (503 `temporarily_unavailable` on
//! the wire); anything else becomes [`StoreError::failed`](crate::store::StoreError::failed) (500
//! `server_error`). The client sees no detail; grantor logs the cause through `tracing`. The pool
//! reconnects by itself once the database is back. Nothing here panics.
//!
//! # Queries are checked at run time
//!
//! The statements use [`sqlx::query()`], checked when they run (the test suite runs every one of
//! them against both databases), not sqlx's compile-time macros (`query!`), which need a live
//! database (`DATABASE_URL`) or prepared offline data at build time. So building grantor needs
//! no database.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use sqlx;

#[cfg(doc)]
use crate::store::{
    Admin, AttemptCounter, ClientStore, CodeRedemption, ConsentStore, KeyStore, Rotation,
    SessionStore, SingleUseStore, TokenIssuer, UserAdmin, UserSessionStore, UserStore,
};

use crate::error::StoreError;
use backend::Backend;
use columns::store_error;
use group::GroupCommit;

#[cfg(feature = "postgres")]
use sqlx::Postgres;
#[cfg(feature = "sqlite")]
use sqlx::Sqlite;

/// How long a request waits for a pooled connection before the store answers
/// [`StoreError::unavailable`](crate::store::StoreError::unavailable): the bound on how long anything
/// waits for a database that is down or saturated.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a redeemed code is remembered after its expiry, so that a late replay still names
/// what the first redemption issued (RFC 6749 §4.1.2); the same as the in-memory store.
const REPLAY_MEMORY: Duration = Duration::from_secs(3600);

/// Every seam over a SQL database: `SqlStore<Sqlite>` (`SqliteStore`, feature `sqlite`) or
/// `SqlStore<Postgres>` (`PostgresStore`, feature `postgres`).
///
/// Cloning is cheap (the pool is shared), so one store can be handed to the builder as every
/// seam at once.
pub struct SqlStore<DB: sqlx::Database> {
    pool: sqlx::Pool<DB>,
    /// Where writes go: on a SQLite file, a pool of one connection, so writers queue here in
    /// order instead of contending for SQLite's write lock (which answers `SQLITE_BUSY` and
    /// makes each loser sleep and retry: a p99 over 100 ms under load, benches/README.md);
    /// elsewhere the same pool as reads.
    writer: sqlx::Pool<DB>,
    /// On a SQLite file, the batching of concurrent writes into shared commits (`group.rs`);
    /// elsewhere every write commits on its own.
    group: Option<Arc<GroupCommit<DB>>>,
}

/// The stores on SQLite: for one node, nothing to install.
#[cfg(feature = "sqlite")]
pub type SqliteStore = SqlStore<Sqlite>;

/// The stores on PostgreSQL: for many identical nodes over one database.
#[cfg(feature = "postgres")]
pub type PostgresStore = SqlStore<Postgres>;

impl<DB: sqlx::Database> SqlStore<DB> {
    /// Wraps a pool the host configured itself (TLS, schema, pool size…). Applies no migrations:
    /// call [`SqlStore::migrate`]. Give the pool a short `acquire_timeout` (see
    /// [`ACQUIRE_TIMEOUT`]) so that requests fail fast while the database is down.
    pub fn from_pool(pool: sqlx::Pool<DB>) -> Self {
        Self {
            writer: pool.clone(),
            pool,
            group: None,
        }
    }

    /// Reads go to `pool`; writes go to `writer` (one connection), committed in groups.
    #[cfg(feature = "sqlite")]
    pub(crate) fn with_writer(pool: sqlx::Pool<DB>, writer: sqlx::Pool<DB>) -> Self {
        Self {
            pool,
            group: Some(Arc::new(GroupCommit::new(writer.clone()))),
            writer,
        }
    }

    /// The connection pool reads use, for the host's own queries or its metrics. On a SQLite
    /// file, writes go through [`writer`](Self::writer); elsewhere it is the same pool.
    pub fn pool(&self) -> &sqlx::Pool<DB> {
        &self.pool
    }

    /// The connection pool writes use: one connection on a SQLite file
    /// ([`SqlStore::connect`]), else the same as [`pool`](Self::pool). On a SQLite file the
    /// store keeps that connection while a batch of its writes is open (until their commit), so
    /// a host's own writes through this pool wait for that commit.
    pub fn writer(&self) -> &sqlx::Pool<DB> {
        &self.writer
    }
}

impl<DB: Backend> SqlStore<DB>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
{
    /// Commits the writes whose callers went away before their commit (see `group.rs`), then
    /// closes both pools, waiting for their connections to be returned: every later call answers
    /// [`StoreError::unavailable`](crate::store::StoreError::unavailable).
    pub async fn close(&self) {
        if let Some(group) = &self.group {
            group.close().await;
        }
        self.pool.close().await;
        self.writer.close().await;
    }

    /// The group commit of a SQLite file store.
    #[cfg(all(test, feature = "sqlite"))]
    pub(crate) fn group(&self) -> Option<&GroupCommit<DB>> {
        self.group.as_deref()
    }

    /// Begins one write (see [`store_write!`]): joins the open batch on a SQLite file, else
    /// takes a connection, in a transaction of its own for several statements.
    pub(crate) async fn begin_write(
        &self,
        statements: Statements,
    ) -> Result<Write<'_, DB>, StoreError> {
        if let Some(group) = &self.group {
            return Ok(Write::Batch(group.join().await?));
        }
        Ok(match statements {
            Statements::One => {
                Write::Alone(self.writer.acquire().await.map_err(store_error::<DB>)?)
            }
            Statements::Many => Write::Transaction(
                self.writer
                    .begin_with(DB::BEGIN_WRITE)
                    .await
                    .map_err(store_error::<DB>)?,
            ),
        })
    }
}

/// One write under way: its connection, and how it ends.
pub(crate) enum Write<'s, DB: sqlx::Database> {
    /// In the open batch of a SQLite file (`group.rs`).
    Batch(group::Member<'s, DB>),
    /// One statement, committed by itself.
    Alone(sqlx::pool::PoolConnection<DB>),
    /// Several statements in a transaction of their own.
    Transaction(sqlx::Transaction<'static, DB>),
}

/// How a write ended: answered, or to run again (its batch was rolled back for another's sake).
pub(crate) enum Finished<T> {
    Done(Result<T, StoreError>),
    Again,
}

impl<DB: Backend> Write<'_, DB> {
    /// Where the write's statements run.
    pub(crate) fn connection(&mut self) -> &mut DB::Connection {
        match self {
            Write::Batch(member) => member.connection(),
            Write::Alone(connection) => connection,
            Write::Transaction(tx) => tx,
        }
    }

    /// Ends the write with what its statements answered: commits (or rolls back on an error),
    /// and answers once the write is durable. `attempt` counts from 1.
    pub(crate) async fn finish<T>(
        self,
        answer: Result<T, StoreError>,
        attempt: usize,
    ) -> Finished<T> {
        match (self, answer) {
            (Write::Batch(member), answer) => member.finish(answer, attempt).await,
            (Write::Alone(_), answer) => Finished::Done(answer),
            (Write::Transaction(tx), Ok(answer)) => Finished::Done(
                tx.commit()
                    .await
                    .map(|()| answer)
                    .map_err(store_error::<DB>),
            ),
            // Dropping the transaction rolls it back.
            (Write::Transaction(_), Err(error)) => Finished::Done(Err(error)),
        }
    }
}

/// How many statements a write runs, so that a lone statement (atomic by itself) needs no
/// transaction of its own where writes are not grouped.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Statements {
    /// One statement.
    One,
    /// Several, which must happen together.
    Many,
}

impl<DB: Backend> SqlStore<DB> {
    /// Applies pending migrations (versioned, idempotent; safe to run from many nodes at once).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match DB::migrator().run(&self.pool).await {
            Ok(()) => Ok(()),
            // Another process may have applied the same migration between our check and our
            // insert (SQLite has no migration lock): look again.
            Err(_) => DB::migrator()
                .run(&self.pool)
                .await
                .map_err(columns::migrate_error::<DB>),
        }
    }
}

impl<DB: sqlx::Database> Clone for SqlStore<DB> {
    fn clone(&self) -> Self {
        Self {
            pool: self.pool.clone(),
            writer: self.writer.clone(),
            group: self.group.clone(),
        }
    }
}

impl<DB: sqlx::Database> fmt::Debug for SqlStore<DB> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlStore")
            .field("database", &DB::NAME)
            .field("connections", &self.pool.size())
            .field("idle", &self.pool.num_idle())
            .finish()
    }
}

/// Runs `$body`, a block answering `Result<T, StoreError>` that runs the statements of one write
/// on `$conn: &mut DB::Connection`, and answers once they are committed: on a SQLite file in the
/// open batch of writes (`group.rs`), where `$body` runs again if that batch is rolled back for
/// another writer's failure; elsewhere one statement on its own and several in a transaction of
/// their own. A macro rather than a function taking an async closure: the futures of the seams
/// must be `Send`, which the compiler cannot prove through an async closure's borrowed argument.
macro_rules! store_write {
    ($store:expr, $statements:expr, |$conn:ident| $body:block) => {{
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut write = match $store.begin_write($statements).await {
                Ok(write) => write,
                Err(error) => break Err(error),
            };
            let answer = {
                let $conn = write.connection();
                async { $body }.await
            };
            match write.finish(answer, attempt).await {
                $crate::sql::Finished::Done(answer) => break answer,
                $crate::sql::Finished::Again => continue,
            }
        }
    }};
}

mod accounts;
mod backend;
mod columns;
mod group;
mod listing;
mod rows;
mod sign_on;
mod state;
mod text;
mod tokens;

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
pub use postgres::STATEMENT_TIMEOUT;
#[cfg(feature = "sqlite")]
mod sqlite;
