//! The device authorization grant (RFC 8628): a device without a browser (a TV, a console)
//! gets a `device_code` and a short `user_code` at the device authorization endpoint, shows the
//! user the code and the host's verification page, and polls the token endpoint while the user
//! enters the code, signs in and approves on another device.
//!
//! Enable it with [`AuthorizationServerBuilder::device_flow`]; the endpoint is
//! [`AuthorizationServer::device_authorization`](crate::AuthorizationServer::device_authorization),
//! the grant `urn:ietf:params:oauth:grant-type:device_code` at the token endpoint, and the
//! verification page's steps are [`AuthorizationServer::enter_user_code`](crate::AuthorizationServer::enter_user_code)
//! followed by the usual sign-in and approval.
//!
//! Every device code lives in the [`SingleUseStore`](crate::store::SingleUseStore) (so every
//! node agrees on it) and polls are paced through the
//! [`AttemptCounter`](crate::store::AttemptCounter).
//!
//! **User codes** are [`USER_CODE_LENGTH`] characters from [`USER_CODE_ALPHABET`], 20
//! consonants without vowels (no words) or look-alike digits (RFC 8628 §6.1), shown as
//! `XXXX-XXXX`: 20⁸ ≈ 2^34.6 values. Guessing is throttled server-wide: at most
//! [`DeviceFlow::user_code_guesses`] wrong codes (default [`DEFAULT_USER_CODE_GUESSES`]) in any
//! [`GUESS_WINDOW`] (a minute), after which every code entry is refused until the window ends.
//! The window is short so that a flood of wrong codes locks real users out for a minute at
//! most; the limit is low so that guessing stays hopeless: with 1,000 live codes and the
//! defaults, an hour of guessing at the limit finds one with probability about
//! 6,000 × 1,000 / 20⁸ ≈ 2.3 × 10⁻⁴. A host that knows where requests come from can add
//! per-address limits in front of its verification page.
//!
//! **What an unauthenticated request can make the server keep**: a public client
//! authenticates with its `client_id` alone, so anyone may start device flows in its name.
//! Each start keeps two values for the device code lifetime (plus the same again to answer
//! `expired_token`), and each client may start at most [`DeviceFlow::per_client`] flows
//! (default [`DEFAULT_PER_CLIENT`]) in any window of that lifetime; past it, 429
//! `temporarily_unavailable`.
//!
//! [`AuthorizationServerBuilder::device_flow`]: crate::AuthorizationServerBuilder::device_flow

use std::time::Duration;

pub use crate::secret::DeviceCode;

/// The characters of a user code (RFC 8628 §6.1): consonants only, so no word can be spelled
/// and nothing reads as a digit; case-insensitive when typed.
pub const USER_CODE_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";

/// Characters in a user code (shown with a dash in the middle).
pub const USER_CODE_LENGTH: usize = 8;

/// The longest device code lifetime the builder accepts.
pub const MAX_LIFETIME: Duration = Duration::from_secs(1800);

/// How many device flows one client may start in one lifetime window by default.
pub const DEFAULT_PER_CLIENT: u32 = 1000;

/// How many wrong user codes the whole server accepts in one [`GUESS_WINDOW`] by default.
pub const DEFAULT_USER_CODE_GUESSES: u32 = 100;

/// The window in which wrong user codes are counted.
pub const GUESS_WINDOW: Duration = Duration::from_secs(60);

/// How the server runs the device authorization grant.
///
/// ```
/// use std::time::Duration;
/// use grantor::device::DeviceFlow;
///
/// let settings = DeviceFlow::new()
///     .lifetime(Duration::from_secs(900))
///     .verification_uri("/device");
/// assert_eq!(settings.interval_value(), Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFlow {
    lifetime: Duration,
    interval: Duration,
    verification_uri: String,
    per_client: u32,
    user_code_guesses: u32,
}

impl Default for DeviceFlow {
    fn default() -> Self {
        Self::new()
    }
}

