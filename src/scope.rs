//! Scopes (RFC 6749 §3.3): a set of scope tokens, kept in one canonical string.

use std::fmt;
use std::str::FromStr;

use smol_str::SmolStr;

/// A set of scope tokens (RFC 6749 §3.3).
///
/// Kept canonical (tokens sorted, without repeats, joined by single spaces), so equal sets are
/// equal values. A scope of up to 23 bytes is held inline and copied when cloned, so the tokens
/// of one client never share a reference count between threads; a longer one is one shared
/// string however many tokens carry it.
///
/// ```
/// use grantor::Scope;
///
/// let scope: Scope = "profile email profile".parse().unwrap();
/// assert_eq!(scope.as_str(), "email profile");
/// assert!(scope.contains("email"));
/// assert!("email".parse::<Scope>().unwrap().is_subset_of(&scope));
/// assert!("bad\"token".parse::<Scope>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Scope(SmolStr);

/// A scope string that breaks RFC 6749 §3.3 syntax.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the scope is malformed: scope tokens are printable ASCII without '\"' or '\\', separated by spaces"
)]
pub struct ScopeError;

impl Scope {
    /// The empty scope.
    pub fn empty() -> Self {
        Self(SmolStr::default())
    }

    /// Parses a space-delimited scope string. Runs of spaces are tolerated; any other character
    /// outside `%x21 / %x23-5B / %x5D-7E` is an error.
    pub fn parse(scope: &str) -> Result<Self, ScopeError> {
        if is_canonical(scope) {
            return Ok(Self(SmolStr::new(scope)));
        }
        canonicalize(scope).map(Self)
    }

    /// A scope from tokens, each checked as in [`Scope::parse`].
    pub fn from_tokens<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Result<Self, ScopeError> {
        let tokens: Vec<&str> = tokens.into_iter().collect();
        if tokens.iter().any(|t| t.is_empty() || t.contains(' ')) {
            return Err(ScopeError);
        }
        Self::parse(&tokens.join(" "))
    }

    /// The canonical space-delimited form, as sent in the `scope` response parameter.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The scope tokens, in canonical (sorted) order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.split(' ').filter(|t| !t.is_empty())
    }

    /// Whether the set holds no token.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `token` is in the set.
    pub fn contains(&self, token: &str) -> bool {
        self.iter().any(|t| t == token)
    }

    /// Whether every token of `self` is in `other`.
    pub fn is_subset_of(&self, other: &Scope) -> bool {
        self.0 == other.0 || self.iter().all(|t| other.contains(t))
    }
}

impl Default for Scope {
    fn default() -> Self {
        Self::empty()
    }
}

impl FromStr for Scope {
    type Err = ScopeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scope({:?})", &*self.0)
    }
}

/// The canonical form of any scope string: tokens split on runs of spaces, checked, sorted and
/// deduplicated.
fn canonicalize(scope: &str) -> Result<SmolStr, ScopeError> {
    let mut tokens: Vec<&str> = scope.split(' ').filter(|t| !t.is_empty()).collect();
    if !tokens.iter().all(|t| t.bytes().all(is_scope_char)) {
        return Err(ScopeError);
    }
    tokens.sort_unstable();
    tokens.dedup();
    Ok(SmolStr::from(tokens.join(" ")))
}

/// Whether `scope` is already in canonical form (scope tokens in strictly ascending order, one
/// space between them, none around them): the usual request, parsed without sorting.
fn is_canonical(scope: &str) -> bool {
    let mut previous: Option<&str> = None;
    for token in scope.split(' ') {
        if token.is_empty() || !token.bytes().all(is_scope_char) {
            return scope.is_empty();
        }
        if previous.is_some_and(|p| p >= token) {
            return false;
        }
        previous = Some(token);
    }
    true
}

/// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
fn is_scope_char(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_sorts_and_deduplicates() {
        assert_eq!(Scope::parse("  b a  b ").unwrap().as_str(), "a b");
        assert!(Scope::parse("").unwrap().is_empty());
    }

    #[test]
    fn syntax_outside_rfc_6749_is_rejected() {
        for bad in ["a\tb", "a\\b", "\"a\"", "é", "a\nb"] {
            assert_eq!(Scope::parse(bad), Err(ScopeError), "{bad:?}");
        }
        assert!(Scope::from_tokens(["a b"]).is_err());
        assert!(Scope::from_tokens([""]).is_err());
    }

    #[test]
    fn subset_is_tokenwise() {
        let all = Scope::parse("email profile").unwrap();
        assert!(Scope::parse("profile").unwrap().is_subset_of(&all));
        assert!(Scope::empty().is_subset_of(&all));
        assert!(!Scope::parse("admin").unwrap().is_subset_of(&all));
        assert!(!Scope::parse("prof").unwrap().is_subset_of(&all));
    }

    proptest::proptest! {
        /// The shortcut for scopes already canonical answers what sorting would.
        #[test]
        fn parse_agrees_with_canonicalize(scope in "[ ab!~\\\\\"é]{0,12}") {
            proptest::prop_assert_eq!(
                Scope::parse(&scope).map(|s| s.0),
                canonicalize(&scope)
            );
        }
    }
}
