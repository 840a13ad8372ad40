//! Audiences (RFC 8707): the resources a token is meant for, kept in one canonical string.

use std::fmt;

use smol_str::SmolStr;
use url::Position;

/// The most `resource` parameters one request may name (RFC 8707 §2 allows several); more is
/// `invalid_target`.
pub const MAX_RESOURCES: usize = 10;

/// The resources a token is meant for (RFC 8707 §2, the `aud` of RFC 7662 §2.2 and RFC 9068
/// §2.2): a set of absolute URIs.
///
/// Kept canonical (sorted, without repeats, joined by single spaces: a resource URI is printable
/// ASCII without spaces), so equal sets are equal values and a store keeps it as one string.
/// The audiences grantor issues name each resource as the server registered it (see
/// [`resources`](crate::AuthorizationServerBuilder::resources)), whatever spelling the request
/// used; `contains` and `is_subset_of` compare those strings as they are.
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
        let list: Vec<&str> = resources.into_iter().collect();
        if !list.iter().all(|r| is_resource(r)) {
            return None;
        }
        Self::from_known(list)
    }

    /// The audience of one resource already known to be one (a server's registered form).
    pub(crate) fn one_known(resource: &str) -> Self {
        Self(SmolStr::new(resource))
    }

    /// The audience of resources already known to be resources (the server's registered
    /// forms, or an audience's own); `None` for none. Skips [`is_resource`]'s parse.
    pub(crate) fn from_known(mut list: Vec<&str>) -> Option<Self> {
        if list.is_empty() {
            return None;
        }
        list.sort_unstable();
        list.dedup();
        Some(Self(SmolStr::new(list.join(" "))))
    }

    /// The audience a store kept as [`Audience::as_str`] gave it; `None` if it is not one. The
    /// empty string reads back as the empty audience.
    ///
    /// A store reads the same few audiences back for every token (a server has a handful of
    /// resources), so each thread remembers the last one it checked: reading it again skips
    /// parsing each resource as a URI, which took a few percent of a token lookup's time.
    pub fn from_stored(stored: &str) -> Option<Self> {
        if stored.is_empty() {
            return Some(Self::default());
        }
        if let Some(known) = LAST_STORED.with(|last| {
            let last = last.borrow();
            (last.as_str() == stored).then(|| last.clone())
        }) {
            return Some(known);
        }
        let audience = Self::from_resources(stored.split(' '))?;
        if audience.as_str() != stored {
            return None;
        }
        LAST_STORED.with(|last| last.replace(audience.clone()));
        Some(audience)
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

thread_local! {
    /// The last stored audience this thread found well-formed ([`Audience::from_stored`]); one
    /// per thread, never empty once set.
    static LAST_STORED: std::cell::RefCell<Audience> = std::cell::RefCell::default();
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
    parse(resource).is_some()
}

fn parse(resource: &str) -> Option<url::Url> {
    if !resource.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    url::Url::parse(resource)
        .ok()
        .filter(|uri| uri.fragment().is_none())
}

/// The form two spellings of one resource share (RFC 3986 §6.2.2, §6.2.3), by which grantor
/// compares resources; `None` if `resource` is not one ([`is_resource`]).
///
/// A URI with an authority gets its scheme and host lowercased, the scheme's default port
/// dropped (`:443` for `https`, `:80` for `http`), an empty `http(s)` path made `/`, dot
/// segments removed and its percent-encoding normalised (unreserved characters decoded, the hex
/// digits of the others uppercased). Paths stay distinct (`/api` is not `/api/`), and a query is
/// part of the resource. A URI without one, such as `urn:example:api`, gets its scheme
/// lowercased only.
///
/// The `url` crate parses (the WHATWG URL standard), so its leniencies hold as they do in a
/// browser: in an `http(s)` URI a `\` reads as `/`, and an IPv4 address in another notation as
/// its dotted form.
pub(crate) fn canonical(resource: &str) -> Option<String> {
    let uri = parse(resource)?;
    if uri.cannot_be_a_base() {
        // Opaque: only the scheme is case-insensitive (RFC 3986 §3.1). `parse` already refused
        // anything the `url` crate would have re-encoded (a space, a control character).
        let scheme = uri.scheme();
        return Some(format!("{scheme}{}", resource.get(scheme.len()..)?));
    }
    let mut canonical = String::with_capacity(uri.as_str().len());
    // The scheme is lowercased by the parser, and a special scheme's host (a domain or an IP
    // address) too; another scheme's host is kept as written, so it is lowercased here.
    push_normalised(&mut canonical, &uri[..Position::BeforeHost], Case::Keep);
    push_normalised(
        &mut canonical,
        &uri[Position::BeforeHost..Position::AfterHost],
        Case::Lower,
    );
    push_normalised(&mut canonical, &uri[Position::AfterHost..], Case::Keep);
    Some(canonical)
}

/// Whether letters outside percent-encoding keep their case or are lowercased (a host).
#[derive(Clone, Copy)]
enum Case {
    Keep,
    Lower,
}

/// Appends `part` (ASCII, as the parser serialises) with its percent-encoding normalised
/// (RFC 3986 §6.2.2.1, §6.2.2.2): an unreserved character is decoded, the hex digits of any
/// other are uppercased. A `%` not followed by two hex digits is kept as it is.
fn push_normalised(canonical: &mut String, part: &str, case: Case) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let bytes = part.as_bytes();
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let escaped = match (byte, bytes.get(at + 1..at + 3)) {
            (b'%', Some(&[high, low])) => hex_digit(high).zip(hex_digit(low)),
            _ => None,
        };
        match escaped {
            Some((high, low)) if !is_unreserved(high << 4 | low) => {
                // `hex_digit` answers digits below 16: the indexing cannot fail.
                canonical.push('%');
                canonical.push(char::from(HEX[usize::from(high)]));
                canonical.push(char::from(HEX[usize::from(low)]));
                at += 3;
            }
            _ => {
                let (octet, width) = escaped.map_or((byte, 1), |(high, low)| (high << 4 | low, 3));
                canonical.push(char::from(match case {
                    Case::Lower => octet.to_ascii_lowercase(),
                    Case::Keep => octet,
                }));
                at += width;
            }
        }
    }
}

