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
    /// the username trimmed and lowercased (50 bytes); `None` for a malformed username (see
    /// [`is_well_formed_username`]), which is refused before any count or hash.
    pub(crate) fn key(&self, username: &str) -> Option<String> {
        let username = username.trim();
        if !is_well_formed_username(username) {
            return None;
        }
        let digest = SecretDigest::of(&username.to_lowercase());
        Some(format!(
            "signin:{}",
            URL_SAFE_NO_PAD.encode(digest.as_bytes())
        ))
    }

    /// How long until an account whose attempt was just counted as `reserved` may try again;
    /// `None` if this attempt is within the limit and may be checked.
    pub(crate) fn wait(&self, reserved: Attempts, now: UnixTime) -> Option<Duration> {
        (reserved.count > self.max_failures)
            .then(|| Duration::from_secs(now.seconds_until(reserved.resets_at).max(1)))
    }
}

/// Whether `username` (already trimmed) can be an email address: 3 to 254 bytes (RFC 5321
/// §4.5.3.1.3 bounds a path at 256 octets, brackets included), no control characters or
/// spaces, and an `@` with something on each side.
pub(crate) fn is_well_formed_username(username: &str) -> bool {
    let Some((local, domain)) = username.rsplit_once('@') else {
        return false;
    };
    (3..=254).contains(&username.len())
        && !local.is_empty()
        && !domain.is_empty()
        && !username
            .chars()
            .any(|c| c.is_control() || c.is_whitespace())
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
    fn malformed_usernames_have_no_key() {
        let throttle = SignInThrottle::default();
        let long = format!("{}@example.com", "a".repeat(250));
        for bad in [
            "",
            "  ",
            "alice",
            "@example.com",
            "alice@",
            "a b@example.com",
            "a\u{0}@x",
            &long,
        ] {
            assert_eq!(throttle.key(bad), None, "{bad:?}");
        }
        assert!(throttle.key("alice@example.com").is_some());
    }

    #[test]
    fn keys_are_short_and_ignore_case_and_surrounding_space() {
        let throttle = SignInThrottle::default();
        let key = throttle.key(" Bob@Example.com ").unwrap();
        assert_eq!(Some(&key), throttle.key("bob@example.com").as_ref());
        assert_eq!(key.len(), 50);
        let longest = format!("{}@example.com", "x".repeat(242));
        assert_eq!(throttle.key(&longest).unwrap().len(), 50);
        assert!(!key.contains("bob"));
    }
}
