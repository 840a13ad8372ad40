//! One assertion checked on its own against the client's keys and the request: shape,
//! algorithm, signature, claims. Whether its `jti` was seen before is the caller's question.
//! The key choice and the signature check serve every JWS a client signs (request objects
//! too): [`signed_claims`].

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{
    AssertionError, CLOCK_SKEW, MAX_ASSERTION_BYTES, MAX_ASSERTION_LIFETIME, MAX_HEADER_BYTES,
    MAX_JTI_BYTES,
};
use crate::client::MAX_CLIENT_KEYS;
use crate::clock::UnixTime;
use crate::jose;

/// What an assertion must match.
#[derive(Debug, Clone, Copy)]
pub struct AssertionContext<'a> {
    /// The client it authenticates: its `iss` and `sub`.
    pub client_id: &'a str,
    /// What its `aud` may name (one is enough): the issuer identifier, the token endpoint's
    /// URL, the URL of the endpoint called (RFC 7523 §3 item 3).
    pub audiences: &'a [&'a str],
    /// Now, on the server's clock.
    pub now: UnixTime,
}

/// An assertion that passed every check that needs no state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedAssertion {
    /// Its `jti`, to be accepted once.
    pub jti: String,
    /// Its `exp`: how long the `jti` must be remembered.
    pub expires_at: UnixTime,
}

#[derive(Deserialize)]
struct Header {
    alg: Option<String>,
    kid: Option<String>,
}

/// Why a JWS a client signed did not verify with the client's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignatureError {
    /// Not a compact JWS of at most the size allowed, with a JSON header and payload.
    Malformed,
    /// `alg` is `none`, symmetric, or not one grantor verifies.
    UnsupportedAlgorithm,
    /// No key of the client verifies the signature.
    BadSignature,
    /// No `kid`, and the client has more than one key for the `alg`.
    KidNeeded,
}

impl From<SignatureError> for AssertionError {
    fn from(error: SignatureError) -> Self {
        match error {
            SignatureError::Malformed => Self::Malformed,
            SignatureError::UnsupportedAlgorithm => Self::UnsupportedAlgorithm,
            SignatureError::BadSignature => Self::BadSignature,
            SignatureError::KidNeeded => Self::KidNeeded,
        }
    }
}

/// The payload of `jws` read as `T`, and the algorithm it was signed with, once a key of the
/// client's JWK Set `jwks` (JSON text) verifies its signature: at most `max_bytes` long, a
/// header of at most [`MAX_HEADER_BYTES`], an `alg` of [`ALGORITHMS`](super::ALGORITHMS),
/// and at most one signature check (the key `kid` names; without `kid`, the only key suiting
/// the `alg`).
pub(crate) fn signed_claims<T: DeserializeOwned>(
    jws: &str,
    jwks: &str,
    max_bytes: usize,
) -> Result<(Algorithm, T), SignatureError> {
    if jws.len() > max_bytes {
        return Err(SignatureError::Malformed);
    }
    let [header, _, _] = jose::parts(jws).ok_or(SignatureError::Malformed)?;
    let header: Header =
        jose::decode_part(header, MAX_HEADER_BYTES).ok_or(SignatureError::Malformed)?;
    let algorithm =
        jose::algorithm(header.alg.as_deref()).ok_or(SignatureError::UnsupportedAlgorithm)?;
    let claims = verified_claims(jws, jwks, algorithm, header.kid.as_deref())?;
    Ok((algorithm, claims))
}

#[derive(Deserialize)]
struct Claims {
    iss: Option<String>,
    sub: Option<String>,
    aud: Option<Value>,
    exp: Option<f64>,
    nbf: Option<f64>,
    iat: Option<f64>,
    jti: Option<String>,
}

/// Checks `assertion` against the client's JWK Set `jwks` (JSON text) and `context`: RFC
/// 7523 §3's items 1 to 6 and 9, and item 7's `jti` for shape (spending it needs state).
pub fn verify_assertion(
    assertion: &str,
    jwks: &str,
    context: &AssertionContext<'_>,
) -> Result<VerifiedAssertion, AssertionError> {
    let (_, claims) = signed_claims::<Claims>(assertion, jwks, MAX_ASSERTION_BYTES)?;
    check_claims(claims, context)
}

