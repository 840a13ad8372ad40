//! JWT access tokens (RFC 9068), feature `jwt`: signed, self-contained access tokens that a
//! resource server verifies with the server's public keys alone (its JWKS document at
//! `jwks_uri`), without calling the store.
//!
//! With [`AuthorizationServerBuilder::jwt_access_tokens`](crate::AuthorizationServerBuilder::jwt_access_tokens),
//! every access token grantor issues is a JWS signed by the current key of a [`SigningKeys`]
//! seam, header `typ: at+jwt` and `kid`, claims `iss`, `exp`, `aud` (the token's audience,
//! RFC 8707), `sub` (the user, or the client itself), `client_id`, `iat`, `jti` and `scope`.
//! The store keeps its digest as for any token, so introspection, revocation and family
//! revocation work unchanged; but a resource server that verifies the signature alone accepts
//! a revoked token until it expires, so keep access tokens short-lived (or have
//! [`AuthorizationServer::bearer`](crate::AuthorizationServer::bearer) check revocation, see
//! [`JwtAccessTokens::check_revocation`]).
//!
//! Signatures, key parsing and RFC 7638 thumbprints are the `jsonwebtoken` crate's on its
//! `aws-lc-rs` backend; keys are derived by `ed25519-dalek` and `p256` from grantor's CSPRNG. EdDSA
//! (Ed25519), ES256 and RS256 are generated (RS256 by `aws-lc-rs`, see [`SigningKey::generate`]).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use std::time::Duration;
//! use grantor::jwt::{JwtAccessTokens, SigningAlgorithm};
//! use grantor::{AuthorizationServer, MemoryStore};
//!
//! let server = AuthorizationServer::builder()
//!     .issuer("https://auth.example")
//!     .store(MemoryStore::new())
//!     .jwt_access_tokens(JwtAccessTokens::rotating(SigningAlgorithm::EdDSA, Duration::from_secs(86_400)))
//!     .build()
//!     .unwrap();
//! let jwks: serde_json::Value = serde_json::from_str(server.jwks().await.body()).unwrap();
//! assert_eq!(jwks["keys"][0]["alg"], "EdDSA");
//! # }
//! ```

#[cfg(feature = "oidc")]
mod id_token;
#[cfg(feature = "cli")]
pub(crate) mod inventory;
mod keys;
mod pool;
mod rotation;
mod token;

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey};

#[cfg(feature = "oidc")]
pub(crate) use id_token::IdTokenKeys;
pub use keys::{KeyError, SigningAlgorithm, SigningKey};
pub(crate) use pool::Signatures;
pub use pool::SigningPool;
pub use rotation::{ROTATION_CHECK, RotatingKeys, SigningKeys, StaticKeys};
use token::Expected;
pub use token::{JwtError, VerifiedToken};

use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::store::KeyStore;
use crate::token_format::{AccessClaims, AccessTokenFormat, SelfContained, Unverified};

/// The server's JWT access-token settings: where the signing keys come from, and whether its
/// own bearer validation also asks the store whether the token was revoked.
#[derive(Clone)]
pub struct JwtAccessTokens {
    keys: Source,
    check_revocation: bool,
}

/// Where a server's signing keys come from.
#[derive(Clone)]
enum Source {
    Given(Arc<dyn SigningKeys>),
    /// [`RotatingKeys`] over the server's own key seam, made when the server is built.
    Rotating(SigningAlgorithm, Duration),
}

impl std::fmt::Debug for JwtAccessTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAccessTokens")
            .field("check_revocation", &self.check_revocation)
            .finish_non_exhaustive()
    }
}

impl JwtAccessTokens {
    /// Access tokens signed by `keys`; bearer validation without the store.
    pub fn new(keys: Arc<dyn SigningKeys>) -> Self {
        Self {
            keys: Source::Given(keys),
            check_revocation: false,
        }
    }

