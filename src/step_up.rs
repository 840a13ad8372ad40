//! Step-up authentication at a resource (RFC 9470): what a resource demands of the sign-in
//! behind a token, beyond its scope.

use std::time::Duration;

use smol_str::SmolStr;

use crate::clock::UnixTime;
use crate::store::{MAX_SID_BYTES, UserAuthentication};

/// What a protected resource demands of the sign-in behind a token (RFC 9470): an
/// authentication context class among `acr_values`, a sign-in at most `max_age` ago, or both.
/// A token that falls short (no user sign-in, another class, too long ago) is refused with 401
/// `insufficient_user_authentication` and a challenge naming what is demanded (RFC 9470 §3),
/// so that its client can send the user to sign in again with those `acr_values` and
/// `max_age` and come back with a new token.
///
/// Demanded where a scope is: [`AuthorizationServer::bearer_step_up`](crate::AuthorizationServer::bearer_step_up),
/// `RequireBearer::step_up` (feature `tower`) and the glues' `StepUpBearer` extractor.
///
/// ```
/// use std::time::Duration;
/// use grantor::StepUp;
///
/// let strong = StepUp::new()
///     .acr_values(["urn:grantor:acr:mfa"])
///     .unwrap()
///     .max_age(Duration::from_secs(300));
/// assert_eq!(strong.accepted_acr_values().collect::<Vec<_>>(), ["urn:grantor:acr:mfa"]);
/// assert_eq!(strong.required_max_age(), Some(Duration::from_secs(300)));
/// // A class must be usable in a challenge: printable ASCII, no space, quote or backslash.
/// assert!(StepUp::new().acr_values(["two words"]).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct StepUp {
    /// Acceptable classes, in the order the resource prefers them; empty: any sign-in.
    acr_values: Vec<SmolStr>,
    /// The oldest a sign-in may be, in whole seconds; `None`: any age.
    max_age: Option<u64>,
}

/// An `acr` value a [`StepUp`] cannot demand: empty, longer than [`MAX_SID_BYTES`] bytes (no
/// token keeps a longer one), or not printable ASCII without space, `"` and `\` (RFC 9470 §3
/// sends them in a challenge's quoted, space-separated `acr_values`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "an acr value must be 1 to 64 bytes of printable ASCII without spaces, '\"' or '\\' (RFC 9470 section 3)"
)]
pub struct StepUpError;

/// How a sign-in falls short of a [`StepUp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShortFall {
    /// The token carries no user sign-in (a client's own, or kept before grantor recorded it).
    NoSignIn,
    /// The sign-in's class is none of the acceptable ones.
    Class,
    /// The sign-in is older than the resource accepts.
    Age,
}

impl StepUp {
    /// A demand of nothing: any token passes, until [`acr_values`](Self::acr_values) or
    /// [`max_age`](Self::max_age) says more.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same demand, with the sign-in's class (`acr`) one of `values` (in the order the
    /// resource prefers them, as the challenge lists them). Replaces any earlier list; an
    /// empty one accepts any class.
    pub fn acr_values<'a>(
        mut self,
        values: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, StepUpError> {
        let mut accepted = Vec::new();
        for value in values {
            if !is_acr_value(value) {
                return Err(StepUpError);
            }
            if !accepted.iter().any(|kept: &SmolStr| kept == value) {
                accepted.push(SmolStr::new(value));
            }
        }
        self.acr_values = accepted;
        Ok(self)
    }

    /// The same demand, with the sign-in at most `max_age` ago (whole seconds; RFC 9470 §3,
    /// as OIDC Core's `max_age`).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = Some(max_age.as_secs());
        self
    }

    /// The acceptable classes, in the order the resource prefers them; none: any class.
    pub fn accepted_acr_values(&self) -> impl Iterator<Item = &str> {
        self.acr_values.iter().map(SmolStr::as_str)
    }

    /// The oldest a sign-in may be, if the resource says.
    pub fn required_max_age(&self) -> Option<Duration> {
        self.max_age.map(Duration::from_secs)
    }

    /// Whether this demands anything at all.
    pub(crate) fn demands_anything(&self) -> bool {
        !self.acr_values.is_empty() || self.max_age.is_some()
    }

    /// Whether a sign-in as `authentication` says (none: no user sign-in) satisfies the demand
    /// at `now`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use grantor::StepUp;
    /// use grantor::clock::UnixTime;
    /// use grantor::store::UserAuthentication;
    ///
    /// let recent = StepUp::new().max_age(Duration::from_secs(300));
    /// let signed_in = UserAuthentication::new(UnixTime::from_secs(1_000));
    /// assert!(recent.is_satisfied_by(Some(&signed_in), UnixTime::from_secs(1_300)));
    /// assert!(!recent.is_satisfied_by(Some(&signed_in), UnixTime::from_secs(1_301)));
    /// assert!(!recent.is_satisfied_by(None, UnixTime::from_secs(1_000)));
    /// ```
    pub fn is_satisfied_by(
        &self,
        authentication: Option<&UserAuthentication>,
        now: UnixTime,
    ) -> bool {
        self.falls_short(authentication, now).is_none()
    }

    /// How `authentication` falls short at `now`, if it does.
    pub(crate) fn falls_short(
        &self,
        authentication: Option<&UserAuthentication>,
        now: UnixTime,
    ) -> Option<ShortFall> {
        if !self.demands_anything() {
            return None;
        }
        let Some(signed_in) = authentication else {
            return Some(ShortFall::NoSignIn);
        };
        let class_accepted = self.acr_values.is_empty()
            || signed_in
                .acr()
                .is_some_and(|acr| self.acr_values.iter().any(|value| value == acr));
        if !class_accepted {
            return Some(ShortFall::Class);
        }
        // RFC 9470 §3: too old once `auth_time + max_age` has passed.
        let max_age = self.required_max_age();
        if max_age.is_some_and(|age| signed_in.auth_time().plus(age) < now) {
            return Some(ShortFall::Age);
        }
        None
    }

    /// The challenge's parameters of the demand (RFC 9470 §3): `, acr_values="…"` when it names
    /// classes, `, max_age=…` when it names an age. Every value was checked to quote as it is.
    pub(crate) fn challenge_parameters(&self) -> String {
        let mut parameters = String::new();
        if !self.acr_values.is_empty() {
            let values: Vec<&str> = self.accepted_acr_values().collect();
            parameters.push_str(&format!(", acr_values=\"{}\"", values.join(" ")));
        }
        if let Some(max_age) = self.max_age {
            parameters.push_str(&format!(", max_age={max_age}"));
        }
        parameters
    }
}

