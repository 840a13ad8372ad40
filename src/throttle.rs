//! Per-account throttling of password guesses, shared by the password grant and the host's
//! sign-in page. The policy lives here; the counts live behind the
//! [`AttemptCounter`](crate::store::AttemptCounter) seam, shared by every node.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use futures_channel::oneshot;

use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::store::{AttemptCounter, Attempts, namespace};

/// How many failed sign-ins an account tolerates within a window before further attempts are
/// refused without checking the password. The window starts at the account's first failure.
///
/// Accounts are keyed by a digest of the username's key (the address lowercased, for email
/// usernames: [`Usernames`](crate::settings::Usernames)), so unknown accounts are throttled like
/// real ones (the answer does not reveal which exist) and every key
/// has the same short length whatever was typed. The trade-off is the usual one: someone who
/// knows a username can lock that account out for one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignInThrottle {
    max_failures: u32,
    window: Duration,
    /// What its refusals count as in `grantor_budget_refusals_total`.
    counted: Counted,
}

impl SignInThrottle {
    /// At most `max_failures` failed attempts per account within a `window` (at least one).
    pub fn new(max_failures: u32, window: Duration) -> Self {
        Self {
            max_failures: max_failures.max(1),
            window,
            counted: Counted {
                kind: "sign_in",
                tier: "account",
            },
        }
    }

    /// The same limits, its refusals counted as `counted` (a client's secrets, a second
    /// factor) rather than an account's sign-ins.
    pub(crate) fn counted_as(self, counted: Counted) -> Self {
        Self { counted, ..self }
    }

    /// The window a first failure starts.
    pub(crate) fn window(&self) -> Duration {
        self.window
    }

    /// The attempt counter's key for the account whose key (as
    /// [`Usernames::key`](crate::settings::Usernames::key) gives it) is `account`: `signin:` and
    /// the base64url SHA-256 digest of it (50 bytes, whatever was typed).
    pub(crate) fn key(&self, account: &str) -> String {
        namespace::sign_in_failures(account)
    }

    /// How long until an account whose attempt was just counted as `reserved` may try again;
    /// `None` if this attempt is within the limit and may be checked.
    pub(crate) fn wait(&self, reserved: Attempts, now: UnixTime) -> Option<Duration> {
        let refused = reserved.count > self.max_failures;
        if refused {
            crate::metrics::budget_refused(self.counted.kind, self.counted.tier);
        }
        refused.then(|| Duration::from_secs(now.seconds_until(reserved.resets_at).max(1)))
    }
}

/// A limit on how often something may happen in a window, counted under one key through the
/// attempt counter (so every node shares it): what bounds the state a caller can make the
/// server keep.
#[cfg_attr(
    not(feature = "dpop"),
    allow(dead_code, reason = "used by feature dpop")
)]
pub(crate) struct Quota<'a> {
    pub(crate) key: &'a str,
    pub(crate) window: Duration,
    pub(crate) limit: u32,
    /// The description of the 429 `temporarily_unavailable` past the limit.
    pub(crate) refusal: &'static str,
    /// What is counted and whose budget it is, for the refusals' metric
    /// (`grantor_budget_refusals_total`): fixed names, never the key.
    pub(crate) counted: Counted,
}

/// What a [`Quota`] counts (`par`, `dpop-key`, …) and whose budget it spends (`client`,
/// `network`, `self_registered`, …): the labels of a refusal's metric, from fixed sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counted {
    pub(crate) kind: &'static str,
    pub(crate) tier: &'static str,
}

/// Failed client secrets, counted per client.
pub(crate) const CLIENT_SECRETS: Counted = Counted {
    kind: "client_secret",
    tier: "client",
};

/// Wrong second-factor codes, counted per account.
pub(crate) const SECOND_FACTOR: Counted = Counted {
    kind: "second_factor",
    tier: "account",
};

#[cfg_attr(
    not(feature = "dpop"),
    allow(dead_code, reason = "used by feature dpop")
)]
impl Quota<'_> {
    /// Counts one use; past the limit, the 429 refusal.
    pub(crate) async fn count(
        &self,
        attempts: &dyn AttemptCounter,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let counted = attempts.record_attempt(self.key, self.window, now).await?;
        if counted.count > self.limit {
            crate::metrics::budget_refused(self.counted.kind, self.counted.tier);
            return Err(
                OAuthError::new(ErrorCode::TemporarilyUnavailable, self.refusal)
                    .with_status(http::StatusCode::TOO_MANY_REQUESTS),
            );
        }
        Ok(())
    }
}

impl Default for SignInThrottle {
    /// Ten failures per account per ten minutes.
    fn default() -> Self {
        Self::new(10, Duration::from_secs(600))
    }
}

