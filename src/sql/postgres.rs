//! [`PostgresStore`]: connecting, the embedded migrations, and which PostgreSQL errors are
//! transient.

use std::str::FromStr as _;

use sqlx::Postgres;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

#[cfg(doc)]
use super::PostgresStore;
use super::backend::Backend;
use super::columns::store_error;
use super::{ACQUIRE_TIMEOUT, Pooled, Pooling, STATEMENT_TIMEOUT, SqlStore};
use crate::error::StoreError;

/// How long a pooled connection may sit idle before it is pinged ahead of its next use.
const PING_AFTER_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

/// `src/sql/migrations/postgres/`, embedded at build time. A database that has migrations this
/// build does not know (a newer build migrated it: a rolling deploy) is accepted, since grantor's
/// migrations only add.
static MIGRATOR: std::sync::LazyLock<Migrator> = std::sync::LazyLock::new(|| {
    let mut migrator = sqlx::migrate!("src/sql/migrations/postgres");
    migrator.set_ignore_missing(true);
    migrator
});

impl Backend for Postgres {
    const ONE_STATEMENT_TOKENS: Option<(&'static str, &'static str)> = Some((
        super::text::ROTATE_WITH_TOKENS,
        super::text::JOIN_FAMILY_WITH_TOKENS,
    ));

    fn migrator() -> &'static Migrator {
        &MIGRATOR
    }

    fn rows_affected(result: &sqlx::postgres::PgQueryResult) -> u64 {
        result.rows_affected()
    }

    /// SQLSTATEs that mean "try again later": class 08 (connection exception), 53 (insufficient
    /// resources, such as too many connections), 57 (operator intervention: shutdown, cancel),
    /// 40001 (serialization failure) and 40P01 (deadlock detected).
    fn transient(code: &str) -> bool {
        ["08", "53", "57"]
            .iter()
            .any(|class| code.starts_with(class))
            || code == "40001"
            || code == "40P01"
    }
}

impl SqlStore<Postgres> {
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
    /// of a rolling deploy, once `grantor migrate` (or [`SqlStore::migrate`]) has run from one
    /// place. Refuses a database whose schema is older than this build needs.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let (options, pooling) = options(url)?;
        Self::open_pooled(options, pooling).await
    }

    /// Connects to a read replica at `url` (`pooler=transaction` as for
    /// [`connect`](Self::connect)), pooled as [`connect_with`](Self::connect_with) pools the
    /// primary, and sends token checks there first (see
    /// [`with_read_replica`](SqlStore::with_read_replica)).
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
    /// [`SqlStore::from_pool`] (then set `statement_timeout` yourself).
    pub async fn connect_with(options: PgConnectOptions) -> Result<Self, StoreError> {
        let store = Self::from_pool(pool(options, Pooling::Direct).await?);
        store.migrate().await?;
        Ok(store)
    }
}

impl SqlStore<Postgres> {
    /// Refuses a database whose schema lacks a migration this build needs (newer ones, from a
    /// newer build, are fine: grantor's migrations only add).
    async fn check_schema(&self) -> Result<(), StoreError> {
        let needed = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
        let directly = match self.primary.pooling {
            Pooling::Direct => "",
            _ => " against the database itself (migrations cannot run through the pooler)",
        };
        let have: Option<i64> = store_read!(self.primary, |conn| {
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                .fetch_one(&mut *conn)
                .await
                .map_err(|error| match &error {
                    sqlx::Error::Database(db) if db.code().as_deref() == Some("42P01") => {
                        StoreError::failed(format!(
                            "the database has no grantor schema: run `grantor migrate` \
                             first{directly}"
                        ))
                    }
                    _ => store_error::<Postgres>(error),
                })
        })?;
        super::check_version(have.unwrap_or(0), needed).map_err(|error| {
            if directly.is_empty() {
                error
            } else {
                StoreError::failed(format!("{error}{directly}"))
            }
        })
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
            _ => store_error::<Postgres>(error),
        })
}
