//! A DPoP proof (RFC 9449 §4) checked on its own: its shape, its key, its signature and its
//! claims against the request it came with. Nothing here keeps state: whether its `jti` was
//! seen before and whether its nonce is current are the caller's questions.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::clock::UnixTime;
use crate::jose;
use crate::store::JwkThumbprint;

/// The JOSE `typ` of a DPoP proof (RFC 9449 §4.2).
pub const PROOF_TYP: &str = "dpop+jwt";

/// The longest proof accepted, in bytes: an RSA-4096 key with its signature fits with room.
pub const MAX_PROOF_BYTES: usize = 8192;

/// The longest JOSE header accepted, decoded, in bytes: it carries the public key.
pub const MAX_HEADER_BYTES: usize = 2048;

/// The longest `jti` accepted, in bytes (RFC 9449 §11.1 asks for 96 random bits; any
/// reasonable encoding fits).
pub const MAX_JTI_BYTES: usize = 256;

/// The proof algorithms grantor verifies (asymmetric only, RFC 9449 §4.2): what the metadata
/// lists as `dpop_signing_alg_values_supported`. Ed25519 goes by both its names: `EdDSA`, and
/// `Ed25519`, the fully specified one of RFC 9864.
pub const ALGORITHMS: [&str; 5] = ["ES256", "EdDSA", "Ed25519", "RS256", "PS256"];

/// The algorithm a proof's `alg` names, if grantor verifies it.
fn algorithm(alg: Option<&str>) -> Option<jsonwebtoken::Algorithm> {
    match alg {
        Some("Ed25519") => Some(jsonwebtoken::Algorithm::EdDSA),
        alg => jose::algorithm(alg),
    }
}

/// Why a proof was refused: each variant is its own `error_description`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProofError {
    /// No `DPoP` header where one is needed.
    #[error("a DPoP proof is required (RFC 9449)")]
    Missing,
    /// More than one `DPoP` header.
    #[error("more than one DPoP header was sent")]
    Repeated,
    /// Not a compact JWS of reasonable size with a JSON header and claims.
    #[error("the DPoP proof is not a well-formed JWT")]
    Malformed,
    /// `typ` is not `dpop+jwt`.
    #[error("the DPoP proof's typ must be dpop+jwt")]
    WrongType,
    /// `alg` is `none`, symmetric, or not one grantor verifies.
    #[error("the DPoP proof's alg is not an asymmetric algorithm this server verifies")]
    UnsupportedAlgorithm,
    /// No `jwk`, or one that is not a public key of the `alg`, or too large.
    #[error("the DPoP proof's jwk is missing, malformed or not a key for its alg")]
    InvalidKey,
    /// The `jwk` carries private key material.
    #[error("the DPoP proof's jwk must not carry a private key")]
    PrivateKey,
    /// The signature does not verify with the `jwk`.
    #[error("the DPoP proof's signature does not verify with its jwk")]
    BadSignature,
    /// `jti`, `htm`, `htu` or `iat` is missing or of the wrong type, or `jti` is empty or
    /// longer than [`MAX_JTI_BYTES`].
    #[error("the DPoP proof's jti, htm, htu or iat is missing or malformed")]
    MissingClaim,
    /// `htm` is not the request's method.
    #[error("the DPoP proof's htm is not this request's method")]
    WrongMethod,
    /// `htu` is not the request's URI (query and fragment aside).
    #[error("the DPoP proof's htu is not this request's URI")]
    WrongUri,
    /// `iat` is outside the accepted window around now.
    #[error("the DPoP proof's iat is too old or in the future")]
    Stale,
    /// `ath` is missing or not the hash of the presented access token.
    #[error("the DPoP proof's ath does not match the access token")]
    WrongAccessTokenHash,
    /// The proof's `jti` was used before.
    #[error("the DPoP proof was used before")]
    Replayed,
    /// The proof's key is not the key the token is bound to.
    #[error("the DPoP proof's key is not the key the token is bound to")]
    WrongKey,
}

/// What a proof must match: the request it came with, and the time. Its `Debug` never shows
/// the access token.
#[derive(Clone, Copy)]
pub struct ProofContext<'a> {
    /// The request's method (`htm`), as sent (`POST`, `GET`, …).
    pub method: &'a str,
    /// The request's absolute URI (`htu`); its query and fragment are ignored.
    pub uri: &'a str,
    /// At a resource, the access token presented with the proof: its hash must be the proof's
    /// `ath` (RFC 9449 §4.3). `None` at the token endpoint.
    pub access_token: Option<&'a str>,
    /// Now.
    pub now: UnixTime,
    /// How far `iat` may be from now, either way.
    pub window: Duration,
}

impl std::fmt::Debug for ProofContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProofContext")
            .field("method", &self.method)
            .field("uri", &self.uri)
            .field("access_token", &self.access_token.map(|_| "<redacted>"))
            .field("now", &self.now)
            .field("window", &self.window)
            .finish()
    }
}

/// A proof that passed every check that needs no state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedProof {
    /// The SHA-256 thumbprint of the proof's key (RFC 7638): what a token is bound to.
    pub jkt: JwkThumbprint,
    /// The proof's `jti`, to be accepted once.
    pub jti: String,
    /// The proof's `iat`.
    pub issued_at: UnixTime,
    /// The proof's `nonce`, if it carries one.
    pub nonce: Option<String>,
}

impl VerifiedProof {
    /// Until when the proof is usable, so how long its `jti` must be remembered.
    pub fn usable_until(&self, window: Duration) -> UnixTime {
        self.issued_at.plus(window).plus(Duration::from_secs(1))
    }
}