/// Whether `value` can be demanded: 1 to [`MAX_SID_BYTES`] bytes of `%x21 / %x23-5B /
/// %x5D-7E` (a scope token's characters, RFC 6749 §3.3), so it quotes as it is and a
/// space-separated list splits back into it.
fn is_acr_value(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= MAX_SID_BYTES
        && value
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5b | 0x5d..=0x7e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MFA: &str = "urn:grantor:acr:mfa";

    fn at(secs: u64) -> UnixTime {
        UnixTime::from_secs(secs)
    }

    #[test]
    fn a_sign_in_falls_short_by_class_by_age_or_by_its_absence() {
        let demand = StepUp::new()
            .acr_values([MFA, "urn:grantor:acr:hwk"])
            .unwrap()
            .max_age(Duration::from_secs(300));
        let strong = UserAuthentication::new(at(1_000)).with_acr(Some(MFA.to_owned()));
        assert_eq!(demand.falls_short(Some(&strong), at(1_300)), None);
        assert_eq!(
            demand.falls_short(Some(&strong), at(1_301)),
            Some(ShortFall::Age)
        );
        let weak = UserAuthentication::new(at(1_000)).with_acr(Some("urn:x:pwd".to_owned()));
        assert_eq!(
            demand.falls_short(Some(&weak), at(1_000)),
            Some(ShortFall::Class)
        );
        let classless = UserAuthentication::new(at(1_000));
        assert_eq!(
            demand.falls_short(Some(&classless), at(1_000)),
            Some(ShortFall::Class)
        );
        assert_eq!(
            demand.falls_short(None, at(1_000)),
            Some(ShortFall::NoSignIn)
        );
        // A sign-in the clock has not reached yet (skew between nodes) is recent.
        assert_eq!(demand.falls_short(Some(&strong), at(900)), None);
    }

    #[test]
    fn a_demand_of_nothing_passes_every_token() {
        let nothing = StepUp::new();
        assert!(nothing.is_satisfied_by(None, at(0)));
        let emptied = StepUp::new().acr_values([]).unwrap();
        assert!(!emptied.demands_anything());
        let any_class = StepUp::new().max_age(Duration::from_secs(0));
        let now = UserAuthentication::new(at(5));
        assert!(any_class.is_satisfied_by(Some(&now), at(5)));
        assert!(!any_class.is_satisfied_by(Some(&now), at(6)));
    }

    #[test]
    fn only_values_that_quote_as_they_are_can_be_demanded() {
        let longest = "a".repeat(MAX_SID_BYTES);
        assert!(StepUp::new().acr_values([longest.as_str()]).is_ok());
        let too_long = "a".repeat(MAX_SID_BYTES + 1);
        for bad in [
            "",
            "a b",
            "a\"b",
            "a\\b",
            "\u{e9}",
            "a\tb",
            too_long.as_str(),
        ] {
            assert_eq!(
                StepUp::new().acr_values([MFA, bad]),
                Err(StepUpError),
                "{bad:?}"
            );
        }
    }

    proptest::proptest! {
        /// Whatever a host demands, the challenge is a valid header value whose `acr_values`
        /// split back into the classes demanded; what cannot be demanded is refused, never
        /// rendered.
        #[test]
        fn every_demand_renders_into_a_header_that_lists_its_classes(
            values in proptest::collection::vec("[ a:\"\\\\é\t-]{0,70}", 0..4),
            age in 0u64..=u64::MAX,
        ) {
            let Ok(step_up) = StepUp::new().acr_values(values.iter().map(String::as_str)) else {
                proptest::prop_assert!(!values.iter().all(|v| is_acr_value(v)));
                return Ok(());
            };
            let step_up = step_up.max_age(Duration::from_secs(age));
            let parameters = step_up.challenge_parameters();
            proptest::prop_assert!(http::HeaderValue::from_str(&parameters).is_ok());
            let listed = parameters
                .split('"')
                .nth(1)
                .map(|list| list.split(' ').collect::<Vec<_>>());
            let demanded: Vec<&str> = step_up.accepted_acr_values().collect();
            proptest::prop_assert_eq!(listed, (!demanded.is_empty()).then_some(demanded));
        }
    }

    #[test]
    fn the_challenge_names_what_is_demanded_in_order_and_once() {
        let both = StepUp::new()
            .acr_values([MFA, "b", MFA])
            .unwrap()
            .max_age(Duration::from_millis(300_900));
        assert_eq!(
            both.challenge_parameters(),
            format!(", acr_values=\"{MFA} b\", max_age=300")
        );
        let age = StepUp::new().max_age(Duration::from_secs(60));
        assert_eq!(age.challenge_parameters(), ", max_age=60");
        assert_eq!(StepUp::new().challenge_parameters(), "");
    }
}
