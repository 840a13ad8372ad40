//! What DPoP proofs (RFC 9449) and client assertions (RFC 7523) share: compact JWS reading,
//! the asymmetric algorithms grantor verifies, and whether a JWK suits one. Signatures are the
//! `jsonwebtoken` crate's on its `aws-lc-rs` backend (constant-time; no `rsa` crate, whose
//! RUSTSEC-2023-0071 timing side channel has no fixed release).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use serde_json::{Map, Value};

/// The asymmetric algorithms verified (never `none`, never a symmetric one): ES256, EdDSA,
/// RS256, PS256.
#[cfg_attr(
    not(feature = "private-key-jwt"),
    allow(dead_code, reason = "client assertions list them")
)]
pub(crate) const ALGORITHMS: [&str; 4] = ["ES256", "EdDSA", "RS256", "PS256"];

pub(crate) use crate::client::keys::PRIVATE_MEMBERS;

/// The smallest and largest RSA modulus accepted, in bits (RFC 7518 §3.3 asks for 2048 at
/// least; past 4096 a key only costs the verifier time).
const RSA_BITS: (usize, usize) = (2048, 4096);

/// The algorithm named `alg`, if it is one of [`ALGORITHMS`].
pub(crate) fn algorithm(alg: Option<&str>) -> Option<Algorithm> {
    match alg? {
        "ES256" => Some(Algorithm::ES256),
        "EdDSA" => Some(Algorithm::EdDSA),
        "RS256" => Some(Algorithm::RS256),
        "PS256" => Some(Algorithm::PS256),
        _ => None,
    }
}

/// The `alg` name of `algorithm`, one of [`ALGORITHMS`] (an algorithm [`algorithm`] read).
#[cfg_attr(
    not(feature = "private-key-jwt"),
    allow(
        dead_code,
        reason = "used where clients' and issuers' JWSs are verified"
    )
)]
pub(crate) fn name(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::ES256 => "ES256",
        Algorithm::EdDSA => "EdDSA",
        Algorithm::RS256 => "RS256",
        _ => "PS256",
    }
}

/// The three base64url parts of a compact JWS (RFC 7515 §7.1), if `jws` has exactly three.
pub(crate) fn parts(jws: &str) -> Option<[&str; 3]> {
    let mut parts = jws.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(header), Some(payload), Some(signature), None) => Some([header, payload, signature]),
        _ => None,
    }
}

/// A base64url part decoded and read as JSON of type `T`, if it is at most `max_bytes`
/// decoded.
pub(crate) fn decode_part<T: serde::de::DeserializeOwned>(
    part: &str,
    max_bytes: usize,
) -> Option<T> {
    if part.len() > max_bytes.div_ceil(3) * 4 {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(part).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Whether `key` is a public key of `algorithm`'s type and curve, of a sane size, with no
/// private members.
pub(crate) fn key_fits(key: &Map<String, Value>, algorithm: Algorithm) -> bool {
    if PRIVATE_MEMBERS.iter().any(|m| key.contains_key(*m)) {
        return false;
    }
    let text = |member: &str| key.get(member).and_then(Value::as_str);
    match algorithm {
        Algorithm::ES256 => text("kty") == Some("EC") && text("crv") == Some("P-256"),
        Algorithm::EdDSA => text("kty") == Some("OKP") && text("crv") == Some("Ed25519"),
        _ => {
            let bits = text("n").map_or(0, |n| n.trim_start_matches('A').len() * 6);
            text("kty") == Some("RSA") && (RSA_BITS.0 - 5..=RSA_BITS.1 + 5).contains(&bits)
        }
    }
}

/// How a `jsonwebtoken` verification failed.
pub(crate) enum Failure {
    /// The signature does not verify with the key.
    Signature,
    /// The key is not usable for the algorithm.
    Key,
    /// Anything else: the token is malformed.
    Malformed,
}

pub(crate) fn failure(kind: &jsonwebtoken::errors::ErrorKind) -> Failure {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::InvalidSignature => Failure::Signature,
        ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidKeyFormat
        | ErrorKind::InvalidAlgorithm => Failure::Key,
        _ => Failure::Malformed,
    }
}
