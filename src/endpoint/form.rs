//! `application/x-www-form-urlencoded` parsing, strict where RFC 6749 needs it: malformed
//! percent-encoding and invalid UTF-8 are errors (not silently replaced), sizes are bounded, and
//! repeated OAuth parameters are recorded so endpoints can refuse them (RFC 6749 §3.1, §3.2).

use std::borrow::Cow;

use crate::settings::Limits;

/// The parameters grantor reads. Others are dropped unread (RFC 6749 §3.1: unknown parameters
/// are ignored), and may repeat: extensions such as RFC 8707's `resource` and RFC 8693's
/// `audience` do.
const KNOWN: &[&str] = &[
    "client_id",
    "client_secret",
    "code",
    "code_challenge",
    "code_challenge_method",
    "code_verifier",
    "grant_type",
    "password",
    "redirect_uri",
    "refresh_token",
    "response_type",
    "scope",
    "state",
    "token",
    "token_type_hint",
    "username",
    "device_code",
    "request_uri",
    // Token exchange (RFC 8693 §2.1).
    "subject_token",
    "subject_token_type",
    "actor_token",
    "actor_token_type",
    "requested_token_type",
    "client_assertion",
    "client_assertion_type",
    // The JWT-bearer grant (RFC 7523 §2.1).
    "assertion",
    // The sign-in, approval and device pages' forms.
    "csrf",
    "decision",
    "user_code",
    // OpenID Connect's authorization request (Core §3.1.2.1).
    "nonce",
    "prompt",
    "max_age",
    "login_hint",
    "id_token_hint",
    // RFC 6750 §2.2: a bearer token in a form body (userinfo).
    "access_token",
    // RP-Initiated Logout 1.0 §2, and the logout confirmation's button.
    "post_logout_redirect_uri",
    "logout",
    // RFC 9101, OpenID Connect Core §6.1: a request object, taken with feature
    // `private-key-jwt`.
    "request",
    // RFC 9449 §10: the DPoP key an authorization code is bound to (free to repeat, like
    // OpenID Connect's, where DPoP is not on and it is unknown).
    "dpop_jkt",
    // OpenID Connect Core §3.1.2.1, §5.5 (and RFC 9470 §4): what the sign-in must achieve.
    "acr_values",
    "claims",
    // The second factor's page.
    "otp",
    // OAuth 2.0 Multiple Response Types §2.1, Form Post Response Mode.
    "response_mode",
];

/// The slot of `nonce`, the first of the parameters OpenID Connect adds (`nonce` through
/// `logout`, all after the OAuth ones).
const FIRST_OPENID_SLOT: usize = 29;

// `parse` tracks the names it has seen in a `u64`.
const _: () = assert!(KNOWN.len() <= 64);

/// Why a form could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FormError {
    /// The whole input is over `max_input`.
    TooLarge,
    /// A value is over `max_param`.
    ParameterTooLong,
    /// A `%` not followed by two hex digits.
    BadPercentEncoding,
    /// Decoded bytes that are not UTF-8.
    BadUtf8,
}

impl FormError {
    pub(crate) fn description(&self) -> &'static str {
        match self {
            Self::TooLarge => "the request is larger than this server accepts",
            Self::ParameterTooLong => "a parameter is longer than this server accepts",
            Self::BadPercentEncoding => "the request holds malformed percent-encoding",
            Self::BadUtf8 => "the request holds a parameter that is not valid UTF-8",
        }
    }
}

/// The OAuth parameters of a request, with empty values treated as absent (RFC 6749 §3.1).
/// Values borrow from the request where no decoding was needed: parsing allocates only for
/// values with escapes.
#[derive(Clone)]
pub(crate) struct Form<'a> {
    /// One slot per [`KNOWN`] name, in its order.
    values: [Option<Cow<'a, str>>; KNOWN.len()],
    /// The slots seen so far, empty or not, one bit each.
    seen: u64,
    /// The slots seen more than once, one bit each.
    repeats: u64,
    repeated: Option<&'static str>,
    /// The first repeated parameter among those OpenID Connect does not add: what a server
    /// without it refuses.
    repeated_oauth: Option<&'static str>,
    /// RFC 8707's `resource`, which may repeat: every non-empty value, in order.
    resources: Vec<Cow<'a, str>>,
    /// RFC 8693's `audience`, which may repeat likewise.
    audiences: Vec<Cow<'a, str>>,
}

