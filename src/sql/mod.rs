//! SQL stores: [`ClientStore`], [`UserStore`] and [`TokenIssuer`] on SQLite (feature `sqlite`)
//! and PostgreSQL (feature `postgres`), through [`sqlx`].
//!
//! One type, [`SqlStore`], implements all three seams over a connection pool: `SqliteStore`
//! for one node (the database is a file beside the service; nothing to install), and
//! `PostgresStore` for any number of identical nodes over one database. Both run the same SQL
//! text; only the schema's column types differ (`src/sql/migrations/sqlite/` and
//! `src/sql/migrations/postgres/`, embedded in the library with [`sqlx::migrate!`]).
//!
//! ```no_run
//! # #[cfg(feature = "sqlite")]
//! # async fn start() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use grantor::sql::SqliteStore;
//! use grantor::{AuthorizationServer, Password};
//!
//! // Connects, creating the file if missing, and applies pending migrations.
//! let store = SqliteStore::connect("sqlite:/var/lib/auth/grantor.db").await?;
//! store.add_user("alice@example.com", &Password::new("alice-password-1")).await?;
//! let server = AuthorizationServer::builder()
//!     .issuer("https://auth.example")
//!     .clients(Arc::new(store.clone()))
//!     .users(Arc::new(store.clone()))
//!     .tokens(Arc::new(store.clone()))
//!     .build()?;
//! // …and now and then, say hourly:
//! store.purge_expired(grantor::UnixTime::from(std::time::SystemTime::now())).await?;
//! # Ok(()) }
//! ```
//!
//! # What is kept
//!
//! Codes and tokens only as SHA-256 digests ([`crate::SecretDigest`]), the primary keys every
//! lookup probes; client secrets as [`SecretVerifier::to_stored`] strings and passwords as
//! Argon2id PHC strings ([`crate::hash::hash_password`]). A database dump hands out nothing
//! usable.
//!
//! # Atomic single use, across nodes
//!
//! Each single-use step is one statement that changes a row only while it is still in the state
//! it expects, so the database itself picks exactly one winner, whichever node asks:
//!
//! - a code is consumed by `UPDATE grantor_codes SET redeemed = TRUE WHERE digest = $1 AND NOT
//!   redeemed AND … RETURNING …`; every other caller finds it redeemed and gets
//!   [`CodeRedemption::Replayed`] with its family. The redeemed row stays as a tombstone until an
//!   hour past the code's expiry, so late replays still revoke what was issued;
//! - a refresh token is rotated by `UPDATE grantor_families SET generation = generation + 1
//!   WHERE NOT revoked AND id = … AND generation = <the token's generation> RETURNING …`; a
//!   caller whose token is no longer its family's current generation revokes the family and
//!   gets [`Rotation::Reused`];
//! - revocation sets `grantor_families.revoked`, and every lookup joins the family and skips
//!   revoked ones, so a token whose family is revoked is never found again.
//!
//! Every step is a single autocommit statement: there are no explicit transactions, so no lock
//! is held across round trips (and on SQLite no read transaction is ever upgraded to a write,
//! which would fail with `SQLITE_BUSY` instead of waiting).
//!
//! # Indexes and purging
//!
//! Lookups on the request path are primary-key or unique-index probes (digest, family id,
//! client id, user id, lowercase username): O(log n). [`SqlStore::purge_expired`] deletes expired
//! codes (after their tombstone hour), tokens and families, and the rows of revoked families,
//! through indexes on `expires_at`, `forget_at` and `family_id` and a partial index on revoked
//! families; call it from a timer (say hourly). Expired rows are never *found* before that:
//! every lookup checks expiry itself.
//!
//! # Migrations
//!
//! [`SqlStore::connect`] applies pending migrations; [`SqlStore::from_pool`] does not, and
//! [`SqlStore::migrate`] applies them explicitly. Migrations are versioned (sqlx records them in
//! `_sqlx_migrations` and checks their checksums) and idempotent: running them again, from any
//! number of nodes at once, changes nothing (PostgreSQL serializes concurrent runs with an
//! advisory lock; on SQLite a run that loses the race retries once and finds everything
//! applied).
//!
//! # Failures
//!
//! A database that is down, a pool with no connection free within [`ACQUIRE_TIMEOUT`], a broken
//! connection or a busy SQLite file become [`StoreError::unavailable`] (503
//! `temporarily_unavailable` on the wire); anything else becomes [`StoreError::failed`] (500
//! `server_error`). The client sees no detail; grantor logs the cause through `tracing`. The pool
//! reconnects by itself once the database is back. Nothing here panics.
//!
//! # Queries are checked at run time
//!
//! The statements use [`sqlx::query()`], checked when they run (the test suite runs every one of
//! them against both databases), not sqlx's compile-time macros (`query!`), which need a live
//! database (`DATABASE_URL`) or prepared offline data at build time. So building grantor needs
//! no database.

