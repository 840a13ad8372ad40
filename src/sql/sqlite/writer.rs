//! The writer thread: every write of a [`SqliteStore`](super::SqliteStore) runs on one thread
//! that owns the one connection that writes, and the writes that queue while one commit is
//! syncing to disk share the next commit.
//!
//! SQLite takes one writer at a time, and with `synchronous = FULL` every commit waits for the
//! disk (an `fsync` of the write-ahead log), so one commit per write would cap the store at the
//! disk's sync rate. Here the thread takes every write queued (at most [`MAX_BATCH`]), begins
//! one transaction (`BEGIN IMMEDIATE`), runs each write's statements inside a savepoint of its
//! own (a write of one statement needs none, [`Message::Statement`]), commits once, and only
//! then answers each caller. So:
//!
//! - **An answer means committed**: a write is answered after the commit that holds it, and an
//!   acknowledged token survives a power cut.
//! - **One write's failure is its own**: a write whose statements fail is rolled back to its
//!   savepoint and answered its error; the rest of its batch commits. A failed commit fails
//!   every write of its batch.
//! - **No thread hand-off per statement**: a write crosses to the writer thread once, with all
//!   its statements, and its answer crosses back once.
//! - **A caller that went away** before its write began leaves nothing: the write is skipped.
//!   One that went away later is committed with its batch, as if it had been answered and the
//!   answer lost.
//! - **Bounded**: the queue holds at most one write per caller waiting for an answer, that is
//!   the requests the host serves at once; a caller waits at most
//!   [`ACQUIRE_TIMEOUT`](crate::sql::ACQUIRE_TIMEOUT) for its answer, then answers
//!   [`StoreError::unavailable`].

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::query::store_error;
use crate::error::{StoreError, StoreErrorKind};

/// The most writes one transaction holds, so that one commit never waits on an unbounded
/// amount of work.
pub(super) const MAX_BATCH: usize = 512;

/// What the writer thread is asked.
pub(super) enum Message {
    /// A write to run in the next batch, in a savepoint of its own.
    Write(Box<dyn Job>),
    /// A write of one statement to run in the next batch, without a savepoint: SQLite backs out
    /// a statement that fails, so the write happens whole or not at all by itself. Its work runs
    /// no other statement that changes the database, and never fails after that one succeeded.
    Statement(Box<dyn Job>),
    /// Work that manages its own transactions (migrations), run between batches.
    Alone(Box<dyn Job>),
    /// Finish the writes queued before this, then stop (the store is closing).
    Close(oneshot::Sender<()>),
}

/// One write: its statements, and the caller waiting for their outcome.
pub(super) trait Job: Send {
    /// Runs the statements inside the open transaction; `None` when the caller has gone away
    /// and nothing was run.
    fn run(self: Box<Self>, conn: &Connection) -> Option<Box<dyn Outcome>>;

    /// Answers `error` without running (the batch could not begin).
    fn refuse(self: Box<Self>, kind: StoreErrorKind, why: &str);
}

/// What a write's statements answered, held until its batch's commit.
pub(super) trait Outcome: Send {
    /// Whether the statements succeeded (else the write is rolled back to its savepoint).
    fn succeeded(&self) -> bool;

    /// Answers the caller once the batch's commit is known: its own answer if the commit
    /// succeeded (or its statements failed), else the commit's error.
    fn settle(self: Box<Self>, commit: Result<(), (StoreErrorKind, &str)>);
}

/// A write of the store: `work` runs on the writer thread; its answer goes to `answer`.
pub(super) struct Task<F, T> {
    pub(super) work: F,
    pub(super) answer: oneshot::Sender<Result<T, StoreError>>,
}

impl<F, T> Job for Task<F, T>
where
    F: FnOnce(&Connection) -> Result<T, StoreError> + Send,
    T: Send + 'static,
{
    fn run(self: Box<Self>, conn: &Connection) -> Option<Box<dyn Outcome>> {
        if self.answer.is_closed() {
            return None;
        }
        let Task { work, answer } = *self;
        let value = work(conn);
        Some(Box::new(Held { value, answer }))
    }

    fn refuse(self: Box<Self>, kind: StoreErrorKind, why: &str) {
        let _ = self.answer.send(Err(error(kind, why)));
    }
}

/// A write's answer, held until its commit.
struct Held<T> {
    value: Result<T, StoreError>,
    answer: oneshot::Sender<Result<T, StoreError>>,
}

