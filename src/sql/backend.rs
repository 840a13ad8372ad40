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

    /// A new family and its one access token, in one request to the database: `$1`–`$7` the
    /// family as in [`INSERT_FAMILY`](super::text::INSERT_FAMILY), `$8`–`$15` the token as
    /// `$1`, `$3`–`$9` of [`INSERT_ACCESS`](super::text::INSERT_ACCESS). For a client
    /// credentials token, one round trip instead of four (`BEGIN`, two inserts, `COMMIT`).
    const INSERT_FAMILY_WITH_ACCESS: &'static str;

    /// Whether [`INSERT_FAMILY_WITH_ACCESS`](Self::INSERT_FAMILY_WITH_ACCESS) is one statement,
    /// atomic by itself (else it needs a transaction).
    const ONE_STATEMENT_FAMILY: bool;

    /// [`ROTATE_WITH_TOKENS`](super::text::ROTATE_WITH_TOKENS) and
    /// [`JOIN_FAMILY_WITH_TOKENS`](super::text::JOIN_FAMILY_WITH_TOKENS) where the database has
    /// data-modifying `WITH` (PostgreSQL): a rotation, or tokens joining a family, in one round
    /// trip. `None` on SQLite, whose group commit makes the round trips cheap instead.
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
