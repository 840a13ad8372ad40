//! Secrets: where randomness comes from, how secrets are held, and how they are compared.
//!
//! Every code, token, `jti` and client secret grantor mints comes from [`random_bytes`], one
//! function, so it can be audited in one place. Secret values live in types with a redacting
//! `Debug`, no `Display`, and digests compared in constant time.
//!
//! [`random_bytes`] draws from a ChaCha12 generator per thread (`rand`'s `StdRng`, a CSPRNG)
//! seeded from the operating system's CSPRNG (`getrandom`) and seeded afresh after every
//! [`RESEED_AFTER`] bytes it hands out. One `getrandom` system call per minted value cost about
//! 365 ns, most of the cost of minting; a userspace CSPRNG keyed by the OS costs a few
//! nanoseconds and is as unpredictable to anyone who has not read this process's memory. Two
//! caveats, both bounded by the reseed: someone who reads a thread's generator state learns at
//! most the next [`RESEED_AFTER`] bytes that thread draws (and nothing it drew before, which
//! ChaCha's state does not reveal); and a process that forks from a thread that has drawn
//! shares that thread's stream with its child until either reseeds, so a host that forks after
//! starting grantor must not mint in both processes.

use std::cell::RefCell;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use rand::rngs::StdRng;
use rand::{RngCore as _, SeedableRng as _};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::error::StoreError;

/// How many bytes a thread's generator hands out before it is seeded again from the OS.
pub(crate) const RESEED_AFTER: usize = 64 * 1024;

thread_local! {
    /// This thread's generator and how many bytes it has handed out since it was seeded.
    static GENERATOR: RefCell<Option<(StdRng, usize)>> = const { RefCell::new(None) };
}

/// `N` bytes from this thread's CSPRNG, seeded from the operating system's (see the module
/// docs). Fails only if the OS gives no randomness when a seed is due.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], StoreError> {
    let mut bytes = [0u8; N];
    GENERATOR.with_borrow_mut(|slot| {
        let (generator, drawn) = match slot {
            Some((generator, drawn)) if *drawn + N <= RESEED_AFTER => (generator, drawn),
            _ => {
                let seeded = StdRng::try_from_os_rng().map_err(|e| {
                    StoreError::failed(format!("the OS random number generator failed: {e}"))
                })?;
                let (generator, drawn) = slot.insert((seeded, 0));
                (generator, drawn)
            }
        };
        generator.fill_bytes(&mut bytes);
        *drawn += N;
        Ok::<(), StoreError>(())
    })?;
    Ok(bytes)
}

/// `bytes` in unpadded base64url (RFC 4648 §5): the shape of every code, token and secret.
pub(crate) fn base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The length of `len` bytes in unpadded base64url.
pub(crate) const fn base64url_len(len: usize) -> usize {
    (len * 4).div_ceil(3)
}

/// Writes `bytes` in unpadded base64url into `out`, which must be [`base64url_len`] bytes long
/// (otherwise the answer is empty), and answers it as text: for encodings kept off the heap.
pub(crate) fn base64url_into<'a>(bytes: &[u8], out: &'a mut [u8]) -> &'a str {
    if out.len() != base64url_len(bytes.len()) {
        return "";
    }
    let written = URL_SAFE_NO_PAD.encode_slice(bytes, out).unwrap_or(0);
    // Every byte comes from the base64url alphabet, so this cannot fail.
    std::str::from_utf8(&out[..written]).unwrap_or_default()
}

/// The length in characters of the access and refresh tokens grantor mints: 33 bytes in
/// base64url, the issue time in milliseconds (6 bytes, big-endian) and then 216 random bits.
pub(crate) const TIMED_TOKEN_LEN: usize = base64url_len(ISSUE_TIME_LEN + TIMED_TOKEN_RANDOM);

/// The bytes of a minted token's issue time.
const ISSUE_TIME_LEN: usize = 6;

/// The random bytes of a minted access or refresh token.
pub(crate) const TIMED_TOKEN_RANDOM: usize = 27;

