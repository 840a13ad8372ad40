//! SQL stores: every seam of [`crate::store`] on SQLite (feature `sqlite`, through
//! `rusqlite`) and PostgreSQL (feature `postgres`, through `sqlx`).
//!
//! Two types implement them all: [`ClientStore`], [`UserStore`], [`TokenIssuer`],
//! [`SessionStore`], [`UserSessionStore`], [`ConsentStore`], [`AttemptCounter`],
//! [`SingleUseStore`], [`KeyStore`], [`Admin`], [`UserAdmin`] and
//! [`Purge`](crate::store::Purge). `SqliteStore` serves one node (the database is a file
//! beside the service; nothing to install), and `PostgresStore` any number of identical nodes
//! over one database: a sign-in may reach a different node on every request, and a throttle
//! counts the guesses made at every node. Both run the same SQL text (`text.rs`) and the
//! schemas differ only in their column types (`src/sql/migrations/sqlite/` and
//! `src/sql/migrations/postgres/`, embedded in the library), but for SQLite's families and
//! access tokens, kept in the order they are issued ([below](#indexes-and-purging)).
//!
//! ```no_run
//! # #[cfg(feature = "sqlite")]
//! # async fn start() -> Result<(), Box<dyn std::error::Error>> {
//! use grantor::sql::SqliteStore;
//! use grantor::store::{KeyEncryptionKey, Purge as _};
//! use grantor::{AuthorizationServer, Password};
//!
//! // Connects, creating the file if missing, and applies pending migrations.
//! let store = SqliteStore::connect("sqlite:/var/lib/auth/grantor.db").await?;
//! let server = AuthorizationServer::builder()
//!     .issuer("https://auth.example")
//!     .store(store.clone()) // every seam: clients, users, tokens, sessions, attempt counters
//!     .encrypt_keys_at_rest(KeyEncryptionKey::from_base64(&std::env::var("AUTH_KEK")?)?)
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
//! rotation with its successor) run in one transaction (on SQLite, in one savepoint of the
//! writer's transaction), so they happen whole or not at all.
//!
//! # Group commit (SQLite)
//!
//! With `synchronous = FULL` every SQLite commit waits for the disk, so one commit per write
//! would cap a store at the disk's sync rate. A `SqliteStore` therefore writes on one thread
//! that owns the one connection that writes: it takes every write queued (at most 512), runs
//! them in one `BEGIN IMMEDIATE` transaction, each in a savepoint of its own, commits once,
//! and only then answers each caller. Under load one sync covers the writes that arrived during
//! the previous one.
//!
//! - A write is answered only once it is committed, so an acknowledged token survives a power
//!   cut.
//! - A write whose statements fail is rolled back to its savepoint and answered its error; the
//!   rest of its batch commits. A failed commit fails every write of its batch.
//! - A write crosses to the writer thread once, with all its statements, and its answer
//!   crosses back once; reads never cross at all: they run on the caller's thread, on a
//!   connection of a small pool (WAL mode: they never wait for the writer).
//! - A write whose caller went away before it began is skipped; one whose caller went away
//!   later is committed with its batch, as if it had been answered and the answer lost.
//! - A caller waits at most [`ACQUIRE_TIMEOUT`] for its answer, then answers
//!   [`StoreError::unavailable`](crate::store::StoreError::unavailable).
//! - The queue holds at most one write per caller waiting, that is the requests the host serves
//!   at once: the store keeps nothing of its own per write beyond its batch.
//!
//! PostgreSQL commits every write on its own connection from the pool (PostgreSQL groups
//! concurrent commits to its log itself). Behind a pooler in transaction mode such as pgbouncer
//! (`Pooling::Transaction`), every call runs in a transaction of its own with unnamed
//! statements, `statement_timeout` set in it.
//!
//! # Indexes and purging
//!
//! Lookups on the request path are primary-key or index probes (digest, family id, client id,
//! user id, lowercase username, key): O(log n). On SQLite, families and access tokens are
//! rows appended in the order they are issued, found through narrow indexes (a family by its
//! id, an access token by the first 8 bytes of its digest, the whole digest compared in the
//! row), so that issuing a token writes few pages of the file apart from its last ones. [`Purge::purge_expired`](crate::store::Purge::purge_expired) deletes
//! expired codes (after their tombstone hour), tokens and families, the rows of revoked
//! families, and expired sessions, attempt windows, single-use values, keys, signed-in browsers
//! (with their grants) and remembered approvals, through indexes on their expiry and on
//! `family_id`; call it from a timer (say hourly). Expired rows are never *found* before that:
//! every lookup checks expiry itself.
//!
//! # Bounds on one-time values
//!
//! Anyone can make the server keep one-time values (pushed requests through self-registered
//! clients, proof ids of fresh DPoP keys), so each kind
//! ([`namespace`](crate::store::namespace)'s, computed as each value is kept) holds at most
//! [`SINGLE_USE_PER_KIND`](crate::store::SINGLE_USE_PER_KIND) rows (100,000) and
//! [`SINGLE_USE_BYTES_PER_KIND`](crate::store::SINGLE_USE_BYTES_PER_KIND) bytes of values
//! (256 MiB; with keys of at most 128 bytes, about 300 MiB of table per kind), expired rows not
//! yet purged included. A value of a full kind is refused with
//! [`StoreError::unavailable`](crate::store::StoreError::unavailable) (503); other kinds are
//! served, and no live value is evicted. The check costs no count: triggers keep each kind's rows
//! and bytes in `grantor_single_use_kinds` (on PostgreSQL in 16 slots per kind, so concurrent
//! inserts rarely wait on one row), an insert reads that first, and only a kind that looks full
//! drops its own expired rows (an index range on `(kind, expires_at)`) before answering. On
//! SQLite the check and the insert are one write of the one writer, so the bound is exact; on
//! PostgreSQL they are apart, so inserts in flight at once on every node (at most their pools'
//! connections) may pass it together.
//!
//! # Migrations
//!
//! `connect` applies pending migrations; `SqlStore::from_pool` (PostgreSQL) does not, and
//! `migrate` applies them explicitly. Migrations are versioned (recorded in `_sqlx_migrations`
//! with their checksums, on both databases) and idempotent: running them again, from any
//! number of nodes at once, changes nothing (PostgreSQL serializes concurrent runs with an
//! advisory lock; SQLite runs each migration with its record in one `BEGIN IMMEDIATE`
//! transaction, so a process that waited finds it applied). Behind a pooler in transaction mode
//! (`Pooling::Transaction`, `pooler=transaction` in the URL) that lock cannot be held:
//! `connect` there only opens, `migrate` refuses, and migrations run against the database
//! itself (`grantor migrate` with its direct URL).
//!
//! # Failures
//!
//! A database that is down, a pool with no connection free within [`ACQUIRE_TIMEOUT`], a broken
//! connection, a SQLite writer that does not answer within it or a busy SQLite file become
//! [`StoreError::unavailable`](crate::store::StoreError::unavailable) (503 `temporarily_unavailable` on
//! the wire); anything else becomes [`StoreError::failed`](crate::store::StoreError::failed) (500
//! `server_error`). The client sees no detail; grantor logs the cause through `tracing`. The pool
//! reconnects by itself once the database is back. Nothing here panics.
//!
//! # Queries are checked at run time
//!
//! The statements are prepared when they first run (`sqlx::query()` on PostgreSQL, a cached
//! `rusqlite` statement on SQLite) and the test suite runs every one of them against both
//! databases; no compile-time macro (`sqlx::query!`) needs a live database (`DATABASE_URL`) or
//! prepared offline data at build time. So building grantor needs no database.