impl Default for Form<'_> {
    fn default() -> Self {
        Self {
            values: std::array::from_fn(|_| None),
            seen: 0,
            repeats: 0,
            repeated: None,
            repeated_oauth: None,
            resources: Vec::new(),
            audiences: Vec::new(),
        }
    }
}

impl std::fmt::Debug for Form<'_> {
    /// The names present, never their values: a form carries passwords, secrets and codes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let present = KNOWN
            .iter()
            .zip(&self.values)
            .filter(|(_, value)| value.is_some())
            .map(|(name, _)| name);
        f.debug_struct("Form")
            .field("present", &present.collect::<Vec<_>>())
            .field("repeated", &self.repeated)
            .field("resources", &self.resources.len())
            .field("audiences", &self.audiences.len())
            .finish()
    }
}

impl<'a> Form<'a> {
    /// The value of `name`, if present and non-empty.
    // Inlined so that a literal `name` folds to its slot at compile time.
    #[inline(always)]
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        // A name missing from KNOWN would always read as absent: caught in tests.
        debug_assert!(slot(name).is_some(), "{name} is not a parameter of KNOWN");
        self.values[slot(name)?].as_deref()
    }

    /// The first OAuth parameter that appeared more than once, if any.
    pub(crate) fn repeated(&self) -> Option<&'static str> {
        self.repeated
    }

    /// The first parameter that appeared more than once, OpenID Connect's aside (unknown, so
    /// free to repeat, where it is not served).
    pub(crate) fn repeated_oauth(&self) -> Option<&'static str> {
        self.repeated_oauth
    }

    /// Whether `name` (one of [`KNOWN`]) was sent more than once.
    pub(crate) fn repeats(&self, name: &str) -> bool {
        slot(name).is_some_and(|slot| self.repeats & (1 << slot) != 0)
    }

    /// Every non-empty `resource` value (RFC 8707 §2), in order; bounded by the input's size.
    pub(crate) fn resources(&self) -> Vec<&str> {
        self.resources.iter().map(|r| &**r).collect()
    }

    /// Every non-empty `audience` value (RFC 8693 §2.1), in order; bounded likewise.
    pub(crate) fn audiences(&self) -> Vec<&str> {
        self.audiences.iter().map(|a| &**a).collect()
    }

    /// Sets the parameter `name` to `value`, as a request object carries its parameters (RFC
    /// 9101 §4: JSON members, so none repeats); an empty value stays absent. `false` when
    /// grantor does not read `name` (the value is dropped).
    pub(crate) fn set(&mut self, name: &str, value: String) -> bool {
        if name == "resource" {
            if !value.is_empty() {
                self.resources.push(Cow::Owned(value));
            }
            return true;
        }
        let Some(slot) = slot(name) else {
            return false;
        };
        self.seen |= 1 << slot;
        if !value.is_empty() {
            self.values[slot] = Some(Cow::Owned(value));
        }
        true
    }
}

/// Whether grantor reads the parameter `name` (one of [`KNOWN`], or `resource` or `audience`).
pub(crate) fn reads(name: &str) -> bool {
    matches!(name, "resource" | "audience") || slot(name).is_some()
}

