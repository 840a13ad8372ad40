//! Group commit: every write of a SQLite file store goes through one connection, and the writes
//! that arrive while one commit is syncing to disk share the next commit.
//!
//! SQLite takes one writer at a time, and with `synchronous = FULL` every commit waits for the
//! disk (an `fsync` of the write-ahead log), so one commit per write caps a store at the disk's
//! sync rate whatever else it does. Here a write happens in two steps:
//!
//! 1. **Its statements**, while holding the writer connection: the first writer after a commit
//!    begins a transaction (`BEGIN IMMEDIATE`), and every writer runs its statements inside the
//!    open transaction, seeing what the writers before it did, then lets go of the connection.
//! 2. **The commit**: the writer queues for the connection again (the queue is first come, first
//!    served). If a writer of its batch committed meanwhile it is done; otherwise it commits the
//!    open transaction, for itself and for every writer that ran its statements since the
//!    transaction began.
//!
//! So a writer is answered only once its writes are durable, and under load a batch holds about
//! as many writes as arrived while the previous one was committing: one sync for all of them.
//!
//! **Waiting.** A writer waits for the connection at most
//! [`ACQUIRE_TIMEOUT`](super::ACQUIRE_TIMEOUT), in either step, then answers
//! [`StoreError::unavailable`] (503), as it would for a pool with no free connection.
//!
//! **Failures.** A writer whose statements fail rolls the open transaction back, so nothing of
//! it stays, and answers its error; the other writers of that batch, not yet answered, run their
//! statements again in the next one (at most [`ATTEMPTS`] times in all). A failed commit fails
//! every writer of its batch.
//!
//! **Cancellation.** A writer whose future is dropped while its statements run leaves a mark;
//! the next writer finds it and rolls the transaction back first, so no write is ever kept in
//! part, and the others of that batch run theirs again. A writer dropped after its statements
//! leaves them for the next commit, as if it had been answered and its answer lost. A batch
//! whose writers were all dropped stays open (holding SQLite's write lock; readers do not wait
//! for it) until the next write or [`SqlStore::close`](super::SqlStore::close) commits it.

use std::sync::{Arc, OnceLock};

use sqlx::{Pool, Transaction};
use tokio::sync::{Mutex, MutexGuard};

use super::backend::Backend;
use super::columns::store_error;
use super::{ACQUIRE_TIMEOUT, Finished};
use crate::error::{StoreError, StoreErrorKind};

/// Why a write waited for the writer connection in vain.
const BUSY: &str = "the SQLite writer connection stayed busy for longer than the acquire timeout";

/// How many times a write runs its statements before giving up, when other writers' failures
/// keep rolling its batch back.
pub(crate) const ATTEMPTS: usize = 3;

/// The writer connection, the transaction open on it, and the batch of writes inside it.
pub(crate) struct GroupCommit<DB: sqlx::Database> {
    writer: Pool<DB>,
    open: Mutex<Open<DB>>,
}

struct Open<DB: sqlx::Database> {
    /// The transaction the current batch writes in, if one has begun and no writer has it.
    tx: Option<Transaction<'static, DB>>,
    /// The writes since `tx` began, to be told how their commit went.
    batch: Arc<Batch>,
    /// A writer has the transaction: if it is dropped before handing it back, sqlx rolls the
    /// transaction back, and the batch with it.
    lent: bool,
    /// A commit was under way when its future was dropped: whether it happened is unknown.
    committing: bool,
    /// Commits so far (the tests check that writes share them).
    commits: u64,
}

/// One transaction's writes, waiting for its commit.
#[derive(Default)]
struct Batch {
    outcome: OnceLock<Outcome>,
}

#[derive(Clone)]
enum Outcome {
    Committed,
    /// Rolled back for another writer's sake: run the statements again.
    RolledBack,
    Failed(StoreErrorKind, Arc<str>),
}

/// A writer running its statements in the open transaction, holding the connection.
pub(crate) struct Member<'g, DB: sqlx::Database> {
    group: &'g GroupCommit<DB>,
    open: MutexGuard<'g, Open<DB>>,
    tx: Transaction<'static, DB>,
}

impl<DB: sqlx::Database> GroupCommit<DB> {
    /// Writes through `writer`, which should be a pool of one connection.
    #[cfg(feature = "sqlite")]
    pub(crate) fn new(writer: Pool<DB>) -> Self {
        Self {
            writer,
            open: Mutex::new(Open {
                tx: None,
                batch: Arc::default(),
                lent: false,
                committing: false,
                commits: 0,
            }),
        }
    }
}

