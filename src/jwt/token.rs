//! RFC 9068 access tokens on the wire: the claims grantor signs, and their verification
//! (signature, `typ`, `iss`, `aud`, `exp`) without any store.

use std::time::Duration;

use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::keys::SigningKey;
use crate::audience::Audience;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::mtls::CertificateThumbprint;
use crate::scope::Scope;
use crate::store::{Actor, Jti, JwkThumbprint, TokenBinding, UserAuthentication};
use crate::token_format::AccessClaims;

/// The JOSE `typ` of an RFC 9068 access token (§2.1).
pub(crate) const TYP: &str = "at+jwt";

/// A token's audience as RFC 7519 §4.1.3 writes it: one string, or an array.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Aud {
    One(String),
    Many(Vec<String>),
}

/// RFC 9068 §2.2's claims.
#[derive(Serialize, Deserialize)]
pub(crate) struct Claims {
    iss: String,
    exp: u64,
    aud: Aud,
    sub: String,
    client_id: String,
    iat: u64,
    jti: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    scope: String,
    /// RFC 9449 §6.1, RFC 8705 §3.1: the key or certificate a bound token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cnf: Option<Confirmation>,
    /// RFC 8693 §4.1: who acts for `sub`, in a token issued by delegation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    act: Option<Actor>,
    /// RFC 9068 §2.2.1: when the user signed in, for a token of a user's sign-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    auth_time: Option<u64>,
    /// RFC 9068 §2.2.1: the authentication context class the sign-in satisfied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    acr: Option<String>,
    /// RFC 9068 §2.2.1: the methods the user signed in by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    amr: Vec<String>,
    /// The claims the authorization request named for userinfo (OIDC Core §5.5), which this
    /// server's userinfo reads back from the token: a private claim (RFC 7519 §4.3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    userinfo_claims: Vec<String>,
}

/// `cnf` (RFC 7800 §3.1) with the SHA-256 thumbprint of a DPoP key (`jkt`, RFC 9449 §6.1)
/// or of a client certificate (`x5t#S256`, RFC 8705 §3.1): exactly one of them.
#[derive(Serialize, Deserialize)]
struct Confirmation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jkt: Option<String>,
    #[serde(rename = "x5t#S256", default, skip_serializing_if = "Option::is_none")]
    x5t_s256: Option<String>,
}

impl Confirmation {
    fn of(binding: TokenBinding) -> Self {
        match binding {
            TokenBinding::Dpop(jkt) => Self {
                jkt: Some(jkt.to_string()),
                x5t_s256: None,
            },
            TokenBinding::Certificate(thumbprint) => Self {
                jkt: None,
                x5t_s256: Some(thumbprint.to_string()),
            },
        }
    }

    /// The binding `cnf` names; a token naming neither or both, or a malformed thumbprint,
    /// is malformed.
    fn binding(&self) -> Result<TokenBinding, JwtError> {
        match (&self.jkt, &self.x5t_s256) {
            (Some(jkt), None) => JwkThumbprint::parse(jkt).map(TokenBinding::Dpop),
            (None, Some(x5t)) => CertificateThumbprint::parse(x5t).map(TokenBinding::Certificate),
            _ => None,
        }
        .ok_or(JwtError::Malformed)
    }
}

impl Claims {
    /// The claims of an access token for `claims`, owned so that they can be signed on another
    /// thread.
    pub(crate) fn of(claims: &AccessClaims<'_>) -> Self {
        let authorization = claims.authorization;
        let signed_in = authorization.authentication.as_ref();
        let client_id = authorization.client_id.as_str();
        let resources: Vec<String> = authorization.audience.iter().map(str::to_owned).collect();
        let aud = match <[String; 1]>::try_from(resources) {
            Ok([one]) => Aud::One(one),
            Err(many) => Aud::Many(many),
        };
        Self {
            iss: claims.issuer.to_owned(),
            exp: claims.expires_at.as_secs(),
            aud,
            // RFC 9068 §2.2: the client itself when no resource owner is involved.
            sub: authorization
                .user
                .as_ref()
                .map_or(client_id, |user| user.id().as_str())
                .to_owned(),
            client_id: client_id.to_owned(),
            iat: claims.issued_at.as_secs(),
            jti: claims.jti.as_str().to_owned(),
            scope: authorization.scope.as_str().to_owned(),
            cnf: claims.binding.map(Confirmation::of),
            act: claims.actor.cloned(),
            auth_time: signed_in.map(|s| s.auth_time().as_secs()),
            acr: signed_in.and_then(|s| s.acr()).map(str::to_owned),
            amr: signed_in.map_or_else(Vec::new, |s| s.amr().to_vec()),
            userinfo_claims: signed_in.map_or_else(Vec::new, |s| s.userinfo_claims().to_vec()),
        }
    }
}