#[cfg(feature = "postgres")]
use std::fmt;
#[cfg(feature = "postgres")]
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "sqlite")]
pub use rusqlite;
#[cfg(feature = "postgres")]
pub use sqlx;

#[cfg(doc)]
use crate::store::{
    Admin, AttemptCounter, ClientStore, CodeRedemption, ConsentStore, KeyStore, Rotation,
    SessionStore, SingleUseStore, TokenIssuer, UserAdmin, UserSessionStore, UserStore,
};

#[cfg(feature = "postgres")]
use crate::error::StoreError;
#[cfg(feature = "postgres")]
use backend::Backend;
#[cfg(feature = "postgres")]
#[cfg(feature = "postgres")]
use sqlx::Postgres;

/// How long a request waits for a pooled connection (PostgreSQL) or for the writer thread's
/// answer (SQLite) before the store answers
/// [`StoreError::unavailable`](crate::store::StoreError::unavailable): the bound on how long anything
/// waits for a database that is down or saturated.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long one statement of the PostgreSQL store may run before PostgreSQL cancels it
/// (SQLSTATE 57014, answered as
/// [`StoreError::unavailable`](crate::store::StoreError::unavailable)); every statement grantor
/// runs is a key lookup or a small write.
#[cfg(feature = "postgres")]
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a redeemed code is remembered after its expiry, so that a late replay still names
/// what the first redemption issued (RFC 6749 §4.1.2); the same as the in-memory store.
const REPLAY_MEMORY: Duration = Duration::from_secs(3600);

