//! Whether a sign-in is enough for what a request asks of it (`acr_values`, the `claims`
//! parameter's essential `acr`: OIDC Core §3.1.2.1, §5.5.1.1; RFC 9470 §4), and if not, the one
//! step that is missing.

use std::time::Duration;

use super::super::pending::{Authenticated, PendingAuthorization};
use crate::error::{ErrorCode, OAuthError};
use crate::settings::AcrLevels;
use crate::store::{SecondFactor, User};

/// The deployment's classes and the host's second factor, if any.
#[derive(Clone, Copy)]
pub(crate) struct Levels<'a> {
    pub(crate) acr: &'a AcrLevels,
    pub(crate) second_factor: Option<&'a dyn SecondFactor>,
}

/// What a sign-in still needs before the request may go on.
#[derive(Debug)]
pub(crate) enum Needed {
    /// Nothing: on to the approval or the answer.
    Nothing,
    /// The second factor's code (only that: the password stands).
    SecondFactor,
    /// The request requires a class this user's sign-in cannot reach: refused.
    Refused(OAuthError),
}

/// Why a second-factor code was not accepted; shown on its page, never sent to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecondFactorProblem {
    /// The code is wrong, expired or was used before.
    WrongCode,
    /// Too many wrong codes for this account; try again after the duration.
    Throttled(Duration),
}

impl std::fmt::Display for SecondFactorProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::WrongCode => f.write_str("The code is not right. Enter the current one."),
            Self::Throttled(wait) => write!(
                f,
                "Too many wrong codes for this account. Try again in {} minute(s).",
                wait.as_secs().div_ceil(60).max(1)
            ),
        }
    }
}

impl Levels<'_> {
    /// The class a password alone reaches.
    pub(crate) fn by_password(&self) -> Option<String> {
        self.acr.by_password().map(str::to_owned)
    }

    /// What `user`'s sign-in `authenticated` still needs for `pending`. The second factor is
    /// offered only when `second_factor` (grantor's own steps, not a host's finished sign-in),
    /// when it reaches a class asked for, when the sign-in has not used it already, and when
    /// the user has it.
    pub(crate) async fn needed(
        &self,
        pending: &PendingAuthorization,
        authenticated: &Authenticated,
        user: &User,
        second_factor: bool,
    ) -> Result<Needed, OAuthError> {
        let (asked, essential) = pending.acr_values();
        if asked.is_empty() {
            return Ok(Needed::Nothing);
        }
        let reached = authenticated.acr.as_deref();
        if reached.is_some_and(|reached| asked.iter().any(|a| self.acr.satisfies(reached, a))) {
            return Ok(Needed::Nothing);
        }
        if second_factor
            && let (Some(factor), Some(class)) = (self.second_factor, self.acr.by_second_factor())
            && asked.iter().any(|a| self.acr.satisfies(class, a))
            && !authenticated.amr.iter().any(|m| m == factor.method())
            && factor.enrolled(user).await?
        {
            return Ok(Needed::SecondFactor);
        }
        if essential {
            return Ok(Needed::Refused(OAuthError::new(
                ErrorCode::AccessDenied,
                "the user cannot sign in at the authentication context class the request requires",
            )));
        }
        // Voluntary (OIDC Core §3.1.2.1): answered with the class the sign-in reached.
        Ok(Needed::Nothing)
    }
}
