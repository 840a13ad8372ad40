//! Time, injected: every expiry grantor checks reads the server's [`Clock`], so tests move time
//! instead of sleeping.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch: the resolution of every lifetime and of `exp`/`iat`. As JSON,
/// a number of seconds (as JWT `NumericDate`s are).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct UnixTime(u64);

impl UnixTime {
    /// The instant `seconds` after the Unix epoch.
    pub const fn from_secs(seconds: u64) -> Self {
        Self(seconds)
    }

    /// Seconds since the Unix epoch.
    pub const fn as_secs(self) -> u64 {
        self.0
    }

    /// This instant plus `duration` (whole seconds, saturating).
    pub fn plus(self, duration: Duration) -> Self {
        Self(self.0.saturating_add(duration.as_secs()))
    }

    /// This instant minus `duration` (whole seconds, saturating at the epoch).
    pub fn minus(self, duration: Duration) -> Self {
        Self(self.0.saturating_sub(duration.as_secs()))
    }

    /// Whole seconds from `self` until `later` (0 if `later` is not later).
    pub fn seconds_until(self, later: UnixTime) -> u64 {
        later.0.saturating_sub(self.0)
    }
}

impl From<SystemTime> for UnixTime {
    fn from(time: SystemTime) -> Self {
        // A clock set before 1970 reads as the epoch: everything then looks expired, which is
        // the safe failure.
        Self(time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
    }
}

/// Where grantor reads the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> UnixTime;
}

/// The operating system's wall clock; the default.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> UnixTime {
        SystemTime::now().into()
    }
}

/// A clock that moves only when told to: for tests of expiry.
///
/// Clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use grantor::clock::{Clock, ManualClock, UnixTime};
///
/// let clock = ManualClock::new(UnixTime::from_secs(1_000));
/// clock.advance(Duration::from_secs(61));
/// assert_eq!(clock.now(), UnixTime::from_secs(1_061));
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: UnixTime) -> Self {
        Self(Arc::new(AtomicU64::new(start.as_secs())))
    }

    /// Moves the clock forward by `by` (whole seconds).
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_secs(), Ordering::SeqCst);
    }

    /// Sets the clock to `to`.
    pub fn set(&self, to: UnixTime) {
        self.0.store(to.as_secs(), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> UnixTime {
        UnixTime(self.0.load(Ordering::SeqCst))
    }
}
