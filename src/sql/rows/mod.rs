//! The rows the statements of [`super::text`] answer, decoded by column name on either
//! database, and the records rebuilt (and checked) from them: a file per group of seams, as
//! each database's own folder has. A row that does not make a valid record is a
//! [`StoreError::failed`]: the database holds something grantor never wrote.
//!
//! A row's fields stay private to its file, which decodes the row and rebuilds the record from
//! it; only the fields a store reads as they are (a count, a generation, a value) are seen by
//! the stores of `sql`.

use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::store::{FamilyId, User, UserId};

/// Decodes `$row`, a struct whose fields are named as the columns a statement answers, on each
/// database built in: sqlx's `FromRow` on PostgreSQL, `FromLite` on SQLite. The fields after
/// `;` are rows of their own, read from the same columns (sqlx's `flatten`).
macro_rules! by_column_name {
    ($row:ident { $($field:ident),* $(,)? $(; $($flat:ident),+)? }) => {
        #[cfg(feature = "postgres")]
        impl<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> for $row {
            fn from_row(row: &'r sqlx::postgres::PgRow) -> Result<Self, sqlx::Error> {
                use sqlx::Row as _;
                Ok(Self {
                    $($field: row.try_get(stringify!($field))?,)*
                    $($($flat: sqlx::FromRow::from_row(row)?,)+)?
                })
            }
        }
        #[cfg(feature = "sqlite")]
        $crate::sql::sqlite::from_lite!($row { $($field),* $(; $($flat),+)? });
    };
}

pub(super) mod accounts;
pub(super) mod sign_on;
pub(super) mod state;
pub(super) mod tokens;

fn corrupt(what: &str) -> StoreError {
    StoreError::failed(format!("the database holds a malformed {what}"))
}

/// Unix seconds as a column holds them (a negative one, never written, as the epoch).
pub(super) fn time(secs: i64) -> UnixTime {
    UnixTime::from_secs(u64::try_from(secs).unwrap_or(0))
}

fn family_id(bytes: &[u8]) -> Result<FamilyId, StoreError> {
    let bytes = <[u8; 16]>::try_from(bytes).map_err(|_| corrupt("family id"))?;
    Ok(FamilyId::from_bytes(bytes))
}

fn user(id: Option<String>, username: Option<String>) -> Result<Option<User>, StoreError> {
    match (id, username) {
        (Some(id), Some(username)) => Ok(Some(User::new(UserId::new(id), username))),
        (None, None) => Ok(None),
        _ => Err(corrupt("user reference")),
    }
}