use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::client::{Approval, Client, ClientId, GrantType, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::store::{Authorization, FamilyId, User};

pub use sqlx;

#[cfg(doc)]
use crate::store::{ClientStore, CodeRedemption, Rotation, TokenIssuer, UserStore};

#[cfg(feature = "postgres")]
use sqlx::Postgres;
#[cfg(feature = "sqlite")]
use sqlx::Sqlite;

/// How long a request waits for a pooled connection before the store answers
/// [`StoreError::unavailable`]: the bound on how long anything waits for a database that is down
/// or saturated.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a redeemed code is remembered after its expiry, so that a late replay still revokes
/// what the first redemption issued (RFC 6749 §4.1.2); the same as the in-memory issuer.
const REPLAY_MEMORY: Duration = Duration::from_secs(3600);

/// The three seams over a SQL database: `SqlStore<Sqlite>` (`SqliteStore`, feature `sqlite`)
/// or `SqlStore<Postgres>` (`PostgresStore`, feature `postgres`).
///
/// Cloning is cheap (the pool is shared), so one store can be handed to the builder as clients,
/// users and tokens at once.
pub struct SqlStore<DB: sqlx::Database> {
    pool: sqlx::Pool<DB>,
}

/// The stores on SQLite: for one node, nothing to install.
#[cfg(feature = "sqlite")]
pub type SqliteStore = SqlStore<Sqlite>;

/// The stores on PostgreSQL: for many identical nodes over one database.
#[cfg(feature = "postgres")]
pub type PostgresStore = SqlStore<Postgres>;

impl<DB: sqlx::Database> SqlStore<DB> {
    /// Wraps a pool the host configured itself (TLS, schema, pool size…). Applies no migrations:
    /// call [`SqlStore::migrate`]. Give the pool a short `acquire_timeout` (see
    /// [`ACQUIRE_TIMEOUT`]) so that requests fail fast while the database is down.
    pub fn from_pool(pool: sqlx::Pool<DB>) -> Self {
        Self { pool }
    }

    /// The connection pool, for the host's own queries, its metrics, or closing it.
    pub fn pool(&self) -> &sqlx::Pool<DB> {
        &self.pool
    }
}

impl<DB: sqlx::Database> Clone for SqlStore<DB> {
    fn clone(&self) -> Self {
        Self {
            pool: self.pool.clone(),
        }
    }
}

impl<DB: sqlx::Database> fmt::Debug for SqlStore<DB> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlStore")
            .field("database", &DB::NAME)
            .field("connections", &self.pool.size())
            .field("idle", &self.pool.num_idle())
            .finish()
    }
}

/// Why [`SqlStore::add_user`] or [`SqlStore::insert_user`] refused an account (the same
/// error as the in-memory store's).
pub use crate::store::AddUserError;

/// Every statement, shared by both databases (`$n` placeholders work on SQLite too).
mod text {
    pub(super) const FIND_CLIENT: &str = "SELECT client_id, name, secret_verifier, redirect_uris, \
        grant_types, scopes, default_scope, approval_required \
        FROM grantor_clients WHERE client_id = $1";
    pub(super) const UPSERT_CLIENT: &str = "INSERT INTO grantor_clients (client_id, name, \
        secret_verifier, redirect_uris, grant_types, scopes, default_scope, approval_required) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
        ON CONFLICT (client_id) DO UPDATE SET name = excluded.name, \
        secret_verifier = excluded.secret_verifier, redirect_uris = excluded.redirect_uris, \
        grant_types = excluded.grant_types, scopes = excluded.scopes, \
        default_scope = excluded.default_scope, approval_required = excluded.approval_required";
    pub(super) const DELETE_CLIENT: &str = "DELETE FROM grantor_clients WHERE client_id = $1";

    pub(super) const INSERT_USER: &str = "INSERT INTO grantor_users \
        (id, username, username_key, password_hash) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
    pub(super) const FIND_USER_BY_KEY: &str =
        "SELECT id, username, password_hash FROM grantor_users WHERE username_key = $1";
    pub(super) const FIND_USER_BY_ID: &str = "SELECT id, username FROM grantor_users WHERE id = $1";

    pub(super) const INSERT_FAMILY: &str = "INSERT INTO grantor_families \
        (id, client_id, user_id, username, scope, expires_at) VALUES ($1, $2, $3, $4, $5, $6)";
    /// Extends an existing family to `$2` and answers its current refresh generation.
    pub(super) const EXTEND_FAMILY: &str = "UPDATE grantor_families \
        SET expires_at = CASE WHEN expires_at < $2 THEN $2 ELSE expires_at END \
        WHERE id = $1 RETURNING generation";
    pub(super) const REVOKE_FAMILY: &str =
        "UPDATE grantor_families SET revoked = TRUE WHERE id = $1";

