//! Per-account throttling of password guesses, shared by the password grant and the host's
//! sign-in page.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use crate::clock::UnixTime;

/// How many failed sign-ins an account tolerates within a window before further attempts are
/// refused without checking the password.
///
/// Keys are usernames as typed, lowercased, so unknown accounts are throttled like real ones
/// (the answer does not reveal which exist). The trade-off is the usual one: someone who
/// knows a username can lock that account out for one window.
#[derive(Debug)]
pub struct SignInThrottle {
    max_failures: usize,
    window: Duration,
    failures: Mutex<HashMap<String, VecDeque<UnixTime>>>,
}

/// Accounts tracked at most; past it, entries whose failures have all aged out are dropped,
/// then the oldest-looking half if that is not enough.
const MAX_TRACKED: usize = 100_000;

impl SignInThrottle {
    /// At most `max_failures` failed attempts per account within any `window`.
    pub fn new(max_failures: usize, window: Duration) -> Self {
        Self {
            max_failures: max_failures.max(1),
            window,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// `Ok` if `username` may try now, else how long until it may.
    pub fn check(&self, username: &str, now: UnixTime) -> Result<(), Duration> {
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let Some(times) = failures.get(&key(username)) else {
            return Ok(());
        };
        let recent: Vec<UnixTime> = times
            .iter()
            .copied()
            .filter(|t| t.plus(self.window) > now)
            .collect();
        if recent.len() < self.max_failures {
            return Ok(());
        }
        // Allowed again once the oldest recent failure leaves the window.
        let oldest = recent[recent.len() - self.max_failures];
        Err(Duration::from_secs(
            now.seconds_until(oldest.plus(self.window)).max(1),
        ))
    }

    /// Counts a failed attempt against `username`.
    pub fn record_failure(&self, username: &str, now: UnixTime) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.len() >= MAX_TRACKED {
            let window = self.window;
            failures.retain(|_, times| times.back().is_some_and(|t| t.plus(window) > now));
            if failures.len() >= MAX_TRACKED {
                failures.clear();
            }
        }
        let times = failures.entry(key(username)).or_default();
        while times.len() >= self.max_failures {
            times.pop_front();
        }
        times.push_back(now);
    }

    /// Forgets the failures of `username` after a successful sign-in.
    pub fn record_success(&self, username: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.remove(&key(username));
    }
}

impl Default for SignInThrottle {
    /// Ten failures per account per ten minutes.
    fn default() -> Self {
        Self::new(10, Duration::from_secs(600))
    }
}

fn key(username: &str) -> String {
    username.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_max_failures_until_the_window_passes() {
        let throttle = SignInThrottle::new(3, Duration::from_secs(60));
        let t0 = UnixTime::from_secs(1000);
        for i in 0..3 {
            assert!(
                throttle
                    .check("Bob@x", t0.plus(Duration::from_secs(i)))
                    .is_ok()
            );
            throttle.record_failure("bob@x", t0.plus(Duration::from_secs(i)));
        }
        let wait = throttle
            .check("BOB@x", t0.plus(Duration::from_secs(3)))
            .unwrap_err();
        assert_eq!(wait, Duration::from_secs(57));
        assert!(
            throttle
                .check("bob@x", t0.plus(Duration::from_secs(60)))
                .is_ok()
        );
        assert!(throttle.check("alice@x", t0).is_ok());
    }

    #[test]
    fn success_clears_the_count() {
        let throttle = SignInThrottle::new(2, Duration::from_secs(60));
        let t0 = UnixTime::from_secs(1000);
        throttle.record_failure("a@x", t0);
        throttle.record_success("a@x");
        throttle.record_failure("a@x", t0);
        assert!(throttle.check("a@x", t0).is_ok());
    }
}