/// A token from its issue time `millis` (milliseconds since the epoch) and `random` bytes, and
/// its digest, the one [`SecretDigest::of_token`] answers for it.
pub(crate) fn timed_token(
    millis: u128,
    random: &[u8; TIMED_TOKEN_RANDOM],
) -> (String, SecretDigest) {
    let mut bytes = [0u8; ISSUE_TIME_LEN + TIMED_TOKEN_RANDOM];
    bytes[..ISSUE_TIME_LEN].copy_from_slice(&millis.to_be_bytes()[16 - ISSUE_TIME_LEN..]);
    bytes[ISSUE_TIME_LEN..].copy_from_slice(random);
    let token = base64url(&bytes);
    let mut issued = [0u8; ISSUE_TIME_LEN];
    issued.copy_from_slice(&bytes[..ISSUE_TIME_LEN]);
    // The issue time is in hand: the digest need not read it back from the text.
    let digest = SecretDigest::timed(issued, &token);
    (token, digest)
}

/// The issue time a token of grantor's timed shape begins with (its first 8 characters,
/// decoded), or `None` for any other string. Read with [`BASE64URL`], one load per character:
/// every token presented to a resource passes here (a test holds it equal to the `base64`
/// crate's decoding).
fn issue_time_of(token: &str) -> Option<[u8; ISSUE_TIME_LEN]> {
    let text = token.as_bytes();
    if text.len() != TIMED_TOKEN_LEN
        || text
            .iter()
            .any(|&c| BASE64URL[usize::from(c)] == NOT_BASE64URL)
    {
        return None;
    }
    // 8 characters of 6 bits are the 48 bits of the issue time, with none left over.
    let bits = text[..base64url_len(ISSUE_TIME_LEN)]
        .iter()
        .fold(0u64, |bits, &c| {
            bits << 6 | u64::from(BASE64URL[usize::from(c)])
        });
    let mut issued = [0u8; ISSUE_TIME_LEN];
    issued.copy_from_slice(&bits.to_be_bytes()[8 - ISSUE_TIME_LEN..]);
    Some(issued)
}

/// What [`BASE64URL`] holds for a byte outside the base64url alphabet.
const NOT_BASE64URL: u8 = 0xff;

/// The 6-bit value of each character of the base64url alphabet (RFC 4648 §5), as a table;
/// [`NOT_BASE64URL`] for every other byte.
const BASE64URL: [u8; 256] = {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut table = [NOT_BASE64URL; 256];
    let mut value = 0;
    while value < alphabet.len() {
        table[alphabet[value] as usize] = value as u8;
        value += 1;
    }
    table
};

/// A SHA-256 digest of a secret string: how codes and tokens are kept at rest and looked up.
///
/// The digest of an access or refresh token grantor minted begins with the token's issue time
/// ([`of_token`](Self::of_token)), so that database indexes grow at their end: a store that
/// spreads digests over shards or hash buckets by a few of their bytes takes them from the
/// last 16, which are SHA-256 bits for every token.
// Hashed in full (not by a prefix as the in-memory issuer's private keys are): a host may key
// its own maps by digests of strings an attacker chose.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SecretDigest([u8; 32]);

impl SecretDigest {
    /// The SHA-256 digest of `secret`. An access or refresh token is kept under
    /// [`of_token`](Self::of_token) instead (what [`AccessToken::digest`] and
    /// [`RefreshToken::digest`] answer).
    pub fn of(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }

    /// The digest of an access or refresh token, as grantor keeps and looks it up.
    ///
    /// A token grantor mints (44 characters of base64url) begins with its issue time, and
    /// so does its digest: the time's 6 bytes, then the first 26 bytes of the token's SHA-256
    /// digest. A database indexed on digests then adds each new token at the end of its index,
    /// on the page the previous token was written to, instead of on a random page (one page
    /// written to disk per token: a third of the SQLite writer's time per token, measured).
    /// Any other string (a token minted before, a JWT access token, anything presented) is
    /// digested whole with SHA-256, as [`of`](Self::of) does. Either way the digest reveals
    /// nothing of the token's random part, and a stored digest cannot be turned back into
    /// its token.
    pub fn of_token(token: &str) -> Self {
        match issue_time_of(token) {
            Some(issued) => Self::timed(issued, token),
            None => Self::of(token),
        }
    }