fn hex_digit(byte: u8) -> Option<u8> {
    char::from(byte)
        .to_digit(16)
        .and_then(|digit| u8::try_from(digit).ok())
}

/// RFC 3986 §2.3: `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
fn is_unreserved(octet: u8) -> bool {
    octet.is_ascii_alphanumeric() || matches!(octet, b'-' | b'.' | b'_' | b'~')
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
        // Read again, the remembered one is the same; what differs is checked anew.
        assert_eq!(Audience::from_stored(both.as_str()), Some(both.clone()));
        assert_eq!(Audience::from_stored(both.as_str()), Some(both.clone()));
        assert_eq!(
            Audience::from_stored("https://api.example/ relative/path"),
            None
        );
        assert_eq!(Audience::from_stored(one.as_str()), Some(one.clone()));
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

    fn same(a: &str, b: &str) -> bool {
        canonical(a).unwrap() == canonical(b).unwrap()
    }

    #[test]
    fn scheme_and_host_case_do_not_tell_resources_apart_but_path_case_does() {
        assert_eq!(
            canonical("HTTPS://RESOURCE.Example/Reports").unwrap(),
            "https://resource.example/Reports"
        );
        assert!(!same(
            "https://a.example/Reports",
            "https://a.example/reports"
        ));
        // A scheme the URL standard does not know keeps its host as written: lowercased here.
        assert_eq!(
            canonical("Foo://Host.Example:80/A").unwrap(),
            "foo://host.example:80/A"
        );
    }

    #[test]
    fn the_default_port_is_dropped_and_an_empty_path_is_a_slash() {
        for spelling in [
            "https://resource.example",
            "https://resource.example/",
            "https://RESOURCE.example:443",
            "HTTPS://resource.example:443/",
        ] {
            assert_eq!(
                canonical(spelling).unwrap(),
                "https://resource.example/",
                "{spelling}"
            );
        }
        assert_eq!(
            canonical("http://127.0.0.1:80/api").unwrap(),
            "http://127.0.0.1/api"
        );
        // Another port, or the other scheme's default, is part of the resource.
        assert!(!same("https://a.example:8443/", "https://a.example/"));
        assert!(!same("http://a.example:443/", "http://a.example/"));
    }

    #[test]
    fn percent_encoding_is_normalised_in_path_and_query() {
        assert_eq!(
            canonical("https://a.example/%7euser/%41%2f%2F?q=%7E%3a").unwrap(),
            "https://a.example/~user/A%2F%2F?q=~%3A"
        );
        // An encoded reserved character stays encoded: `%2F` is not `/`.
        assert!(!same("https://a.example/a%2Fb", "https://a.example/a/b"));
        // Malformed escapes are kept as they are, never read as something else.
        assert_eq!(
            canonical("https://a.example/%zz%+f%").unwrap(),
            "https://a.example/%zz%+f%"
        );
    }

    #[test]
    fn dot_segments_are_removed() {
        assert_eq!(
            canonical("https://a.example/x/./y/../api").unwrap(),
            "https://a.example/x/api"
        );
        assert!(same(
            "https://a.example/x/%2E%2e/api",
            "https://a.example/api"
        ));
    }

    #[test]
    fn paths_and_queries_stay_distinct() {
        for (one, other) in [
            ("https://api.example/v1", "https://api.example/v1/"),
            ("https://auth.example/api", "https://auth.example/api/"),
            ("https://api.example/", "https://api.example/?"),
            ("https://api.example/?a=1", "https://api.example/?a=2"),
        ] {
            assert!(!same(one, other), "{one} and {other}");
        }
        assert!(same(
            "https://api.example/?a=%7e",
            "HTTPS://api.example?a=~"
        ));
    }

    #[test]
    fn a_uri_without_authority_is_compared_by_its_scheme_case_alone() {
        assert_eq!(canonical("URN:Example:API").unwrap(), "urn:Example:API");
        assert!(!same("urn:example:api", "urn:EXAMPLE:api"));
        assert!(!same("urn:example:%7e", "urn:example:~"));
    }

    #[test]
    fn what_is_not_a_resource_has_no_canonical_form() {
        for bad in [
            "https://a.example/#frag",
            "https://a.example/#",
            "relative/path",
            "https://a b/",
            "",
        ] {
            assert_eq!(canonical(bad), None, "{bad}");
        }
    }
}