    pub(super) const INSERT_CODE: &str = "INSERT INTO grantor_codes (digest, family_id, \
        client_id, user_id, username, scope, redirect_uri, code_challenge, code_challenge_method, \
        issued_at, expires_at, forget_at) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
    /// The single-use step: succeeds for exactly one caller.
    pub(super) const REDEEM_CODE: &str = "UPDATE grantor_codes SET redeemed = TRUE \
        WHERE digest = $1 AND NOT redeemed AND expires_at > $2 \
        AND EXISTS (SELECT 1 FROM grantor_families f \
                    WHERE f.id = grantor_codes.family_id AND NOT f.revoked) \
        RETURNING family_id, client_id, user_id, username, scope, redirect_uri, code_challenge, \
        code_challenge_method, issued_at, expires_at";
    pub(super) const CODE_STATE: &str =
        "SELECT family_id, redeemed FROM grantor_codes WHERE digest = $1";

    pub(super) const INSERT_ACCESS: &str = "INSERT INTO grantor_access_tokens \
        (digest, family_id, scope, jti, issued_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)";
    pub(super) const FIND_ACCESS: &str = "SELECT f.id, f.client_id, f.user_id, f.username, \
        a.scope, a.jti, a.issued_at, a.expires_at \
        FROM grantor_access_tokens a JOIN grantor_families f ON f.id = a.family_id \
        WHERE a.digest = $1 AND a.expires_at > $2 AND NOT f.revoked";
    pub(super) const DELETE_ACCESS: &str = "DELETE FROM grantor_access_tokens WHERE digest = $1";

    pub(super) const INSERT_REFRESH: &str = "INSERT INTO grantor_refresh_tokens \
        (digest, family_id, generation, issued_at, expires_at) VALUES ($1, $2, $3, $4, $5)";
    pub(super) const FIND_REFRESH: &str = "SELECT f.id, f.client_id, f.user_id, f.username, \
        f.scope, r.generation, f.generation, r.issued_at, r.expires_at \
        FROM grantor_refresh_tokens r JOIN grantor_families f ON f.id = r.family_id \
        WHERE r.digest = $1 AND r.expires_at > $2 AND NOT f.revoked";
    /// The single-use step of rotation: moves the family past the presented token's generation
    /// while that is still the current one; succeeds for exactly one caller per token.
    pub(super) const ROTATE: &str = "UPDATE grantor_families \
        SET generation = generation + 1, \
            expires_at = CASE WHEN expires_at < $3 THEN $3 ELSE expires_at END \
        WHERE NOT revoked \
        AND id = (SELECT family_id FROM grantor_refresh_tokens \
                  WHERE digest = $1 AND expires_at > $2) \
        AND generation = (SELECT generation FROM grantor_refresh_tokens WHERE digest = $1) \
        RETURNING id, client_id, user_id, username, scope, generation";
    pub(super) const REFRESH_STATE: &str = "SELECT f.id, r.generation, f.generation \
        FROM grantor_refresh_tokens r JOIN grantor_families f ON f.id = r.family_id \
        WHERE r.digest = $1 AND r.expires_at > $2 AND NOT f.revoked";

    /// `purge_expired`, in this order; each binds `$1` = now (or none).
    pub(super) const PURGE: [&str; 9] = [
        "DELETE FROM grantor_access_tokens WHERE expires_at <= $1",
        "DELETE FROM grantor_access_tokens \
         WHERE family_id IN (SELECT id FROM grantor_families WHERE revoked)",
        "DELETE FROM grantor_refresh_tokens WHERE expires_at <= $1",
        "DELETE FROM grantor_refresh_tokens \
         WHERE family_id IN (SELECT id FROM grantor_families WHERE revoked)",
        "DELETE FROM grantor_codes WHERE forget_at <= $1",
        "DELETE FROM grantor_codes WHERE expires_at <= $1 AND NOT redeemed",
        "DELETE FROM grantor_codes WHERE NOT redeemed \
         AND family_id IN (SELECT id FROM grantor_families WHERE revoked)",
        "DELETE FROM grantor_families WHERE expires_at <= $1",
        "DELETE FROM grantor_families WHERE revoked",
    ];
}

/// Maps a sqlx error to the store's two kinds; `transient` says which database error codes
/// (SQLSTATE or SQLite result codes) mean "try again later".
fn store_error(error: sqlx::Error, transient: fn(&str) -> bool) -> StoreError {
    let unavailable = match &error {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| transient(&code)),
        _ => false,
    };
    if unavailable {
        StoreError::unavailable(error)
    } else {
        StoreError::failed(error)
    }
}

fn migrate_error(error: sqlx::migrate::MigrateError, transient: fn(&str) -> bool) -> StoreError {
    match error {
        sqlx::migrate::MigrateError::Execute(error) => store_error(error, transient),
        other => StoreError::failed(other),
    }
}

fn corrupt(what: &str) -> StoreError {
    StoreError::failed(format!("the database holds a malformed {what}"))
}

/// Unix seconds as a column value (saturating: far-future times stay far in the future).
fn secs(time: UnixTime) -> i64 {
    i64::try_from(time.as_secs()).unwrap_or(i64::MAX)
}