    /// The digest of `token`, of grantor's timed shape and issued at `issued`: the time, then
    /// the first 26 bytes of the token's SHA-256 digest.
    fn timed(issued: [u8; ISSUE_TIME_LEN], token: &str) -> Self {
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut digest = [0u8; 32];
        digest[..ISSUE_TIME_LEN].copy_from_slice(&issued);
        digest[ISSUE_TIME_LEN..].copy_from_slice(&hash[..32 - ISSUE_TIME_LEN]);
        Self(digest)
    }

    /// A digest restored from its 32 bytes (for instance read back from a database).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The 32 bytes of the digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The digest in unpadded base64url (43 characters): how store keys name a secret without
    /// holding it.
    pub(crate) fn to_base64url(self) -> String {
        base64url(&self.0)
    }

    /// Constant-time equality, for comparing against a presented secret's digest.
    pub fn ct_eq(&self, other: &Self) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl fmt::Debug for SecretDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretDigest(<redacted>)")
    }
}

/// Defines a newtype over a secret string with a redacting `Debug`, no `Display`, a
/// constant-time `==`, and its digest computed at most once.
macro_rules! secret_string {
    ($(#[$meta:meta])* $name:ident) => {
        secret_string!($(#[$meta])* $name, SecretDigest::of);
    };
    ($(#[$meta:meta])* $name:ident, $digest:path) => {
        $(#[$meta])*
        #[derive(Clone)]
        pub struct $name {
            value: String,
            digest: std::sync::OnceLock<SecretDigest>,
        }

        impl $name {
            /// Wraps a secret value.
            pub fn new(value: impl Into<String>) -> Self {
                Self {
                    value: value.into(),
                    digest: std::sync::OnceLock::new(),
                }
            }

            /// Wraps a secret minted with its digest already computed.
            #[allow(dead_code)]
            pub(crate) fn with_digest(value: String, digest: SecretDigest) -> Self {
                Self {
                    value,
                    digest: std::sync::OnceLock::from(digest),
                }
            }

            /// Wraps a secret whose digest is needed at once (a presented token about to be
            /// looked up, a minted one about to be stored): hashed here, so the lazy cell is
            /// never consulted.
            #[allow(dead_code)]
            pub(crate) fn hashed(value: impl Into<String>) -> Self {
                let value = value.into();
                let digest = $digest(&value);
                Self {
                    value,
                    digest: std::sync::OnceLock::from(digest),
                }
            }

            /// The secret in the clear, for putting it on the wire or into a hash function.
            /// Never log it.
            pub fn expose_secret(&self) -> &str {
                &self.value
            }

            /// The secret in the clear, by value.
            pub fn into_secret(self) -> String {
                self.value
            }

            /// The digest under which it is kept and looked up (computed once).
            pub fn digest(&self) -> SecretDigest {
                *self.digest.get_or_init(|| $digest(&self.value))
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.value.as_bytes().ct_eq(other.value.as_bytes()).into()
            }
        }

        impl Eq for $name {}

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(concat!(stringify!($name), "(<redacted>)"))
            }
        }
    };
}

secret_string!(
    /// A client secret as presented by a client or as generated by
    /// [`ClientCredentials::generate`](crate::client::ClientCredentials::generate).
    ClientSecret
);
secret_string!(
    /// A user's password as presented at the token endpoint or on the host's sign-in page.
    Password
);
secret_string!(
    /// An authorization code (RFC 6749 §4.1.2): 256 random bits, single use.
    AuthorizationCode
);
secret_string!(
    /// An access token (RFC 6749 §1.4), kept by the issuer only as a digest
    /// ([`SecretDigest::of_token`]). grantor mints its issue time and 216 random bits.
    AccessToken,
    SecretDigest::of_token
);
secret_string!(
    /// A device code (RFC 8628 §3.2): 256 random bits, the device's handle on its flow.
    DeviceCode
);
secret_string!(
    /// A refresh token (RFC 6749 §1.5), rotated on every use and kept as a digest
    /// ([`SecretDigest::of_token`]). grantor mints its issue time and 216 random bits.
    RefreshToken,
    SecretDigest::of_token
);

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn random_bytes_stay_distinct_across_reseeds_and_threads() {
        let mut seen = std::collections::HashSet::new();
        // Three reseeds' worth of 32-byte draws on this thread.
        for _ in 0..(3 * RESEED_AFTER / 32 + 1) {
            assert!(
                seen.insert(random_bytes::<32>().unwrap()),
                "a repeated draw"
            );
        }
        let others: Vec<[u8; 32]> = (0..4)
            .map(|_| std::thread::spawn(|| random_bytes::<32>().unwrap()))
            .map(|thread| thread.join().unwrap())
            .collect();
        for draw in others {
            assert!(seen.insert(draw), "another thread repeated a draw");
        }
    }

    #[test]
    fn secrets_are_redacted_in_debug_output() {
        let password = Password::new("hunter2");
        assert_eq!(format!("{password:?}"), "Password(<redacted>)");
        let token = AccessToken::new("abc");
        assert!(!format!("{token:?}").contains("abc"));
        assert!(!format!("{:?}", token.digest()).contains("ba7816bf"));
    }

    #[test]
    fn base64url_into_a_buffer_writes_the_unpadded_encoding() {
        let mut out = [0u8; 22];
        let text = base64url_into(&[0xfb; 16], &mut out);
        assert_eq!(text, "-_v7-_v7-_v7-_v7-_v7-w");
        assert_eq!(base64url(&[0xfb; 16]), text);
    }

    #[test]
    fn base64url_into_a_buffer_of_the_wrong_length_writes_nothing() {
        assert_eq!(base64url_into(b"abc", &mut [0u8; 3]), "");
        assert_eq!(base64url_into(b"abc", &mut [0u8; 5]), "");
    }

    #[test]
    fn digests_compare_by_value() {
        assert!(SecretDigest::of("x").ct_eq(&SecretDigest::of("x")));
        assert!(!SecretDigest::of("x").ct_eq(&SecretDigest::of("y")));
    }

    /// The issue time as the `base64` crate reads it: 44 base64url characters, the first 8
    /// decoded.
    fn issue_time_by_the_crate(token: &str) -> Option<[u8; ISSUE_TIME_LEN]> {
        let alphabet = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
        if token.len() != TIMED_TOKEN_LEN || !token.bytes().all(alphabet) {
            return None;
        }
        let mut issued = [0u8; ISSUE_TIME_LEN];
        let written = URL_SAFE_NO_PAD
            .decode_slice(&token.as_bytes()[..8], &mut issued)
            .ok()?;
        (written == ISSUE_TIME_LEN).then_some(issued)
    }

    proptest::proptest! {
        /// Any minted token's issue time is read back.
        #[test]
        fn the_issue_time_of_a_minted_token_is_read_back(
            millis in 0u128..(1 << 48),
            random in proptest::array::uniform27(proptest::num::u8::ANY),
        ) {
            let (token, digest) = timed_token(millis, &random);
            let issued = issue_time_of(&token);
            proptest::prop_assert_eq!(issued, issue_time_by_the_crate(&token));
            proptest::prop_assert_eq!(&issued.unwrap()[..], &millis.to_be_bytes()[10..]);
            proptest::prop_assert!(digest.ct_eq(&SecretDigest::of_token(&token)));
        }

        /// Any other string of 44 characters (some outside the alphabet, or of several bytes)
        /// is read as the `base64` crate reads it.
        #[test]
        fn the_issue_time_is_read_as_the_base64_crate_reads_it(
            token in "[A-Za-z0-9_=+/.é-]{43,45}",
        ) {
            proptest::prop_assert_eq!(issue_time_of(&token), issue_time_by_the_crate(&token));
        }
    }
}
