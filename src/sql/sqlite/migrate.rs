//! The SQLite schema's migrations (`src/sql/migrations/sqlite/`, embedded at build time), kept
//! in the `_sqlx_migrations` table as earlier versions of grantor kept them (version,
//! description, SHA-384 checksum of the SQL), so a database file any version made carries on.
//!
//! Each pending migration runs with its bookkeeping row in one `BEGIN IMMEDIATE` transaction,
//! which also serializes concurrent runs from several processes: the one that waited finds the
//! migration recorded and skips it. A recorded migration whose checksum differs from the one
//! embedded, or a recorded one that failed halfway, is refused rather than guessed at; a
//! database a newer build migrated is used as it is (grantor's migrations add columns, tables
//! and indexes, so an older build runs on a newer schema: a rolling deploy, a rollback).
//!
//! Two migrations do more: 21 lays the families and access tokens out in the order they are
//! issued (new tables, the live rows copied), and a build from before it cannot use them; 22
//! keeps an access token issued alone in one row without a family row (the access token table
//! rebuilt, its rows copied), and a build from before it does not find such tokens. A rollback
//! past either needs the database file as it was before it.

use rusqlite::{Connection, OptionalExtension as _};
use sha2::{Digest as _, Sha384};

use super::query::store_error;
use crate::error::StoreError;

/// One migration: its version, the file name's description, and its SQL.
struct Migration {
    version: i64,
    description: &'static str,
    sql: &'static str,
}

macro_rules! migrations {
    ($($version:literal $file:literal $description:literal),* $(,)?) => {
        &[$(Migration {
            version: $version,
            description: $description,
            sql: include_str!(concat!("../migrations/sqlite/", $file)),
        }),*]
    };
}

/// Every migration, in order; a test checks the list against the directory.
static MIGRATIONS: &[Migration] = migrations![
    1 "0001_grantor_stores.sql" "grantor stores",
    2 "0002_grantor_shared_state.sql" "grantor shared state",
    3 "0003_grantor_refresh_retries.sql" "grantor refresh retries",
    4 "0004_grantor_resource_servers.sql" "grantor resource servers",
    5 "0005_grantor_resources.sql" "grantor resources",
    6 "0006_grantor_registration.sql" "grantor registration",
    7 "0007_grantor_dpop.sql" "grantor dpop",
    8 "0008_grantor_secret_rotation.sql" "grantor secret rotation",
    9 "0009_grantor_client_keys.sql" "grantor client keys",
    10 "0010_grantor_token_exchange.sql" "grantor token exchange",
    11 "0011_grantor_pushed_requests.sql" "grantor pushed requests",
    12 "0012_grantor_keys.sql" "grantor keys",
    13 "0013_grantor_families_by_client.sql" "grantor families by client",
    14 "0014_grantor_openid.sql" "grantor openid",
    15 "0015_grantor_sign_on.sql" "grantor sign on",
    16 "0016_grantor_dpop_codes.sql" "grantor dpop codes",
    17 "0017_grantor_user_authentication.sql" "grantor user authentication",
    18 "0018_grantor_consent_resources.sql" "grantor consent resources",
    19 "0019_grantor_single_use_kinds.sql" "grantor single use kinds",
    20 "0020_grantor_client_activity.sql" "grantor client activity",
    21 "0021_grantor_tokens_by_issue.sql" "grantor tokens by issue",
    22 "0022_grantor_lone_access_tokens.sql" "grantor lone access tokens",
];

/// The bookkeeping table, as earlier versions made it.
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS _sqlx_migrations (
    version BIGINT PRIMARY KEY,
    description TEXT NOT NULL,
    installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    success BOOLEAN NOT NULL,
    checksum BLOB NOT NULL,
    execution_time BIGINT NOT NULL
)";

fn refuse(why: String) -> StoreError {
    StoreError::failed(format!("cannot migrate the SQLite database: {why}"))
}