/// The slot of a [`KNOWN`] name: a `match` rather than a scan of the list, which the compiler
/// folds to a constant where the name is a literal (every `Form::get` call).
#[inline(always)]
fn slot(name: &str) -> Option<usize> {
    let slot = match name {
        "client_id" => 0,
        "client_secret" => 1,
        "code" => 2,
        "code_challenge" => 3,
        "code_challenge_method" => 4,
        "code_verifier" => 5,
        "grant_type" => 6,
        "password" => 7,
        "redirect_uri" => 8,
        "refresh_token" => 9,
        "response_type" => 10,
        "scope" => 11,
        "state" => 12,
        "token" => 13,
        "token_type_hint" => 14,
        "username" => 15,
        "device_code" => 16,
        "request_uri" => 17,
        "subject_token" => 18,
        "subject_token_type" => 19,
        "actor_token" => 20,
        "actor_token_type" => 21,
        "requested_token_type" => 22,
        "client_assertion" => 23,
        "client_assertion_type" => 24,
        "assertion" => 25,
        "csrf" => 26,
        "decision" => 27,
        "user_code" => 28,
        "nonce" => 29,
        "prompt" => 30,
        "max_age" => 31,
        "login_hint" => 32,
        "id_token_hint" => 33,
        "access_token" => 34,
        "post_logout_redirect_uri" => 35,
        "logout" => 36,
        "request" => 37,
        "dpop_jkt" => 38,
        "acr_values" => 39,
        "claims" => 40,
        "otp" => 41,
        "response_mode" => 42,
        _ => return None,
    };
    debug_assert_eq!(KNOWN[slot], name);
    Some(slot)
}

/// Parses `input` (a request body or a URL's query).
///
/// The whole input is checked as UTF-8 once (raw bytes that are not UTF-8 are an error
/// wherever they are), then read in one pass that finds each pair's `&`, its first `=` and
/// whether it holds an escape; pairs without escapes are borrowed as they are.
pub(crate) fn parse(input: &[u8], limits: Limits) -> Result<Form<'_>, FormError> {
    if input.len() > limits.max_input {
        return Err(FormError::TooLarge);
    }
    let input = std::str::from_utf8(input).map_err(|_| FormError::BadUtf8)?;
    let mut form = Form::default();
    let (mut start, mut equals, mut escaped) = (0, None, false);
    for (at, &b) in input.as_bytes().iter().enumerate() {
        match BYTE_CLASS[usize::from(b)] {
            PLAIN => {}
            AMPERSAND => {
                form.add(&input[start..at], equals, escaped, limits.max_param)?;
                (start, equals, escaped) = (at + 1, None, false);
            }
            EQUALS => equals = equals.or(Some(at - start)),
            _ => escaped = true,
        }
    }
    form.add(&input[start..], equals, escaped, limits.max_param)?;
    Ok(form)
}

const PLAIN: u8 = 0;
const AMPERSAND: u8 = 1;
const EQUALS: u8 = 2;
const ESCAPE: u8 = 3;

/// What each byte means to the parser: one table load per byte, and one branch for the plain
/// ones that make up nearly all of a request.
const BYTE_CLASS: [u8; 256] = {
    let mut table = [PLAIN; 256];
    table[b'&' as usize] = AMPERSAND;
    table[b'=' as usize] = EQUALS;
    table[b'%' as usize] = ESCAPE;
    table[b'+' as usize] = ESCAPE;
    table
};

impl<'a> Form<'a> {
    /// Records one pair (empty ones are skipped); `equals` is the offset of its first `=`,
    /// `escaped` whether it holds any `%` or `+`.
    fn add(
        &mut self,
        pair: &'a str,
        equals: Option<usize>,
        escaped: bool,
        max_param: usize,
    ) -> Result<(), FormError> {
        if pair.is_empty() {
            return Ok(());
        }
        let (name, value) = match equals {
            Some(at) => (&pair[..at], &pair[at + 1..]),
            None => (pair, ""),
        };
        let (name, value) = if escaped {
            (decode(name, max_param)?, decode(value, max_param)?)
        } else if name.len() > max_param || value.len() > max_param {
            return Err(FormError::ParameterTooLong);
        } else {
            (Cow::Borrowed(name), Cow::Borrowed(value))
        };
        // Unknown names are dropped once their encoding has been checked.
        let Some(slot) = slot(&name) else {
            if !value.is_empty() {
                match &*name {
                    "resource" => self.resources.push(value),
                    "audience" => self.audiences.push(value),
                    _ => {}
                }
            }
            return Ok(());
        };
        // Repeated even when one occurrence is empty: the answer must not depend on order.
        if self.seen & (1 << slot) != 0 {
            self.repeats |= 1 << slot;
            self.repeated.get_or_insert(KNOWN[slot]);
            if slot < FIRST_OPENID_SLOT {
                self.repeated_oauth.get_or_insert(KNOWN[slot]);
            }
            return Ok(());
        }
        self.seen |= 1 << slot;
        if !value.is_empty() {
            self.values[slot] = Some(value);
        }
        Ok(())
    }
}

