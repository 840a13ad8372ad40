//! PostgreSQL's errors as the store's: which are transient ([`StoreError::unavailable`], 503)
//! and which are the conflicts with a concurrent transaction that a call runs again whole
//! ([`Conflicts`]).

use std::time::Duration;

use crate::error::StoreError;

/// Maps a sqlx error to the store's two kinds: the pool or the connection failing, or an
/// SQLSTATE that means "try again later" ([`transient`]), is [`StoreError::unavailable`];
/// anything else is [`StoreError::failed`].
pub(crate) fn store_error(error: sqlx::Error) -> StoreError {
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

/// A failed migration as the store's error: a statement's failure as [`store_error`] maps it.
pub(crate) fn migrate_error(error: sqlx::migrate::MigrateError) -> StoreError {
    match error {
        sqlx::migrate::MigrateError::Execute(error) => store_error(error),
        other => StoreError::failed(other),
    }
}

/// SQLSTATEs that mean "try again later": class 08 (connection exception), 53 (insufficient
/// resources, such as too many connections), 57 (operator intervention: shutdown, cancel),
/// 40001 (serialization failure) and 40P01 (deadlock detected).
fn transient(code: &str) -> bool {
    ["08", "53", "57"]
        .iter()
        .any(|class| code.starts_with(class))
        || code == "40001"
        || code == "40P01"
}

/// How many times a statement or transaction runs in all when it keeps losing serialization
/// conflicts (SQLSTATE 40001, under `SERIALIZABLE` or `REPEATABLE READ`) or deadlocks (40P01).
pub(crate) const CONFLICT_ATTEMPTS: u32 = 16;

/// How long the retries of one statement or transaction may take in all.
pub(crate) const CONFLICT_BUDGET: Duration = Duration::from_secs(1);

/// Retrying what PostgreSQL aborted for a conflict with a concurrent transaction: always safe
/// for grantor's statements and short transactions, which either happened whole or not at
/// all and read again what they decide on.
///
/// Each retry waits a random time (full jitter: up to 2, 4, 8… 64 ms for a read, up to 2
/// then 4 ms for a write), so that transactions that collided on different nodes do not
/// collide again in step. A write's retries then take the node's one **retry turn** and keep
/// it until the write ends, so that the writes of one node that collided on a hot row (fifty
/// sign-in attempts counted on one key, twenty retries of one refresh token) run again one
/// after another instead of colliding again in every round: the retries converge instead of
/// running out. Conflicts are rare, so the turn is almost always free; reads retry without it.
///
/// **Bounded**: after [`CONFLICT_ATTEMPTS`] runs, or once [`CONFLICT_BUDGET`] has passed since
/// the first run (waiting for the turn included), the conflict is answered (503 with
/// `Retry-After`).
pub(crate) struct Conflicts<'a> {
    runs: u32,
    started: std::time::Instant,
    /// The node's retry turn, for writes; `None` for reads.
    turns: Option<&'a tokio::sync::Semaphore>,
    /// The turn, once taken: held until this value drops, with the write.
    turn: Option<tokio::sync::SemaphorePermit<'a>>,
}

impl<'a> Conflicts<'a> {
    pub(crate) fn new(turns: Option<&'a tokio::sync::Semaphore>) -> Self {
        Self {
            runs: 1,
            started: std::time::Instant::now(),
            turns,
            turn: None,
        }
    }

    /// Whether to run again after `error`, having waited (and taken the retry turn, for a
    /// write); `false` for any other error, or once the attempts or the time are spent.
    pub(crate) async fn again(&mut self, error: &StoreError) -> bool {
        if !is_conflict(error) || self.runs >= CONFLICT_ATTEMPTS {
            return false;
        }
        let Some(left) = CONFLICT_BUDGET.checked_sub(self.started.elapsed()) else {
            return false;
        };
        // A write's retries wait up to 2 then 4 ms before their turn and while they hold it
        // (a long wait would hold up the node's other retries); a read's up to 64 ms.
        let ceiling = (1u64 << self.runs.min(if self.turns.is_some() { 2 } else { 6 })) * 1000;
        // Not a secret, but drawn where every random value is.
        let draw = crate::secret::random_bytes::<8>().map_or(ceiling / 2, u64::from_le_bytes);
        let wait = Duration::from_micros(draw % (ceiling + 1));
        if wait >= left {
            return false;
        }
        tokio::time::sleep(wait).await;
        if let (Some(turns), None) = (self.turns, &self.turn) {
            let left = left.saturating_sub(wait);
            match tokio::time::timeout(left, turns.acquire()).await {
                Ok(Ok(turn)) => self.turn = Some(turn),
                // Out of time, or (never) a closed semaphore.
                _ => return false,
            }
        }
        self.runs += 1;
        true
    }
}

/// Whether `error` is PostgreSQL's serialization failure (40001) or deadlock (40P01).
fn is_conflict(error: &StoreError) -> bool {
    std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<sqlx::Error>())
        .and_then(|error| match error {
            sqlx::Error::Database(database) => database.code(),
            _ => None,
        })
        .is_some_and(|code| code == "40001" || code == "40P01")
}
