//! Running the statements of [`text`](super::super::text) on a `rusqlite` connection: binding
//! their `$N` parameters, decoding rows by column name ([`FromLite`], [`Columns`]), and
//! mapping SQLite's errors to the store's two kinds.
//!
//! Every statement is prepared once per connection and kept in the connection's statement
//! cache, so a request pays for binding and stepping, never for parsing SQL.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

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

/// The names of a statement's columns, asked of SQLite once per thread and statement.
///
/// rusqlite finds a column by name by asking SQLite for the name of each column in turn, at
/// every lookup: decoding an access token's row that way made about sixty calls into SQLite,
/// each measuring a C string, a few percent of an introspection request's time. Fields are
/// mostly asked for in the order of the columns, so each search starts after the last hit
/// when no two columns share a name; otherwise from the first column, as rusqlite searches,
/// so that the first of two like-named columns is always the one read.
pub(crate) struct Columns {
    names: Box<[Box<str>]>,
    /// Where the next search starts: after the last hit, or always 0 (`None`) when two
    /// columns share a name.
    next: Option<Cell<usize>>,
}

impl Columns {
    /// The column called `name` (as SQLite compares names: ASCII case aside), decoded.
    pub(crate) fn get<T: FromSql>(&self, row: &Row<'_>, name: &str) -> rusqlite::Result<T> {
        let count = self.names.len();
        let start = self.next.as_ref().map_or(0, Cell::get);
        for offset in 0..count {
            let index = (start + offset) % count;
            if self.names[index].eq_ignore_ascii_case(name) {
                if let Some(next) = &self.next {
                    next.set(index + 1);
                }
                return row.get(index);
            }
        }
        Err(rusqlite::Error::InvalidColumnName(name.to_owned()))
    }
}

/// What grantor needs to know of a statement beside SQLite's prepared form: which of the
/// caller's arguments each parameter takes, and the names of its columns. The same for every
/// connection (every statement names its columns), so each thread keeps one per statement.
struct Shape {
    /// `arguments[i]`: the index into the caller's arguments of parameter `i + 1` (`$N` takes
    /// `args[N - 1]`, wherever and however often it appears).
    arguments: Box<[usize]>,
    columns: Rc<Columns>,
}

impl Shape {
    fn of(statement: &Statement<'_>) -> Result<Self, StoreError> {
        let arguments = (1..=statement.parameter_count())
            .map(|index| {
                statement
                    .parameter_name(index)
                    .and_then(|name| name.strip_prefix('$'))
                    .and_then(|number| number.parse::<usize>().ok())
                    .and_then(|number| number.checked_sub(1))
                    .ok_or_else(|| StoreError::failed("a statement's parameter is not $N"))
            })
            .collect::<Result<_, _>>()?;
        let names: Box<[Box<str>]> = (0..statement.column_count())
            .map(|index| statement.column_name(index).map(Box::from))
            .collect::<rusqlite::Result<_>>()
            .map_err(store_error)?;
        let unique = names.iter().enumerate().all(|(index, name)| {
            names[..index]
                .iter()
                .all(|earlier| !earlier.eq_ignore_ascii_case(name))
        });
        Ok(Self {
            arguments,
            columns: Rc::new(Columns {
                names,
                next: unique.then(|| Cell::new(0)),
            }),
        })
    }
}

thread_local! {
    /// Each statement's [`Shape`], by the address and length of its text: the texts are
    /// constants, so one entry per statement grantor has (or per place it is run from, should
    /// the compiler copy a constant: bounded either way by the code, about a hundred), and
    /// the same text always has the same shape.
    static SHAPES: RefCell<HashMap<(usize, usize), Rc<Shape>>> = RefCell::default();
}

