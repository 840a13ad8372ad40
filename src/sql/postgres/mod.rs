//! [`PostgresStore`]: every seam on PostgreSQL, through `sqlx`, for any number of identical
//! nodes over one database; connecting, and how each call's statements reach the database.
//!
//! Each call takes a pooled connection (`pooling.rs`: straight to PostgreSQL, or through a
//! pooler in transaction mode), runs its statements alone or in a transaction of their own, and
//! runs again whole after losing a conflict with a concurrent transaction (`errors.rs`).
//! Concurrent new families and concurrent access-token lookups share statements (`batch.rs`).

use std::fmt;
use std::str::FromStr as _;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use super::bounds::ACQUIRE_TIMEOUT;
use crate::error::StoreError;
use errors::{Conflicts, store_error};
use pooling::{Conn, Pooled, Statements};

/// How long one statement of the PostgreSQL store may run before PostgreSQL cancels it
/// (SQLSTATE 57014, answered as
/// [`StoreError::unavailable`](crate::store::StoreError::unavailable)); every statement grantor
/// runs is a key lookup or a small write.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a pooled connection may sit idle before it is pinged ahead of its next use.
const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Every seam on PostgreSQL: for many identical nodes over one database.
///
/// Cloning is cheap (the pool is shared), so one store can be handed to the builder as every
/// seam at once.
pub struct PostgresStore {
    /// The primary, and how its connections reach it.
    primary: Pooled,
    /// Where token checks go first (bearer validation, introspection), if anywhere.
    replica: Option<Pooled>,
    /// Concurrent writes of one kind, sharing statements (`batch.rs`).
    batches: Arc<batch::Batches>,
    /// The node's one turn for writes that lost a conflict ([`Conflicts`]).
    retry_turn: Arc<tokio::sync::Semaphore>,
}

/// [`PostgresStore`] under the name it had while it was generic over its database, which only
/// ever was PostgreSQL.
pub type SqlStore = PostgresStore;

impl PostgresStore {
    /// Wraps a pool the host configured itself (TLS, schema, pool size…). Applies no migrations:
    /// call [`PostgresStore::migrate`]. Give the pool a short `acquire_timeout` (see
    /// [`ACQUIRE_TIMEOUT`]) so that requests fail fast while the database is down.
    pub fn from_pool(pool: sqlx::PgPool) -> Self {
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
    pub fn with_read_replica(mut self, replica: sqlx::PgPool) -> Self {
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
    pub fn pool(&self) -> &sqlx::PgPool {
        &self.primary.pool
    }
}

impl PostgresStore {
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

impl Clone for PostgresStore {
    fn clone(&self) -> Self {
        Self {
            primary: self.primary.clone(),
            replica: self.replica.clone(),
            batches: Arc::clone(&self.batches),
            retry_turn: Arc::clone(&self.retry_turn),
        }
    }
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("connections", &self.primary.pool.size())
            .field("idle", &self.primary.pool.num_idle())
            .field("pooling", &self.primary.pooling)
            .finish()
    }
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database?…`, or a Unix socket as
    /// `postgres:///database?host=/run/postgresql`) and applies pending migrations. See
    /// [`PostgresStore::connect_with`] for the settings. Behind a pooler in transaction mode
    /// (pgbouncer), add `pooler=transaction` to the URL ([`Pooling::Transaction`]): the store
    /// then only opens the database, as [`open`](Self::open) does, since migrations cannot run
    /// through such a pooler.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let (options, pooling) = options(url)?;
        match pooling {
            Pooling::Direct => Self::connect_with(options).await,
            _ => Self::open_pooled(options, pooling).await,
        }
    }

    /// Connects to `url` as [`connect`](Self::connect) does, without migrating: for the nodes
    /// of a rolling deploy, once `grantor migrate` (or [`PostgresStore::migrate`]) has run from one
    /// place. Refuses a database whose schema is older than this build needs.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let (options, pooling) = options(url)?;
        Self::open_pooled(options, pooling).await
    }

    /// Connects to a read replica at `url` (`pooler=transaction` as for
    /// [`connect`](Self::connect)), pooled as [`connect_with`](Self::connect_with) pools the
    /// primary, and sends token checks there first (see
    /// [`with_read_replica`](PostgresStore::with_read_replica)).
    pub async fn read_replica(mut self, url: &str) -> Result<Self, StoreError> {
        let (options, pooling) = options(url)?;
        self.replica = Some(Pooled {
            pool: pool(options, pooling).await?,
            pooling,
        });
        Ok(self)
    }

    /// [`open`](Self::open) with `options`, the pool as [`connect_with`](Self::connect_with)
    /// makes it.
    pub async fn open_with(options: PgConnectOptions) -> Result<Self, StoreError> {
        Self::open_pooled(options, Pooling::Direct).await
    }

