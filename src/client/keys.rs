//! [`ClientKeys`]: the public keys a client authenticates with (`private_key_jwt`, RFC 7523
//! §2.2), registered as a JWK Set (RFC 7517 §5) or as the URL of one.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::ClientError;

/// The largest JWK Set accepted as `jwks`, in bytes of JSON: ten RSA-4096 keys fit.
pub const MAX_JWKS_BYTES: usize = 16 * 1024;

/// At most this many keys in a client's JWK Set.
pub const MAX_CLIENT_KEYS: usize = 10;

/// JWK members that hold private or symmetric key material (RFC 7518 §6.2.2, §6.3.2, §6.4;
/// RFC 8037 §2): a registered set carrying any of them is refused.
pub(crate) const PRIVATE_MEMBERS: [&str; 9] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k", "priv"];

/// Where a `private_key_jwt` client's public keys are (RFC 7591 §2 `jwks`, `jwks_uri`).
#[derive(Clone, PartialEq, Eq)]
pub enum ClientKeys {
    /// The JWK Set itself, as JSON text (`jwks`).
    Jwks(Arc<str>),
    /// An `https` URL of the JWK Set (`jwks_uri`), which the host resolves through its
    /// `ClientKeyResolver` (feature `private-key-jwt`).
    JwksUri(String),
}

impl ClientKeys {
    /// A JWK Set given as JSON text: an object whose `keys` is an array of 1 to
    /// [`MAX_CLIENT_KEYS`] JWK objects, none holding private or symmetric key material, at
    /// most [`MAX_JWKS_BYTES`] long. Whether each key suits an algorithm is checked when an
    /// assertion is verified.
    pub fn jwks(json: &str) -> Result<Self, ClientError> {
        if json.len() > MAX_JWKS_BYTES {
            return Err(ClientError::InvalidKeys);
        }
        let set: Value = serde_json::from_str(json).map_err(|_| ClientError::InvalidKeys)?;
        let Some(keys) = set.get("keys").and_then(Value::as_array) else {
            return Err(ClientError::InvalidKeys);
        };
        let sound = |key: &Value| {
            key.as_object().is_some_and(|key| {
                key.get("kty").is_some_and(Value::is_string)
                    && !PRIVATE_MEMBERS.iter().any(|m| key.contains_key(*m))
            })
        };
        if keys.is_empty() || keys.len() > MAX_CLIENT_KEYS || !keys.iter().all(sound) {
            return Err(ClientError::InvalidKeys);
        }
        Ok(Self::Jwks(Arc::from(json)))
    }

    /// The `https` URL of a JWK Set, without a fragment, in printable ASCII.
    pub fn jwks_uri(uri: &str) -> Result<Self, ClientError> {
        let printable = uri.bytes().all(|b| (0x21..=0x7e).contains(&b));
        match url::Url::parse(uri) {
            Ok(url) if printable && url.scheme() == "https" && url.fragment().is_none() => {
                Ok(Self::JwksUri(uri.to_owned()))
            }
            _ => Err(ClientError::InvalidKeys),
        }
    }
}

impl fmt::Debug for ClientKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Public keys, but long: their size says enough.
            Self::Jwks(json) => write!(f, "ClientKeys::Jwks({} bytes)", json.len()),
            Self::JwksUri(uri) => write!(f, "ClientKeys::JwksUri({uri:?})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jwks_must_be_public_keys_in_a_keys_array() {
        let good = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
        assert!(ClientKeys::jwks(good).is_ok());
        for bad in [
            "",
            "[]",
            r#"{"keys":[]}"#,
            r#"{"keys":{}}"#,
            r#"{"keys":[1]}"#,
            r#"{"keys":[{"crv":"P-256"}]}"#,
            r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#,
            r#"{"keys":[{"kty":"EC","d":"x"}]}"#,
        ] {
            assert_eq!(
                ClientKeys::jwks(bad),
                Err(ClientError::InvalidKeys),
                "{bad}"
            );
        }
        let many = format!(r#"{{"keys":[{}]}}"#, [r#"{"kty":"EC"}"#; 11].join(","));
        assert!(ClientKeys::jwks(&many).is_err());
    }

    #[test]
    fn a_jwks_uri_must_be_https_without_a_fragment() {
        assert!(ClientKeys::jwks_uri("https://app.example/jwks.json").is_ok());
        for bad in [
            "http://app.example/jwks",
            "https://a.example/k#x",
            "/jwks",
            "https://a b",
        ] {
            assert!(ClientKeys::jwks_uri(bad).is_err(), "{bad}");
        }
    }
}
