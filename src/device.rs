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
//! [`DeviceFlow::user_code_guesses`](crate::settings::DeviceFlow::user_code_guesses) wrong codes (default
//! [`DEFAULT_USER_CODE_GUESSES`](crate::settings::DeviceFlow::DEFAULT_USER_CODE_GUESSES)) in any
//! [`GUESS_WINDOW`](crate::settings::DeviceFlow::GUESS_WINDOW) (a minute), after which every code entry is refused until the window ends.
//! The window is short so that a flood of wrong codes locks real users out for a minute at
//! most; the limit is low so that guessing stays hopeless: with 1,000 live codes and the
//! defaults, an hour of guessing at the limit finds one with probability about
//! 6,000 × 1,000 / 20⁸ ≈ 2.3 × 10⁻⁴. A host that knows where requests come from can add
//! per-address limits in front of its verification page.
//!
//! **What an unauthenticated request can make the server keep**: a public client
//! authenticates with its `client_id` alone, so anyone may start device flows in its name.
//! Each start keeps two values for the device code lifetime (plus the same again to answer
//! `expired_token`), and each client may start at most [`DeviceFlow::per_client`](crate::settings::DeviceFlow::per_client) flows
//! (default [`DEFAULT_PER_CLIENT`](crate::settings::DeviceFlow::DEFAULT_PER_CLIENT)) in any window of that lifetime; past it, 429
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

/// Why a user code was not accepted; the verification page shows it and asks again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UserCodeProblem {
    /// Not the shape of a user code (eight letters, a dash allowed): nothing was looked up.
    Malformed,
    /// No live flow has this code: mistyped, expired or already answered.
    Unknown,
    /// Too many wrong codes were entered with this account lately; try again after the
    /// duration.
    Throttled(Duration),
    /// Too many wrong codes were entered on this server lately by people not signed in: the
    /// code is taken only with a sign-in (the page asks for the email and password with it).
    SignInRequired,
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
            Self::SignInRequired => f.write_str(
                "Many wrong codes were entered here lately. Sign in to enter your code.",
            ),
        }
    }
}