/// Applies every pending migration on `conn`.
pub(super) fn run(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(CREATE_TABLE).map_err(store_error)?;
    for migration in MIGRATIONS {
        apply(conn, migration)?;
    }
    let newest = newest(conn)?;
    let known = latest();
    if newest > known {
        // A newer build migrated it; grantor's migrations since 21 only add, so this build
        // carries on.
        tracing::warn!(
            newest,
            known,
            "the SQLite database has migrations this build lacks"
        );
    }
    Ok(())
}

/// Refuses a database whose schema lacks a migration this build needs.
pub(super) fn check(conn: &Connection) -> Result<(), StoreError> {
    let known: bool = conn
        .query_row(
            "SELECT COUNT(*) > 0 FROM sqlite_master WHERE name = '_sqlx_migrations'",
            [],
            |row| row.get(0),
        )
        .map_err(store_error)?;
    if !known {
        return Err(StoreError::failed(
            "the database has no grantor schema: run `grantor migrate` first",
        ));
    }
    crate::sql::bounds::check_version(newest(conn)?, latest())
}

/// The newest migration the database has applied (0 for none).
fn newest(conn: &Connection) -> Result<i64, StoreError> {
    let newest: Option<i64> = conn
        .query_row(
            "SELECT MAX(version) FROM _sqlx_migrations WHERE success",
            [],
            |row| row.get(0),
        )
        .map_err(store_error)?;
    Ok(newest.unwrap_or(0))
}

/// The newest migration this build has.
fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Applies the migrations up to `version` alone, as a build of that schema did.
#[cfg(test)]
pub(super) fn run_through(conn: &Connection, version: i64) -> Result<(), StoreError> {
    conn.execute_batch(CREATE_TABLE).map_err(store_error)?;
    MIGRATIONS
        .iter()
        .take_while(|migration| migration.version <= version)
        .try_for_each(|migration| apply(conn, migration))
}

/// Applies `migration` unless it is recorded, with its record, in one transaction.
fn apply(conn: &Connection, migration: &Migration) -> Result<(), StoreError> {
    let checksum = Sha384::digest(migration.sql.as_bytes());
    conn.execute_batch("BEGIN IMMEDIATE").map_err(store_error)?;
    let applied = (|| {
        let recorded: Option<(bool, Vec<u8>)> = conn
            .query_row(
                "SELECT success, checksum FROM _sqlx_migrations WHERE version = ?1",
                [migration.version],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(store_error)?;
        match recorded {
            Some((false, _)) => Err(refuse(format!(
                "migration {} was left half-applied",
                migration.version
            ))),
            Some((true, stored)) if stored.as_slice() != checksum.as_slice() => {
                Err(refuse(format!(
                    "migration {} was changed after it was applied",
                    migration.version
                )))
            }
            Some((true, _)) => Ok(()),
            None => {
                conn.execute_batch(migration.sql).map_err(store_error)?;
                conn.execute(
                    "INSERT INTO _sqlx_migrations \
                     (version, description, success, checksum, execution_time) \
                     VALUES (?1, ?2, TRUE, ?3, -1)",
                    rusqlite::params![
                        migration.version,
                        migration.description,
                        checksum.as_slice()
                    ],
                )
                .map_err(store_error)?;
                Ok(())
            }
        }
    })();
    match applied {
        Ok(()) => conn.execute_batch("COMMIT").map_err(store_error),
        Err(error) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    /// The embedded list is the directory's, in order, with sqlx's descriptions (the file
    /// name after the version, underscores as spaces).
    #[test]
    fn the_list_is_the_directory() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/sql/migrations/sqlite");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .expect("the migrations directory")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .into_string()
                    .expect("UTF-8")
            })
            .filter(|name| name.ends_with(".sql"))
            .collect();
        files.sort();
        assert_eq!(files.len(), MIGRATIONS.len(), "{files:?}");
        for (file, migration) in files.iter().zip(MIGRATIONS) {
            let (version, rest) = file.split_once('_').expect("VERSION_description.sql");
            assert_eq!(
                version.parse::<i64>().expect("a version"),
                migration.version
            );
            let description = rest.trim_end_matches(".sql").replace('_', " ");
            assert_eq!(description, migration.description);
            let sql = std::fs::read_to_string(format!("{dir}/{file}")).expect("the file");
            assert_eq!(sql, migration.sql, "{file}");
        }
    }
}
