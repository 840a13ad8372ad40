//! Running the statements of [`text`](super::super::text) on a `rusqlite` connection: binding
//! their `$N` parameters, decoding rows by column name ([`FromLite`]), and mapping SQLite's
//! errors to the store's two kinds.
//!
//! Every statement is prepared once per connection and kept in the connection's statement
//! cache, so a request pays for binding and stepping, never for parsing SQL.

use rusqlite::types::ToSql;
use rusqlite::{CachedStatement, Connection, ErrorCode, Row};

use crate::error::StoreError;

/// How many prepared statements each connection keeps: every statement grantor runs, with room.
pub(super) const STATEMENT_CACHE: usize = 128;

/// A row decoded by column name.
pub(crate) trait FromLite: Sized {
    /// The record of `row`, or the column that did not decode.
    fn from_lite(row: &Row<'_>) -> rusqlite::Result<Self>;
}

/// Implements [`FromLite`] for a row struct whose fields are named as its columns; the fields
/// after `;` are rows of their own read from the same columns (sqlx's `flatten`).
macro_rules! from_lite {
    ($row:ident { $($field:ident),* $(,)? $(; $($flat:ident),+)? }) => {
        impl $crate::sql::sqlite::FromLite for $row {
            fn from_lite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
                Ok(Self {
                    $($field: row.get(stringify!($field))?,)*
                    $($($flat: $crate::sql::sqlite::FromLite::from_lite(row)?,)+)?
                })
            }
        }
    };
}
pub(crate) use from_lite;

/// A statement of [`text`](super::super::text), prepared (or found in the cache) with `args`
/// bound: `$N` in the text takes `args[N - 1]`, wherever and however often it appears.
fn prepared<'c>(
    conn: &'c Connection,
    sql: &str,
    args: &[&dyn ToSql],
) -> Result<CachedStatement<'c>, StoreError> {
    let mut statement = conn.prepare_cached(sql).map_err(store_error)?;
    for index in 1..=statement.parameter_count() {
        let arg = statement
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$'))
            .and_then(|number| number.parse::<usize>().ok())
            .and_then(|number| number.checked_sub(1))
            .and_then(|number| args.get(number))
            .ok_or_else(|| StoreError::failed("a statement names a parameter it was not given"))?;
        statement
            .raw_bind_parameter(index, arg)
            .map_err(store_error)?;
    }
    Ok(statement)
}

/// Runs a statement that answers no rows; answers how many rows it inserted, changed or
/// deleted.
pub(crate) fn run(conn: &Connection, sql: &str, args: &[&dyn ToSql]) -> Result<u64, StoreError> {
    let mut statement = prepared(conn, sql, args)?;
    let changed = statement.raw_execute().map_err(store_error)?;
    Ok(u64::try_from(changed).unwrap_or(u64::MAX))
}

/// The first row a statement answers, if any. A data-modifying statement (`… RETURNING`) has
/// made all its changes by its first row.
pub(crate) fn row<R: FromLite>(
    conn: &Connection,
    sql: &str,
    args: &[&dyn ToSql],
) -> Result<Option<R>, StoreError> {
    let mut statement = prepared(conn, sql, args)?;
    let mut rows = statement.raw_query();
    match rows.next().map_err(store_error)? {
        Some(row) => R::from_lite(row).map(Some).map_err(store_error),
        None => Ok(None),
    }
}

/// Every row a statement answers.
pub(crate) fn rows<R: FromLite>(
    conn: &Connection,
    sql: &str,
    args: &[&dyn ToSql],
) -> Result<Vec<R>, StoreError> {
    let mut statement = prepared(conn, sql, args)?;
    let mut rows = statement.raw_query();
    let mut all = Vec::new();
    while let Some(row) = rows.next().map_err(store_error)? {
        all.push(R::from_lite(row).map_err(store_error)?);
    }
    Ok(all)
}

/// SQLite's answer as the store's: a busy or locked database, a full disk or a file that cannot
/// be opened is [`StoreError::unavailable`] (try again later); anything else, a malformed row
/// among them, is [`StoreError::failed`].
pub(crate) fn store_error(error: rusqlite::Error) -> StoreError {
    let transient = matches!(
        error.sqlite_error_code(),
        Some(
            ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::DiskFull
                | ErrorCode::CannotOpen
        )
    );
    if transient {
        StoreError::unavailable(error)
    } else {
        StoreError::failed(error)
    }
}
