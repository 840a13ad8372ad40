//! Request objects (RFC 9101, OIDC Core §6.1), feature `private-key-jwt`: an authorization
//! request whose parameters travel in `request`, a JWS signed by one of the client's
//! registered keys (`jwks`, or `jwks_uri` through the host's [`ClientKeyResolver`] or the
//! server's outbound seam), at the authorization
//! endpoint and the pushed authorization request endpoint, in every profile.
//!
//! What an object is checked for: at most [`MAX_REQUEST_OBJECT_BYTES`] (and the server's limit
//! on one parameter, which comes first); a header of at most
//! [`MAX_HEADER_BYTES`](crate::client_assertion::MAX_HEADER_BYTES) with an `alg` of
//! [`ALGORITHMS`] (never `none`, never a symmetric one), and the client's registered
//! `request_object_signing_alg` if it has one; a signature by one of the client's keys (the
//! one `kid` names; without `kid`, the one key suiting the `alg`), so an object costs at most
//! one signature check; at most [`MAX_CLAIMS`] claims; `iss` the client id; `aud` the issuer
//! identifier (or a list holding it); `exp` present, not past and at most [`MAX_LIFETIME`]
//! ahead; `nbf` and `iat`, if present, not in the future; all within [`CLOCK_SKEW`]; a `jti`, if
//! present, of at most [`MAX_JTI_BYTES`], accepted once. Every refusal is
//! `invalid_request_object` (RFC 9101 §6.2).
//!
//! Only the object's parameters count (RFC 9101 §6.3). `client_id` must still be sent beside
//! it at the authorization endpoint (RFC 9101 §5: it names the keys that verify the object)
//! and, if the object has one, be the same; `response_type`, which OIDC Core §6.1 asks
//! OpenID Connect clients to send beside it, must then be the object's. Every other parameter
//! beside it is ignored. The object's parameters are strings, except `max_age` (a number too),
//! `claims` (a JSON object too) and `resource` (an array of strings too).
//!
//! Where a refusal goes: until the object verifies, its `redirect_uri` is not trusted, so the
//! refusal is redirected only to a `redirect_uri` sent beside it that is registered for the
//! client, and shown otherwise; once it verifies, as any authorization request's errors.
//! `request_uri` is taken only for a pushed request (`urn:ietf:params:oauth:request_uri:`);
//! any other is `request_uri_not_supported`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::client::Client;
use crate::client_assertion::{
    ClientKeyResolver, MissingKeys, SignatureError, client_jwks, named_kid, seconds, signed_claims,
};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::request_object::{
    MAX_OBJECT_LIFETIME, OBJECT_CLOCK_SKEW, RequestObjectVerifier, VerifiedObject,
};

/// The algorithms a request object may be signed with: what the metadata lists as
/// `request_object_signing_alg_values_supported`.
pub const ALGORITHMS: [&str; 4] = ["RS256", "PS256", "ES256", "EdDSA"];

/// The longest request object accepted, in bytes.
pub const MAX_REQUEST_OBJECT_BYTES: usize = 8192;

/// The most claims a request object may carry: every authorization parameter grantor reads
/// and the JWT's own, with room.
pub const MAX_CLAIMS: usize = 64;

/// How far ahead `exp` may be (FAPI 2.0 Message Signing §5.3.1).
pub const MAX_LIFETIME: Duration = MAX_OBJECT_LIFETIME;

/// How far the client's clock may be from the server's, either way, for `exp`, `nbf` and
/// `iat`.
pub const CLOCK_SKEW: Duration = OBJECT_CLOCK_SKEW;

/// The longest `jti` accepted, in bytes.
pub const MAX_JTI_BYTES: usize = 256;

/// The server's request object checks: the host's `jwks_uri` resolver and the issuer an
/// object's `aud` must name.
pub(crate) struct Verifier {
    pub(crate) resolver: Option<Arc<dyn ClientKeyResolver>>,
    pub(crate) issuer: String,
    /// Under FAPI 2.0 (Message Signing §5.3.1, Security Profile §5.4.1): never RS256, and
    /// `nbf` required, at most 60 minutes old and at most 60 minutes before `exp`.
    pub(crate) fapi2: bool,
}

