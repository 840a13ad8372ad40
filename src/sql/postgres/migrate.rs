//! PostgreSQL's schema: the embedded migrations (`src/sql/migrations/postgres/`), applied under
//! their session lock, and the check that a database opened without migrating is recent enough.

use sqlx::migrate::Migrator;

use super::errors::{migrate_error, store_error};
use super::{Pooling, PostgresStore};
use crate::error::StoreError;

/// `src/sql/migrations/postgres/`, embedded at build time. A database that has migrations this
/// build does not know (a newer build migrated it: a rolling deploy) is accepted, since grantor's
/// migrations only add.
static MIGRATOR: std::sync::LazyLock<Migrator> = std::sync::LazyLock::new(|| {
    let mut migrator = sqlx::migrate!("src/sql/migrations/postgres");
    migrator.set_ignore_missing(true);
    migrator
});

impl PostgresStore {
    /// Applies pending migrations (versioned, idempotent; safe to run from many nodes at once).
    /// Refused behind a pooler in transaction mode ([`Pooling::Transaction`]): the migrations'
    /// session lock cannot be held there; run them against the database itself.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        if self.primary.pooling == Pooling::Transaction {
            return Err(StoreError::failed(
                "migrations hold a session lock, which a pooler in transaction mode cannot \
                 keep: run `grantor migrate` against the database itself, not through the pooler",
            ));
        }
        MIGRATOR
            .run(&self.primary.pool)
            .await
            .map_err(migrate_error)
    }

    /// Refuses a database whose schema lacks a migration this build needs (newer ones, from a
    /// newer build, are fine: grantor's migrations only add).
    pub(super) async fn check_schema(&self) -> Result<(), StoreError> {
        let needed = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
        let directly = match self.primary.pooling {
            Pooling::Direct => "",
            _ => " against the database itself (migrations cannot run through the pooler)",
        };
        let have: Option<i64> = store_read!(self.primary, |conn| {
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                .fetch_one(&mut *conn)
                .await
                .map_err(|error| match &error {
                    sqlx::Error::Database(db) if db.code().as_deref() == Some("42P01") => {
                        StoreError::failed(format!(
                            "the database has no grantor schema: run `grantor migrate` \
                             first{directly}"
                        ))
                    }
                    _ => store_error(error),
                })
        })?;
        crate::sql::bounds::check_version(have.unwrap_or(0), needed).map_err(|error| {
            if directly.is_empty() {
                error
            } else {
                StoreError::failed(format!("{error}{directly}"))
            }
        })
    }
}
