//! The threads Argon2 runs on: two lanes (user passwords, client secrets), each a fixed set of
//! threads over bounded queues. The lanes are values ([`Pools::new`]) so tests can build their
//! own; each server holds its own, started at its first check.

use std::num::NonZeroUsize;
use std::thread;

pub(crate) use crate::lane::{Lane, Priority};

/// How many threads a server hashes on and how many checks may wait for them; hand it to
/// [`AuthorizationServerBuilder::hashing_pools`](crate::AuthorizationServerBuilder::hashing_pools).
///
/// Each bound counts checks waiting for a thread, not those running. A check that finds its
/// queue full is refused at once with [`StoreError::unavailable`](crate::error::StoreError::unavailable) (503
/// `temporarily_unavailable`), so a flood cannot queue without end. Zero in any field is taken
/// as one.
///
/// ```
/// use grantor::hash::HashingPools;
///
/// let mut pools = HashingPools::default();
/// pools.client_threads = 1;
/// assert!(pools.user_threads >= 1);
/// assert_eq!(pools.queue_per_thread, 64);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HashingPools {
    /// Threads for user passwords (sign-in page, password grant). Default: the available
    /// parallelism (1 if unknown).
    pub user_threads: usize,
    /// Threads for client secrets at the token endpoint. Default: half the available
    /// parallelism, at least 1: a flood of wrong client secrets keeps at most that share of the
    /// cores busy.
    pub client_threads: usize,
    /// Checks of real accounts (user lane) and of client secrets (client lane) that may wait per
    /// thread of their lane. Default: 64, about two seconds of waiting at ~30 ms per check.
    pub queue_per_thread: usize,
    /// Dummy checks for unknown usernames that may wait per user-lane thread, in a queue of
    /// their own served only when no real account's check waits. Default: 16; the queue only
    /// keeps an unknown username's answer as slow as a wrong password's, so it need not be deep.
    pub dummy_queue_per_thread: usize,
}

impl Default for HashingPools {
    fn default() -> Self {
        let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
        Self {
            user_threads: cores,
            client_threads: (cores / 2).max(1),
            queue_per_thread: 64,
            dummy_queue_per_thread: 16,
        }
    }
}

/// Both lanes.
pub(crate) struct Pools {
    pub(crate) user: Lane,
    pub(crate) client: Lane,
}