impl<T: Send + 'static> Outcome for Held<T> {
    fn succeeded(&self) -> bool {
        self.value.is_ok()
    }

    fn settle(self: Box<Self>, commit: Result<(), (StoreErrorKind, &str)>) {
        let answer = match (self.value, commit) {
            (Ok(_), Err((kind, why))) => Err(error(kind, why)),
            (value, _) => value,
        };
        // A caller that went away meanwhile is told nothing.
        let _ = self.answer.send(answer);
    }
}

fn error(kind: StoreErrorKind, why: &str) -> StoreError {
    let why = why.to_owned();
    match kind {
        StoreErrorKind::Unavailable => StoreError::unavailable(why),
        _ => StoreError::failed(why),
    }
}

/// The writer thread's loop: batches until the store closes (or every handle is dropped).
/// `commits` counts the transactions committed.
pub(super) fn serve(conn: Connection, queue: Receiver<Message>, commits: &AtomicU64) {
    let mut closing = Vec::new();
    while let Ok(first) = queue.recv() {
        let mut batch = Vec::new();
        let mut alone = None;
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Write(job) => batch.push((job, Isolation::Savepoint)),
                Message::Statement(job) => batch.push((job, Isolation::Statement)),
                Message::Alone(job) => alone = Some(job),
                Message::Close(done) => closing.push(done),
            }
            if batch.len() < MAX_BATCH && closing.is_empty() && alone.is_none() {
                // Empty or disconnected: the batch is what has come.
                next = queue.try_recv().ok();
            }
        }
        if !batch.is_empty() && commit_batch(&conn, batch) {
            commits.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(job) = alone {
            let outcome = catch_unwind(AssertUnwindSafe(|| job.run(&conn)))
                .ok()
                .flatten();
            if let Some(outcome) = outcome {
                outcome.settle(Ok(()));
            }
        }
        if !closing.is_empty() {
            break;
        }
    }
    // Closing: the connection closes as it is dropped, then the closers are told.
    drop(conn);
    for done in closing {
        let _ = done.send(());
    }
}

/// How a write of a batch is kept apart from the others, so that its failure is its own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Isolation {
    /// In a savepoint, rolled back to when the write fails.
    Savepoint,
    /// By SQLite alone: the write is one statement, which SQLite backs out when it fails. A
    /// savepoint would cost more than the statement: SQLite copies every page the statement
    /// changes that an earlier write of the batch changed (the last page of each table and
    /// index a token goes to) into the savepoint's journal first.
    Statement,
}

/// One transaction for `batch`: each write in a savepoint of its own (unless it is one
/// statement), one commit for all. Answers whether it committed.
fn commit_batch(conn: &Connection, batch: Vec<(Box<dyn Job>, Isolation)>) -> bool {
    if let Err(error) = statement(conn, "BEGIN IMMEDIATE") {
        let why = error.to_string();
        for (job, _) in batch {
            job.refuse(error.kind(), &why);
        }
        return false;
    }
    let mut outcomes = Vec::with_capacity(batch.len());
    for (job, isolation) in batch {
        let savepoint = isolation == Isolation::Savepoint;
        if savepoint && let Err(error) = statement(conn, "SAVEPOINT grantor_write") {
            job.refuse(error.kind(), &error.to_string());
            continue;
        }
        // A panic in a write's statements (there should be none) fails that write alone: its
        // answer channel is dropped, which its caller reads as a failure.
        let outcome = catch_unwind(AssertUnwindSafe(|| job.run(conn)))
            .ok()
            .flatten();
        if savepoint {
            let kept = outcome.as_ref().is_some_and(|outcome| outcome.succeeded());
            if !kept {
                let _ = statement(conn, "ROLLBACK TO grantor_write");
            }
            let _ = statement(conn, "RELEASE grantor_write");
        }
        outcomes.extend(outcome);
    }
    let committed = statement(conn, "COMMIT");
    if committed.is_err() {
        let _ = statement(conn, "ROLLBACK");
    }
    let why = committed.as_ref().err().map(ToString::to_string);
    for outcome in outcomes {
        let commit = match (&committed, &why) {
            (Err(error), Some(why)) => Err((error.kind(), why.as_str())),
            _ => Ok(()),
        };
        outcome.settle(commit);
    }
    committed.is_ok()
}

/// A statement without parameters, prepared once.
fn statement(conn: &Connection, sql: &str) -> Result<(), StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut statement| statement.raw_execute())
        .map(|_| ())
        .map_err(store_error)
}
