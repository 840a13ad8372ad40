//! What the sqlx store needs of its database: [`Backend`], implemented for PostgreSQL in
//! `postgres.rs` (SQLite has a store of its own on `rusqlite`, `sqlite/`). The seams are
//! implemented for `SqlStore<Postgres>`; the pool, transactions and migrations stay written
//! over `DB: Backend`.
//!
//! | column | written as | read as |
//! |---|---|---|
//! | digests, family ids, single-use values | `&[u8]` | `Vec<u8>` |
//! | text | `&str` | `String` |
//! | Unix seconds, generations, counts | `i64` | `i64` |
//! | flags | `bool` | `bool` |

use sqlx::migrate::{Migrate, Migrator};

/// A database the sqlx store runs on: its migrations, its one-statement token writes, and which
/// of its error codes are transient.
pub(crate) trait Backend: sqlx::Database<Connection: Migrate> {
    /// [`ROTATE_WITH_TOKENS`](super::text::ROTATE_WITH_TOKENS) and
    /// [`JOIN_FAMILY_WITH_TOKENS`](super::text::JOIN_FAMILY_WITH_TOKENS) where the database has
    /// data-modifying `WITH` (PostgreSQL): a rotation, or tokens joining a family, in one round
    /// trip; `None` for a database without it.
    const ONE_STATEMENT_TOKENS: Option<(&'static str, &'static str)>;

    /// The embedded migrations of this database's schema.
    fn migrator() -> &'static Migrator;

    /// Whether a database error code (an SQLSTATE or an SQLite result code) means "try again
    /// later".
    fn transient(code: &str) -> bool;

    /// How many rows a statement inserted, changed or deleted (sqlx answers it per database,
    /// not through a trait).
    fn rows_affected(result: &Self::QueryResult) -> u64;
}