impl<DB: Backend> GroupCommit<DB> {
    /// Waits for the connection and joins the open batch (beginning one if none is open).
    pub(crate) async fn join(&self) -> Result<Member<'_, DB>, StoreError> {
        let mut open = self.lock().await?;
        open.recover();
        let tx = match open.tx.take() {
            Some(tx) => tx,
            None => self
                .writer
                .begin_with(DB::BEGIN_WRITE)
                .await
                .map_err(store_error::<DB>)?,
        };
        open.lent = true;
        Ok(Member {
            group: self,
            open,
            tx,
        })
    }

    /// The connection, waited for at most [`ACQUIRE_TIMEOUT`] (a write that holds it longer,
    /// such as a purge of millions of rows, makes the others answer unavailable).
    async fn lock(&self) -> Result<MutexGuard<'_, Open<DB>>, StoreError> {
        tokio::time::timeout(ACQUIRE_TIMEOUT, self.open.lock())
            .await
            .map_err(|_| StoreError::unavailable(BUSY))
    }

    /// Commits what is open (the writes of dropped futures) before the pools close.
    pub(crate) async fn close(&self) {
        let mut open = self.open.lock().await;
        open.recover();
        if open.tx.is_some() {
            open.commit().await;
        }
    }

    /// How many commits the writes took so far.
    #[cfg(all(test, feature = "sqlite"))]
    pub(crate) async fn commits(&self) -> u64 {
        self.open.lock().await.commits
    }

    /// How `batch` ended: committed by another writer meanwhile, or now by this one.
    async fn committed(&self, batch: &Batch) -> Outcome {
        if let Some(outcome) = batch.outcome.get() {
            return outcome.clone();
        }
        let Ok(mut open) = self.lock().await else {
            // Whether the batch commits is not known here: as a lost answer.
            return Outcome::Failed(StoreErrorKind::Unavailable, BUSY.into());
        };
        open.recover();
        match batch.outcome.get() {
            Some(outcome) => outcome.clone(),
            // Still unanswered, so it is the open batch: commit it.
            None => open.commit().await,
        }
    }
}

impl<'g, DB: Backend> Member<'g, DB> {
    /// The writer connection, inside the batch's transaction.
    pub(crate) fn connection(&mut self) -> &mut DB::Connection {
        &mut self.tx
    }

    /// Hands the transaction back with what the statements answered. On success, lets the
    /// next writer in and answers once the batch is committed; on failure, rolls the batch back.
    /// `attempt` counts from 1.
    pub(crate) async fn finish<T>(
        self,
        answer: Result<T, StoreError>,
        attempt: usize,
    ) -> Finished<T> {
        match answer {
            Ok(answer) => {
                let (group, batch) = self.hand_back();
                group.committed(&batch).await.finish(answer, attempt)
            }
            Err(error) => {
                self.roll_back().await;
                Finished::Done(Err(error))
            }
        }
    }

    /// Puts the transaction back for the next writer and lets go of the connection; answers the
    /// batch to wait for.
    fn hand_back(self) -> (&'g GroupCommit<DB>, Arc<Batch>) {
        let Member {
            group,
            mut open,
            tx,
        } = self;
        open.tx = Some(tx);
        open.lent = false;
        (group, Arc::clone(&open.batch))
    }

    /// Rolls the batch back: the other writers in it run their statements again.
    async fn roll_back(self) {
        let Member { mut open, tx, .. } = self;
        // A failed rollback leaves nothing to keep either: the connection goes back to the
        // pool, which closes it if it is broken.
        let _ = tx.rollback().await;
        open.lent = false;
        open.answer(Outcome::RolledBack);
    }
}

impl Outcome {
    /// What a write answers whose statements answered `answer` (on attempt `attempt`, from 1)
    /// and whose batch ended so.
    fn finish<T>(self, answer: T, attempt: usize) -> Finished<T> {
        match self {
            Outcome::Committed => Finished::Done(Ok(answer)),
            Outcome::RolledBack if attempt < ATTEMPTS => Finished::Again,
            Outcome::RolledBack => Finished::Done(Err(too_many_attempts())),
            Outcome::Failed(kind, message) => {
                let message = format!("the batch this write was in failed to commit: {message}");
                Finished::Done(Err(match kind {
                    StoreErrorKind::Unavailable => StoreError::unavailable(message),
                    StoreErrorKind::Failed => StoreError::failed(message),
                }))
            }
        }
    }
}

fn too_many_attempts() -> StoreError {
    StoreError::unavailable("a write was rolled back with its batch too many times")
}

impl<DB: Backend> Open<DB> {
    /// Answers what a dropped future left: a writer's transaction dropped (so rolled back by
    /// sqlx) rolled its batch back; a commit cut short leaves its batch failed, since it may or
    /// may not be on disk.
    fn recover(&mut self) {
        if self.committing {
            self.committing = false;
            self.answer(Outcome::Failed(
                StoreErrorKind::Unavailable,
                "the commit was interrupted".into(),
            ));
        }
        if self.lent {
            self.lent = false;
            self.answer(Outcome::RolledBack);
        }
    }

    /// Commits the open transaction and tells its batch how it went.
    async fn commit(&mut self) -> Outcome {
        let Some(tx) = self.tx.take() else {
            return self.answer(Outcome::Committed);
        };
        self.committing = true;
        let committed = tx.commit().await;
        self.committing = false;
        match committed {
            Ok(()) => {
                self.commits += 1;
                self.answer(Outcome::Committed)
            }
            Err(error) => {
                let error = store_error::<DB>(error);
                self.answer(Outcome::Failed(error.kind(), error.to_string().into()))
            }
        }
    }

    /// Answers the current batch and starts the next.
    fn answer(&mut self, outcome: Outcome) -> Outcome {
        let _ = self.batch.outcome.set(outcome.clone());
        self.batch = Arc::default();
        outcome
    }
}

#[cfg(all(test, feature = "sqlite"))]
mod tests;
