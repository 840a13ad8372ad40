//! How a token's user signed in: the `auth_time`, `acr` and `amr` every token of one sign-in
//! carries (OIDC Core §2, §12.2), which introspection and JWT access tokens tell and a resource
//! may demand more of (RFC 9470).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;
use crate::oidc::{MAX_CLAIM_NAME_BYTES, MAX_REQUESTED_CLAIMS};
use crate::store::MAX_SID_BYTES;

/// How the user of a token family signed in: when (`auth_time`), at which authentication
/// context class (`acr`, when the deployment names one) and by which methods (`amr`, RFC
/// 8176).
///
/// A property of the family, not of one token: every token descending from one sign-in (its
/// code, the tokens exchanged for it, their refreshed successors) carries the same, as a
/// refresh keeps the original sign-in (OIDC Core §12.2). Introspection answers `auth_time` and
/// `acr` (RFC 9470 §6.2), JWT access tokens carry them with `amr` (RFC 9068 §2.2.1), and a
/// resource may demand a class or a recent sign-in ([`StepUp`](crate::StepUp)).
///
/// Bounded, so that a store can size what it keeps: an `acr` of more than [`MAX_SID_BYTES`]
/// bytes is not kept (the sign-in then names no class: never one it did not reach), nor is
/// an `amr` value of more than [`MAX_SID_BYTES`] bytes, and at most
/// [`UserAuthentication::MAX_AMR`] methods are (the first ones). Cheap to clone: the clones
/// share one record, so finding a token of a family costs no copy of its sign-in.
///
/// ```
/// use grantor::clock::UnixTime;
/// use grantor::store::UserAuthentication;
///
/// let signed_in = UserAuthentication::new(UnixTime::from_secs(1_800_000_000))
///     .with_acr(Some("urn:grantor:acr:mfa".to_owned()))
///     .with_amr(["pwd", "otp"]);
/// assert_eq!(signed_in.acr(), Some("urn:grantor:acr:mfa"));
/// assert_eq!(signed_in.amr(), ["pwd", "otp"]);
/// let stored = signed_in.to_stored();
/// assert_eq!(UserAuthentication::from_stored(&stored), Some(signed_in));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct UserAuthentication(Arc<SignedIn>);

/// The record itself.
#[derive(Clone, PartialEq, Eq, Hash)]
struct SignedIn {
    auth_time: UnixTime,
    /// At most [`MAX_SID_BYTES`] bytes.
    acr: Option<String>,
    /// At most [`UserAuthentication::MAX_AMR`] values of at most [`MAX_SID_BYTES`] bytes each.
    amr: Vec<String>,
    /// At most [`MAX_REQUESTED_CLAIMS`] names of at most [`MAX_CLAIM_NAME_BYTES`] bytes each.
    userinfo_claims: Vec<String>,
}

/// The record as stores keep it.
#[derive(Serialize)]
struct Keeping<'a> {
    auth_time: UnixTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    acr: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    amr: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    userinfo_claims: &'a [String],
}

/// The record as it is read back, through the same bounds.
#[derive(Deserialize)]
struct Stored {
    auth_time: UnixTime,
    #[serde(default)]
    acr: Option<String>,
    #[serde(default)]
    amr: Vec<String>,
    #[serde(default)]
    userinfo_claims: Vec<String>,
}

impl UserAuthentication {
    /// The most authentication methods one sign-in records.
    pub const MAX_AMR: usize = 8;

    /// A sign-in at `auth_time`, of no named class and by no method grantor knows (a host that
    /// signs users in itself and says nothing of how).
    pub fn new(auth_time: UnixTime) -> Self {
        Self(Arc::new(SignedIn {
            auth_time,
            acr: None,
            amr: Vec::new(),
            userinfo_claims: Vec::new(),
        }))
    }

    /// The same sign-in, having satisfied the class `acr` (none: no named class). An `acr` of
    /// more than [`MAX_SID_BYTES`] bytes, or an empty one, is not kept.
    pub fn with_acr(mut self, acr: Option<String>) -> Self {
        Arc::make_mut(&mut self.0).acr = acr.filter(|acr| fits(acr));
        self
    }

    /// The same sign-in, by the methods `amr` (RFC 8176: `pwd`, `otp`, `hwk`…): the first
    /// [`UserAuthentication::MAX_AMR`] of those that are not empty and of at most
    /// [`MAX_SID_BYTES`] bytes.
    pub fn with_amr(mut self, amr: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Arc::make_mut(&mut self.0).amr = amr
            .into_iter()
            .map(Into::into)
            .filter(|method| fits(method))
            .take(Self::MAX_AMR)
            .collect();
        self
    }

    /// The same sign-in, whose authorization request named `claims` for userinfo (the `claims`
    /// parameter, OIDC Core §5.5): every access token of the family releases them there,
    /// whatever its scope. The first [`MAX_REQUESTED_CLAIMS`] names of at most
    /// [`MAX_CLAIM_NAME_BYTES`] bytes are kept.
    pub(crate) fn with_userinfo_claims(mut self, claims: &[String]) -> Self {
        Arc::make_mut(&mut self.0).userinfo_claims = claims
            .iter()
            .filter(|name| !name.is_empty() && name.len() <= MAX_CLAIM_NAME_BYTES)
            .take(MAX_REQUESTED_CLAIMS)
            .cloned()
            .collect();
        self
    }

