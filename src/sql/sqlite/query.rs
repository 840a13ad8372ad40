//! Running the statements of [`text`](super::super::text) on a `rusqlite` connection: binding
//! their `$N` parameters, decoding rows by column name ([`FromLite`], [`Columns`]), and mapping SQLite's
//! errors to the store's two kinds.
//!
//! Every statement is prepared once per connection and kept in the connection's statement
//! cache, so a request pays for binding and stepping, never for parsing SQL.

use rusqlite::types::{FromSql, ToSql};
use rusqlite::{CachedStatement, Connection, ErrorCode, Row, Statement};

use crate::error::StoreError;

/// How many prepared statements each connection keeps: every statement grantor runs, with room.
pub(super) const STATEMENT_CACHE: usize = 128;

/// A row decoded by column name.
pub(crate) trait FromLite: Sized {
    /// The record of `row`, whose statement's column names are `columns`, or the column that
    /// did not decode.
    fn from_lite(row: &Row<'_>, columns: &Columns) -> rusqlite::Result<Self>;
}

/// Implements [`FromLite`] for a row struct whose fields are named as its columns; the fields
/// after `;` are rows of their own read from the same columns (sqlx's `flatten`).
macro_rules! from_lite {
    ($row:ident { $($field:ident),* $(,)? $(; $($flat:ident),+)? }) => {
        impl $crate::sql::sqlite::FromLite for $row {
            fn from_lite(
                row: &rusqlite::Row<'_>,
                columns: &$crate::sql::sqlite::Columns,
            ) -> rusqlite::Result<Self> {
                Ok(Self {
                    $($field: columns.get(row, stringify!($field))?,)*
                    $($($flat: $crate::sql::sqlite::FromLite::from_lite(row, columns)?,)+)?
                })
            }
        }
    };
}
pub(crate) use from_lite;

/// The names of a statement's columns, asked of SQLite once per run of the statement.
///
/// rusqlite finds a column by name by asking SQLite for the name of each column in turn, at
/// every lookup: decoding an access token's row that way made about sixty calls into SQLite,
/// each measuring a C string, a few percent of an introspection request's time.
pub(crate) struct Columns {
    /// Every name, one after the other.
    names: String,
    /// Where each name ends in `names`.
    ends: Vec<usize>,
}

impl Columns {
    fn of(statement: &Statement<'_>) -> Self {
        let mut columns = Self {
            names: String::new(),
            ends: Vec::with_capacity(statement.column_count()),
        };
        for name in statement.column_names() {
            columns.names.push_str(name);
            columns.ends.push(columns.names.len());
        }
        columns
    }

    /// The column called `name` (as SQLite compares names: ASCII case aside), decoded.
    pub(crate) fn get<T: FromSql>(&self, row: &Row<'_>, name: &str) -> rusqlite::Result<T> {
        let mut start = 0;
        for (index, &end) in self.ends.iter().enumerate() {
            if self.names[start..end].eq_ignore_ascii_case(name) {
                return row.get(index);
            }
            start = end;
        }
        Err(rusqlite::Error::InvalidColumnName(name.to_owned()))
    }
}

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
    let columns = Columns::of(&statement);
    let mut rows = statement.raw_query();
    match rows.next().map_err(store_error)? {
        Some(row) => R::from_lite(row, &columns).map(Some).map_err(store_error),
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
    let columns = Columns::of(&statement);
    let mut rows = statement.raw_query();
    let mut all = Vec::new();
    while let Some(row) = rows.next().map_err(store_error)? {
        all.push(R::from_lite(row, &columns).map_err(store_error)?);
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