    /// Access tokens signed by [`RotatingKeys`] of `algorithm`, a new key each `period`, kept
    /// in the server's own [key seam](crate::AuthorizationServerBuilder::keys) (so encrypted
    /// there when the server
    /// [encrypts keys at rest](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)).
    pub fn rotating(algorithm: SigningAlgorithm, period: Duration) -> Self {
        Self {
            keys: Source::Rotating(algorithm, period),
            check_revocation: false,
        }
    }

    /// Whether [`AuthorizationServer::bearer`](crate::AuthorizationServer::bearer) also looks
    /// the token up in the store, so that a revoked token is refused before it expires
    /// (default: no, the signature and claims are enough).
    pub fn check_revocation(mut self, check: bool) -> Self {
        self.check_revocation = check;
        self
    }

    /// How often the signing key changes, when the keys rotate on a schedule.
    pub(crate) fn rotation_period(&self) -> Option<Duration> {
        match &self.keys {
            Source::Given(keys) => keys.rotation_period(),
            Source::Rotating(_, period) => {
                Some(Duration::from_secs(RotatingKeys::period_secs(*period)))
            }
        }
    }

    /// The settings wired to the server's key seam and signing threads: the server's
    /// access-token format.
    pub(crate) fn wired(
        self,
        store: &Arc<dyn KeyStore>,
        signatures: &Arc<Signatures>,
    ) -> Arc<dyn AccessTokenFormat> {
        let keys = match self.keys {
            Source::Given(keys) => keys,
            Source::Rotating(algorithm, period) => {
                Arc::new(RotatingKeys::new(algorithm, period, Arc::clone(store)))
            }
        };
        Arc::new(Jwt {
            keys,
            signatures: Arc::clone(signatures),
            check_revocation: self.check_revocation,
        })
    }
}

/// A server's JWT access tokens, its signing keys wired: the access-token format the builder
/// hands the server.
struct Jwt {
    keys: Arc<dyn SigningKeys>,
    signatures: Arc<Signatures>,
    check_revocation: bool,
}

#[async_trait::async_trait]
impl AccessTokenFormat for Jwt {
    async fn encode(&self, claims: &AccessClaims<'_>) -> Result<String, StoreError> {
        let key = self.keys.signing_key(claims.issued_at).await?;
        let body = token::Claims::of(claims);
        self.signatures
            .run(key.algorithm(), move || token::sign(&key, &body))
            .await?
    }

    /// A compact JWS: three base64url parts.
    fn recognizes(&self, token: &str) -> bool {
        token.bytes().filter(|&b| b == b'.').count() == 2
    }

    fn jti(&self, token: &str) -> Option<crate::store::Jti> {
        #[derive(serde::Deserialize)]
        struct JtiClaim {
            jti: String,
        }
        let claims: JtiClaim = jsonwebtoken::dangerous::insecure_decode_claims(token).ok()?;
        Some(crate::store::Jti::new(claims.jti))
    }

    async fn verify(
        &self,
        token: &str,
        issuer: &str,
        audience: &str,
        now: UnixTime,
    ) -> Result<Result<SelfContained, Unverified>, StoreError> {
        let expected = Expected {
            issuer,
            audience,
            now,
            leeway: Duration::ZERO,
        };
        let header = match token::header(token) {
            Ok(header) => header,
            Err(_) => return Ok(Err(Unverified::Invalid)),
        };
        let Some(key) = self.keys.verification_key(&header.kid, now).await? else {
            return Ok(Err(Unverified::Invalid));
        };
        let decoding = (key.decoding(), key.algorithm().jose());
        Ok(match token::verify(token, &header, decoding, &expected) {
            Ok(verified) => Ok(SelfContained {
                // RFC 9068 §2.2: `sub` is the client itself when no user is involved.
                user: (!verified.is_client_only())
                    .then(|| crate::store::UserId::new(&verified.subject)),
                client_id: verified.client_id,
                scope: verified.scope,
                audience: verified.audience,
                jti: verified.jti,
                issued_at: verified.issued_at,
                expires_at: verified.expires_at,
                binding: verified.binding,
                actor: verified.actor,
                authentication: verified.authentication,
            }),
            Err(JwtError::WrongAudience) => Err(Unverified::WrongAudience),
            Err(_) => Err(Unverified::Invalid),
        })
    }

