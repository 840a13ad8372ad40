//! The authentication context classes (`acr`) a deployment names, and which of them grantor's
//! own sign-in steps reach.

use std::time::Duration;

use crate::throttle::{SECOND_FACTOR, SignInThrottle};

/// The authentication context classes (`acr`, OIDC Core §2) of a deployment, weakest first,
/// and which of them grantor's own steps reach: the password alone, and the password with the
/// [second factor](crate::store::SecondFactor). A host that signs people in by its own steps
/// ([`AuthorizationServer::finish_sign_in`](crate::AuthorizationServer::finish_sign_in))
/// reports any class of the list.
///
/// A sign-in at one class satisfies a request for it or for any class before it in the list.
/// A request's `acr_values` (voluntary) or the `claims` parameter's essential `acr` that the
/// browser's sign-in does not satisfy asks for the missing step: the second factor, when the
/// user has one and it reaches a class asked for; otherwise a voluntary request goes on with
/// what the sign-in reached, and an essential one is refused with `access_denied`. The classes
/// are published as `acr_values_supported`; ID tokens carry the class reached, and so do
/// introspection and JWT access tokens.
///
/// ```
/// use grantor::settings::AcrLevels;
///
/// let levels = AcrLevels::new(["urn:example:acr:password", "urn:example:acr:mfa"])
///     .password("urn:example:acr:password")
///     .second_factor("urn:example:acr:mfa");
/// assert!(levels.satisfies("urn:example:acr:mfa", "urn:example:acr:password"));
/// assert!(!levels.satisfies("urn:example:acr:password", "urn:example:acr:mfa"));
/// ```
#[derive(Debug, Clone)]
pub struct AcrLevels {
    classes: Vec<String>,
    password: Option<String>,
    second_factor: Option<String>,
    second_factor_throttle: SignInThrottle,
}

impl Default for AcrLevels {
    /// No classes: sign-ins carry no `acr`, and requests for one are answered as a
    /// voluntary request that cannot be met (or `access_denied`, essential).
    fn default() -> Self {
        Self::new(Vec::<String>::new())
    }
}

impl AcrLevels {
    /// The deployment's classes, weakest first.
    pub fn new<I, S>(classes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            classes: classes.into_iter().map(Into::into).collect(),
            password: None,
            second_factor: None,
            second_factor_throttle: SignInThrottle::new(5, Duration::from_secs(600))
                .counted_as(SECOND_FACTOR),
        }
    }

    /// The class a sign-in with the password alone reaches (one of the list).
    pub fn password(mut self, class: impl Into<String>) -> Self {
        self.password = Some(class.into());
        self
    }

    /// The class a sign-in with the password and the second factor reaches (one of the list).
    pub fn second_factor(mut self, class: impl Into<String>) -> Self {
        self.second_factor = Some(class.into());
        self
    }

    /// How many wrong second-factor codes an account may enter in a window before further
    /// codes are refused unchecked (default: 5 per 10 minutes).
    pub fn second_factor_throttle(mut self, throttle: SignInThrottle) -> Self {
        self.second_factor_throttle = throttle.counted_as(SECOND_FACTOR);
        self
    }

    /// Whether a sign-in that reached `reached` satisfies a request for `asked`: the same
    /// class, or one after it in the list.
    pub fn satisfies(&self, reached: &str, asked: &str) -> bool {
        if reached == asked {
            return true;
        }
        match (self.rank(reached), self.rank(asked)) {
            (Some(reached), Some(asked)) => reached >= asked,
            _ => false,
        }
    }

    fn rank(&self, class: &str) -> Option<usize> {
        self.classes.iter().position(|c| c == class)
    }

    /// The deployment's classes, weakest first (`acr_values_supported`).
    pub fn classes(&self) -> &[String] {
        &self.classes
    }

    /// The class a password alone reaches.
    pub(crate) fn by_password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The class the password and the second factor reach.
    pub(crate) fn by_second_factor(&self) -> Option<&str> {
        self.second_factor.as_deref()
    }

    pub(crate) fn throttle(&self) -> &SignInThrottle {
        &self.second_factor_throttle
    }

    /// Whether every class the steps reach is one of the list.
    pub(crate) fn is_valid(&self) -> bool {
        let listed = |class: &Option<String>| class.as_ref().is_none_or(|c| self.rank(c).is_some());
        listed(&self.password) && listed(&self.second_factor)
    }
}