    /// The claims the authorization request named for userinfo.
    pub(crate) fn userinfo_claims(&self) -> &[String] {
        &self.0.userinfo_claims
    }

    /// When the user signed in (`auth_time`).
    pub fn auth_time(&self) -> UnixTime {
        self.0.auth_time
    }

    /// The authentication context class the sign-in satisfied (`acr`), if it names one.
    pub fn acr(&self) -> Option<&str> {
        self.0.acr.as_deref()
    }

    /// The methods the user signed in by (`amr`).
    pub fn amr(&self) -> &[String] {
        &self.0.amr
    }

    /// As a store keeps it: a JSON object, `{"auth_time":…,"acr":…,"amr":[…]}` (with the
    /// claims the request named for userinfo, `"userinfo_claims":[…]`, when it named some).
    pub fn to_stored(&self) -> String {
        // Strings and a number cannot fail to serialize.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// As [`to_stored`](Self::to_stored) wrote it, within the bounds; `None` if it is not.
    pub fn from_stored(stored: &str) -> Option<Self> {
        let stored: Stored = serde_json::from_str(stored).ok()?;
        Some(Self::from(stored))
    }
}

impl From<Stored> for UserAuthentication {
    fn from(stored: Stored) -> Self {
        Self::new(stored.auth_time)
            .with_acr(stored.acr)
            .with_amr(stored.amr)
            .with_userinfo_claims(&stored.userinfo_claims)
    }
}

impl fmt::Debug for UserAuthentication {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserAuthentication")
            .field("auth_time", &self.0.auth_time)
            .field("acr", &self.0.acr)
            .field("amr", &self.0.amr)
            .field("userinfo_claims", &self.0.userinfo_claims)
            .finish()
    }
}

impl Serialize for UserAuthentication {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Keeping {
            auth_time: self.0.auth_time,
            acr: self.0.acr.as_deref(),
            amr: &self.0.amr,
            userinfo_claims: &self.0.userinfo_claims,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for UserAuthentication {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Stored::deserialize(deserializer).map(Self::from)
    }
}

/// Whether `value` is kept: not empty, and at most [`MAX_SID_BYTES`] bytes.
fn fits(value: &str) -> bool {
    !value.is_empty() && value.len() <= MAX_SID_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_past_the_bounds_are_not_kept() {
        let longest = "a".repeat(MAX_SID_BYTES);
        let signed_in = UserAuthentication::new(UnixTime::from_secs(5))
            .with_acr(Some("a".repeat(MAX_SID_BYTES + 1)))
            .with_amr(
                ["", &"b".repeat(MAX_SID_BYTES + 1), &longest]
                    .into_iter()
                    .chain(["m"; 10]),
            );
        assert_eq!(
            signed_in.acr(),
            None,
            "an acr past the bound names no class"
        );
        assert_eq!(signed_in.amr().len(), UserAuthentication::MAX_AMR);
        assert_eq!(signed_in.amr()[0], longest);
        let kept = signed_in.with_acr(Some(longest.clone()));
        assert_eq!(kept.acr(), Some(longest.as_str()));
        assert_eq!(kept.clone().with_acr(Some(String::new())).acr(), None);
    }

    #[test]
    fn the_stored_form_round_trips_and_is_read_within_the_bounds() {
        let signed_in = UserAuthentication::new(UnixTime::from_secs(7))
            .with_acr(Some("urn:x \"quoted\" é".to_owned()))
            .with_amr(["pwd", "otp"]);
        let stored = signed_in.to_stored();
        assert_eq!(UserAuthentication::from_stored(&stored), Some(signed_in));
        let asked = UserAuthentication::new(UnixTime::from_secs(7))
            .with_userinfo_claims(&["email".to_owned(), "x".repeat(65)]);
        assert_eq!(asked.userinfo_claims(), ["email"]);
        let stored = asked.to_stored();
        assert_eq!(stored, r#"{"auth_time":7,"userinfo_claims":["email"]}"#);
        assert_eq!(UserAuthentication::from_stored(&stored), Some(asked));
        let bare = UserAuthentication::new(UnixTime::from_secs(7));
        assert_eq!(bare.to_stored(), r#"{"auth_time":7}"#);
        assert_eq!(
            UserAuthentication::from_stored(r#"{"auth_time":7}"#),
            Some(bare)
        );
        let long = format!(r#"{{"auth_time":1,"acr":"{}"}}"#, "a".repeat(65));
        let read = UserAuthentication::from_stored(&long).map(|a| a.acr().map(str::len));
        assert_eq!(read, Some(None));
        for bad in [
            "",
            "{}",
            "[]",
            r#"{"auth_time":"x"}"#,
            r#"{"auth_time":1,"amr":"pwd"}"#,
        ] {
            assert_eq!(UserAuthentication::from_stored(bad), None, "{bad}");
        }
    }
}