impl Pools {
    /// Starts the threads of both lanes.
    pub(crate) fn new(config: &HashingPools) -> Self {
        let user_threads = config.user_threads.max(1);
        let client_threads = config.client_threads.max(1);
        let queue = config.queue_per_thread.max(1);
        let dummies = config.dummy_queue_per_thread.max(1);
        Self {
            user: Lane::new(
                "grantor-hash-user",
                user_threads,
                [
                    user_threads.saturating_mul(queue),
                    user_threads.saturating_mul(dummies),
                ],
            ),
            // Client secrets have no dummy checks: the low queue takes nothing.
            client: Lane::new(
                "grantor-hash-client",
                client_threads,
                [client_threads.saturating_mul(queue), 0],
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use futures_channel::oneshot;

    use super::*;
    use crate::error::{StoreError, StoreErrorKind};

    /// Only guards against a hang if the code under test is wrong; no assertion is about time.
    const HANG_GUARD: Duration = Duration::from_secs(60);

    fn pools(user_threads: usize, client_threads: usize) -> Pools {
        Pools::new(&HashingPools {
            user_threads,
            client_threads,
            queue_per_thread: 1,
            dummy_queue_per_thread: 1,
        })
    }

    /// Occupies one thread of `lane` until `release` is sent to (or dropped); returns once the
    /// job is running.
    fn block(lane: &Lane, priority: Priority) -> (mpsc::Sender<()>, oneshot::Receiver<()>) {
        let (started, running) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let result = lane
            .submit(priority, move || {
                let _ = started.send(());
                let _ = released.recv();
            })
            .unwrap();
        running.recv_timeout(HANG_GUARD).unwrap();
        (release, result)
    }

    fn kind(result: Result<oneshot::Receiver<()>, StoreError>) -> StoreErrorKind {
        result.err().unwrap().kind()
    }

    #[tokio::test]
    async fn a_full_client_lane_leaves_the_user_lane_free() {
        let pools = pools(1, 2);
        let blocked = [
            block(&pools.client, Priority::Normal),
            block(&pools.client, Priority::Normal),
        ];
        // Two threads with one waiting place each: two checks wait, the third is refused.
        let queued = [
            pools.client.submit(Priority::Normal, || ()).unwrap(),
            pools.client.submit(Priority::Normal, || ()).unwrap(),
        ];
        let refused = pools.client.submit(Priority::Normal, || ());
        assert_eq!(kind(refused), StoreErrorKind::Unavailable);

        let phc = crate::hash::hash_password("alice-password").unwrap();
        let verified = pools
            .user
            .run(Priority::Normal, move || {
                crate::hash::verify_password(&phc, "alice-password")
            })
            .await;
        assert!(verified.unwrap());

        for (release, done) in blocked {
            release.send(()).unwrap();
            done.await.unwrap();
        }
        for done in queued {
            done.await.unwrap();
        }
    }

    #[tokio::test]
    async fn real_accounts_are_checked_before_dummy_checks() {
        let pools = Pools::new(&HashingPools {
            user_threads: 1,
            dummy_queue_per_thread: 2,
            ..HashingPools::default()
        });
        let (release, blocked) = block(&pools.user, Priority::Normal);
        let (order, checked) = mpsc::channel();
        let mut results = Vec::new();
        for check in ["dummy", "dummy", "real"] {
            let order = order.clone();
            let priority = if check == "real" {
                Priority::Normal
            } else {
                Priority::Low
            };
            results.push(
                pools
                    .user
                    .submit(priority, move || order.send(check).unwrap())
                    .unwrap(),
            );
        }
        release.send(()).unwrap();
        blocked.await.unwrap();
        for result in results {
            result.await.unwrap();
        }
        let order: Vec<_> = checked.try_iter().collect();
        assert_eq!(order, ["real", "dummy", "dummy"]);
    }

    #[tokio::test]
    async fn a_full_dummy_queue_answers_unavailable_at_once() {
        let pools = pools(1, 1);
        let (release, blocked) = block(&pools.user, Priority::Normal);
        assert!(pools.user.has_room(Priority::Low));
        let queued = pools.user.submit(Priority::Low, || ()).unwrap();
        assert!(!pools.user.has_room(Priority::Low));
        assert!(pools.user.has_room(Priority::Normal));
        let refused = pools.user.submit(Priority::Low, || ());
        assert_eq!(kind(refused), StoreErrorKind::Unavailable);
        // A real account's check still has room of its own.
        let real = pools.user.submit(Priority::Normal, || ()).unwrap();

        release.send(()).unwrap();
        blocked.await.unwrap();
        real.await.unwrap();
        queued.await.unwrap();
    }

    #[tokio::test]
    async fn a_panicking_job_errors_its_caller_and_the_pool_keeps_its_threads() {
        const THREADS: usize = 3;
        let pools = pools(THREADS, 1);
        for _ in 0..2 * THREADS {
            let panicked = pools
                .user
                .run(Priority::Normal, || -> bool { panic!("a job panics") })
                .await;
            assert_eq!(panicked.err().unwrap().kind(), StoreErrorKind::Failed);
        }
        // Every thread is still there: THREADS jobs that each wait for release run at once.
        let blocked: Vec<_> = (0..THREADS)
            .map(|_| block(&pools.user, Priority::Normal))
            .collect();
        for (release, done) in blocked {
            release.send(()).unwrap();
            done.await.unwrap();
        }
    }

    #[test]
    fn defaults_give_clients_half_the_cores_and_dummies_a_smaller_queue() {
        let config = HashingPools::default();
        assert!(config.user_threads >= 1);
        assert_eq!(config.client_threads, (config.user_threads / 2).max(1));
        assert!(config.dummy_queue_per_thread < config.queue_per_thread);
    }
}