fn time(secs: i64) -> UnixTime {
    UnixTime::from_secs(u64::try_from(secs).unwrap_or(0))
}

fn family_key(family: FamilyId) -> [u8; 16] {
    family.0.to_be_bytes()
}

fn family_id(bytes: &[u8]) -> Result<FamilyId, StoreError> {
    let bytes = <[u8; 16]>::try_from(bytes).map_err(|_| corrupt("family id"))?;
    Ok(FamilyId(u128::from_be_bytes(bytes)))
}

fn new_family_id() -> Result<FamilyId, StoreError> {
    Ok(FamilyId(u128::from_be_bytes(
        crate::secret::random_bytes::<16>()?,
    )))
}

fn scope(text: &str) -> Result<Scope, StoreError> {
    Scope::parse(text).map_err(|_| corrupt("scope"))
}

fn authorization(
    client_id: &str,
    user_id: Option<String>,
    username: Option<String>,
    scope_text: &str,
) -> Result<Authorization, StoreError> {
    let user = match (user_id, username) {
        (Some(id), Some(username)) => Some(User::new(crate::store::UserId::new(id), username)),
        (None, None) => None,
        _ => return Err(corrupt("user reference")),
    };
    Ok(Authorization {
        client_id: ClientId::new(client_id).map_err(|_| corrupt("client id"))?,
        user,
        scope: scope(scope_text)?,
    })
}

/// The columns of an authorization: client id, user id, username, scope.
fn authorization_columns(a: &Authorization) -> (&str, Option<&str>, Option<&str>, &str) {
    let user = a.user.as_ref();
    (
        a.client_id.as_str(),
        user.map(|u| u.id().as_str()),
        user.map(|u| u.username()),
        a.scope.as_str(),
    )
}

fn new_jti() -> Result<String, StoreError> {
    Ok(URL_SAFE_NO_PAD.encode(crate::secret::random_bytes::<16>()?))
}

fn code_challenge(
    challenge: Option<String>,
    method: Option<String>,
) -> Result<Option<CodeChallenge>, StoreError> {
    match (challenge, method) {
        (None, None) => Ok(None),
        (Some(challenge), Some(method)) => CodeChallenge::new(&challenge, Some(&method), true)
            .map(Some)
            .map_err(|_| corrupt("code challenge")),
        _ => Err(corrupt("code challenge")),
    }
}

/// A client as its row's columns.
struct ClientColumns {
    secret_verifier: Option<String>,
    redirect_uris: String,
    grant_types: String,
    approval_required: bool,
}

impl ClientColumns {
    fn of(client: &Client) -> Self {
        let grant_types: Vec<&str> = GrantType::ALL
            .iter()
            .filter(|g| client.allows(**g))
            .map(|g| g.as_str())
            .collect();
        Self {
            secret_verifier: client.secret().map(SecretVerifier::to_stored),
            // A JSON array of strings cannot fail to serialize.
            redirect_uris: serde_json::to_string(client.redirect_uris()).unwrap_or_default(),
            grant_types: grant_types.join(" "),
            approval_required: client.approval() == Approval::Required,
        }
    }
}

