//! Whether the server can answer: the readiness check a host's `/readyz` asks.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

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
    /// Cheap enough for a load balancer to ask every few seconds: it keeps nothing, and with
    /// the client cache on, an unknown id still reaches the store.
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