/// One password check at a time per account on this node: concurrent sign-ins at one account
/// wait their turn instead of being refused, so the count each reserves is exact (at most one
/// reservation per node is in flight), a user's concurrent correct sign-ins never throttle
/// each other, and concurrent guesses still each wait for the previous one's outcome.
///
/// Bounded by the requests in flight: an entry lives only while some request holds or awaits
/// its turn.
#[derive(Default)]
pub(crate) struct Turns {
    waiting: Mutex<HashMap<String, VecDeque<oneshot::Sender<()>>>>,
}

impl std::fmt::Debug for Turns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The keys are digests of usernames: shown as a count only.
        let held = self.lock().len();
        f.debug_struct("Turns").field("accounts", &held).finish()
    }
}

/// A held turn; dropping it hands the turn to the next waiter.
pub(crate) struct Turn<'a> {
    turns: &'a Turns,
    key: String,
}

impl Turns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<oneshot::Sender<()>>>> {
        // Every change under the lock is a single map or queue operation.
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until no other request of this node checks `key`'s password.
    pub(crate) async fn take(&self, key: &str) -> Turn<'_> {
        let wait = {
            let mut waiting = self.lock();
            match waiting.get_mut(key) {
                None => {
                    waiting.insert(key.to_owned(), VecDeque::new());
                    None
                }
                Some(queue) => {
                    let (ready, wait) = oneshot::channel();
                    queue.push_back(ready);
                    Some(wait)
                }
            }
        };
        if let Some(wait) = wait {
            let mut waiting = Waiting {
                turns: self,
                key,
                wait: Some(wait),
            };
            if let Some(wait) = waiting.wait.as_mut() {
                // A sender is dropped unsent only with its queue, never while we wait in it.
                let _ = wait.await;
            }
            waiting.wait = None;
        }
        Turn {
            turns: self,
            key: key.to_owned(),
        }
    }

    #[cfg(test)]
    fn take_now(&self, key: &str) -> bool {
        !self.lock().contains_key(key)
    }

    /// Hands `key`'s turn to the first waiter still waiting, or frees it.
    fn hand_on(&self, key: &str) {
        let mut waiting = self.lock();
        let Some(queue) = waiting.get_mut(key) else {
            return;
        };
        while let Some(next) = queue.pop_front() {
            if next.send(()).is_ok() {
                return;
            }
        }
        waiting.remove(key);
    }
}

/// A request waiting for its turn; if it gives up after the turn reached it, it hands it on.
struct Waiting<'a> {
    turns: &'a Turns,
    key: &'a str,
    wait: Option<oneshot::Receiver<()>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(mut wait) = self.wait.take() {
            wait.close();
            if let Ok(Some(())) = wait.try_recv() {
                self.turns.hand_on(self.key);
            }
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.turns.hand_on(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_waits_once_its_reserved_attempts_pass_the_limit_until_the_window_ends() {
        let throttle = SignInThrottle::new(3, Duration::from_secs(60));
        let now = UnixTime::from_secs(1003);
        let ends = UnixTime::from_secs(1060);
        assert_eq!(throttle.wait(Attempts::new(1, ends), now), None);
        assert_eq!(throttle.wait(Attempts::new(3, ends), now), None);
        let wait = throttle.wait(Attempts::new(4, ends), now);
        assert_eq!(wait, Some(Duration::from_secs(57)));
    }

    #[test]
    fn keys_are_short_and_name_no_account() {
        let throttle = SignInThrottle::default();
        let key = throttle.key("bob@example.com");
        assert_eq!(key.len(), 50);
        assert_eq!(throttle.key(&"x".repeat(254)).len(), 50);
        assert!(!key.contains("bob"));
    }

    #[tokio::test]
    async fn turns_pass_in_order_and_skip_waiters_that_gave_up() {
        let turns = Turns::default();
        let first = turns.take("k").await;
        let mut second = Box::pin(turns.take("k"));
        let gave_up = Box::pin(turns.take("k"));
        let mut third = Box::pin(turns.take("k"));
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        for pending in [second.as_mut().poll(&mut cx), third.as_mut().poll(&mut cx)] {
            assert!(pending.is_pending());
        }
        let mut gave_up = gave_up;
        assert!(gave_up.as_mut().poll(&mut cx).is_pending());
        drop(gave_up);
        assert!(turns.take_now("other"), "other accounts do not wait");
        drop(first);
        let second = second.await;
        assert!(third.as_mut().poll(&mut cx).is_pending());
        drop(second);
        drop(third.await);
        assert_eq!(turns.lock().len(), 0, "nothing is kept once nobody waits");
    }
}
