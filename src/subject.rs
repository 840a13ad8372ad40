//! Subject identifiers (OpenID Connect Core §8): the `sub` a client knows a user by. A public
//! client gets the user's id, the same for every client; a pairwise client gets a value of its
//! sector alone (§8.1), so that clients of different sectors cannot join what they know of a
//! user by `sub`.
//!
//! A pairwise `sub` is computed, never kept: HMAC-SHA-256 under the host's [`PairwiseSecret`]
//! of the sector and the user id, base64url. Every node holding the same secret computes the
//! same value, before and after a restart; another secret gives other values.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac as _};
use sha2::Sha256;

use crate::error::StoreError;
use crate::id::UserId;
use crate::secret::random_bytes;

/// The longest sector taken: a host name is at most 253 bytes (RFC 1035 §2.3.4).
pub(crate) const MAX_SECTOR_BYTES: usize = 255;

/// The key pairwise subject identifiers are computed under (OpenID Connect Core §8.1): 32
/// bytes, set with
/// [`OpenIdConnect::pairwise_secret`](crate::settings::OpenIdConnect::pairwise_secret). A
/// secret: its `Debug` shows nothing of it, and it has no `Display`.
///
/// ```
/// use grantor::settings::PairwiseSecret;
///
/// // Generated once, and kept with the host's secrets: every node needs the same one.
/// let encoded = PairwiseSecret::generate_base64().unwrap();
/// let secret = PairwiseSecret::from_base64(&encoded).unwrap();
/// assert_eq!(format!("{secret:?}"), "PairwiseSecret(<redacted>)");
/// assert!(PairwiseSecret::from_base64("c2hvcnQ=").is_err());
/// ```
#[derive(Clone)]
pub struct PairwiseSecret([u8; 32]);

impl PairwiseSecret {
    /// The secret from its 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The secret from 32 bytes in standard base64 (padded or not); anything else is refused
    /// with a reason that does not repeat the input.
    pub fn from_base64(encoded: &str) -> Result<Self, PairwiseSecretError> {
        let trimmed = encoded.trim().trim_end_matches('=');
        let bytes = STANDARD_NO_PAD
            .decode(trimmed)
            .map_err(|_| PairwiseSecretError)?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| PairwiseSecretError)?;
        Ok(Self(bytes))
    }

    /// A fresh random secret from grantor's CSPRNG, in standard base64: what a host generates
    /// once and keeps in its secrets (as `openssl rand -base64 32` would print one).
    pub fn generate_base64() -> Result<String, StoreError> {
        Ok(STANDARD.encode(random_bytes::<32>()?))
    }

    /// The pairwise `sub` of `user` in `sector`: HMAC-SHA-256 of the sector's length (8 bytes,
    /// big-endian), the sector and the user id, base64url without padding (43 characters). The
    /// length prefix keeps `("a.example", "b1")` and `("a.exampleb", "1")` apart.
    pub(crate) fn subject(&self, sector: &str, user: &UserId) -> String {
        // HMAC takes a key of any length: `new_from_slice` fails for none.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.0) else {
            unreachable!("HMAC-SHA-256 refused a 32-byte key")
        };
        mac.update(&(sector.len() as u64).to_be_bytes());
        mac.update(sector.as_bytes());
        mac.update(user.as_str().as_bytes());
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }
}

impl fmt::Debug for PairwiseSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PairwiseSecret(<redacted>)")
    }
}

/// A pairwise secret that is not 32 bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a pairwise secret is 32 bytes in standard base64")]
pub struct PairwiseSecretError;

/// The sector of a URI (OpenID Connect Core §8.1): its host, as the URL parser writes it
/// (lowercase, IDNA to punycode, IPv6 in brackets), without the port; `None` when it has none.
pub(crate) fn host_of(uri: &str) -> Option<String> {
    let parsed = url::Url::parse(uri).ok()?;
    parsed
        .host_str()
        .filter(|host| !host.is_empty())
        .map(str::to_owned)
}

/// Whether `sector` may be one: a host name or address in printable ASCII, without spaces,
/// at most [`MAX_SECTOR_BYTES`].
pub(crate) fn is_sector(sector: &str) -> bool {
    !sector.is_empty()
        && sector.len() <= MAX_SECTOR_BYTES
        && sector.bytes().all(|b| b.is_ascii_graphic() && b != b'/')
}

