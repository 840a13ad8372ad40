//! SQL stores: every seam of [`crate::store`] on SQLite (feature `sqlite`, through
//! `rusqlite`) and PostgreSQL (feature `postgres`, through `sqlx`).
//!
//! Two types implement them all: [`ClientStore`], [`UserStore`], [`TokenIssuer`],
//! [`SessionStore`], [`UserSessionStore`], [`ConsentStore`], [`AttemptCounter`],
//! [`SingleUseStore`], [`KeyStore`], [`Admin`], [`UserAdmin`] and
//! [`Purge`](crate::store::Purge). `SqliteStore` serves one node (the database is a file
//! beside the service; nothing to install), and `PostgresStore` any number of identical nodes
//! over one database: a sign-in may reach a different node on every request, and a throttle
//! counts the guesses made at every node. Both run the same SQL text (`text.rs`) and the
//! schemas differ only in their column types (`src/sql/migrations/sqlite/` and
//! `src/sql/migrations/postgres/`, embedded in the library), but for SQLite's families and
//! access tokens, kept in the order they are issued ([below](#indexes-and-purging)).
//!
//! Each database has a folder of its own, laid out alike: `sqlite/` and `postgres/`, each with
//! the store type and its connecting in `mod.rs`, its migrations in `migrate.rs`, its
//! statements on access tokens in `access.rs`, and one file per group of seams (`tokens.rs`,
//! `accounts.rs`, `state.rs`, `sign_on.rs`). What both share sits beside them: the statements
//! (`text.rs`), the rows they answer, decoded by column name on either database and checked as
//! they become records (`rows/`, a file per group of seams), the columns records are written
//! as (`columns.rs`), and the bounds both keep alike (`bounds.rs`).
//!
//! ```no_run
//! # #[cfg(feature = "sqlite")]
//! # async fn start() -> Result<(), Box<dyn std::error::Error>> {
//! use grantor::sql::SqliteStore;
//! use grantor::store::{KeyEncryptionKey, Purge as _};
//! use grantor::{AuthorizationServer, Password};
//!
//! // Connects, creating the file if missing, and applies pending migrations.
//! let store = SqliteStore::connect("sqlite:/var/lib/auth/grantor.db").await?;
//! let server = AuthorizationServer::builder()
//!     .issuer("https://auth.example")
//!     .store(store.clone()) // every seam: clients, users, tokens, sessions, attempt counters
//!     .encrypt_keys_at_rest(KeyEncryptionKey::from_base64(&std::env::var("AUTH_KEK")?)?)
//!     .build()?;
//! server.add_user("alice@example.com", &Password::new("alice-password-1")).await?;
//! // …and now and then, say hourly:
//! store.purge_expired(grantor::clock::UnixTime::from(std::time::SystemTime::now())).await?;
//! # Ok(()) }
//! ```
//!
//! # What is kept
//!
//! grantor mints every code, token, `jti`, family id, session id and CSRF token; these stores
//! only keep what they are handed. Codes, tokens, session ids, CSRF tokens and the cookies of
//! signed-in browsers arrive and are kept only as SHA-256 digests
//! ([`crate::store::SecretDigest`]), the primary keys every lookup probes; client secrets as
//! [`SecretVerifier::to_stored`](crate::client::SecretVerifier::to_stored) strings and
//! passwords as Argon2id PHC strings ([`crate::hash::hash_password`]). Keys of attempt counters
//! and single-use values are strings grantor builds, never a secret. A database dump hands out
//! nothing usable.
//!
//! # Atomic single use, across nodes
//!
//! Each single-use step is one statement that changes a row only while it is still in the state
//! it expects, so the database itself picks exactly one winner, whichever node asks:
//!
//! - a code is consumed by `UPDATE grantor_codes SET redeemed = TRUE WHERE digest = $1 AND NOT
//!   redeemed AND … RETURNING …`; every other caller finds it redeemed and gets
//!   [`CodeRedemption::Replayed`] with its family. The redeemed row stays as a tombstone until an
//!   hour past the code's expiry, so late replays still name what was issued;
//! - a refresh token is rotated by `UPDATE grantor_families SET generation = generation + 1
//!   WHERE NOT revoked AND id = … AND generation = <the token's generation> RETURNING …`, and the
//!   successor tokens are inserted in the same transaction, so a rotation either happens whole
//!   or not at all. A caller whose token is no longer its family's current generation gets
//!   [`Rotation::Reused`] with the family and keeps nothing; the store never revokes on its own
//!   (grantor does, with [`TokenIssuer::revoke_family`]);
//! - revocation sets `grantor_families.revoked`, and every lookup joins the family and skips
//!   revoked ones, so a token whose family is revoked is never found again;
//! - a sign-in session or a single-use value is taken by `DELETE … WHERE … AND expires_at > $now
//!   RETURNING …`: one caller gets the row, the others find none;
//! - a signed-in browser is ended (logout) the same way, its grants deleted and answered in the
//!   same transaction; a grant is added to it by `UPDATE grantor_user_sessions SET last_grant =
//!   last_grant + 1 … RETURNING last_grant`, which numbers it and holds the session's row until
//!   its commit: concurrent grants each insert a row of their own (none is lost), the oldest
//!   beyond [`MAX_SESSION_GRANTS`](crate::store::MAX_SESSION_GRANTS) is deleted in the same
//!   transaction, and a logout racing them either ends them too or comes first; a new
//!   browser's insert deletes, in its transaction, the user's sessions beyond the newest
//!   [`MAX_SESSIONS_PER_USER`](crate::store::MAX_SESSIONS_PER_USER) and their grants;
//! - a remembered approval is kept by one `INSERT … ON CONFLICT (user_id, client_id) DO
//!   UPDATE`, replacing the one before whole;
//! - an attempt is counted by one `INSERT … ON CONFLICT (key) DO UPDATE SET count = CASE WHEN
//!   <the window is over> THEN 1 ELSE count + 1 END … RETURNING count, resets_at`, so concurrent
//!   attempts each see a different count;
//! - a single-use value is kept by `INSERT … ON CONFLICT (key) DO UPDATE … WHERE <the held value
//!   expired>`: of concurrent callers exactly one changes a row.
//!
//! Writes of more than one statement (a code with its family, tokens with their family, a
//! rotation with its successor) run in one transaction (on SQLite, in one savepoint of the
//! writer's transaction), so they happen whole or not at all.
//!
//! # Group commit (SQLite)
//!
//! With `synchronous = FULL` every SQLite commit waits for the disk, so one commit per write
//! would cap a store at the disk's sync rate. A `SqliteStore` therefore writes on one thread
//! that owns the one connection that writes: it takes every write queued (at most 512), runs
//! them in one `BEGIN IMMEDIATE` transaction, each in a savepoint of its own, commits once,
//! and only then answers each caller. Under load one sync covers the writes that arrived during
//! the previous one.
//!
//! - A write is answered only once it is committed, so an acknowledged token survives a power
//!   cut.
//! - A write whose statements fail is rolled back to its savepoint and answered its error; the
//!   rest of its batch commits. A failed commit fails every write of its batch.
//! - A write crosses to the writer thread once, with all its statements, and its answer
//!   crosses back once; reads never cross at all: they run on the caller's thread, on a
//!   connection of a small pool (WAL mode: they never wait for the writer).
//! - A write whose caller went away before it began is skipped; one whose caller went away
//!   later is committed with its batch, as if it had been answered and the answer lost.
//! - A caller waits at most [`ACQUIRE_TIMEOUT`] for its answer, then answers
//!   [`StoreError::unavailable`](crate::store::StoreError::unavailable).
//! - The queue holds at most one write per caller waiting, that is the requests the host serves
//!   at once: the store keeps nothing of its own per write beyond its batch.
//!
//! PostgreSQL commits every write on its own connection from the pool (PostgreSQL groups
//! concurrent commits to its log itself). Behind a pooler in transaction mode such as pgbouncer
//! (`Pooling::Transaction`), every call runs in a transaction of its own with unnamed
//! statements, `statement_timeout` set in it.
//!
//! # Indexes and purging
//!
//! Lookups on the request path are primary-key or index probes (digest, family id, client id,
//! user id, lowercase username, key): O(log n). On SQLite, families and access tokens are
//! rows appended in the order they are issued, found through narrow indexes (a family by its
//! id, an access token by the first 8 bytes of its digest, the whole digest compared in the
//! row), so that issuing a token writes few pages of the file apart from its last ones. [`Purge::purge_expired`](crate::store::Purge::purge_expired) deletes
//! expired codes (after their tombstone hour), tokens and families, the rows of revoked
//! families, and expired sessions, attempt windows, single-use values, keys, signed-in browsers
//! (with their grants) and remembered approvals, through indexes on their expiry and on
//! `family_id`; call it from a timer (say hourly). Expired rows are never *found* before that:
//! every lookup checks expiry itself.
//!
//! # Bounds on one-time values
//!
//! Anyone can make the server keep one-time values (pushed requests through self-registered
//! clients, proof ids of fresh DPoP keys), so each kind
//! ([`namespace`](crate::store::namespace)'s, computed as each value is kept) holds at most
//! [`SINGLE_USE_PER_KIND`](crate::store::SINGLE_USE_PER_KIND) rows (100,000) and
//! [`SINGLE_USE_BYTES_PER_KIND`](crate::store::SINGLE_USE_BYTES_PER_KIND) bytes of values
//! (256 MiB; with keys of at most 128 bytes, about 300 MiB of table per kind), expired rows not
//! yet purged included. A value of a full kind is refused with
//! [`StoreError::unavailable`](crate::store::StoreError::unavailable) (503); other kinds are
//! served, and no live value is evicted. The check costs no count: triggers keep each kind's rows
//! and bytes in `grantor_single_use_kinds` (on PostgreSQL in 16 slots per kind, so concurrent
//! inserts rarely wait on one row), an insert reads that first, and only a kind that looks full
//! drops its own expired rows (an index range on `(kind, expires_at)`) before answering. On
//! SQLite the check and the insert are one write of the one writer, so the bound is exact; on
//! PostgreSQL they are apart, so inserts in flight at once on every node (at most their pools'
//! connections) may pass it together.
//!
//! # Migrations
//!
//! `connect` applies pending migrations; `PostgresStore::from_pool` does not, and
//! `migrate` applies them explicitly. Migrations are versioned (recorded in `_sqlx_migrations`
//! with their checksums, on both databases) and idempotent: running them again, from any
//! number of nodes at once, changes nothing (PostgreSQL serializes concurrent runs with an
//! advisory lock; SQLite runs each migration with its record in one `BEGIN IMMEDIATE`
//! transaction, so a process that waited finds it applied). Behind a pooler in transaction mode
//! (`Pooling::Transaction`, `pooler=transaction` in the URL) that lock cannot be held:
//! `connect` there only opens, `migrate` refuses, and migrations run against the database
//! itself (`grantor migrate` with its direct URL).
//!
//! # Failures
//!
//! A database that is down, a pool with no connection free within [`ACQUIRE_TIMEOUT`], a broken
//! connection, a SQLite writer that does not answer within it or a busy SQLite file become
//! [`StoreError::unavailable`](crate::store::StoreError::unavailable) (503 `temporarily_unavailable` on
//! the wire); anything else becomes [`StoreError::failed`](crate::store::StoreError::failed) (500
//! `server_error`). The client sees no detail; grantor logs the cause through `tracing`. The pool
//! reconnects by itself once the database is back. Nothing here panics.
//!
//! # Queries are checked at run time
//!
//! The statements are prepared when they first run (`sqlx::query()` on PostgreSQL, a cached
//! `rusqlite` statement on SQLite) and the test suite runs every one of them against both
//! databases; no compile-time macro (`sqlx::query!`) needs a live database (`DATABASE_URL`) or
//! prepared offline data at build time. So building grantor needs no database.

#[cfg(doc)]
use crate::store::{
    Admin, AttemptCounter, ClientStore, CodeRedemption, ConsentStore, KeyStore, Rotation,
    SessionStore, SingleUseStore, TokenIssuer, UserAdmin, UserSessionStore, UserStore,
};

mod bounds;
mod columns;
mod rows;
mod text;

pub use bounds::ACQUIRE_TIMEOUT;

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
pub use postgres::{Pooling, PostgresStore, STATEMENT_TIMEOUT, SqlStore};
#[cfg(feature = "postgres")]
pub use sqlx;

#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
pub use rusqlite;
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteOptions, SqliteStore, Synchronous};
