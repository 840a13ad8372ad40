//! `application/x-www-form-urlencoded` parsing, strict where RFC 6749 needs it: malformed
//! percent-encoding and invalid UTF-8 are errors (not silently replaced), sizes are bounded, and
//! repeated OAuth parameters are recorded so endpoints can refuse them (RFC 6749 §3.1, §3.2).

use std::borrow::Cow;

/// The parameters grantor reads. Others are dropped unread (RFC 6749 §3.1: unknown parameters
/// are ignored), and may repeat: extensions such as RFC 8707's `resource` do.
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
];

// `parse` tracks the names it has seen in a `u32`.
const _: () = assert!(KNOWN.len() <= 32);

/// Size limits for a form or query string.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Largest encoded input, in bytes.
    pub(crate) max_input: usize,
    /// Largest decoded parameter value, in bytes.
    pub(crate) max_param: usize,
}

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
#[derive(Debug, Default, Clone)]
pub(crate) struct Form<'a> {
    /// One slot per [`KNOWN`] name, in its order.
    values: [Option<Cow<'a, str>>; KNOWN.len()],
    repeated: Option<&'static str>,
}

impl<'a> Form<'a> {
    /// The value of `name`, if present and non-empty.
    // Inlined so that a literal `name` folds to its slot at compile time.
    #[inline(always)]
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.values[slot(name.as_bytes())?].as_deref()
    }

    /// The first OAuth parameter that appeared more than once, if any.
    pub(crate) fn repeated(&self) -> Option<&'static str> {
        self.repeated
    }
}

/// The slot of a [`KNOWN`] name: a `match` the compiler turns into a length switch and one
/// comparison, instead of a scan of the list.
#[inline(always)]
fn slot(name: &[u8]) -> Option<usize> {
    let slot = match name {
        b"client_id" => 0,
        b"client_secret" => 1,
        b"code" => 2,
        b"code_challenge" => 3,
        b"code_challenge_method" => 4,
        b"code_verifier" => 5,
        b"grant_type" => 6,
        b"password" => 7,
        b"redirect_uri" => 8,
        b"refresh_token" => 9,
        b"response_type" => 10,
        b"scope" => 11,
        b"state" => 12,
        b"token" => 13,
        b"token_type_hint" => 14,
        b"username" => 15,
        _ => return None,
    };
    debug_assert_eq!(KNOWN[slot].as_bytes(), name);
    Some(slot)
}

/// Parses `input` (a request body or a URL's query).
pub(crate) fn parse(input: &[u8], limits: Limits) -> Result<Form<'_>, FormError> {
    if input.len() > limits.max_input {
        return Err(FormError::TooLarge);
    }
    let mut form = Form::default();
    let mut seen = 0u32;
    for pair in input.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
        let (name, value) = match pair.iter().position(|&b| b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &[][..]),
        };
        let name = decode(name, limits.max_param)?;
        // Unknown values are still checked: malformed encoding anywhere is an error.
        let value = decode(value, limits.max_param)?;
        let Some(slot) = slot(name.as_bytes()) else {
            continue;
        };
        // Repeated even when one occurrence is empty: the answer must not depend on order.
        if seen & (1 << slot) != 0 {
            form.repeated.get_or_insert(KNOWN[slot]);
            continue;
        }
        seen |= 1 << slot;
        if !value.is_empty() {
            form.values[slot] = Some(value);
        }
    }
    Ok(form)
}

/// Whether `input` is plain ASCII without `%` or `+`: nothing to decode. One branch-free pass
/// (the compiler vectorizes it), since almost every OAuth value is plain.
fn is_plain(input: &[u8]) -> bool {
    !input.iter().fold(false, |odd, &b| {
        odd | (b >= 0x80) | (b == b'%') | (b == b'+')
    })
}

/// Decodes one form-urlencoded component: `+` is a space, `%XX` a byte, then UTF-8.
pub(crate) fn decode(input: &[u8], max_len: usize) -> Result<Cow<'_, str>, FormError> {
    if is_plain(input) {
        if input.len() > max_len {
            return Err(FormError::ParameterTooLong);
        }
        // Plain ASCII is UTF-8; the check cannot fail and costs a word-at-a-time scan.
        return std::str::from_utf8(input)
            .map(Cow::Borrowed)
            .map_err(|_| FormError::BadUtf8);
    }
    if !input.iter().any(|&b| b == b'%' || b == b'+') {
        if input.len() > max_len {
            return Err(FormError::ParameterTooLong);
        }
        return std::str::from_utf8(input)
            .map(Cow::Borrowed)
            .map_err(|_| FormError::BadUtf8);
    }
    let mut bytes = Vec::with_capacity(input.len());
    let mut rest = input;
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        match b {
            b'+' => bytes.push(b' '),
            b'%' => {
                let (hi, lo) = match rest {
                    [hi, lo, ..] => (hex(*hi), hex(*lo)),
                    _ => (None, None),
                };
                let (Some(hi), Some(lo)) = (hi, lo) else {
                    return Err(FormError::BadPercentEncoding);
                };
                bytes.push(hi << 4 | lo);
                rest = &rest[2..];
            }
            _ => bytes.push(b),
        }
        if bytes.len() > max_len {
            return Err(FormError::ParameterTooLong);
        }
    }
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| FormError::BadUtf8)
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
            assert_eq!(slot(name.as_bytes()), Some(i), "{name}");
        }
        assert_eq!(slot(b"Client_id"), None);
        assert_eq!(slot(b""), None);
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
        assert_eq!(form.get("x"), None);
        assert_eq!(form.repeated(), None);
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
