//! [`DeviceFlow`]: how the server runs the device authorization grant (RFC 8628); what the
//! flow is, and what bounds it, is [`crate::device`].

use std::time::Duration;

/// How the server runs the device authorization grant.
///
/// ```
/// use std::time::Duration;
/// use grantor::settings::DeviceFlow;
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
    /// The longest device code lifetime the builder accepts.
    pub const MAX_LIFETIME: Duration = Duration::from_secs(1800);

    /// How many device flows one client may start in one lifetime window by default.
    pub const DEFAULT_PER_CLIENT: u32 = 1000;

    /// How many wrong user codes the whole server accepts in one [`GUESS_WINDOW`](Self::GUESS_WINDOW) by default
    /// from people not signed in.
    pub const DEFAULT_USER_CODE_GUESSES: u32 = 100;

    /// How many wrong user codes one account may enter, signed in on the verification page, in
    /// one [`GUESS_WINDOW`](Self::GUESS_WINDOW). Codes are 8 of 20 letters (2.56 × 10¹⁰), so all guesses
    /// together, the server-wide limit's and each account's, stay far from finding a live one.
    pub const USER_CODE_GUESSES_PER_ACCOUNT: u32 = 5;

    /// The window in which wrong user codes are counted.
    pub const GUESS_WINDOW: Duration = Duration::from_secs(60);

    /// Device codes live 10 minutes; devices poll every 5 seconds; the verification page is
    /// `/device` under the issuer.
    pub fn new() -> Self {
        Self {
            lifetime: Duration::from_secs(600),
            interval: Duration::from_secs(5),
            verification_uri: "/device".to_owned(),
            per_client: Self::DEFAULT_PER_CLIENT,
            user_code_guesses: Self::DEFAULT_USER_CODE_GUESSES,
        }
    }

    /// How long a device code and its user code live (`expires_in`): whole seconds, at most
    /// [`MAX_LIFETIME`](Self::MAX_LIFETIME).
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

    /// How many wrong user codes the server accepts in a [`GUESS_WINDOW`](Self::GUESS_WINDOW) from
    /// everyone not signed in together. Past it until the window ends, the verification page
    /// takes a code only with the person's sign-in, and counts that account's wrong codes
    /// apart ([`USER_CODE_GUESSES_PER_ACCOUNT`](Self::USER_CODE_GUESSES_PER_ACCOUNT)): a flood of
    /// wrong codes refuses nobody's right one. (Codes checked at the same moment may pass a
    /// limit by as many as arrive together: each is counted once it is known to be wrong.)
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
        if !whole(self.lifetime) || self.lifetime > Self::MAX_LIFETIME {
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