/// `have` (the database's newest migration) against `needed` (this build's).
pub(crate) fn check_version(have: i64, needed: i64) -> Result<(), crate::error::StoreError> {
    if have < needed {
        return Err(crate::error::StoreError::failed(format!(
            "the database's schema is at migration {have}, this build needs {needed}: run \
             `grantor migrate` (or the store's `migrate`) first"
        )));
    }
    Ok(())
}

/// Every seam over a sqlx database: `SqlStore<Postgres>` ([`PostgresStore`], feature
/// `postgres`).
///
/// Cloning is cheap (the pool is shared), so one store can be handed to the builder as every
/// seam at once.
#[cfg(feature = "postgres")]
pub struct SqlStore<DB: sqlx::Database> {
    /// The primary, and how its connections reach it.
    primary: Pooled<DB>,
    /// Where token checks go first (bearer validation, introspection), if anywhere.
    replica: Option<Pooled<DB>>,
    /// Concurrent writes of one kind, sharing statements (`batch.rs`).
    batches: Arc<batch::Batches>,
    /// The node's one turn for writes that lost a conflict ([`Conflicts`]).
    retry_turn: Arc<tokio::sync::Semaphore>,
}

/// The stores on PostgreSQL: for many identical nodes over one database.
#[cfg(feature = "postgres")]
pub type PostgresStore = SqlStore<Postgres>;

#[cfg(feature = "postgres")]
impl<DB: sqlx::Database> SqlStore<DB> {
    /// Wraps a pool the host configured itself (TLS, schema, pool size…). Applies no migrations:
    /// call [`SqlStore::migrate`]. Give the pool a short `acquire_timeout` (see
    /// [`ACQUIRE_TIMEOUT`]) so that requests fail fast while the database is down.
    pub fn from_pool(pool: sqlx::Pool<DB>) -> Self {
        Self {
            primary: Pooled {
                pool,
                pooling: Pooling::Direct,
            },
            replica: None,
            batches: Arc::new(batch::Batches::new()),
            retry_turn: Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }

    /// Sends token checks (bearer validation and introspection of access tokens) to `replica`
    /// first, a pool on a read replica of the database: the requests that grow with traffic
    /// leave the primary. A token the replica does not know (issued a moment ago, not yet
    /// replayed there), and any failure of the replica, is asked of the primary; nothing that
    /// changes state is read from the replica. A token revoked on the primary stays active on
    /// the replica until the replica replays the revocation: with `synchronous_commit =
    /// remote_apply` on the primary that is before the revocation is answered. The replica's
    /// connections are taken to reach it as the primary's do ([`with_pooling`](Self::with_pooling)).
    pub fn with_read_replica(mut self, replica: sqlx::Pool<DB>) -> Self {
        self.replica = Some(Pooled {
            pool: replica,
            pooling: self.primary.pooling,
        });
        self
    }

    /// Says how the pool's connections (and the read replica's, if any) reach PostgreSQL:
    /// [`Pooling::Transaction`] for a pool the host built over a pooler in transaction mode.
    /// Build such a pool without startup `options` (the pooler refuses them) and with
    /// `extra_float_digits(None)`.
    pub fn with_pooling(mut self, pooling: Pooling) -> Self {
        self.primary.pooling = pooling;
        if let Some(replica) = &mut self.replica {
            replica.pooling = pooling;
        }
        self
    }

    /// How the pool's connections reach PostgreSQL.
    pub fn pooling(&self) -> Pooling {
        self.primary.pooling
    }

    /// The connection pool, for the host's own queries or its metrics. Behind a pooler in
    /// transaction mode ([`Pooling::Transaction`]), run the host's statements in a transaction
    /// and unnamed (`.persistent(false)`).
    pub fn pool(&self) -> &sqlx::Pool<DB> {
        &self.primary.pool
    }
}

#[cfg(feature = "postgres")]
impl SqlStore<Postgres> {
    /// Closes the pool, waiting for its connections to be returned: every later call answers
    /// [`StoreError::unavailable`](crate::store::StoreError::unavailable).
    pub async fn close(&self) {
        self.primary.pool.close().await;
        if let Some(replica) = &self.replica {
            replica.pool.close().await;
        }
    }