#[derive(Deserialize)]
struct RawHeader {
    typ: Option<String>,
    alg: Option<String>,
    jwk: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct Claims {
    jti: Option<String>,
    htm: Option<String>,
    htu: Option<String>,
    iat: Option<f64>,
    ath: Option<String>,
    nonce: Option<String>,
}

/// Checks `proof` against `context`: RFC 9449 §4.3's steps 2 to 9 and 11 to 12 (the nonce,
/// step 10, and the `jti`, step 13, need state).
pub fn verify_proof(proof: &str, context: &ProofContext<'_>) -> Result<VerifiedProof, ProofError> {
    if proof.len() > MAX_PROOF_BYTES {
        return Err(ProofError::Malformed);
    }
    let [encoded_header, payload, signature] = jose::parts(proof).ok_or(ProofError::Malformed)?;
    if encoded_header.len() > MAX_HEADER_BYTES.div_ceil(3) * 4 {
        return Err(ProofError::InvalidKey);
    }
    let header: RawHeader =
        jose::decode_part(encoded_header, MAX_HEADER_BYTES).ok_or(ProofError::Malformed)?;
    if !header
        .typ
        .as_deref()
        .is_some_and(|typ| typ.eq_ignore_ascii_case(PROOF_TYP))
    {
        return Err(ProofError::WrongType);
    }
    let algorithm = algorithm(header.alg.as_deref()).ok_or(ProofError::UnsupportedAlgorithm)?;
    let raw_key = header.jwk.ok_or(ProofError::InvalidKey)?;
    if jose::PRIVATE_MEMBERS
        .iter()
        .any(|m| raw_key.contains_key(*m))
    {
        return Err(ProofError::PrivateKey);
    }
    if !jose::key_fits(&raw_key, algorithm) {
        return Err(ProofError::InvalidKey);
    }
    let jwk: Jwk =
        serde_json::from_value(Value::Object(raw_key)).map_err(|_| ProofError::InvalidKey)?;
    let key = DecodingKey::from_jwk(&jwk).map_err(|_| ProofError::InvalidKey)?;
    // The signature over the header and claims as sent, checked with the algorithm read above
    // (so `alg: Ed25519`, which `jsonwebtoken`'s own header type does not name, verifies too).
    let signed = &proof[..encoded_header.len() + 1 + payload.len()];
    match jsonwebtoken::crypto::verify(signature, signed.as_bytes(), &key, algorithm) {
        Ok(true) => {}
        Ok(false) => return Err(ProofError::BadSignature),
        Err(error) => return Err(decode_error(error.kind())),
    }
    let claims: Claims =
        jose::decode_part(payload, MAX_PROOF_BYTES).ok_or(ProofError::Malformed)?;
    let (Some(jti), Some(htm), Some(htu), Some(iat)) =
        (claims.jti, claims.htm, claims.htu, claims.iat)
    else {
        return Err(ProofError::MissingClaim);
    };
    if jti.is_empty() || jti.len() > MAX_JTI_BYTES {
        return Err(ProofError::MissingClaim);
    }
    if htm != context.method {
        return Err(ProofError::WrongMethod);
    }
    if !same_target(&htu, context.uri) {
        return Err(ProofError::WrongUri);
    }
    let issued_at = fresh(iat, context.now, context.window)?;
    if let Some(token) = context.access_token {
        let expected = crate::secret::SecretDigest::of(token);
        let matches = claims
            .ath
            .as_deref()
            .and_then(|ath| URL_SAFE_NO_PAD.decode(ath).ok())
            .is_some_and(|ath| ath.as_slice() == expected.as_bytes().as_slice());
        if !matches {
            return Err(ProofError::WrongAccessTokenHash);
        }
    }
    let jkt = jwk
        .thumbprint(ThumbprintHash::SHA256)
        .ok()
        .and_then(|text| JwkThumbprint::parse(&text))
        .ok_or(ProofError::InvalidKey)?;
    Ok(VerifiedProof {
        jkt,
        jti,
        issued_at,
        nonce: claims.nonce,
    })
}

fn decode_error(kind: &jsonwebtoken::errors::ErrorKind) -> ProofError {
    match jose::failure(kind) {
        jose::Failure::Signature => ProofError::BadSignature,
        jose::Failure::Key => ProofError::InvalidKey,
        jose::Failure::Malformed => ProofError::Malformed,
    }
}

/// Whether `htu` names `uri`: the same scheme, host, port and path (RFC 9449 §4.3 step 9,
/// ignoring query and fragment; both normalized as URLs, RFC 3986 §6.2.2, §6.2.3).
fn same_target(htu: &str, uri: &str) -> bool {
    let (Ok(htu), Ok(uri)) = (url::Url::parse(htu), url::Url::parse(uri)) else {
        return false;
    };
    htu.scheme() == uri.scheme()
        && htu.host_str() == uri.host_str()
        && htu.port_or_known_default() == uri.port_or_known_default()
        && htu.path() == uri.path()
}

/// `iat` as a time, if it is within `window` of `now`.
fn fresh(iat: f64, now: UnixTime, window: Duration) -> Result<UnixTime, ProofError> {
    if !iat.is_finite() || !(0.0..=1e12).contains(&iat) {
        return Err(ProofError::Stale);
    }
    // Whole seconds: a fraction changes nothing at this resolution.
    let issued_at = UnixTime::from_secs(iat as u64);
    let (earliest, latest) = (now.minus(window), now.plus(window));
    if issued_at < earliest || issued_at > latest {
        return Err(ProofError::Stale);
    }
    Ok(issued_at)
}