/// The claims, once the client's key for `algorithm` (the one named `kid`; without `kid`, the
/// only one) verifies the signature.
fn verified_claims<T: DeserializeOwned>(
    jws: &str,
    jwks: &str,
    algorithm: Algorithm,
    kid: Option<&str>,
) -> Result<T, SignatureError> {
    #[derive(Deserialize)]
    struct Set {
        keys: Vec<Map<String, Value>>,
    }
    // Checked at registration; a set from a `jwks_uri` is read with the same bound.
    let set: Set = serde_json::from_str(jwks).map_err(|_| SignatureError::BadSignature)?;
    let mut validation = Validation::new(algorithm);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    let candidates = set
        .keys
        .into_iter()
        .take(MAX_CLIENT_KEYS)
        .filter(|key| kid.is_none() || key.get("kid").and_then(Value::as_str) == kid)
        .filter(|key| jose::key_fits(key, algorithm))
        .filter(|key| {
            key.get("alg")
                .is_none_or(|alg| alg.as_str() == Some(jose::name(algorithm)))
        });
    let candidates: Vec<_> = candidates.collect();
    if kid.is_none() && candidates.len() > 1 {
        return Err(SignatureError::KidNeeded);
    }
    let mut malformed = false;
    for raw in candidates {
        let Ok(jwk) = serde_json::from_value::<Jwk>(Value::Object(raw)) else {
            continue;
        };
        let Ok(key) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        match jsonwebtoken::decode::<T>(jws, &key, &validation) {
            Ok(data) => return Ok(data.claims),
            Err(error) => {
                malformed |= matches!(jose::failure(error.kind()), jose::Failure::Malformed);
            }
        }
    }
    Err(if malformed {
        SignatureError::Malformed
    } else {
        SignatureError::BadSignature
    })
}

fn check_claims(
    claims: Claims,
    context: &AssertionContext<'_>,
) -> Result<VerifiedAssertion, AssertionError> {
    let client = Some(context.client_id);
    if claims.iss.as_deref() != client || claims.sub.as_deref() != client {
        return Err(AssertionError::WrongIssuer);
    }
    let names = |aud: &str| context.audiences.contains(&aud);
    let audience_ok = match &claims.aud {
        Some(Value::String(aud)) => names(aud),
        Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).any(names),
        _ => false,
    };
    if !audience_ok {
        return Err(AssertionError::WrongAudience);
    }
    let now = context.now;
    let exp = claims.exp.ok_or(AssertionError::MissingExpiry)?;
    let expires_at = seconds(exp).ok_or(AssertionError::Expired)?;
    if expires_at.plus(CLOCK_SKEW) <= now {
        return Err(AssertionError::Expired);
    }
    if expires_at > now.plus(MAX_ASSERTION_LIFETIME).plus(CLOCK_SKEW) {
        return Err(AssertionError::TooLong);
    }
    let future = |time: Option<f64>| {
        time.is_some_and(|t| seconds(t).is_none_or(|t| t > now.plus(CLOCK_SKEW)))
    };
    if future(claims.nbf) || future(claims.iat) {
        return Err(AssertionError::NotYetValid);
    }
    match claims.jti {
        Some(jti) if !jti.is_empty() && jti.len() <= MAX_JTI_BYTES => Ok(VerifiedAssertion {
            jti,
            // Remembered while it would still be accepted.
            expires_at: expires_at.plus(CLOCK_SKEW),
        }),
        _ => Err(AssertionError::MissingJti),
    }
}

/// A NumericDate (RFC 7519 §2) as whole seconds, if it is a sane one.
pub(crate) fn seconds(time: f64) -> Option<UnixTime> {
    // Whole seconds: a fraction changes nothing at this resolution.
    (time.is_finite() && (0.0..=1e12).contains(&time)).then(|| UnixTime::from_secs(time as u64))
}