    fn checks_revocation(&self) -> bool {
        self.check_revocation
    }

    /// The published keys as JWKs (RFC 7517 §4).
    async fn published(&self, now: UnixTime) -> Result<Vec<serde_json::Value>, StoreError> {
        let keys = self.keys.published_keys(now).await?;
        keys.iter()
            .map(|key| serde_json::to_value(key.public_jwk()).map_err(StoreError::failed))
            .collect()
    }
}

/// Verifies RFC 9068 access tokens for a resource server that holds only the authorization
/// server's JWKS document: signature, `typ`, `iss`, `aud` (the resource's audience) and `exp`.
///
/// ```
/// use grantor::jwt::{JwtError, JwtVerifier};
/// use grantor::clock::UnixTime;
///
/// let jwks = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","alg":"EdDSA","use":"sig",
///     "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
/// let verifier = JwtVerifier::from_jwks("https://auth.example", "https://api.example", jwks).unwrap();
/// let now = UnixTime::from_secs(1_800_000_000);
/// assert_eq!(verifier.verify("not.a.jwt", now).unwrap_err(), JwtError::Malformed);
/// ```
#[derive(Clone)]
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    keys: Vec<(String, DecodingKey, Algorithm)>,
    leeway: Duration,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<&str> = self.keys.iter().map(|(kid, ..)| kid.as_str()).collect();
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("kids", &kids)
            .finish()
    }
}

/// The most keys a JWKS document may hold for [`JwtVerifier::from_jwks`].
const MAX_JWKS_KEYS: usize = 32;

impl JwtVerifier {
    /// A verifier for tokens of `issuer` meant for `audience`, with the keys of `jwks` (the
    /// document at the server's `jwks_uri`). Keys of other algorithms than EdDSA, ES256 and
    /// RS256, without `kid`, or holding private parts are skipped; a document that is not a
    /// JWKS, or has no usable key, is [`JwtError::Malformed`].
    pub fn from_jwks(
        issuer: impl Into<String>,
        audience: impl Into<String>,
        jwks: &str,
    ) -> Result<Self, JwtError> {
        let set: JwkSet = serde_json::from_str(jwks).map_err(|_| JwtError::Malformed)?;
        let raw: serde_json::Value = serde_json::from_str(jwks).map_err(|_| JwtError::Malformed)?;
        let keys: Vec<_> = set
            .keys
            .iter()
            .zip(raw["keys"].as_array().into_iter().flatten())
            .take(MAX_JWKS_KEYS)
            .filter(|(_, raw)| raw.get("d").is_none())
            .filter_map(|(jwk, _)| usable(jwk))
            .collect();
        if keys.is_empty() {
            return Err(JwtError::Malformed);
        }
        Ok(Self {
            issuer: issuer.into(),
            audience: audience.into(),
            keys,
            leeway: Duration::from_secs(30),
        })
    }

    /// How far past `exp` a token is still accepted, for clocks that disagree (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Verifies `token` at `now`.
    pub fn verify(&self, token: &str, now: UnixTime) -> Result<VerifiedToken, JwtError> {
        let header = token::header(token)?;
        let (_, key, algorithm) = self
            .keys
            .iter()
            .find(|(kid, ..)| *kid == header.kid)
            .ok_or(JwtError::UnknownKey)?;
        let expected = Expected {
            issuer: &self.issuer,
            audience: &self.audience,
            now,
            leeway: self.leeway,
        };
        token::verify(token, &header, (key, *algorithm), &expected)
    }
}

/// A JWKS key grantor can verify with: its `kid`, key and algorithm.
fn usable(jwk: &Jwk) -> Option<(String, DecodingKey, Algorithm)> {
    let kid = jwk.common.key_id.clone()?;
    let algorithm = match jwk.common.key_algorithm? {
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::RS256 => Algorithm::RS256,
        _ => return None,
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some((kid, key, algorithm))
}