/// Whether `input` holds no `%` or `+`: nothing to decode. A loop without early exit, which
/// the compiler vectorizes, since almost every OAuth value is plain.
fn is_plain(input: &str) -> bool {
    let mut escapes = 0u8;
    for &b in input.as_bytes() {
        escapes |= u8::from(b == b'%') | u8::from(b == b'+');
    }
    escapes == 0
}

/// Decodes one form-urlencoded component: `+` is a space, `%XX` a byte; the decoded bytes
/// must be UTF-8.
pub(crate) fn decode(input: &str, max_len: usize) -> Result<Cow<'_, str>, FormError> {
    if is_plain(input) {
        if input.len() > max_len {
            return Err(FormError::ParameterTooLong);
        }
        return Ok(Cow::Borrowed(input));
    }
    let mut bytes = Vec::with_capacity(input.len());
    let mut rest = input.as_bytes();
    loop {
        // The plain run up to the next escape is copied as it is.
        let run = rest
            .iter()
            .position(|&b| b == b'%' || b == b'+')
            .unwrap_or(rest.len());
        bytes.extend_from_slice(&rest[..run]);
        rest = &rest[run..];
        rest = match rest {
            [] => break,
            [b'+', tail @ ..] => {
                bytes.push(b' ');
                tail
            }
            [b'%', hi, lo, tail @ ..] => match (hex(*hi), hex(*lo)) {
                (Some(hi), Some(lo)) => {
                    bytes.push(hi << 4 | lo);
                    tail
                }
                _ => return Err(FormError::BadPercentEncoding),
            },
            _ => return Err(FormError::BadPercentEncoding),
        };
    }
    // The input is bounded by the body limit, so the decoded length is checked once, at the end.
    if bytes.len() > max_len {
        return Err(FormError::ParameterTooLong);
    }
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| FormError::BadUtf8)
}

/// How many bytes each byte becomes in `application/x-www-form-urlencoded` output (the WHATWG
/// URL standard's): 1 for what stays as it is (alphanumerics and `*-._`), 1 for a space (`+`),
/// 3 for the rest (`%XX`). As a table, one load per byte: a redirect's code and state are
/// scanned twice per authorization.
const ENCODED_LEN: [u8; 256] = {
    let mut table = [3u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || matches!(c, b'*' | b'-' | b'.' | b'_' | b' ') {
            table[b] = 1;
        }
        b += 1;
    }
    table
};

/// Whether `b` stays as it is in `application/x-www-form-urlencoded` output.
fn is_form_unreserved(b: u8) -> bool {
    ENCODED_LEN[usize::from(b)] == 1 && b != b' '
}

/// The length of `value` form-urlencoded: a space becomes `+`, other reserved bytes `%XX`.
pub(crate) fn encoded_len(value: &str) -> usize {
    value
        .bytes()
        .map(|b| usize::from(ENCODED_LEN[usize::from(b)]))
        .sum()
}

