//! HTTP Basic client authentication (RFC 6749 §2.3.1, RFC 7617).

use base64::Engine as _;
use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use http::HeaderMap;
use http::header::AUTHORIZATION;

use super::form;
use crate::secret::ClientSecret;

/// Standard base64, with or without padding (clients differ).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// What the `Authorization` header says about the client.
#[derive(Debug)]
pub(crate) enum BasicAuth {
    /// No `Authorization` header.
    Absent,
    /// Well-formed Basic credentials.
    Present {
        client_id: String,
        secret: ClientSecret,
    },
    /// A header that is not usable Basic credentials: another scheme, several headers, bad
    /// base64, no colon, bad encoding.
    Malformed(&'static str),
}

/// Reads client credentials from the `Authorization` header: Base64 of the form-urlencoded
/// client id, a colon, and the form-urlencoded secret.
pub(crate) fn parse(headers: &HeaderMap, max_len: usize) -> BasicAuth {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return BasicAuth::Absent;
    };
    if values.next().is_some() {
        return BasicAuth::Malformed("more than one Authorization header was sent");
    }
    let Ok(value) = value.to_str() else {
        return BasicAuth::Malformed("the Authorization header is not ASCII");
    };
    let Some((scheme, encoded)) = value.trim().split_once(' ') else {
        return BasicAuth::Malformed("the Authorization header is not HTTP Basic credentials");
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return BasicAuth::Malformed(
            "only HTTP Basic client authentication (client_secret_basic) is supported",
        );
    }
    let encoded = encoded.trim_start();
    if encoded.len() > max_len {
        return BasicAuth::Malformed("the Basic credentials are too long");
    }
    let Ok(decoded) = BASE64.decode(encoded) else {
        return BasicAuth::Malformed("the Basic credentials are not valid base64");
    };
    let Some(colon) = decoded.iter().position(|&b| b == b':') else {
        return BasicAuth::Malformed("the Basic credentials lack the ':' separator");
    };
    let (id, secret) = (&decoded[..colon], &decoded[colon + 1..]);
    match (form::decode(id, max_len), form::decode(secret, max_len)) {
        (Ok(id), Ok(secret)) if !id.is_empty() => BasicAuth::Present {
            client_id: id.into_owned(),
            secret: ClientSecret::new(secret.into_owned()),
        },
        (Ok(_), Ok(_)) => BasicAuth::Malformed("the Basic credentials name no client"),
        _ => BasicAuth::Malformed(
            "the Basic credentials are not form-urlencoded UTF-8 (RFC 6749 §2.3.1)",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_value(value: &str) -> BasicAuth {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, value.parse().unwrap());
        parse(&headers, 4096)
    }

    #[test]
    fn decodes_form_urlencoded_credentials() {
        // "my%20client:s%3Acret+x" → id "my client", secret "s:cret x".
        let value = format!("basic {}", BASE64.encode("my%20client:s%3Acret+x"));
        match parse_value(&value) {
            BasicAuth::Present { client_id, secret } => {
                assert_eq!(client_id, "my client");
                assert_eq!(secret.expose_secret(), "s:cret x");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn accepts_missing_padding() {
        let encoded = BASE64.encode("a:b").trim_end_matches('=').to_owned();
        assert!(matches!(
            parse_value(&format!("Basic {encoded}")),
            BasicAuth::Present { .. }
        ));
    }

    #[test]
    fn refuses_what_is_not_basic_credentials() {
        for value in [
            "Bearer abc",
            "Basic",
            "Basic !!!",
            "Basic YWJj",
            "Basic OmI=",
        ] {
            assert!(
                matches!(parse_value(value), BasicAuth::Malformed(_)),
                "{value}"
            );
        }
        let bad_escape = format!("Basic {}", BASE64.encode("a:%zz"));
        assert!(matches!(parse_value(&bad_escape), BasicAuth::Malformed(_)));
        assert!(matches!(parse(&HeaderMap::new(), 10), BasicAuth::Absent));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        #[test]
        fn arbitrary_header_values_never_panic(value in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..128)) {
            if let Ok(value) = http::HeaderValue::from_bytes(&value) {
                let mut headers = HeaderMap::new();
                headers.insert(AUTHORIZATION, value);
                let _ = parse(&headers, 4096);
            }
        }

        #[test]
        fn encoded_credentials_round_trip(id in "\\PC{1,20}", secret in "\\PC{0,40}") {
            let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let value = format!("Basic {}", BASE64.encode(format!("{}:{}", encode(&id), encode(&secret))));
            match parse_value(&value) {
                BasicAuth::Present { client_id, secret: parsed } => {
                    proptest::prop_assert_eq!(client_id, id);
                    proptest::prop_assert_eq!(parsed.expose_secret(), secret.as_str());
                }
                other => proptest::prop_assert!(false, "{other:?}"),
            }
        }
    }
}