    /// What a write of this store does when it loses a conflict: waits its turn among this
    /// node's retries ([`Conflicts`]).
    pub(crate) fn conflicts(&self) -> Conflicts<'_> {
        Conflicts::new(Some(&self.retry_turn))
    }
}

#[cfg(feature = "postgres")]
impl SqlStore<Postgres> {
    /// Applies pending migrations (versioned, idempotent; safe to run from many nodes at once).
    /// Refused behind a pooler in transaction mode ([`Pooling::Transaction`]): the migrations'
    /// session lock cannot be held there; run them against the database itself.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        if self.primary.pooling == Pooling::Transaction {
            return Err(StoreError::failed(
                "migrations hold a session lock, which a pooler in transaction mode cannot \
                 keep: run `grantor migrate` against the database itself, not through the pooler",
            ));
        }
        <Postgres as Backend>::migrator()
            .run(&self.primary.pool)
            .await
            .map_err(columns::migrate_error::<Postgres>)
    }
}

#[cfg(feature = "postgres")]
impl<DB: sqlx::Database> Clone for SqlStore<DB> {
    fn clone(&self) -> Self {
        Self {
            primary: self.primary.clone(),
            replica: self.replica.clone(),
            batches: Arc::clone(&self.batches),
            retry_turn: Arc::clone(&self.retry_turn),
        }
    }
}

#[cfg(feature = "postgres")]
impl<DB: sqlx::Database> fmt::Debug for SqlStore<DB> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlStore")
            .field("database", &DB::NAME)
            .field("connections", &self.primary.pool.size())
            .field("idle", &self.primary.pool.num_idle())
            .field("pooling", &self.primary.pooling)
            .finish()
    }
}

/// Runs `$body`, a block answering `Result<T, StoreError>` that runs the statements of one call
/// on `$conn: &mut Conn` (a sqlx executor) of `$pooled` ([`Pooled`]), and answers once they are
/// committed: a lone statement on its own and several in a transaction of their own (every call
/// in a transaction behind a pooler in transaction mode). A call that loses a serialization
/// conflict or a deadlock runs again whole, as `$conflicts` ([`Conflicts`]) allows. A macro
/// rather than a function taking an async closure: the futures of the seams must be `Send`,
/// which the compiler cannot prove through an async closure's borrowed argument.
#[cfg(feature = "postgres")]
macro_rules! run_on {
    ($pooled:expr, $statements:expr, $conflicts:expr, |$conn:ident| $body:block) => {{
        let mut conflicts = $conflicts;
        loop {
            let answer = match $pooled.begin($statements).await {
                Err(error) => Err(error),
                Ok(mut call) => {
                    let answer = {
                        let mut connection = call.connection();
                        let $conn = &mut connection;
                        async { $body }.await
                    };
                    call.finish(answer).await
                }
            };
            match answer {
                Err(error) if conflicts.again(&error).await => continue,
                answer => break answer,
            }
        }
    }};
}

/// One write of `$store` on its primary ([`run_on!`]); after a conflict it waits for the
/// node's retry turn.
#[cfg(feature = "postgres")]
macro_rules! store_write {
    ($store:expr, $statements:expr, |$conn:ident| $body:block) => {
        run_on!($store.primary, $statements, $store.conflicts(), |$conn| {
            $body
        })
    };
}

/// One read on `$pooled` (the primary or the replica; [`run_on!`]): one statement, run again
/// after a conflict without the retry turn.
#[cfg(feature = "postgres")]
macro_rules! store_read {
    ($pooled:expr, |$conn:ident| $body:block) => {
        run_on!(
            $pooled,
            $crate::sql::Statements::One,
            $crate::sql::Conflicts::new(None),
            |$conn| $body
        )
    };
}

/// How many times a statement or transaction runs in all when it keeps losing serialization
/// conflicts (SQLSTATE 40001, under `SERIALIZABLE` or `REPEATABLE READ`) or deadlocks (40P01).
#[cfg(feature = "postgres")]
pub(crate) const CONFLICT_ATTEMPTS: u32 = 16;

