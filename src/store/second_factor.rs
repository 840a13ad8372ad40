//! The host's second factor: which users have one, and whether a code is right.

use async_trait::async_trait;

use super::records::User;
use crate::clock::UnixTime;
use crate::error::StoreError;

/// A second factor the host's users may have (a one-time password app, say): grantor asks for
/// its code after the password when a request asks for a class only the second factor reaches
/// ([`AcrLevels::second_factor`](crate::settings::AcrLevels::second_factor)), on a page of its
/// own with an input `otp`.
///
/// The host keeps the factor (a TOTP secret per user) and checks a code; grantor does the
/// rest: the form is sealed and bound to the browser like the sign-in form and spent once, the
/// wrong codes of an account are throttled through the attempt counter every node shares
/// ([`AcrLevels::second_factor_throttle`](crate::settings::AcrLevels::second_factor_throttle)),
/// and a code once accepted is never accepted again (RFC 6238 §5.2): [`verify`](Self::verify)
/// answers which code matched (its time step), and grantor spends that in the single-use seam.
/// A host's factor over its own enrolment table; the code check is the host's one-time password
/// library (a fixed code stands in for it here), compared in constant time:
///
/// ```
/// use std::collections::HashMap;
///
/// use grantor::async_trait;
/// use grantor::clock::UnixTime;
/// use grantor::store::{SecondFactor, StoreError, User, UserId};
/// use subtle::ConstantTimeEq as _;
///
/// /// Each enrolled user's TOTP secret.
/// struct Totp(HashMap<UserId, Vec<u8>>);
///
/// impl Totp {
///     /// The six digits of `secret` in the 30-second step `step` (RFC 6238): the host's library.
///     fn code(&self, _secret: &[u8], _step: u64) -> String {
///         "123456".to_owned()
///     }
/// }
///
/// #[async_trait]
/// impl SecondFactor for Totp {
///     async fn enrolled(&self, user: &User) -> Result<bool, StoreError> {
///         Ok(self.0.contains_key(user.id()))
///     }
///     async fn verify(&self, user: &User, code: &str, now: UnixTime)
///         -> Result<Option<u64>, StoreError> {
///         let Some(secret) = self.0.get(user.id()) else { return Ok(None) };
///         let step = now.as_secs() / 30;
///         // The step before too, for a clock a little behind; grantor spends the step that matched.
///         for candidate in [step, step.saturating_sub(1)] {
///             if bool::from(self.code(secret, candidate).as_bytes().ct_eq(code.as_bytes())) {
///                 return Ok(Some(candidate));
///             }
///         }
///         Ok(None)
///     }
/// }
/// # let _ = Totp(HashMap::new());
/// ```
#[async_trait]
pub trait SecondFactor: Send + Sync {
    /// The method it is, as `amr` names it (RFC 8176 §2): `otp` for a one-time password.
    fn method(&self) -> &str {
        "otp"
    }

    /// Whether `user` has this factor.
    async fn enrolled(&self, user: &User) -> Result<bool, StoreError>;

    /// Whether `code` is `user`'s code at `now`: `Some` with a number naming the code that
    /// matched (a TOTP time step), so that grantor can refuse it ever after; `None` for a wrong
    /// code. Answer in constant time where the factor allows it.
    async fn verify(
        &self,
        user: &User,
        code: &str,
        now: UnixTime,
    ) -> Result<Option<u64>, StoreError>;
}
