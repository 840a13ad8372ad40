//! How the PostgreSQL store's statements reach the database: straight to PostgreSQL, or through
//! a pooler in transaction mode (pgbouncer), where each transaction may run on another server
//! connection.
//!
//! | | [`Pooling::Direct`] | [`Pooling::Transaction`] |
//! |---|---|---|
//! | prepared statements | named, cached per connection | unnamed, prepared again per use |
//! | one statement | on its own (autocommit) | in a transaction, so that its parse and its execution reach the same server connection |
//! | `statement_timeout` | a startup parameter of each connection | `SET LOCAL` in each transaction |
//! | round trips of a lone read | 1 | 4 (`BEGIN`, parse, execute, `COMMIT`) |
//! | migrations | at `connect`, under a session lock | refused: run them against the database itself |

use std::fmt;

use futures_core::future::BoxFuture;
use futures_core::stream::BoxStream;
use sqlx::postgres::{PgConnection, PgQueryResult, PgRow, PgStatement, PgTypeInfo};
use sqlx::{Describe, Either, Execute, Executor, Postgres};

use super::STATEMENT_TIMEOUT;
use super::errors::store_error;
use crate::error::StoreError;
use crate::sql::bounds::ACQUIRE_TIMEOUT;

/// How the store's connections reach PostgreSQL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pooling {
    /// Straight to PostgreSQL, or through a pooler in session mode: each connection is one
    /// server session, so prepared statements are named and cached, a lone statement commits by
    /// itself, and `statement_timeout` is set once per connection.
    #[default]
    Direct,
    /// Through a pooler in transaction mode (pgbouncer's `pool_mode = transaction`, 1.18 and
    /// later), where consecutive transactions of one client connection may run on different
    /// server connections and no session state survives a transaction: statements are unnamed
    /// and each runs in a transaction of its own, which begins with `SET LOCAL
    /// statement_timeout`; nothing is sent as a startup parameter but those poolers pass on.
    /// Each store call then takes four round trips where it took one. Migrations hold a session
    /// lock, which such a pooler cannot keep: the store refuses to run them, so run `grantor
    /// migrate` (or [`PostgresStore::migrate`](super::PostgresStore::migrate)) against the database
    /// itself. In a URL, `pooler=transaction` asks for this mode.
    Transaction,
}

impl Pooling {
    /// The query parameter of a store URL that names the mode (`pooler=transaction`).
    pub(crate) const PARAMETER: &'static str = "pooler";

    /// The mode `value` of [`Pooling::PARAMETER`] names.
    pub(crate) fn from_parameter(value: &str) -> Result<Self, StoreError> {
        match value {
            "transaction" => Ok(Self::Transaction),
            "session" | "none" => Ok(Self::Direct),
            other => Err(StoreError::failed(format!(
                "the URL's `pooler` is `{other}`: use `pooler=transaction` behind a pooler in \
                 transaction mode, or leave it out"
            ))),
        }
    }

    /// Splits a store URL into the URL sqlx reads (without grantor's own parameter) and the
    /// mode it names.
    pub(crate) fn from_url(url: &str) -> Result<(String, Self), StoreError> {
        let Some((base, query)) = url.split_once('?') else {
            return Ok((url.to_owned(), Self::Direct));
        };
        let mut pooling = Self::Direct;
        let mut kept = Vec::new();
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some((Self::PARAMETER, value)) => pooling = Self::from_parameter(value)?,
                _ if pair == Self::PARAMETER => pooling = Self::from_parameter("")?,
                _ => kept.push(pair),
            }
        }
        let url = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        Ok((url, pooling))
    }

    /// The statement that begins a transaction in this mode.
    fn begin(self) -> &'static str {
        match self {
            Self::Direct => "BEGIN",
            Self::Transaction => &BEGIN_WITH_TIMEOUT,
        }
    }
}

/// `BEGIN` and the transaction's `statement_timeout` ([`STATEMENT_TIMEOUT`]), one simple query.
static BEGIN_WITH_TIMEOUT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "BEGIN; SET LOCAL statement_timeout = {}",
        STATEMENT_TIMEOUT.as_millis()
    )
});

/// A pool and how its connections reach PostgreSQL.
#[derive(Clone)]
pub(crate) struct Pooled {
    pub(crate) pool: sqlx::PgPool,
    pub(crate) pooling: Pooling,
}

impl Pooled {
    /// Begins one call's statements: a connection, in a transaction of its own for several
    /// statements, and for every call behind a pooler in transaction mode.
    pub(crate) async fn begin(&self, statements: Statements) -> Result<Call, StoreError> {
        let named = self.pooling == Pooling::Direct;
        Ok(match (statements, self.pooling) {
            (Statements::One, Pooling::Direct) => {
                Call::Alone(self.pool.acquire().await.map_err(store_error)?)
            }
            (_, Pooling::Direct) => Call::Transaction {
                tx: self
                    .pool
                    .begin_with(self.pooling.begin())
                    .await
                    .map_err(store_error)?,
                named,
            },
            // A pooler in transaction mode holds the `BEGIN` until it has a server connection
            // for it (pgbouncer: up to `query_wait_timeout`, two minutes by default), and
            // `statement_timeout` is not set yet: the wait is bounded here.
            (_, _) => {
                let begin = self.pool.begin_with(self.pooling.begin());
                match tokio::time::timeout(ACQUIRE_TIMEOUT, begin).await {
                    Ok(begun) => Call::Transaction {
                        tx: begun.map_err(store_error)?,
                        named,
                    },
                    Err(_) => {
                        return Err(StoreError::unavailable(
                            "the pooler found no server connection within the acquire timeout",
                        ));
                    }
                }
            }
        })
    }
}