/// Appends `value` form-urlencoded to `out`.
pub(crate) fn push_encoded(out: &mut String, value: &str) {
    if value.bytes().all(is_form_unreserved) {
        out.push_str(value);
        return;
    }
    out.extend(url::form_urlencoded::byte_serialize(value.as_bytes()));
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_input: 64,
        max_param: 8,
    };

    #[test]
    fn every_known_name_has_its_own_slot() {
        for (i, name) in KNOWN.iter().enumerate() {
            assert_eq!(slot(name), Some(i), "{name}");
        }
        assert_eq!(slot("Client_id"), None);
        assert_eq!(slot(""), None);
    }

    #[test]
    fn plain_values_are_borrowed() {
        let limits = Limits {
            max_input: 100,
            max_param: 100,
        };
        let form = parse(b"code=abc-_.~&state=%41", limits).unwrap();
        assert!(matches!(form.values[2], Some(Cow::Borrowed("abc-_.~"))));
        assert!(matches!(&form.values[12], Some(Cow::Owned(s)) if s == "A"));
        let utf8 = parse("state=\u{e9}t\u{e9}".as_bytes(), limits).unwrap();
        assert_eq!(utf8.get("state"), Some("\u{e9}t\u{e9}"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn encoding_matches_the_url_crate(value in "\\PC{0,40}") {
            let mut out = String::new();
            push_encoded(&mut out, &value);
            let expected: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
            proptest::prop_assert_eq!(encoded_len(&value), expected.len());
            proptest::prop_assert_eq!(out, expected);
        }
    }

    #[test]
    fn decodes_plus_and_percent_escapes() {
        let form = parse(
            b"scope=a+b%20c&state=%E2%9C%93",
            Limits {
                max_input: 100,
                max_param: 100,
            },
        )
        .unwrap();
        assert_eq!(form.get("scope"), Some("a b c"));
        assert_eq!(form.get("state"), Some("\u{2713}"));
    }

    #[test]
    fn empty_values_count_as_absent_and_unknown_names_are_dropped() {
        let form = parse(b"scope=&state&x=1&x=2&&", LIMITS).unwrap();
        assert_eq!(form.get("scope"), None);
        assert_eq!(form.get("state"), None);
        // `x` is dropped unread: no known name holds anything.
        assert!(KNOWN.iter().all(|name| form.get(name).is_none()));
        assert_eq!(form.repeated(), None);
    }

    #[test]
    fn openid_parameters_repeat_apart_from_oauth_ones() {
        assert_eq!(KNOWN[FIRST_OPENID_SLOT], "nonce");
        let form = parse(b"nonce=a&nonce=b&scope=x&scope=y", LIMITS).unwrap();
        assert_eq!(form.repeated(), Some("nonce"));
        assert_eq!(form.repeated_oauth(), Some("scope"));
        let form = parse(b"prompt=a&prompt=b", LIMITS).unwrap();
        assert_eq!(form.repeated_oauth(), None);
    }

    #[test]
    fn repeated_oauth_parameters_are_recorded() {
        let form = parse(b"code=a&code=b", LIMITS).unwrap();
        assert_eq!(form.repeated(), Some("code"));
        assert_eq!(form.get("code"), Some("a"));
    }

    #[test]
    fn repetition_does_not_depend_on_order_or_emptiness() {
        assert_eq!(
            parse(b"code=&code=a", LIMITS).unwrap().repeated(),
            Some("code")
        );
        assert_eq!(
            parse(b"code=a&code=", LIMITS).unwrap().repeated(),
            Some("code")
        );
        assert_eq!(
            parse(b"code&code", LIMITS).unwrap().repeated(),
            Some("code")
        );
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert_eq!(
            parse(b"code=%zz", LIMITS).unwrap_err(),
            FormError::BadPercentEncoding
        );
        assert_eq!(
            parse(b"code=%4", LIMITS).unwrap_err(),
            FormError::BadPercentEncoding
        );
        assert_eq!(parse(b"code=%ff", LIMITS).unwrap_err(), FormError::BadUtf8);
        assert_eq!(parse(b"code=\xff", LIMITS).unwrap_err(), FormError::BadUtf8);
        assert_eq!(
            parse(b"code=123456789", LIMITS).unwrap_err(),
            FormError::ParameterTooLong
        );
        assert_eq!(parse(&[b'a'; 65], LIMITS).unwrap_err(), FormError::TooLarge);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        #[test]
        fn arbitrary_bytes_parse_or_fail_cleanly(input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
            let _ = parse(&input, LIMITS);
        }

        #[test]
        fn encoded_values_round_trip(value in "\\PC{0,40}") {
            let encoded = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("state", &value)
                .finish();
            let form = parse(encoded.as_bytes(), Limits { max_input: 4096, max_param: 4096 }).unwrap();
            let expected = (!value.is_empty()).then_some(value.as_str());
            proptest::prop_assert_eq!(form.get("state"), expected);
        }
    }
}
