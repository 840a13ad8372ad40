//! PostgreSQL batching: concurrent writes of one kind share one statement, so one round trip,
//! one plan and one commit serve many requests; and concurrent lookups of access tokens
//! (bearer validation, introspection) share one `SELECT … WHERE digest = ANY($1)`.
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
//! **One lookup's failure is its own** too: if the shared `SELECT` fails, each lookup of the
//! batch runs again alone. Not when the database is down or lends no connection within the
//! acquire timeout: then every caller of the batch, and every one queued behind it, is answered
//! `unavailable` at once, rather than each waiting that timeout again, one after another. A lookup queued after a write was committed is answered by a
//! statement that starts after it, so it sees that write, as a lookup of its own would.
//!
//! **Bounded**: the queue holds one entry per caller waiting, that is the requests the host
//! serves at once; a statement holds at most [`MAX_BATCH`] of them, and every statement runs
//! under the pool's `statement_timeout`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::errors::{Conflicts, store_error};
use super::{Conn, Pooled, Statements, access};
use crate::clock::UnixTime;
use crate::error::{StoreError, StoreErrorKind};
use crate::secret::SecretDigest;
use crate::sql::columns::{AuthorizationColumns, secs};
use crate::sql::rows::tokens::AccessRow;
use crate::store::{Actor, NewTokens, TokenBinding};

/// The most writes one statement carries.
pub(crate) const MAX_BATCH: usize = 256;

/// How many statements of one kind may be under way at once.
pub(crate) const IN_FLIGHT: usize = 2;

/// An access token looked up: its digest and the request's time.
type Lookup = (SecretDigest, UnixTime);

/// An [`AccessRow`] with the digest it was found by, for lookups of many tokens at once.
#[derive(sqlx::FromRow)]
struct DigestAccessRow {
    digest: Vec<u8>,
    #[sqlx(flatten)]
    row: AccessRow,
}

/// The queues of the kinds of write and read that are batched.
pub(crate) struct Batches {
    /// New families, each with its one access token (client credentials and the like).
    families: Arc<Batcher<NewTokens>>,
    /// Access tokens looked up on the primary, and on the read replica (each pool's lookups
    /// share statements on that pool alone).
    primary_lookups: Arc<Batcher<Lookup, Option<AccessRow>>>,
    replica_lookups: Arc<Batcher<Lookup, Option<AccessRow>>>,
}

impl Batches {
    pub(crate) fn new() -> Self {
        Self {
            families: Arc::new(Batcher::default()),
            primary_lookups: Arc::new(Batcher::default()),
            replica_lookups: Arc::new(Batcher::default()),
        }
    }