/// One store call's statements under way (a read's or a write's): their connection, and how
/// they end.
pub(crate) enum Call {
    /// One statement, committed by itself.
    Alone(sqlx::pool::PoolConnection<Postgres>),
    /// Statements in a transaction of their own.
    Transaction {
        tx: sqlx::Transaction<'static, Postgres>,
        /// Whether its statements may be prepared named (no pooler in transaction mode).
        named: bool,
    },
}

impl Call {
    /// Where the statements run.
    pub(crate) fn connection(&mut self) -> Conn<'_> {
        match self {
            Call::Alone(connection) => Conn {
                conn: connection,
                named: true,
            },
            Call::Transaction { tx, named } => Conn {
                conn: tx,
                named: *named,
            },
        }
    }

    /// Ends with what the statements answered: commits (or rolls back on an error).
    pub(crate) async fn finish<T>(self, answer: Result<T, StoreError>) -> Result<T, StoreError> {
        match (self, answer) {
            (Call::Alone(_), answer) => answer,
            (Call::Transaction { tx, .. }, Ok(answer)) => {
                tx.commit().await.map(|()| answer).map_err(store_error)
            }
            // Dropping the transaction rolls it back.
            (Call::Transaction { .. }, Err(error)) => Err(error),
        }
    }
}

/// How many statements a call runs, so that a lone statement (atomic by itself) needs no
/// transaction of its own where the connection is a session of its own.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Statements {
    /// One statement.
    One,
    /// Several, which must happen together.
    Many,
}

/// A connection the seams' statements run on (`&mut Conn` is a sqlx [`Executor`]): their
/// prepared statements named and cached, or unnamed behind a pooler in transaction mode.
pub(crate) struct Conn<'a> {
    conn: &'a mut PgConnection,
    named: bool,
}

impl fmt::Debug for Conn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conn").field("named", &self.named).finish()
    }
}

/// A statement prepared unnamed: parsed again at each use, and never left on the server
/// connection for another client of the pooler to collide with.
struct Unnamed<E>(E);

impl<'q, E: Execute<'q, Postgres>> Execute<'q, Postgres> for Unnamed<E> {
    fn sql(&self) -> &'q str {
        self.0.sql()
    }

    fn statement(&self) -> Option<&PgStatement<'q>> {
        self.0.statement()
    }

    fn take_arguments(
        &mut self,
    ) -> Result<Option<sqlx::postgres::PgArguments>, sqlx::error::BoxDynError> {
        self.0.take_arguments()
    }

    fn persistent(&self) -> bool {
        false
    }
}

impl<'c> Executor<'c> for &'c mut Conn<'_> {
    type Database = Postgres;

    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<PgQueryResult, PgRow>, sqlx::Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Postgres>,
    {
        if self.named {
            self.conn.fetch_many(query)
        } else {
            self.conn.fetch_many(Unnamed(query))
        }
    }

    fn fetch_optional<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxFuture<'e, Result<Option<PgRow>, sqlx::Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Postgres>,
    {
        if self.named {
            self.conn.fetch_optional(query)
        } else {
            self.conn.fetch_optional(Unnamed(query))
        }
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [PgTypeInfo],
    ) -> BoxFuture<'e, Result<PgStatement<'q>, sqlx::Error>>
    where
        'c: 'e,
    {
        self.conn.prepare_with(sql, parameters)
    }

    fn describe<'e, 'q: 'e>(
        self,
        sql: &'q str,
    ) -> BoxFuture<'e, Result<Describe<Postgres>, sqlx::Error>>
    where
        'c: 'e,
    {
        self.conn.describe(sql)
    }
}

#[cfg(test)]
mod tests {
    use super::Pooling;

    #[test]
    fn the_pooler_parameter_is_taken_out_of_the_url() {
        let (url, pooling) =
            Pooling::from_url("postgres://u@h:6432/db?sslmode=disable&pooler=transaction").unwrap();
        assert_eq!(url, "postgres://u@h:6432/db?sslmode=disable");
        assert_eq!(pooling, Pooling::Transaction);
        let (url, pooling) = Pooling::from_url("postgres://u@h/db?pooler=transaction").unwrap();
        assert_eq!(
            (url.as_str(), pooling),
            ("postgres://u@h/db", Pooling::Transaction)
        );
        let (url, pooling) = Pooling::from_url("postgres://u@h/db?application_name=a").unwrap();
        assert_eq!(
            (url.as_str(), pooling),
            ("postgres://u@h/db?application_name=a", Pooling::Direct)
        );
        let error = Pooling::from_url("postgres://u@h/db?pooler=statement").unwrap_err();
        assert!(error.to_string().contains("pooler=transaction"), "{error}");
    }
}
