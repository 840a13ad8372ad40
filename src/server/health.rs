//! Whether the server can answer: the readiness check a host's `/readyz` asks.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::Mutex;
use std::task::Poll;
use std::time::{Duration, Instant};

use super::AuthorizationServer;
use crate::store::{SecretDigest, StoreError};

/// The client id and token the readiness reads look up: no client or token has them (client
/// ids are never empty text behind a space, and this digest is of no token grantor minted).
const PROBE: &str = " grantor readiness probe";

impl AuthorizationServer {
    /// Whether the stores answer: one lookup through the client seam and one through the token
    /// seam, each of a client and a token that do not exist, both before `deadline` completes
    /// (the host's timer, such as `tokio::time::sleep(Duration::from_secs(2))`, so that this
    /// works on any runtime). `Ok` when both answered; the store's error when one failed; an
    /// `unavailable` error when `deadline` came first.
    ///
    /// Cheap enough for a load balancer to ask every few seconds: it keeps nothing. A probe
    /// path is usually reachable without credentials, so an answer is reused for a second:
    /// however often it is asked, the stores see at most one read of each
    /// seam a second (and one per caller already waiting when an answer comes).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, _) = grantor::doc_fixture::server().await;
    /// use std::time::Duration;
    ///
    /// let ready = server.ready(tokio::time::sleep(Duration::from_secs(2))).await;
    /// assert!(ready.is_ok());
    /// # }
    /// ```
    pub async fn ready(&self, deadline: impl Future<Output = ()>) -> Result<(), StoreError> {
        if let Some(answer) = self.inner.readiness.recent() {
            return answer;
        }
        let answer = self.read_before(deadline).await;
        self.inner.readiness.keep(&answer);
        answer
    }

    /// The reads of [`ready`](Self::ready), raced against `deadline`.
    async fn read_before(&self, deadline: impl Future<Output = ()>) -> Result<(), StoreError> {
        let mut reads = pin!(self.read_through_seams());
        let mut deadline = pin!(deadline);
        poll_fn(|cx| {
            if let Poll::Ready(answer) = reads.as_mut().poll(cx) {
                return Poll::Ready(answer);
            }
            deadline.as_mut().poll(cx).map(|()| {
                Err(StoreError::unavailable(
                    "the stores did not answer within the readiness bound",
                ))
            })
        })
        .await
    }

    /// One read through the client seam and one through the token seam.
    async fn read_through_seams(&self) -> Result<(), StoreError> {
        let inner = &self.inner;
        inner.clients.find_client(PROBE).await?;
        let token = SecretDigest::of(PROBE);
        inner.tokens.find_access_token(&token, inner.now()).await?;
        Ok(())
    }
}

/// How long a readiness answer is reused before the stores are read again.
pub(crate) const READINESS_REUSE: Duration = Duration::from_secs(1);

/// The last readiness answer and when it came: `None` for ready, else why not.
#[derive(Default)]
pub(crate) struct Readiness(Mutex<Option<(Instant, Option<String>)>>);

impl Readiness {
    /// The last answer, when it came less than [`READINESS_REUSE`] ago.
    fn recent(&self) -> Option<Result<(), StoreError>> {
        let last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (at, failure) = last.as_ref()?;
        if at.elapsed() >= READINESS_REUSE {
            return None;
        }
        Some(match failure {
            None => Ok(()),
            Some(why) => Err(StoreError::unavailable(why.clone())),
        })
    }

    /// Keeps `answer` as the last one.
    fn keep(&self, answer: &Result<(), StoreError>) {
        let failure = answer.as_ref().err().map(ToString::to_string);
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), failure));
    }
}