    /// The live access token whose digest is `token` at `now`, looked up on `pool` (the
    /// primary, or the read replica when `replica`) in the next shared statement.
    pub(crate) async fn find_access(
        &self,
        pool: &Pooled,
        replica: bool,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessRow>, StoreError> {
        let lookups = if replica {
            &self.replica_lookups
        } else {
            &self.primary_lookups
        };
        lookups
            .submit(pool, (*token, now), |pool, batch| {
                Box::pin(find_accesses(pool, batch))
            })
            .await
    }

    /// Keeps `tokens` (a new family with one access token and no refresh token) in the next
    /// shared statement; answers once it is committed.
    pub(crate) async fn insert_family_with_access(
        &self,
        pool: &Pooled,
        tokens: NewTokens,
    ) -> Result<(), StoreError> {
        self.families
            .submit(pool, tokens, |pool, batch| {
                Box::pin(insert_families(pool, batch))
            })
            .await
    }
}

/// How a batch of `T` is run: one answer `R` per item, in order.
type Run<T, R> = fn(
    Pooled,
    Vec<T>,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Vec<Result<R, StoreError>>> + Send>,
>;

/// One kind's queue: items `T`, each answered an `R`.
pub(crate) struct Batcher<T, R = ()> {
    queue: Mutex<Queue<T, R>>,
}

struct Queue<T, R> {
    waiting: Vec<(T, oneshot::Sender<Result<R, StoreError>>)>,
    /// Tasks running batches now.
    writers: usize,
}

impl<T, R> Default for Batcher<T, R> {
    fn default() -> Self {
        Self {
            queue: Mutex::new(Queue {
                waiting: Vec::new(),
                writers: 0,
            }),
        }
    }
}

impl<T: Send + 'static, R: Send + 'static> Batcher<T, R> {
    /// Queues `item` and waits for the statement that runs it.
    async fn submit(
        self: &Arc<Self>,
        pool: &Pooled,
        item: T,
        write: Run<T, R>,
    ) -> Result<R, StoreError> {
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
            .map_err(|_| StoreError::failed("a batched statement was dropped unanswered"))?
    }

    /// Runs batches until the queue is empty.
    async fn drain(self: Arc<Self>, pool: Pooled, write: Run<T, R>) {
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
            // A batch the database could not take at all (down, or no connection within the
            // acquire timeout): what queued meanwhile would wait that long again only to be
            // refused, so it is refused now, and the next request tries afresh.
            let outage = outcomes
                .first()
                .and_then(|outcome| outcome.as_ref().err())
                .and_then(|error| {
                    let all = outcomes.iter().all(|outcome| {
                        outcome
                            .as_ref()
                            .is_err_and(|e| e.kind() == StoreErrorKind::Unavailable)
                    });
                    all.then(|| error.to_string())
                });
            for (answer, outcome) in answers.into_iter().zip(outcomes) {
                let _ = answer.send(outcome);
            }
            if let Some(cause) = outage {
                let waiting = match self.queue.lock() {
                    Ok(mut queue) => std::mem::take(&mut queue.waiting),
                    Err(_) => return,
                };
                for (_, answer) in waiting {
                    let _ = answer.send(Err(StoreError::unavailable(cause.clone())));
                }
            }
        }
    }
}

/// The database is down or has no connection to lend: each of a batch's `len` callers is
/// answered so at once, rather than each waiting alone, one after another, for the pool's
/// acquire timeout again.
fn each_unavailable<R>(error: &StoreError, len: usize) -> Vec<Result<R, StoreError>> {
    let cause = error.to_string();
    (0..len)
        .map(|_| Err(StoreError::unavailable(cause.clone())))
        .collect()
}

/// Access tokens by digest, each live at its own request's time: one [`access::FIND_ACCESS_MANY`]
/// for all (a lookup alone: [`access::FIND_ACCESS`]), or each alone when that fails.
async fn find_accesses(
    pool: Pooled,
    batch: Vec<Lookup>,
) -> Vec<Result<Option<AccessRow>, StoreError>> {
    if batch.len() > 1 {
        let at_once = run_on!(pool, Statements::One, Conflicts::new(None), |conn| {
            find_accesses_at_once(conn, &batch).await
        });
        match at_once {
            Ok(found) => return found.into_iter().map(Ok).collect(),
            Err(error) if error.kind() == StoreErrorKind::Unavailable => {
                return each_unavailable(&error, batch.len());
            }
            Err(error) => tracing::debug!(%error, "a batch of token lookups failed; each alone"),
        }
    }
    let mut outcomes = Vec::with_capacity(batch.len());
    for (token, now) in &batch {
        outcomes.push(run_on!(
            pool,
            Statements::One,
            Conflicts::new(None),
            |conn| {
                sqlx::query_as(access::FIND_ACCESS)
                    .bind(token.as_bytes().as_slice())
                    .bind(secs(*now))
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(store_error)
            }
        ));
    }
    outcomes
}

/// [`access::FIND_ACCESS_MANY`] for `batch`: each lookup's row, if its token lives at its time.
/// The same token looked up twice is answered twice.
async fn find_accesses_at_once(
    conn: &mut Conn<'_>,
    batch: &[Lookup],
) -> Result<Vec<Option<AccessRow>>, StoreError> {
    let digests: Vec<&[u8]> = batch
        .iter()
        .map(|(token, _)| token.as_bytes().as_slice())
        .collect();
    let earliest = batch
        .iter()
        .map(|(_, now)| *now)
        .min()
        .unwrap_or(UnixTime::from_secs(0));
    let rows: Vec<DigestAccessRow> = sqlx::query_as(access::FIND_ACCESS_MANY)
        .bind(digests)
        .bind(secs(earliest))
        .fetch_all(conn)
        .await
        .map_err(store_error)?;
    let found: HashMap<Vec<u8>, AccessRow> = rows
        .into_iter()
        .map(|found| (found.digest, found.row))
        .collect();
    Ok(batch
        .iter()
        .map(|(token, now)| {
            found
                .get(token.as_bytes().as_slice())
                .filter(|row| row.expires_at() > secs(*now))
                .cloned()
        })
        .collect())
}

/// New families with their one access token: one `UNNEST` statement for all, or each alone
/// when that fails.
async fn insert_families(pool: Pooled, batch: Vec<NewTokens>) -> Vec<Result<(), StoreError>> {
    if batch.len() > 1 {
        let at_once = run_on!(pool, Statements::One, Conflicts::new(None), |conn| {
            insert_families_at_once(conn, &batch).await
        });
        match at_once {
            Ok(()) => return batch.iter().map(|_| Ok(())).collect(),
            Err(error) if error.kind() == StoreErrorKind::Unavailable => {
                return each_unavailable(&error, batch.len());
            }
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

/// [`access::INSERT_FAMILIES_WITH_ACCESS`] for `batch`.
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
        jkts.push(tokens.binding.as_ref().map(TokenBinding::to_stored));
        actors.push(tokens.actor.as_ref().map(Actor::to_stored));
        authentications.push(columns.authentication);
    }
    sqlx::query(access::INSERT_FAMILIES_WITH_ACCESS)
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
        .map_err(store_error)?;
    Ok(())
}

/// [`access::INSERT_FAMILY_WITH_ACCESS`] for one new family.
async fn insert_family_alone(conn: &mut Conn<'_>, tokens: &NewTokens) -> Result<(), StoreError> {
    let columns = AuthorizationColumns::of(&tokens.authorization);
    let access_jkt = tokens.binding.as_ref().map(TokenBinding::to_stored);
    let actor = tokens.actor.as_ref().map(Actor::to_stored);
    sqlx::query(access::INSERT_FAMILY_WITH_ACCESS)
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
        .map_err(store_error)?;
    Ok(())
}