/// Signs an access token of `body` with `key`.
pub(crate) fn sign(key: &SigningKey, body: &Claims) -> Result<String, StoreError> {
    let mut header = Header::new(key.algorithm().jose());
    header.typ = Some(TYP.to_owned());
    header.kid = Some(key.kid().to_owned());
    key.sign(&header, body)
        .map_err(|_| StoreError::failed("signing an access token failed"))
}

/// Why a JWT access token was refused. Each is `invalid_token` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// Not a compact JWS, or its header or claims are not what RFC 9068 requires.
    #[error("the token is not a well-formed JWT access token")]
    Malformed,
    /// The `typ` header is not `at+jwt` (RFC 9068 §4).
    #[error("the token's typ is not at+jwt")]
    WrongType,
    /// The `alg` is not one of the keys', or no published key has the `kid`.
    #[error("the token is signed with an unknown key or algorithm")]
    UnknownKey,
    /// The signature does not verify.
    #[error("the token's signature is invalid")]
    BadSignature,
    /// The `iss` is not the expected issuer.
    #[error("the token was issued by another issuer")]
    WrongIssuer,
    /// The `aud` does not include the resource.
    #[error("the token is not meant for this resource")]
    WrongAudience,
    /// The token has expired.
    #[error("the token has expired")]
    Expired,
}

/// An access token whose signature, `typ`, `iss`, `aud` and `exp` were verified.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct VerifiedToken {
    /// `sub`: the user's id, or the client's own id for a token without a user.
    pub subject: String,
    /// `client_id`.
    pub client_id: ClientId,
    /// `scope`.
    pub scope: Scope,
    /// `aud`.
    pub audience: Audience,
    /// `jti`.
    pub jti: Jti,
    /// `iat`.
    pub issued_at: UnixTime,
    /// `exp`.
    pub expires_at: UnixTime,
    /// `cnf`: what the token is bound to, a DPoP key (`jkt`, RFC 9449 §6.1; a resource
    /// accepts the token only with a proof of that key) or a client certificate (`x5t#S256`,
    /// RFC 8705 §3.1; only over a connection with that certificate).
    pub binding: Option<TokenBinding>,
    /// `act`: who acts for `sub` in a token issued by delegation (RFC 8693 §4.1).
    pub actor: Option<Actor>,
    /// `auth_time`, `acr` and `amr` (RFC 9068 §2.2.1): how the user signed in, when the token
    /// says when (a token without `auth_time` has none, whatever else it says).
    pub authentication: Option<UserAuthentication>,
}

impl VerifiedToken {
    /// Whether the token was issued to the client for itself (client credentials): `sub` is
    /// its `client_id` (RFC 9068 §2.2).
    pub fn is_client_only(&self) -> bool {
        self.subject == self.client_id.as_str()
    }
}

/// What verifying needs: the expected issuer and audience, the key lookup, the clock.
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) audience: &'a str,
    pub(crate) now: UnixTime,
    pub(crate) leeway: Duration,
}

/// The parts of a token's header verification needs, read without trusting it.
pub(crate) struct Unverified {
    pub(crate) algorithm: Algorithm,
    pub(crate) kid: String,
}

/// Reads the header: `typ` must be `at+jwt` (or `application/at+jwt`, RFC 9068 §4) and a `kid`
/// present.
pub(crate) fn header(token: &str) -> Result<Unverified, JwtError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| JwtError::Malformed)?;
    let typ = header.typ.as_deref().unwrap_or_default();
    let typ = typ.strip_prefix("application/").unwrap_or(typ);
    if !typ.eq_ignore_ascii_case(TYP) {
        return Err(JwtError::WrongType);
    }
    let kid = header.kid.ok_or(JwtError::UnknownKey)?;
    Ok(Unverified {
        algorithm: header.alg,
        kid,
    })
}

