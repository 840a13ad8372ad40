//! The threads slow signatures run on, off the host's async executor.
//!
//! An RS256 signature (RSA-2048) takes about half a millisecond of one core; made on an executor
//! thread, a burst of code exchanges with RS256 ID tokens (or of RS256 access tokens) would hold
//! every other request on that thread back by as much. So each server makes its RS256 signatures
//! on a [`Lane`] of its own, sized by [`SigningPool`], started at its first RS256 signature and
//! ended when the server is dropped. EdDSA and ES256 signatures (tens of microseconds) are made
//! where they are asked for: handing them to a thread would cost about what they do.

use std::num::NonZeroUsize;
use std::sync::OnceLock;
use std::thread;

use super::keys::SigningAlgorithm;
use crate::error::StoreError;
use crate::lane::{Lane, Priority};

/// How many threads a server makes its slow signatures on (RS256: ID tokens, logout tokens,
/// signed userinfo, JWT access tokens) and how many may wait for them; hand it to
/// [`AuthorizationServerBuilder::signing_pool`](crate::AuthorizationServerBuilder::signing_pool).
///
/// A signature that finds the queue full is refused at once with `temporarily_unavailable`
/// (503), so a burst cannot queue without end; the bound counts signatures waiting, not those
/// being made. EdDSA and ES256 signatures never wait here. Zero in a field is taken as one.
///
/// Signatures a client can ask for at will, with no user in the loop (signed introspection
/// answers, RFC 9701), wait in a second queue of the same bound, served only when no other
/// signature waits: a flood of them is refused once that queue is full and never delays an ID
/// token, a logout token or a JWT-secured authorization response.
///
/// ```
/// use grantor::jwt::SigningPool;
///
/// let mut pool = SigningPool::default();
/// pool.threads = 2;
/// assert_eq!(pool.queue_per_thread, 256);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SigningPool {
    /// Threads RS256 signatures are made on. Default: half the available parallelism, at least
    /// 1, so that a burst of them leaves the other half of the cores to every other request.
    pub threads: usize,
    /// Signatures that may wait per thread. Default: 256, about a tenth of a second of waiting
    /// at half a millisecond each.
    pub queue_per_thread: usize,
}

impl Default for SigningPool {
    fn default() -> Self {
        let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
        Self {
            threads: (cores / 2).max(1),
            queue_per_thread: 256,
        }
    }
}

/// Where a server's signatures are made: inline for the fast algorithms, on its signing lane
/// for the slow ones.
pub(crate) struct Signatures {
    sizes: SigningPool,
    lane: OnceLock<Lane>,
}

impl Signatures {
    pub(crate) fn new(sizes: SigningPool) -> Self {
        Self {
            sizes,
            lane: OnceLock::new(),
        }
    }

    /// Runs `sign`, a signature with `algorithm`: on the signing lane if it is a slow one
    /// (`unavailable` when its queue is full), else here and now.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        algorithm: SigningAlgorithm,
        sign: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        self.run_as(Priority::Normal, algorithm, sign).await
    }

    /// The same for a signature a client can ask for at will, with no user in the loop
    /// (signed introspection answers, RFC 9701): a slow one waits in the lane's low queue,
    /// which the threads serve only when no other signature waits, and which has its own
    /// bound. A flood of such requests is refused (`unavailable`) once that queue is full; it
    /// never delays or refuses an ID token.
    #[cfg_attr(
        not(feature = "oidc"),
        allow(dead_code, reason = "used by feature oidc")
    )]
    pub(crate) async fn run_at_will<T: Send + 'static>(
        &self,
        algorithm: SigningAlgorithm,
        sign: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        self.run_as(Priority::Low, algorithm, sign).await
    }

    async fn run_as<T: Send + 'static>(
        &self,
        priority: Priority,
        algorithm: SigningAlgorithm,
        sign: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        if !is_slow(algorithm) {
            return Ok(sign());
        }
        self.lane().run(priority, sign).await
    }

    fn lane(&self) -> &Lane {
        self.lane.get_or_init(|| {
            let threads = self.sizes.threads.max(1);
            let queue = self.sizes.queue_per_thread.max(1);
            let bound = threads.saturating_mul(queue);
            Lane::new("grantor-sign", threads, [bound, bound])
        })
    }
}