impl DeviceFlow {
    /// Device codes live 10 minutes; devices poll every 5 seconds; the verification page is
    /// `/device` under the issuer.
    pub fn new() -> Self {
        Self {
            lifetime: Duration::from_secs(600),
            interval: Duration::from_secs(5),
            verification_uri: "/device".to_owned(),
            per_client: DEFAULT_PER_CLIENT,
            user_code_guesses: DEFAULT_USER_CODE_GUESSES,
        }
    }

    /// How long a device code and its user code live (`expires_in`): whole seconds, at most
    /// [`MAX_LIFETIME`].
    pub fn lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime;
        self
    }

    /// How long a device waits between polls at first (`interval`, RFC 8628 §3.2): whole
    /// seconds, 1 to 60. Each `slow_down` adds 5 seconds (§3.5).
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The host's verification page (`verification_uri`, RFC 8628 §3.2): a path under the
    /// issuer (`/device`) or an absolute `https`/`http` URL. Its form posts the `user_code`
    /// to the host, which calls [`AuthorizationServer::enter_user_code`](crate::AuthorizationServer::enter_user_code).
    pub fn verification_uri(mut self, uri: impl Into<String>) -> Self {
        self.verification_uri = uri.into();
        self
    }

    /// How many device flows one client may start in a window of the lifetime.
    pub fn per_client(mut self, limit: u32) -> Self {
        self.per_client = limit;
        self
    }

    /// How many wrong user codes the server accepts in a [`GUESS_WINDOW`], from
    /// everyone together, before it refuses every code entry until the window ends.
    pub fn user_code_guesses(mut self, limit: u32) -> Self {
        self.user_code_guesses = limit;
        self
    }

    /// The device code lifetime.
    pub fn lifetime_value(&self) -> Duration {
        self.lifetime
    }

    /// The first polling interval.
    pub fn interval_value(&self) -> Duration {
        self.interval
    }

    pub(crate) fn verification_uri_value(&self) -> &str {
        &self.verification_uri
    }

    pub(crate) fn per_client_limit(&self) -> u32 {
        self.per_client
    }

    pub(crate) fn user_code_guess_limit(&self) -> u32 {
        self.user_code_guesses
    }

    /// Why the settings are unusable, if they are.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        let whole = |d: Duration| d.subsec_nanos() == 0 && d.as_secs() > 0;
        if !whole(self.lifetime) || self.lifetime > MAX_LIFETIME {
            return Err("the lifetime must be whole seconds, at most 30 minutes");
        }
        if !whole(self.interval) || self.interval > Duration::from_secs(60) {
            return Err("the interval must be whole seconds, at most 60");
        }
        let uri = self.verification_uri.as_str();
        let absolute = url::Url::parse(uri)
            .is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.fragment().is_none());
        let path = uri.starts_with('/') && !uri.contains(['?', '#']) && uri.is_ascii();
        if !(absolute || path) {
            return Err("the verification URI must be a path or an http(s) URL");
        }
        if self.per_client == 0 || self.user_code_guesses == 0 {
            return Err("the limits must be above zero");
        }
        Ok(())
    }
}

/// Why a user code was not accepted; the verification page shows it and asks again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UserCodeProblem {
    /// Not the shape of a user code (eight letters, a dash allowed): nothing was looked up.
    Malformed,
    /// No live flow has this code: mistyped, expired or already answered.
    Unknown,
    /// Too many wrong codes were entered on this server lately; try again after the duration.
    Throttled(Duration),
}

impl std::fmt::Display for UserCodeProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Malformed => f.write_str("Enter the eight-letter code your device shows."),
            Self::Unknown => f.write_str(
                "That code is not valid. Check the code on your device; it may have expired.",
            ),
            Self::Throttled(wait) => write!(
                f,
                "Too many wrong codes were entered. Try again in {} minute(s).",
                wait.as_secs().div_ceil(60).max(1)
            ),
        }
    }
}