#[async_trait]
impl RequestObjectVerifier for Verifier {
    async fn verify(
        &self,
        client: &Client,
        jws: &str,
        now: UnixTime,
    ) -> Result<VerifiedObject, OAuthError> {
        let kid = named_kid(jws);
        let jwks = match client_jwks(client, self.resolver.as_deref(), kid.as_deref()).await {
            Ok(jwks) => jwks,
            Err(MissingKeys::NoKeys | MissingKeys::Unresolvable) => {
                return Err(refused(
                    "this client has no registered keys to verify request objects with",
                ));
            }
            Err(MissingKeys::Store(error)) => return Err(error.into()),
        };
        let (algorithm, claims) =
            signed_claims::<Map<String, Value>>(jws, &jwks, MAX_REQUEST_OBJECT_BYTES)
                .map_err(signature_refusal)?;
        if let Some(registered) = client.request_object_signing_algorithm()
            && registered.as_str() != crate::jose::name(algorithm)
        {
            return Err(refused(
                "the request object is not signed with the client's request_object_signing_alg",
            ));
        }
        if self.fapi2 {
            if algorithm == jsonwebtoken::Algorithm::RS256 {
                return Err(refused(
                    "FAPI 2.0 takes request objects signed PS256, ES256 or EdDSA, never RS256",
                ));
            }
            fapi2_window(&claims, now)?;
        }
        check_claims(claims, client.id().as_str(), &self.issuer, now)
    }
}

/// The `alg` name of one of [`ALGORITHMS`].
fn signature_refusal(error: SignatureError) -> OAuthError {
    refused(match error {
        SignatureError::Malformed => "the request object is not a well-formed signed JWT",
        SignatureError::UnsupportedAlgorithm => {
            "the request object must be signed with RS256, PS256, ES256 or EdDSA, never none"
        }
        SignatureError::BadSignature => "the request object is not signed by a key of this client",
        SignatureError::KidNeeded => {
            "the request object must name its key with kid: this client has several keys for its alg"
        }
    })
}

/// RFC 9101 §4, §6.3 and the bounds above, for the claims of a signed object of `client_id`.
fn check_claims(
    claims: Map<String, Value>,
    client_id: &str,
    issuer: &str,
    now: UnixTime,
) -> Result<VerifiedObject, OAuthError> {
    if claims.len() > MAX_CLAIMS {
        return Err(refused("the request object has too many claims"));
    }
    if claims.get("iss").and_then(Value::as_str) != Some(client_id) {
        return Err(refused("the request object's iss must be the client id"));
    }
    let audience_ok = match claims.get("aud") {
        Some(Value::String(aud)) => aud == issuer,
        Some(Value::Array(auds)) => auds.iter().any(|aud| aud.as_str() == Some(issuer)),
        _ => false,
    };
    if !audience_ok {
        return Err(refused(
            "the request object's aud must be this server's issuer identifier",
        ));
    }
    let expires_at = expiry(&claims, now)?;
    let future = |name: &str| {
        claims.get(name).is_some_and(|time| {
            time.as_f64()
                .and_then(seconds)
                .is_none_or(|time| time > now.plus(CLOCK_SKEW))
        })
    };
    if future("nbf") || future("iat") {
        return Err(refused("the request object is not valid yet"));
    }
    let jti = match claims.get("jti") {
        None => None,
        Some(Value::String(jti)) if !jti.is_empty() && jti.len() <= MAX_JTI_BYTES => {
            Some(jti.clone())
        }
        Some(_) => {
            return Err(refused(
                "the request object's jti must be a string of 1 to 256 bytes",
            ));
        }
    };
    Ok(VerifiedObject {
        claims,
        jti,
        expires_at,
    })
}