impl Default for Signatures {
    fn default() -> Self {
        Self::new(SigningPool::default())
    }
}

/// Whether a signature with `algorithm` takes long enough (over a tenth of a millisecond) to
/// belong off the executor: RSA's private-key operation does; Ed25519 and P-256 do not.
fn is_slow(algorithm: SigningAlgorithm) -> bool {
    matches!(algorithm, SigningAlgorithm::RS256)
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use futures_channel::oneshot;

    use super::*;
    use crate::error::StoreErrorKind;

    /// Only guards against a hang if the code under test is wrong; no assertion is about time.
    const HANG_GUARD: Duration = Duration::from_secs(60);

    fn one_slot() -> Signatures {
        Signatures::new(SigningPool {
            threads: 1,
            queue_per_thread: 1,
        })
    }

    /// A job that holds the lane's one thread until `release` is sent; answers once it runs.
    fn occupy(lane: &Lane) -> (oneshot::Receiver<()>, mpsc::Sender<()>) {
        let (started, running) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let busy = lane
            .submit(Priority::Normal, move || {
                let _ = started.send(());
                let _ = released.recv();
            })
            .unwrap();
        running.recv_timeout(HANG_GUARD).unwrap();
        (busy, release)
    }

    #[tokio::test]
    async fn slow_signatures_run_on_the_lane_and_fast_ones_here() {
        let signatures = one_slot();
        let here = thread::current().id();
        let rs256 = signatures
            .run(SigningAlgorithm::RS256, || {
                thread::current().name().map(str::to_owned)
            })
            .await
            .unwrap();
        assert_eq!(rs256.as_deref(), Some("grantor-sign-0"));
        for fast in [SigningAlgorithm::ES256, SigningAlgorithm::EdDSA] {
            let ran_on = signatures
                .run(fast, || thread::current().id())
                .await
                .unwrap();
            assert_eq!(ran_on, here, "{fast:?} is signed where it is asked for");
        }
    }

    #[tokio::test]
    async fn a_full_queue_refuses_at_once_and_fast_signatures_go_on() {
        let signatures = one_slot();
        // Occupy the one thread, then fill the one waiting place.
        let lane = signatures.lane();
        let (busy, release) = occupy(lane);
        let waiting = lane.submit(Priority::Normal, || ()).unwrap();

        let refused = signatures.run(SigningAlgorithm::RS256, || ()).await;
        assert_eq!(refused.unwrap_err().kind(), StoreErrorKind::Unavailable);
        assert_eq!(
            signatures.run(SigningAlgorithm::EdDSA, || 7).await.unwrap(),
            7
        );

        release.send(()).unwrap();
        busy.await.unwrap();
        waiting.await.unwrap();
        assert_eq!(
            signatures.run(SigningAlgorithm::RS256, || 8).await.unwrap(),
            8
        );
    }

    #[tokio::test]
    async fn signatures_asked_at_will_wait_behind_the_others_and_fill_only_their_own_queue() {
        let signatures = one_slot();
        let lane = signatures.lane();
        let (busy, release) = occupy(lane);
        // The low queue's one place, taken by a job that records when it ran.
        let (order_in, order) = mpsc::channel();
        let low_order = order_in.clone();
        let low = lane
            .submit(Priority::Low, move || low_order.send("at will").unwrap())
            .unwrap();
        // A flood asked at will is refused now: its queue is full.
        let flood = signatures.run_at_will(SigningAlgorithm::RS256, || ()).await;
        assert_eq!(flood.unwrap_err().kind(), StoreErrorKind::Unavailable);
        // An ID token's signature still has its place, and runs first.
        let normal = lane
            .submit(Priority::Normal, move || order_in.send("id token").unwrap())
            .unwrap();
        release.send(()).unwrap();
        busy.await.unwrap();
        normal.await.unwrap();
        low.await.unwrap();
        let ran: Vec<&str> = order.try_iter().collect();
        assert_eq!(ran, ["id token", "at will"]);
    }
}