/// A client rebuilt from its row's columns, through the same checks as at registration.
#[allow(clippy::too_many_arguments)]
fn client_from_columns(
    client_id: &str,
    name: String,
    secret_verifier: Option<String>,
    redirect_uris: &str,
    grant_types: &str,
    scopes: String,
    default_scope: String,
    approval_required: bool,
) -> Result<Client, StoreError> {
    let builder = match secret_verifier {
        Some(stored) => Client::confidential(
            client_id,
            SecretVerifier::from_stored(&stored).map_err(|_| corrupt("secret verifier"))?,
        ),
        None => Client::public(client_id),
    };
    let uris: Vec<String> =
        serde_json::from_str(redirect_uris).map_err(|_| corrupt("redirect URI list"))?;
    let grants = grant_types
        .split_whitespace()
        .map(|name| {
            GrantType::ALL
                .into_iter()
                .find(|g| g.as_str() == name)
                .ok_or_else(|| corrupt("grant type"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    uris.into_iter()
        .fold(builder, |b, uri| b.redirect_uri(uri))
        .name(name)
        .grant_types(grants)
        .scopes(scopes)
        .default_scope(default_scope)
        .approval(if approval_required {
            Approval::Required
        } else {
            Approval::NotRequired
        })
        .build()
        .map_err(|e| StoreError::failed(format!("a stored client is invalid: {e}")))
}

/// Implements the store for one database type. The bodies are identical for both databases;
/// they differ only in their migrator and in which error codes mean "try again later".
macro_rules! sql_store {
    ($db:ty, $migrator:expr, $transient:expr) => {
        impl $crate::sql::SqlStore<$db> {
            /// Applies pending migrations (versioned, idempotent; safe to run from many nodes at
            /// once).
            pub async fn migrate(&self) -> Result<(), $crate::error::StoreError> {
                let first = $migrator.run(&self.pool).await;
                match first {
                    Ok(()) => Ok(()),
                    // Another process may have applied the same migration between our check
                    // and our insert (SQLite has no migration lock): look again.
                    Err(_) => $migrator
                        .run(&self.pool)
                        .await
                        .map_err(|e| $crate::sql::migrate_error(e, $transient)),
                }
            }

            /// Deletes expired codes (an hour past their expiry, once no replay needs them),
            /// expired tokens, families with nothing live left, and everything of revoked
            /// families; answers how many rows went. Call it now and then (say hourly); lookups
            /// never find expired rows anyway.
            pub async fn purge_expired(
                &self,
                now: $crate::clock::UnixTime,
            ) -> Result<u64, $crate::error::StoreError> {
                let mut deleted = 0;
                for statement in $crate::sql::text::PURGE {
                    let query = sqlx::query(statement);
                    let query = if statement.contains("$1") {
                        query.bind($crate::sql::secs(now))
                    } else {
                        query
                    };
                    deleted += query
                        .execute(&self.pool)
                        .await
                        .map_err(Self::error)?
                        .rows_affected();
                }
                Ok(deleted)
            }

            /// Registers `client`, replacing any client with the same id. Only its secret's
            /// verifier is stored ([`SecretVerifier::to_stored`](crate::SecretVerifier::to_stored)).
            pub async fn insert_client(
                &self,
                client: &$crate::client::Client,
            ) -> Result<(), $crate::error::StoreError> {
                let columns = $crate::sql::ClientColumns::of(client);
                sqlx::query($crate::sql::text::UPSERT_CLIENT)
                    .bind(client.id().as_str())
                    .bind(client.name())
                    .bind(columns.secret_verifier)
                    .bind(columns.redirect_uris)
                    .bind(columns.grant_types)
                    .bind(client.scopes().as_str())
                    .bind(client.default_scope().as_str())
                    .bind(columns.approval_required)
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(())
            }

            /// Removes the client registered under `client_id`; answers whether there was one.
            pub async fn remove_client(
                &self,
                client_id: &str,
            ) -> Result<bool, $crate::error::StoreError> {
                let done = sqlx::query($crate::sql::text::DELETE_CLIENT)
                    .bind(client_id)
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(done.rows_affected() > 0)
            }

            /// Adds an account with a random id, hashing `password` with Argon2id on grantor's
            /// hashing threads (slow by design). Usernames are email addresses, unique in any
            /// case.
            pub async fn add_user(
                &self,
                username: &str,
                password: &$crate::secret::Password,
            ) -> Result<$crate::store::User, $crate::sql::AddUserError> {
                if $crate::store::username_key(username).is_none() {
                    return Err($crate::sql::AddUserError::InvalidUsername);
                }
                let id = $crate::store::UserId::new($crate::sql::new_jti()?);
                let secret = password.expose_secret().to_owned();
                let phc = $crate::hash::run_blocking(move || $crate::hash::hash_password(&secret))
                    .await??;
                self.insert_user(&$crate::store::User::new(id, username), &phc)
                    .await
            }

            /// Adds an account whose Argon2id hash (a PHC string) the host already has.
            pub async fn insert_user(
                &self,
                user: &$crate::store::User,
                password_hash: &str,
            ) -> Result<$crate::store::User, $crate::sql::AddUserError> {
                let key = $crate::store::username_key(user.username())
                    .ok_or($crate::sql::AddUserError::InvalidUsername)?;
                let done = sqlx::query($crate::sql::text::INSERT_USER)
                    .bind(user.id().as_str())
                    .bind(user.username())
                    .bind(key)
                    .bind(password_hash)
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                if done.rows_affected() == 0 {
                    return Err($crate::sql::AddUserError::Taken);
                }
                Ok(user.clone())
            }

            fn error(error: sqlx::Error) -> $crate::error::StoreError {
                $crate::sql::store_error(error, $transient)
            }

            /// Mints an access token, and a refresh token of `generation` when asked, in
            /// `family` (which already covers their expiry).
            async fn mint(
                &self,
                family: $crate::store::FamilyId,
                access_scope: $crate::scope::Scope,
                issued_at: $crate::clock::UnixTime,
                access_expires_at: $crate::clock::UnixTime,
                refresh: Option<(i64, $crate::clock::UnixTime)>,
            ) -> Result<$crate::store::IssuedTokens, $crate::error::StoreError> {
                use $crate::secret::{AccessToken, RefreshToken, random_secret};
                let key = $crate::sql::family_key(family);
                let access_token = AccessToken::new(random_secret()?);
                let jti = $crate::sql::new_jti()?;
                sqlx::query($crate::sql::text::INSERT_ACCESS)
                    .bind(&access_token.digest().as_bytes()[..])
                    .bind(&key[..])
                    .bind(access_scope.as_str())
                    .bind(&jti)
                    .bind($crate::sql::secs(issued_at))
                    .bind($crate::sql::secs(access_expires_at))
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let refresh_token = match refresh {
                    None => None,
                    Some((generation, expires_at)) => {
                        let token = RefreshToken::new(random_secret()?);
                        sqlx::query($crate::sql::text::INSERT_REFRESH)
                            .bind(&token.digest().as_bytes()[..])
                            .bind(&key[..])
                            .bind(generation)
                            .bind($crate::sql::secs(issued_at))
                            .bind($crate::sql::secs(expires_at))
                            .execute(&self.pool)
                            .await
                            .map_err(Self::error)?;
                        Some(token)
                    }
                };
                Ok($crate::store::IssuedTokens {
                    access_token,
                    jti,
                    refresh_token,
                    scope: access_scope,
                    family,
                })
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::ClientStore for $crate::sql::SqlStore<$db> {
            async fn find_client(
                &self,
                client_id: &str,
            ) -> Result<Option<std::sync::Arc<$crate::client::Client>>, $crate::error::StoreError>
            {
                use sqlx::Row as _;
                let Some(row) = sqlx::query($crate::sql::text::FIND_CLIENT)
                    .bind(client_id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?
                else {
                    return Ok(None);
                };
                let get = |e: sqlx::Error| Self::error(e);
                let id: String = row.try_get(0).map_err(get)?;
                let client = $crate::sql::client_from_columns(
                    &id,
                    row.try_get(1).map_err(get)?,
                    row.try_get(2).map_err(get)?,
                    &row.try_get::<String, _>(3).map_err(get)?,
                    &row.try_get::<String, _>(4).map_err(get)?,
                    row.try_get(5).map_err(get)?,
                    row.try_get(6).map_err(get)?,
                    row.try_get(7).map_err(get)?,
                )?;
                Ok(Some(std::sync::Arc::new(client)))
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::UserStore for $crate::sql::SqlStore<$db> {
            async fn authenticate(
                &self,
                username: &str,
                password: &$crate::secret::Password,
            ) -> Result<Option<$crate::store::User>, $crate::error::StoreError> {
                use sqlx::Row as _;
                let found = match $crate::store::username_key(username) {
                    None => None,
                    Some(key) => sqlx::query($crate::sql::text::FIND_USER_BY_KEY)
                        .bind(key)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(Self::error)?,
                };
                let Some(row) = found else {
                    $crate::hash::verify_against_dummy(password.expose_secret()).await?;
                    return Ok(None);
                };
                let id: String = row.try_get(0).map_err(Self::error)?;
                let name: String = row.try_get(1).map_err(Self::error)?;
                let phc: String = row.try_get(2).map_err(Self::error)?;
                let verified =
                    $crate::hash::verify_password(&phc, password.expose_secret()).await?;
                Ok(
                    verified
                        .then(|| $crate::store::User::new($crate::store::UserId::new(id), name)),
                )
            }

            async fn find_user(
                &self,
                id: &$crate::store::UserId,
            ) -> Result<Option<$crate::store::User>, $crate::error::StoreError> {
                use sqlx::Row as _;
                let row = sqlx::query($crate::sql::text::FIND_USER_BY_ID)
                    .bind(id.as_str())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                row.map(|row| {
                    let id: String = row.try_get(0)?;
                    let name: String = row.try_get(1)?;
                    Ok($crate::store::User::new(
                        $crate::store::UserId::new(id),
                        name,
                    ))
                })
                .transpose()
                .map_err(Self::error)
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::TokenIssuer for $crate::sql::SqlStore<$db> {
            async fn issue_code(
                &self,
                grant: $crate::store::CodeGrant,
            ) -> Result<$crate::secret::AuthorizationCode, $crate::error::StoreError> {
                let code = $crate::secret::AuthorizationCode::new($crate::secret::random_secret()?);
                let family = $crate::sql::new_family_id()?;
                let key = $crate::sql::family_key(family);
                let forget_at = grant.expires_at.plus($crate::sql::REPLAY_MEMORY);
                let (client_id, user_id, username, scope) =
                    $crate::sql::authorization_columns(&grant.authorization);
                // The family first: a code without its family would be refused as revoked.
                sqlx::query($crate::sql::text::INSERT_FAMILY)
                    .bind(&key[..])
                    .bind(client_id)
                    .bind(user_id)
                    .bind(username)
                    .bind(scope)
                    .bind($crate::sql::secs(forget_at))
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let challenge = grant.code_challenge.as_ref();
                sqlx::query($crate::sql::text::INSERT_CODE)
                    .bind(&code.digest().as_bytes()[..])
                    .bind(&key[..])
                    .bind(client_id)
                    .bind(user_id)
                    .bind(username)
                    .bind(scope)
                    .bind(grant.redirect_uri.as_str())
                    .bind(challenge.map(|c| c.as_str()))
                    .bind(challenge.map(|c| c.method().as_str()))
                    .bind($crate::sql::secs(grant.issued_at))
                    .bind($crate::sql::secs(grant.expires_at))
                    .bind($crate::sql::secs(forget_at))
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(code)
            }

            async fn redeem_code(
                &self,
                code: &$crate::secret::AuthorizationCode,
                now: $crate::clock::UnixTime,
            ) -> Result<$crate::store::CodeRedemption, $crate::error::StoreError> {
                use sqlx::Row as _;
                use $crate::store::CodeRedemption;
                let digest = code.digest();
                let redeemed = sqlx::query($crate::sql::text::REDEEM_CODE)
                    .bind(&digest.as_bytes()[..])
                    .bind($crate::sql::secs(now))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                if let Some(row) = redeemed {
                    let decode = || -> Result<_, sqlx::Error> {
                        Ok((
                            row.try_get::<Vec<u8>, _>(0)?,
                            row.try_get::<String, _>(1)?,
                            row.try_get::<Option<String>, _>(2)?,
                            row.try_get::<Option<String>, _>(3)?,
                            row.try_get::<String, _>(4)?,
                            row.try_get::<String, _>(5)?,
                            row.try_get::<Option<String>, _>(6)?,
                            row.try_get::<Option<String>, _>(7)?,
                            row.try_get::<i64, _>(8)?,
                            row.try_get::<i64, _>(9)?,
                        ))
                    };
                    let (
                        family,
                        client_id,
                        user_id,
                        username,
                        scope,
                        redirect_uri,
                        challenge,
                        method,
                        issued_at,
                        expires_at,
                    ) = decode().map_err(Self::error)?;
                    let grant = $crate::store::CodeGrant {
                        authorization: $crate::sql::authorization(
                            &client_id, user_id, username, &scope,
                        )?,
                        redirect_uri,
                        code_challenge: $crate::sql::code_challenge(challenge, method)?,
                        issued_at: $crate::sql::time(issued_at),
                        expires_at: $crate::sql::time(expires_at),
                    };
                    return Ok(CodeRedemption::Redeemed {
                        grant,
                        family: $crate::sql::family_id(&family)?,
                    });
                }
                // Not ours: redeemed before (a replay), or unknown, expired or revoked.
                let seen = sqlx::query($crate::sql::text::CODE_STATE)
                    .bind(&digest.as_bytes()[..])
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let Some(row) = seen else {
                    return Ok(CodeRedemption::Invalid);
                };
                let family: Vec<u8> = row.try_get(0).map_err(Self::error)?;
                let redeemed: bool = row.try_get(1).map_err(Self::error)?;
                Ok(if redeemed {
                    CodeRedemption::Replayed {
                        family: $crate::sql::family_id(&family)?,
                    }
                } else {
                    CodeRedemption::Invalid
                })
            }

            async fn issue_tokens(
                &self,
                request: $crate::store::NewTokens,
            ) -> Result<$crate::store::IssuedTokens, $crate::error::StoreError> {
                use sqlx::Row as _;
                let until = request
                    .refresh_expires_at
                    .map_or(request.access_expires_at, |r| {
                        r.max(request.access_expires_at)
                    });
                let (family, generation) = match request.family {
                    Some(family) => {
                        let key = $crate::sql::family_key(family);
                        let row = sqlx::query($crate::sql::text::EXTEND_FAMILY)
                            .bind(&key[..])
                            .bind($crate::sql::secs(until))
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(Self::error)?
                            .ok_or_else(|| {
                                $crate::error::StoreError::failed(
                                    "tokens asked for an unknown family",
                                )
                            })?;
                        (family, row.try_get::<i64, _>(0).map_err(Self::error)?)
                    }
                    None => {
                        let family = $crate::sql::new_family_id()?;
                        let key = $crate::sql::family_key(family);
                        let (client_id, user_id, username, scope) =
                            $crate::sql::authorization_columns(&request.authorization);
                        sqlx::query($crate::sql::text::INSERT_FAMILY)
                            .bind(&key[..])
                            .bind(client_id)
                            .bind(user_id)
                            .bind(username)
                            .bind(scope)
                            .bind($crate::sql::secs(until))
                            .execute(&self.pool)
                            .await
                            .map_err(Self::error)?;
                        (family, 0)
                    }
                };
                self.mint(
                    family,
                    request.authorization.scope,
                    request.issued_at,
                    request.access_expires_at,
                    request.refresh_expires_at.map(|at| (generation, at)),
                )
                .await
            }

            async fn find_refresh_token(
                &self,
                token: &$crate::secret::RefreshToken,
                now: $crate::clock::UnixTime,
            ) -> Result<Option<$crate::store::RefreshGrant>, $crate::error::StoreError> {
                use sqlx::Row as _;
                let row = sqlx::query($crate::sql::text::FIND_REFRESH)
                    .bind(&token.digest().as_bytes()[..])
                    .bind($crate::sql::secs(now))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let Some(row) = row else {
                    return Ok(None);
                };
                let decode = || -> Result<_, sqlx::Error> {
                    Ok((
                        row.try_get::<Vec<u8>, _>(0)?,
                        row.try_get::<String, _>(1)?,
                        row.try_get::<Option<String>, _>(2)?,
                        row.try_get::<Option<String>, _>(3)?,
                        row.try_get::<String, _>(4)?,
                        row.try_get::<i64, _>(5)?,
                        row.try_get::<i64, _>(6)?,
                        row.try_get::<i64, _>(7)?,
                        row.try_get::<i64, _>(8)?,
                    ))
                };
                let (family, client_id, user_id, username, scope, own, current, issued, expires) =
                    decode().map_err(Self::error)?;
                Ok(Some($crate::store::RefreshGrant {
                    authorization: $crate::sql::authorization(
                        &client_id, user_id, username, &scope,
                    )?,
                    family: $crate::sql::family_id(&family)?,
                    rotated: own != current,
                    issued_at: $crate::sql::time(issued),
                    expires_at: $crate::sql::time(expires),
                }))
            }

            async fn rotate_refresh_token(
                &self,
                token: &$crate::secret::RefreshToken,
                request: $crate::store::Refresh,
            ) -> Result<$crate::store::Rotation, $crate::error::StoreError> {
                use sqlx::Row as _;
                use $crate::store::Rotation;
                let digest = token.digest();
                let now = $crate::sql::secs(request.issued_at);
                let until = request.refresh_expires_at.max(request.access_expires_at);
                let rotated = sqlx::query($crate::sql::text::ROTATE)
                    .bind(&digest.as_bytes()[..])
                    .bind(now)
                    .bind($crate::sql::secs(until))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                if let Some(row) = rotated {
                    let family: Vec<u8> = row.try_get(0).map_err(Self::error)?;
                    let generation: i64 = row.try_get(5).map_err(Self::error)?;
                    let tokens = self
                        .mint(
                            $crate::sql::family_id(&family)?,
                            request.access_scope,
                            request.issued_at,
                            request.access_expires_at,
                            Some((generation, request.refresh_expires_at)),
                        )
                        .await?;
                    return Ok(Rotation::Rotated(tokens));
                }
                // Not ours: rotated before (reuse), or unknown, expired or revoked.
                let seen = sqlx::query($crate::sql::text::REFRESH_STATE)
                    .bind(&digest.as_bytes()[..])
                    .bind(now)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let Some(row) = seen else {
                    return Ok(Rotation::Invalid);
                };
                let family: Vec<u8> = row.try_get(0).map_err(Self::error)?;
                let own: i64 = row.try_get(1).map_err(Self::error)?;
                let current: i64 = row.try_get(2).map_err(Self::error)?;
                if own == current {
                    // The family was current but the rotation did not take: it was revoked or
                    // the token expired in between. Either way, not usable.
                    return Ok(Rotation::Invalid);
                }
                sqlx::query($crate::sql::text::REVOKE_FAMILY)
                    .bind(&family[..])
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(Rotation::Reused)
            }

            async fn find_access_token(
                &self,
                token: &$crate::secret::AccessToken,
                now: $crate::clock::UnixTime,
            ) -> Result<Option<$crate::store::AccessGrant>, $crate::error::StoreError> {
                use sqlx::Row as _;
                let row = sqlx::query($crate::sql::text::FIND_ACCESS)
                    .bind(&token.digest().as_bytes()[..])
                    .bind($crate::sql::secs(now))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let Some(row) = row else {
                    return Ok(None);
                };
                let decode = || -> Result<_, sqlx::Error> {
                    Ok((
                        row.try_get::<Vec<u8>, _>(0)?,
                        row.try_get::<String, _>(1)?,
                        row.try_get::<Option<String>, _>(2)?,
                        row.try_get::<Option<String>, _>(3)?,
                        row.try_get::<String, _>(4)?,
                        row.try_get::<String, _>(5)?,
                        row.try_get::<i64, _>(6)?,
                        row.try_get::<i64, _>(7)?,
                    ))
                };
                let (family, client_id, user_id, username, scope, jti, issued, expires) =
                    decode().map_err(Self::error)?;
                Ok(Some($crate::store::AccessGrant {
                    authorization: $crate::sql::authorization(
                        &client_id, user_id, username, &scope,
                    )?,
                    jti,
                    family: $crate::sql::family_id(&family)?,
                    issued_at: $crate::sql::time(issued),
                    expires_at: $crate::sql::time(expires),
                }))
            }

            async fn revoke_access_token(
                &self,
                token: &$crate::secret::AccessToken,
            ) -> Result<(), $crate::error::StoreError> {
                sqlx::query($crate::sql::text::DELETE_ACCESS)
                    .bind(&token.digest().as_bytes()[..])
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(())
            }

            async fn revoke_family(
                &self,
                family: $crate::store::FamilyId,
            ) -> Result<(), $crate::error::StoreError> {
                let key = $crate::sql::family_key(family);
                sqlx::query($crate::sql::text::REVOKE_FAMILY)
                    .bind(&key[..])
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(())
            }
        }
    };
}

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
