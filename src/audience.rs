//! Audiences (RFC 8707): the resources a token is meant for, kept in one canonical string.

use std::fmt;

use smol_str::SmolStr;

/// The most `resource` parameters one request may name (RFC 8707 §2 allows several); more is
/// `invalid_target`.
pub const MAX_RESOURCES: usize = 10;

/// The resources a token is meant for (RFC 8707 §2, the `aud` of RFC 7662 §2.2 and RFC 9068
/// §2.2): a set of absolute URIs.
///
/// Kept canonical (sorted, without repeats, joined by single spaces: a resource URI is printable
/// ASCII without spaces), so equal sets are equal values and a store keeps it as one string.
/// Every token grantor issues carries a non-empty audience. An empty one comes only from a
/// store that does not keep audiences (or from rows written before it did); grantor reads it as
/// the server's [default audience](crate::AuthorizationServerBuilder::default_audience).
///
/// ```
/// use grantor::audience::Audience;
///
/// let audience = Audience::from_resources(["https://b.example/", "https://a.example/"]).unwrap();
/// assert_eq!(audience.as_str(), "https://a.example/ https://b.example/");
/// assert!(audience.contains("https://b.example/"));
/// assert_eq!(audience.iter().count(), 2);
/// assert!(Audience::from_resources(["not a uri"]).is_none());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Audience(SmolStr);

impl Audience {
    /// The audience of one resource, if `resource` can be one ([`is_resource`]).
    pub fn new(resource: &str) -> Option<Self> {
        is_resource(resource).then(|| Self(SmolStr::new(resource)))
    }

    /// The audience of these resources, if each can be one; `None` also for no resource.
    pub fn from_resources<'a>(resources: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let mut list: Vec<&str> = resources.into_iter().collect();
        if list.is_empty() || !list.iter().all(|r| is_resource(r)) {
            return None;
        }
        list.sort_unstable();
        list.dedup();
        Some(Self(SmolStr::new(list.join(" "))))
    }

    /// The audience a store kept as [`Audience::as_str`] gave it; `None` if it is not one. The
    /// empty string reads back as the empty audience.
    pub fn from_stored(stored: &str) -> Option<Self> {
        if stored.is_empty() {
            return Some(Self::default());
        }
        let audience = Self::from_resources(stored.split(' '))?;
        (audience.as_str() == stored).then_some(audience)
    }

    /// The resources, space-separated in canonical order: what a store keeps.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The resources, in canonical order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.split(' ').filter(|r| !r.is_empty())
    }

    /// Whether the audience names no resource (see the type's docs).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `resource` is one of the audience's.
    pub fn contains(&self, resource: &str) -> bool {
        self.0 == resource || self.iter().any(|r| r == resource)
    }

    /// Whether every resource of `self` is one of `other`'s.
    pub fn is_subset_of(&self, other: &Audience) -> bool {
        self.0 == other.0 || self.iter().all(|r| other.contains(r))
    }

    /// This audience, or `default` when it is empty.
    pub(crate) fn or<'a>(&'a self, default: &'a Audience) -> &'a Audience {
        if self.is_empty() { default } else { self }
    }
}

impl fmt::Debug for Audience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Audience({:?})", self.as_str())
    }
}

impl fmt::Display for Audience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `resource` can name a resource (RFC 8707 §2): an absolute URI without a fragment, in
/// printable ASCII (so it goes into headers, JSON and space-separated lists as it is).
pub fn is_resource(resource: &str) -> bool {
    resource.bytes().all(|b| b.is_ascii_graphic())
        && url::Url::parse(resource).is_ok_and(|uri| uri.fragment().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audiences_are_canonical_sets_of_absolute_uris() {
        let one = Audience::new("https://api.example/").unwrap();
        let both = Audience::from_resources([
            "https://z.example/",
            "https://api.example/",
            "https://z.example/",
        ])
        .unwrap();
        assert_eq!(both.as_str(), "https://api.example/ https://z.example/");
        assert!(one.is_subset_of(&both) && !both.is_subset_of(&one));
        assert_eq!(Audience::from_stored(both.as_str()), Some(both.clone()));
        assert_eq!(Audience::from_stored(""), Some(Audience::default()));
        assert_eq!(
            Audience::from_stored("https://z.example/ https://api.example/"),
            None
        );
        for bad in [
            "",
            "relative/path",
            "https://a.example/#frag",
            "https://a b/",
        ] {
            assert!(Audience::new(bad).is_none(), "{bad}");
        }
        assert!(Audience::from_resources([]).is_none());
        assert_eq!(one.or(&both), &one);
        assert_eq!(Audience::default().or(&both), &both);
    }
}