/// How long the retries of one statement or transaction may take in all.
#[cfg(feature = "postgres")]
pub(crate) const CONFLICT_BUDGET: Duration = Duration::from_secs(1);

/// Retrying what PostgreSQL aborted for a conflict with a concurrent transaction: always safe
/// for grantor's statements and short transactions, which either happened whole or not at
/// all and read again what they decide on.
///
/// Each retry waits a random time (full jitter: up to 2, 4, 8… 64 ms for a read, up to 2
/// then 4 ms for a write), so that transactions that collided on different nodes do not
/// collide again in step. A write's retries then take the node's one **retry turn** and keep
/// it until the write ends, so that the writes of one node that collided on a hot row (fifty
/// sign-in attempts counted on one key, twenty retries of one refresh token) run again one
/// after another instead of colliding again in every round: the retries converge instead of
/// running out. Conflicts are rare, so the turn is almost always free; reads retry without it.
///
/// **Bounded**: after [`CONFLICT_ATTEMPTS`] runs, or once [`CONFLICT_BUDGET`] has passed since
/// the first run (waiting for the turn included), the conflict is answered (503 with
/// `Retry-After`).
#[cfg(feature = "postgres")]
pub(crate) struct Conflicts<'a> {
    runs: u32,
    started: std::time::Instant,
    /// The node's retry turn, for writes; `None` for reads.
    turns: Option<&'a tokio::sync::Semaphore>,
    /// The turn, once taken: held until this value drops, with the write.
    turn: Option<tokio::sync::SemaphorePermit<'a>>,
}

#[cfg(feature = "postgres")]
impl<'a> Conflicts<'a> {
    pub(crate) fn new(turns: Option<&'a tokio::sync::Semaphore>) -> Self {
        Self {
            runs: 1,
            started: std::time::Instant::now(),
            turns,
            turn: None,
        }
    }

    /// Whether to run again after `error`, having waited (and taken the retry turn, for a
    /// write); `false` for any other error, or once the attempts or the time are spent.
    pub(crate) async fn again(&mut self, error: &StoreError) -> bool {
        if !is_conflict(error) || self.runs >= CONFLICT_ATTEMPTS {
            return false;
        }
        let Some(left) = CONFLICT_BUDGET.checked_sub(self.started.elapsed()) else {
            return false;
        };
        // A write's retries wait up to 2 then 4 ms before their turn and while they hold it
        // (a long wait would hold up the node's other retries); a read's up to 64 ms.
        let ceiling = (1u64 << self.runs.min(if self.turns.is_some() { 2 } else { 6 })) * 1000;
        // Not a secret, but drawn where every random value is.
        let draw = crate::secret::random_bytes::<8>().map_or(ceiling / 2, u64::from_le_bytes);
        let wait = Duration::from_micros(draw % (ceiling + 1));
        if wait >= left {
            return false;
        }
        tokio::time::sleep(wait).await;
        if let (Some(turns), None) = (self.turns, &self.turn) {
            let left = left.saturating_sub(wait);
            match tokio::time::timeout(left, turns.acquire()).await {
                Ok(Ok(turn)) => self.turn = Some(turn),
                // Out of time, or (never) a closed semaphore.
                _ => return false,
            }
        }
        self.runs += 1;
        true
    }
}

/// Whether `error` is PostgreSQL's serialization failure (40001) or deadlock (40P01).
#[cfg(feature = "postgres")]
fn is_conflict(error: &StoreError) -> bool {
    std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<sqlx::Error>())
        .and_then(|error| match error {
            sqlx::Error::Database(database) => database.code(),
            _ => None,
        })
        .is_some_and(|code| code == "40001" || code == "40P01")
}

#[cfg(feature = "postgres")]
mod accounts;
#[cfg(feature = "postgres")]
mod backend;
#[cfg(feature = "postgres")]
mod batch;
mod columns;
#[cfg(feature = "postgres")]
mod listing;
mod rows;
#[cfg(feature = "postgres")]
mod sign_on;
#[cfg(feature = "postgres")]
mod state;
mod text;
#[cfg(feature = "postgres")]
mod tokens;

#[cfg(feature = "postgres")]
mod pooling;
#[cfg(feature = "postgres")]
pub use pooling::Pooling;
#[cfg(feature = "postgres")]
pub(crate) use pooling::{Conn, Pooled, Statements};
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteOptions, SqliteStore, Synchronous};