/// Verifies `token` with `key` (of `algorithm`, which the header must name).
pub(crate) fn verify(
    token: &str,
    header: &Unverified,
    key: (&DecodingKey, Algorithm),
    expected: &Expected<'_>,
) -> Result<VerifiedToken, JwtError> {
    let (key, algorithm) = key;
    if header.algorithm != algorithm {
        return Err(JwtError::UnknownKey);
    }
    let mut validation = Validation::new(algorithm);
    // Expiry is checked against grantor's clock below, not the system's.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.set_issuer(&[expected.issuer]);
    validation.set_audience(&[expected.audience]);
    let data = jsonwebtoken::decode::<Claims>(token, key, &validation).map_err(|error| {
        use jsonwebtoken::errors::ErrorKind;
        match error.kind() {
            ErrorKind::InvalidSignature => JwtError::BadSignature,
            ErrorKind::InvalidIssuer => JwtError::WrongIssuer,
            ErrorKind::InvalidAudience => JwtError::WrongAudience,
            _ => JwtError::Malformed,
        }
    })?;
    let claims = data.claims;
    let expires_at = UnixTime::from_secs(claims.exp);
    if expires_at.plus(expected.leeway) <= expected.now {
        return Err(JwtError::Expired);
    }
    let audience = match &claims.aud {
        Aud::One(one) => Audience::new(one),
        Aud::Many(many) => Audience::from_resources(many.iter().map(String::as_str)),
    };
    Ok(VerifiedToken {
        subject: claims.sub,
        client_id: ClientId::new(&claims.client_id).map_err(|_| JwtError::Malformed)?,
        scope: Scope::parse(&claims.scope).map_err(|_| JwtError::Malformed)?,
        audience: audience.ok_or(JwtError::Malformed)?,
        jti: Jti::new(&claims.jti),
        issued_at: UnixTime::from_secs(claims.iat),
        expires_at,
        binding: claims.cnf.as_ref().map(Confirmation::binding).transpose()?,
        actor: claims.act,
        authentication: claims.auth_time.map(|auth_time| {
            UserAuthentication::new(UnixTime::from_secs(auth_time))
                .with_acr(claims.acr)
                .with_amr(claims.amr)
                .with_userinfo_claims(&claims.userinfo_claims)
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Authorization, User, UserId};

    #[test]
    fn the_sign_in_a_token_carries_round_trips_with_the_claims_named_for_userinfo() {
        let key = SigningKey::generate(crate::signing::SigningAlgorithm::ES256).unwrap();
        let signed_in = UserAuthentication::new(UnixTime::from_secs(1_000))
            .with_acr(Some("urn:example:mfa".to_owned()))
            .with_amr(["pwd", "otp"])
            .with_userinfo_claims(&["email".to_owned()]);
        let authorization = Authorization::new(
            ClientId::new("app").unwrap(),
            Some(User::new(UserId::new("alice"), "alice")),
            Scope::parse("openid").unwrap(),
        )
        .with_audience(Audience::from_resources(["https://api.example"]).unwrap())
        .with_authentication(Some(signed_in.clone()));
        let jti = Jti::new("j1");
        let claims = AccessClaims {
            issuer: "https://auth.example",
            authorization: &authorization,
            jti: &jti,
            binding: None,
            actor: None,
            issued_at: UnixTime::from_secs(1_000),
            expires_at: UnixTime::from_secs(2_000),
        };
        let token = sign(&key, &Claims::of(&claims)).unwrap();
        let expected = Expected {
            issuer: "https://auth.example",
            audience: "https://api.example",
            now: UnixTime::from_secs(1_500),
            leeway: Duration::ZERO,
        };
        let decoding = (key.decoding(), key.algorithm().jose());
        let verified = verify(&token, &header(&token).unwrap(), decoding, &expected).unwrap();
        assert_eq!(verified.authentication, Some(signed_in));
    }
}
