//! What differs between the databases: [`Backend`], implemented for SQLite and PostgreSQL in
//! their own files. Everything else in `grantor::sql` is written once, over `DB: Backend`.
//!
//! Rust does not carry a trait's `where` clauses over to the code that uses it (only its
//! supertraits), so the generic impls of the seams state the sqlx bounds they need themselves:
//! connections that execute queries, arguments that bind the column types below, rows decoded
//! by column name. Both databases meet them; the bounds are the list of what the code needs of
//! a database, not a choice.
//!
//! | column | written as | read as |
//! |---|---|---|
//! | digests, family ids, single-use values | `&[u8]` | `Vec<u8>` |
//! | text | `&str` | `String` |
//! | Unix seconds, generations, counts | `i64` | `i64` |
//! | flags | `bool` | `bool` |

use sqlx::migrate::{Migrate, Migrator};

/// A database the SQL stores run on: its migrations, how a write transaction begins, and which
/// of its error codes are transient. Public in a private module: nameable nowhere outside the
/// crate, so nobody else implements it.
pub trait Backend: sqlx::Database<Connection: Migrate> {
    /// The statement that begins a transaction that will write.
    const BEGIN_WRITE: &'static str;

    /// Whether a new family and its access token go in as one statement
    /// ([`INSERT_FAMILY_WITH_ACCESS`](super::text::INSERT_FAMILY_WITH_ACCESS), a data-modifying
    /// `WITH`, which SQLite lacks): one round trip instead of four (`BEGIN`, two inserts,
    /// `COMMIT`) for a client credentials token.
    const ONE_STATEMENT_FAMILY: bool;

    /// The embedded migrations of this database's schema.
    fn migrator() -> &'static Migrator;

    /// Whether a database error code (an SQLSTATE or an SQLite result code) means "try again
    /// later".
    fn transient(code: &str) -> bool;

    /// How many rows a statement inserted, changed or deleted (sqlx answers it per database,
    /// not through a trait).
    fn rows_affected(result: &Self::QueryResult) -> u64;
}