/// A statement, prepared (or found in the connection's cache) with `args` bound, and the names
/// of its columns. `sql` is one of the store's constants (`'static`): its shape is remembered
/// by its address.
fn prepared<'c>(
    conn: &'c Connection,
    sql: &'static str,
    args: &[&dyn ToSql],
) -> Result<(CachedStatement<'c>, Rc<Columns>), StoreError> {
    let mut statement = conn.prepare_cached(sql).map_err(store_error)?;
    let key = (sql.as_ptr() as usize, sql.len());
    let shape = match SHAPES.with(|shapes| shapes.borrow().get(&key).cloned()) {
        Some(shape) => shape,
        None => {
            let shape = Rc::new(Shape::of(&statement)?);
            SHAPES.with(|shapes| shapes.borrow_mut().insert(key, shape.clone()));
            shape
        }
    };
    for (index, &argument) in shape.arguments.iter().enumerate() {
        let arg = args
            .get(argument)
            .ok_or_else(|| StoreError::failed("a statement names a parameter it was not given"))?;
        statement
            .raw_bind_parameter(index + 1, arg)
            .map_err(store_error)?;
    }
    Ok((statement, shape.columns.clone()))
}

/// Runs a statement that answers no rows; answers how many rows it inserted, changed or
/// deleted.
pub(crate) fn run(
    conn: &Connection,
    sql: &'static str,
    args: &[&dyn ToSql],
) -> Result<u64, StoreError> {
    let (mut statement, _) = prepared(conn, sql, args)?;
    let changed = statement.raw_execute().map_err(store_error)?;
    Ok(u64::try_from(changed).unwrap_or(u64::MAX))
}

/// The first row a statement answers, if any. A data-modifying statement (`… RETURNING`) has
/// made all its changes by its first row.
pub(crate) fn row<R: FromLite>(
    conn: &Connection,
    sql: &'static str,
    args: &[&dyn ToSql],
) -> Result<Option<R>, StoreError> {
    let (mut statement, columns) = prepared(conn, sql, args)?;
    let mut rows = statement.raw_query();
    match rows.next().map_err(store_error)? {
        Some(row) => R::from_lite(row, &columns).map(Some).map_err(store_error),
        None => Ok(None),
    }
}

/// Every row a statement answers.
pub(crate) fn rows<R: FromLite>(
    conn: &Connection,
    sql: &'static str,
    args: &[&dyn ToSql],
) -> Result<Vec<R>, StoreError> {
    let (mut statement, columns) = prepared(conn, sql, args)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    struct Pair {
        b: i64,
        a: String,
    }

    from_lite!(Pair { b, a });

    #[expect(dead_code, reason = "its column is missing: such a row is never made")]
    struct Missing {
        d: i64,
    }

    from_lite!(Missing { d });

    const PAIR: &str = "SELECT 'x' AS a, $2 AS b, $1 AS c";

    #[test]
    fn rows_decode_by_column_name_in_any_order_with_parameters_by_number() {
        let conn = Connection::open_in_memory().unwrap();
        for (first, second) in [(1_i64, 2_i64), (3, 4)] {
            // The second run reads the statement's remembered shape.
            let pair: Pair = row(&conn, PAIR, &[&first, &second]).unwrap().unwrap();
            assert_eq!((pair.a.as_str(), pair.b), ("x", second));
        }
        let all: Vec<Pair> = rows(&conn, PAIR, &[&5_i64, &6_i64]).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].b, 6);
    }

    struct Twice {
        a: i64,
        b: i64,
    }

    from_lite!(Twice { b, a });

    #[test]
    fn of_two_columns_with_one_name_the_first_is_read_every_time() {
        let conn = Connection::open_in_memory().unwrap();
        const TWICE: &str = "SELECT 1 AS a, 2 AS b, 3 AS A";
        for _ in 0..2 {
            let twice: Twice = row(&conn, TWICE, &[]).unwrap().unwrap();
            assert_eq!((twice.a, twice.b), (1, 2));
        }
    }

    #[test]
    fn a_missing_column_or_argument_is_an_error() {
        let conn = Connection::open_in_memory().unwrap();
        assert!(row::<Missing>(&conn, PAIR, &[&1_i64, &2_i64]).is_err());
        assert!(row::<Pair>(&conn, PAIR, &[&1_i64]).is_err());
    }
}