/// FAPI 2.0 Message Signing §5.3.1: `nbf` present, no more than 60 minutes in the past, and
/// `exp` no more than 60 minutes after it.
fn fapi2_window(claims: &Map<String, Value>, now: UnixTime) -> Result<(), OAuthError> {
    let time = |name: &str| claims.get(name).and_then(Value::as_f64).and_then(seconds);
    let Some(nbf) = time("nbf") else {
        return Err(refused("FAPI 2.0 needs nbf in the request object"));
    };
    if nbf.plus(MAX_LIFETIME) < now {
        return Err(refused(
            "the request object's nbf is more than 60 minutes in the past",
        ));
    }
    if time("exp").is_some_and(|exp| exp > nbf.plus(MAX_LIFETIME)) {
        return Err(refused(
            "the request object's exp is more than 60 minutes after its nbf",
        ));
    }
    Ok(())
}

/// `exp`: present, not past, at most [`MAX_LIFETIME`] ahead; the time until which the object
/// would be accepted (its `jti` is remembered that long).
fn expiry(claims: &Map<String, Value>, now: UnixTime) -> Result<UnixTime, OAuthError> {
    let exp = claims
        .get("exp")
        .ok_or_else(|| refused("the request object has no exp"))?;
    let expires_at = exp
        .as_f64()
        .and_then(seconds)
        .ok_or_else(|| refused("the request object's exp is not a NumericDate"))?;
    if expires_at.plus(CLOCK_SKEW) <= now {
        return Err(refused("the request object has expired"));
    }
    if expires_at > now.plus(MAX_LIFETIME).plus(CLOCK_SKEW) {
        return Err(refused(
            "the request object's exp is more than 60 minutes ahead",
        ));
    }
    Ok(expires_at.plus(CLOCK_SKEW))
}

fn refused(why: &'static str) -> OAuthError {
    OAuthError::new(ErrorCode::InvalidRequestObject, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: UnixTime = UnixTime::from_secs(1_000_000);

    fn claims(json: Value) -> Map<String, Value> {
        match json {
            Value::Object(map) => map,
            _ => unreachable!("an object"),
        }
    }

    fn check(json: Value) -> Result<VerifiedObject, OAuthError> {
        check_claims(claims(json), "app", "https://as.example", NOW)
    }

    #[test]
    fn an_object_past_the_size_bound_is_refused_before_any_key_is_read() {
        let header = "eyJhbGciOiJFUzI1NiJ9";
        let object = format!("{header}.{}.sig", "a".repeat(MAX_REQUEST_OBJECT_BYTES));
        let refused = signed_claims::<Map<String, Value>>(&object, "{}", MAX_REQUEST_OBJECT_BYTES)
            .map_err(signature_refusal)
            .unwrap_err();
        assert_eq!(refused.code(), ErrorCode::InvalidRequestObject);
        assert!(refused.description().contains("well-formed"));
    }

    #[test]
    fn the_claims_name_the_client_the_issuer_and_a_bounded_lifetime() {
        let good = serde_json::json!({
            "iss": "app", "aud": "https://as.example", "exp": 1_000_600, "iat": 1_000_000,
            "jti": "one", "scope": "profile",
        });
        let verified = check(good.clone()).unwrap();
        assert_eq!(verified.jti.as_deref(), Some("one"));
        assert_eq!(verified.expires_at, UnixTime::from_secs(1_000_630));
        let with = |name: &str, value: Value| {
            let mut json = good.clone();
            json[name] = value;
            check(json).unwrap_err().description().to_owned()
        };
        assert!(with("iss", "other".into()).contains("iss"));
        assert!(with("aud", "https://other.example".into()).contains("aud"));
        assert!(with("exp", 999_000.into()).contains("expired"));
        assert!(with("exp", (1_000_000 + 3_700).into()).contains("60 minutes"));
        assert!(with("exp", "soon".into()).contains("NumericDate"));
        assert!(with("nbf", 1_000_100.into()).contains("not valid yet"));
        assert!(with("iat", 1_000_100.into()).contains("not valid yet"));
        assert!(with("jti", 7.into()).contains("jti"));
        let listed = serde_json::json!({
            "iss": "app", "aud": ["https://x.example", "https://as.example"], "exp": 1_000_600,
        });
        assert_eq!(check(listed).unwrap().jti, None);
        let mut many = good;
        for i in 0..MAX_CLAIMS {
            many[format!("x{i}")] = Value::Null;
        }
        assert!(check(many).is_err());
    }
}
