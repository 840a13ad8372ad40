//! PostgreSQL batching: concurrent writes of one kind share one statement, so one round trip,
//! one plan and one commit serve many requests.
//!
//! A write joins its kind's queue and waits. While fewer than [`IN_FLIGHT`] statements of that
//! kind are under way, a task (spawned, so that no caller's cancellation can cut a statement
//! short) takes everything queued (at most [`MAX_BATCH`]) and writes it with one `UNNEST`
//! statement, and goes on until the queue is empty. Under no load a write goes alone, at the
//! cost of one task spawn; under load a write waits at most for the statement ahead of it.
//!
//! **One write's failure is its own**: if the shared statement fails, each write of that batch
//! runs again alone, so each is answered its own outcome (a batch holds only writes that
//! cannot conflict with one another: new families with fresh random ids and digests).
//!
//! **Bounded**: the queue holds one entry per caller waiting, that is the requests the host
//! serves at once; a statement holds at most [`MAX_BATCH`] of them, and every statement runs
//! under the pool's `statement_timeout`.

use std::sync::{Arc, Mutex};

use sqlx::Postgres;
use tokio::sync::oneshot;

use super::columns::{AuthorizationColumns, secs, store_error};
use super::{Conflicts, Conn, Pooled, Statements, text};
use crate::error::StoreError;
use crate::store::{Actor, NewTokens};

/// The most writes one statement carries.
pub(crate) const MAX_BATCH: usize = 256;

/// How many statements of one kind may be under way at once.
pub(crate) const IN_FLIGHT: usize = 2;

/// The queues of the kinds of write that are batched.
pub(crate) struct Batches {
    /// New families, each with its one access token (client credentials and the like).
    families: Arc<Batcher<NewTokens>>,
}

impl Batches {
    pub(crate) fn new() -> Self {
        Self {
            families: Arc::new(Batcher::default()),
        }
    }

    /// Keeps `tokens` (a new family with one access token and no refresh token) in the next
    /// shared statement; answers once it is committed.
    pub(crate) async fn insert_family_with_access(
        &self,
        pool: &Pooled<Postgres>,
        tokens: NewTokens,
    ) -> Result<(), StoreError> {
        self.families
            .submit(pool, tokens, |pool, batch| {
                Box::pin(insert_families(pool, batch))
            })
            .await
    }
}

/// How a batch of `T` is written: one answer per write, in order.
type Write<T> = fn(
    Pooled<Postgres>,
    Vec<T>,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Vec<Result<(), StoreError>>> + Send>,
>;

/// One kind's queue.
pub(crate) struct Batcher<T> {
    queue: Mutex<Queue<T>>,
}

struct Queue<T> {
    waiting: Vec<(T, oneshot::Sender<Result<(), StoreError>>)>,
    /// Tasks writing batches now.
    writers: usize,
}

impl<T> Default for Batcher<T> {
    fn default() -> Self {
        Self {
            queue: Mutex::new(Queue {
                waiting: Vec::new(),
                writers: 0,
            }),
        }
    }
}

impl<T: Send + 'static> Batcher<T> {
    /// Queues `item` and waits for the statement that writes it.
    async fn submit(
        self: &Arc<Self>,
        pool: &Pooled<Postgres>,
        item: T,
        write: Write<T>,
    ) -> Result<(), StoreError> {
        let (answer, answered) = oneshot::channel();
        let start = {
            let mut queue = self
                .queue
                .lock()
                .map_err(|_| StoreError::failed("a batch queue was poisoned"))?;
            queue.waiting.push((item, answer));
            let start = queue.writers < IN_FLIGHT;
            if start {
                queue.writers += 1;
            }
            start
        };
        if start {
            tokio::spawn(Arc::clone(self).drain(pool.clone(), write));
        }
        answered
            .await
            .map_err(|_| StoreError::failed("a batched write was dropped unanswered"))?
    }

    /// Writes batches until the queue is empty.
    async fn drain(self: Arc<Self>, pool: Pooled<Postgres>, write: Write<T>) {
        loop {
            let batch = {
                let Ok(mut queue) = self.queue.lock() else {
                    return;
                };
                if queue.waiting.is_empty() {
                    queue.writers -= 1;
                    return;
                }
                let take = queue.waiting.len().min(MAX_BATCH);
                queue.waiting.drain(..take).collect::<Vec<_>>()
            };
            let (items, answers): (Vec<T>, Vec<_>) = batch.into_iter().unzip();
            let outcomes = write(pool.clone(), items).await;
            for (answer, outcome) in answers.into_iter().zip(outcomes) {
                let _ = answer.send(outcome);
            }
        }
    }
}