    /// [`open_with`](Self::open_with) for connections that reach PostgreSQL as `pooling`
    /// says: behind a pooler in transaction mode, no startup parameter the pooler would refuse
    /// (`statement_timeout` is set in each transaction instead).
    pub async fn open_pooled(
        options: PgConnectOptions,
        pooling: Pooling,
    ) -> Result<Self, StoreError> {
        let store = Self::from_pool(pool(options, pooling).await?).with_pooling(pooling);
        store.check_schema().await?;
        Ok(store)
    }

    /// Connects with `options` (TLS, schema through `options([("search_path", …)])`, …) and
    /// applies pending migrations. The pool holds up to 10 connections and waits at most
    /// [`ACQUIRE_TIMEOUT`] for one, so that while the database is down every request fails
    /// within that time; it reconnects by itself when the database is back. Every statement
    /// runs under a `statement_timeout` of [`STATEMENT_TIMEOUT`] (unless `options` sets one),
    /// so that a statement stuck behind a lock or a hung database is answered 503
    /// `temporarily_unavailable` in bounded time instead of holding the request and its
    /// connection. A connection is pinged before use only when it has been idle for a second or
    /// more (a ping before every use would double a token check's round trips); under load, a
    /// connection the server closed fails the one request that finds it (503) and leaves the
    /// pool. For another pool size, build the pool yourself and use
    /// [`PostgresStore::from_pool`] (then set `statement_timeout` yourself).
    pub async fn connect_with(options: PgConnectOptions) -> Result<Self, StoreError> {
        let store = Self::from_pool(pool(options, Pooling::Direct).await?);
        store.migrate().await?;
        Ok(store)
    }
}

/// The connection options `url` gives sqlx, and the pooling it names (`pooler=…`).
fn options(url: &str) -> Result<(PgConnectOptions, Pooling), StoreError> {
    let (url, pooling) = Pooling::from_url(url)?;
    let options = PgConnectOptions::from_str(&url).map_err(StoreError::failed)?;
    Ok((options, pooling))
}

/// The pool of [`PostgresStore::connect_with`] and [`PostgresStore::open_with`].
async fn pool(options: PgConnectOptions, pooling: Pooling) -> Result<sqlx::PgPool, StoreError> {
    let has_timeout = options
        .get_options()
        .is_some_and(|set| set.contains("statement_timeout"));
    let options = match pooling {
        Pooling::Direct if !has_timeout => {
            let millis = STATEMENT_TIMEOUT.as_millis().to_string();
            options.options([("statement_timeout", millis.as_str())])
        }
        Pooling::Direct => options,
        // pgbouncer refuses startup parameters it does not track (`options`,
        // `extra_float_digits`); `statement_timeout` comes with each transaction instead.
        _ => options.extra_float_digits(None),
    };
    PgPoolOptions::new()
        .max_connections(10)
        // No ping before every use (sqlx's default), which doubled a token check's round
        // trips: only before reusing a connection idle for PING_AFTER_IDLE or longer, which
        // may have outlived a restart of the server.
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_AFTER_IDLE {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(|error| match &error {
            // pgbouncer's answer to a startup parameter it does not pass on.
            sqlx::Error::Database(refused)
                if pooling == Pooling::Direct
                    && refused
                        .message()
                        .starts_with("unsupported startup parameter") =>
            {
                StoreError::failed(format!(
                    "{}: this looks like a pooler such as pgbouncer; behind one in transaction \
                     mode, add `pooler=transaction` to the URL",
                    refused.message()
                ))
            }
            _ => store_error(error),
        })
}

/// Runs `$body`, a block answering `Result<T, StoreError>` that runs the statements of one call
/// on `$conn: &mut Conn` (a sqlx executor) of `$pooled` ([`Pooled`]), and answers once they are
/// committed: a lone statement on its own and several in a transaction of their own (every call
/// in a transaction behind a pooler in transaction mode). A call that loses a serialization
/// conflict or a deadlock runs again whole, as `$conflicts` ([`Conflicts`]) allows. A macro
/// rather than a function taking an async closure: the futures of the seams must be `Send`,
/// which the compiler cannot prove through an async closure's borrowed argument.
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
macro_rules! store_write {
    ($store:expr, $statements:expr, |$conn:ident| $body:block) => {
        run_on!($store.primary, $statements, $store.conflicts(), |$conn| {
            $body
        })
    };
}

/// One read on `$pooled` (the primary or the replica; [`run_on!`]): one statement, run again
/// after a conflict without the retry turn.
macro_rules! store_read {
    ($pooled:expr, |$conn:ident| $body:block) => {
        run_on!(
            $pooled,
            $crate::sql::postgres::Statements::One,
            $crate::sql::postgres::Conflicts::new(None),
            |$conn| $body
        )
    };
}

// Below the macros above, which the seams' files use.
mod access;
mod accounts;
mod batch;
mod errors;
mod migrate;
mod pooling;
mod sign_on;
mod state;
mod tokens;

pub use pooling::Pooling;