/// The sector of a client without a `sector_identifier_uri` (OpenID Connect Core §8.1): the
/// one host of its redirect URIs. `Err` says why there is none: no redirect URI with a host,
/// or several hosts (then the client must register a `sector_identifier_uri`).
pub(crate) fn sector_of_redirect_uris(uris: &[String]) -> Result<String, &'static str> {
    let mut sector: Option<String> = None;
    for uri in uris {
        let host = host_of(uri).ok_or(
            "a pairwise client's redirect URIs must each have a host, or it registers a \
             sector_identifier_uri (OpenID Connect Core section 8.1)",
        )?;
        match &sector {
            Some(seen) if *seen != host => {
                return Err(
                    "redirect URIs on several hosts need a sector_identifier_uri for pairwise \
                     subjects (OpenID Connect Core section 8.1)",
                );
            }
            _ => sector = Some(host),
        }
    }
    sector.ok_or(
        "a pairwise client needs a redirect URI or a sector_identifier_uri to take its sector \
         from (OpenID Connect Core section 8.1)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: &str) -> UserId {
        UserId::new(id)
    }

    #[test]
    fn a_pairwise_subject_is_stable_per_sector_and_user_and_never_the_public_one() {
        let secret = PairwiseSecret::from_bytes([7; 32]);
        let alice = user("alice");
        let once = secret.subject("app.example", &alice);
        assert_eq!(once, secret.subject("app.example", &alice));
        assert_eq!(
            once,
            PairwiseSecret::from_bytes([7; 32]).subject("app.example", &alice)
        );
        assert_eq!(once.len(), 43);
        assert!(
            once.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_ne!(once, "alice");
        assert_ne!(once, secret.subject("other.example", &alice));
        assert_ne!(once, secret.subject("app.example", &user("bob")));
        assert_ne!(
            once,
            PairwiseSecret::from_bytes([8; 32]).subject("app.example", &alice)
        );
        // The sector's length is part of what is hashed: moving bytes across is another input.
        assert_ne!(
            secret.subject("a.example", &user("b1")),
            secret.subject("a.exampleb", &user("1"))
        );
    }

    #[test]
    fn secrets_are_32_bytes_of_base64_and_never_shown() {
        let encoded = PairwiseSecret::generate_base64().unwrap();
        let secret = PairwiseSecret::from_base64(&encoded).unwrap();
        assert_eq!(format!("{secret:?}"), "PairwiseSecret(<redacted>)");
        assert!(PairwiseSecret::from_base64(encoded.trim_end_matches('=')).is_ok());
        for refused in ["", "not base64!", "c2hvcnQ=", &STANDARD.encode([1u8; 33])] {
            assert_eq!(
                PairwiseSecret::from_base64(refused).unwrap_err(),
                PairwiseSecretError
            );
        }
    }

    #[test]
    fn the_sector_is_the_one_host_of_the_redirect_uris() {
        let uris = |list: &[&str]| list.iter().map(|u| (*u).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            sector_of_redirect_uris(&uris(&[
                "https://App.Example/cb",
                "https://app.example:8443/other"
            ])),
            Ok("app.example".to_owned())
        );
        assert_eq!(
            sector_of_redirect_uris(&uris(&["http://127.0.0.1:8081/callback"])),
            Ok("127.0.0.1".to_owned())
        );
        let several = sector_of_redirect_uris(&uris(&[
            "https://app.example/cb",
            "https://other.example/cb",
        ]));
        assert!(several.unwrap_err().contains("several hosts"));
        assert!(sector_of_redirect_uris(&[]).is_err());
        assert!(sector_of_redirect_uris(&uris(&["com.example.app:/cb"])).is_err());
    }

    #[test]
    fn sectors_are_short_printable_host_names() {
        assert!(is_sector("app.example"));
        assert!(is_sector("[::1]"));
        for refused in ["", "a b", "app.example/path", "caf\u{e9}.example"] {
            assert!(!is_sector(refused), "{refused:?}");
        }
        assert!(!is_sector(&"a".repeat(MAX_SECTOR_BYTES + 1)));
    }
}