/// New families with their one access token: one `UNNEST` statement for all, or each alone
/// when that fails.
async fn insert_families(
    pool: Pooled<Postgres>,
    batch: Vec<NewTokens>,
) -> Vec<Result<(), StoreError>> {
    if batch.len() > 1 {
        let at_once = run_on!(pool, Statements::One, Conflicts::new(None), |conn| {
            insert_families_at_once(conn, &batch).await
        });
        match at_once {
            Ok(()) => return batch.iter().map(|_| Ok(())).collect(),
            Err(error) => tracing::debug!(%error, "a batch of new families failed; each alone"),
        }
    }
    let mut outcomes = Vec::with_capacity(batch.len());
    for tokens in &batch {
        outcomes.push(run_on!(
            pool,
            Statements::One,
            Conflicts::new(None),
            |conn| { insert_family_alone(conn, tokens).await }
        ));
    }
    outcomes
}

/// [`text::INSERT_FAMILIES_WITH_ACCESS`] for `batch`.
async fn insert_families_at_once(
    conn: &mut Conn<'_>,
    batch: &[NewTokens],
) -> Result<(), StoreError> {
    let mut ids = Vec::with_capacity(batch.len());
    let mut client_ids = Vec::with_capacity(batch.len());
    let mut user_ids = Vec::with_capacity(batch.len());
    let mut usernames = Vec::with_capacity(batch.len());
    let mut scopes = Vec::with_capacity(batch.len());
    let mut family_expiries = Vec::with_capacity(batch.len());
    let mut audiences = Vec::with_capacity(batch.len());
    let mut digests = Vec::with_capacity(batch.len());
    let mut jtis = Vec::with_capacity(batch.len());
    let mut issued = Vec::with_capacity(batch.len());
    let mut access_expiries = Vec::with_capacity(batch.len());
    let mut jkts = Vec::with_capacity(batch.len());
    let mut actors = Vec::with_capacity(batch.len());
    let mut authentications = Vec::with_capacity(batch.len());
    for tokens in batch {
        let columns = AuthorizationColumns::of(&tokens.authorization);
        ids.push(tokens.family.id().to_bytes().to_vec());
        client_ids.push(columns.client_id);
        user_ids.push(columns.user_id);
        usernames.push(columns.username);
        scopes.push(columns.scope);
        family_expiries.push(secs(tokens.expires_at()));
        audiences.push(columns.audience);
        digests.push(tokens.access_token.as_bytes().to_vec());
        jtis.push(tokens.jti.as_str());
        issued.push(secs(tokens.issued_at));
        access_expiries.push(secs(tokens.access_expires_at));
        jkts.push(tokens.jkt.map(|jkt| jkt.to_string()));
        actors.push(tokens.actor.as_ref().map(Actor::to_stored));
        authentications.push(columns.authentication);
    }
    sqlx::query(text::INSERT_FAMILIES_WITH_ACCESS)
        .bind(ids)
        .bind(client_ids)
        .bind(user_ids)
        .bind(usernames)
        .bind(scopes)
        .bind(family_expiries)
        .bind(audiences)
        .bind(digests)
        .bind(jtis)
        .bind(issued)
        .bind(access_expiries)
        .bind(jkts)
        .bind(actors)
        .bind(authentications)
        .execute(conn)
        .await
        .map_err(store_error::<Postgres>)?;
    Ok(())
}

/// [`text::INSERT_FAMILY_WITH_ACCESS`] for one new family.
async fn insert_family_alone(conn: &mut Conn<'_>, tokens: &NewTokens) -> Result<(), StoreError> {
    let columns = AuthorizationColumns::of(&tokens.authorization);
    let access_jkt = tokens.jkt.map(|jkt| jkt.to_string());
    let actor = tokens.actor.as_ref().map(Actor::to_stored);
    sqlx::query(text::INSERT_FAMILY_WITH_ACCESS)
        .bind(tokens.family.id().to_bytes().as_slice())
        .bind(columns.client_id)
        .bind(columns.user_id)
        .bind(columns.username)
        .bind(columns.scope)
        .bind(secs(tokens.expires_at()))
        .bind(columns.audience)
        .bind(tokens.access_token.as_bytes().as_slice())
        .bind(tokens.authorization.scope.as_str())
        .bind(tokens.jti.as_str())
        .bind(secs(tokens.issued_at))
        .bind(secs(tokens.access_expires_at))
        .bind(tokens.authorization.audience.as_str())
        .bind(access_jkt.as_deref())
        .bind(actor.as_deref())
        .bind(columns.authentication.as_deref())
        .execute(conn)
        .await
        .map_err(store_error::<Postgres>)?;
    Ok(())
}
