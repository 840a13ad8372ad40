//! The bounds both SQL stores keep alike: how long a caller waits for the database, how long a
//! redeemed code is remembered, and the oldest schema a build runs on.

use std::time::Duration;

/// How long a request waits for a pooled connection (PostgreSQL) or for the writer thread's
/// answer (SQLite) before the store answers
/// [`StoreError::unavailable`](crate::store::StoreError::unavailable): the bound on how long anything
/// waits for a database that is down or saturated.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a redeemed code is remembered after its expiry, so that a late replay still names
/// what the first redemption issued (RFC 6749 §4.1.2); the same as the in-memory store.
pub(super) const REPLAY_MEMORY: Duration = Duration::from_secs(3600);

/// `have` (the database's newest migration) against `needed` (this build's).
pub(super) fn check_version(have: i64, needed: i64) -> Result<(), crate::error::StoreError> {
    if have < needed {
        return Err(crate::error::StoreError::failed(format!(
            "the database's schema is at migration {have}, this build needs {needed}: run \
             `grantor migrate` (or the store's `migrate`) first"
        )));
    }
    Ok(())
}
