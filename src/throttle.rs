//! Per-account throttling of password guesses, shared by the password grant and the host's
//! sign-in page. The policy lives here; the counts live behind the
//! [`AttemptCounter`](crate::store::AttemptCounter) seam, shared by every node.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::clock::UnixTime;
use crate::secret::SecretDigest;
use crate::store::Attempts;

/// How many failed sign-ins an account tolerates within a window before further attempts are
/// refused without checking the password. The window starts at the account's first failure.
///
/// Accounts are keyed by a digest of the username as typed, trimmed and lowercased, so unknown
/// accounts are throttled like real ones (the answer does not reveal which exist) and every key
/// has the same short length whatever was typed. The trade-off is the usual one: someone who
/// knows a username can lock that account out for one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignInThrottle {
    max_failures: u32,
    window: Duration,
}

impl SignInThrottle {
    /// At most `max_failures` failed attempts per account within a `window` (at least one).
    pub fn new(max_failures: u32, window: Duration) -> Self {
        Self {
            max_failures: max_failures.max(1),
            window,
        }
    }

    /// The window a first failure starts.
    pub(crate) fn window(&self) -> Duration {
        self.window
    }

    /// The attempt counter's key for `username`: `signin:` and the base64url SHA-256 digest of
    /// the username trimmed and lowercased (50 bytes).
    pub(crate) fn key(&self, username: &str) -> String {
        let digest = SecretDigest::of(&username.trim().to_lowercase());
        format!("signin:{}", URL_SAFE_NO_PAD.encode(digest.as_bytes()))
    }

    /// How long until an account with `attempts` may try again; `None` if it may now.
    pub(crate) fn wait(&self, attempts: Option<Attempts>, now: UnixTime) -> Option<Duration> {
        let attempts = attempts.filter(|a| a.count >= self.max_failures)?;
        Some(Duration::from_secs(
            now.seconds_until(attempts.resets_at).max(1),
        ))
    }
}

impl Default for SignInThrottle {
    /// Ten failures per account per ten minutes.
    fn default() -> Self {
        Self::new(10, Duration::from_secs(600))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_waits_once_its_failures_reach_the_limit_until_the_window_ends() {
        let throttle = SignInThrottle::new(3, Duration::from_secs(60));
        let now = UnixTime::from_secs(1003);
        let ends = UnixTime::from_secs(1060);
        assert_eq!(throttle.wait(None, now), None);
        assert_eq!(throttle.wait(Some(Attempts::new(2, ends)), now), None);
        let wait = throttle.wait(Some(Attempts::new(3, ends)), now);
        assert_eq!(wait, Some(Duration::from_secs(57)));
    }

    #[test]
    fn keys_are_short_and_ignore_case_and_surrounding_space() {
        let throttle = SignInThrottle::default();
        let key = throttle.key(" Bob@Example.com ");
        assert_eq!(key, throttle.key("bob@example.com"));
        assert_eq!(key.len(), 50);
        assert_eq!(throttle.key(&"x".repeat(4000)).len(), 50);
        assert!(!key.contains("bob"));
    }
}
