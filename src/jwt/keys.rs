//! Signing keys: one private key, its public JWK and its `kid` (the RFC 7638 thumbprint).
//! Every signature and thumbprint is the `jsonwebtoken` crate's on its `aws-lc-rs` backend.
//! EdDSA and ES256 keys are derived by `ed25519-dalek` and `p256` from 32 bytes of grantor's one
//! CSPRNG function (their private key encoding and public point only: they sign nothing).
//!
//! RS256 keys are the one exception to that function: an RSA key is not derived from one draw
//! but searched for (candidate primes drawn until two pass), so `aws-lc-rs` generates it with
//! its own generator, AWS-LC's CTR-DRBG seeded from the operating system, as grantor's is. It
//! is kept as PKCS#8 and signs through the same backend.

use std::fmt;

use jsonwebtoken::jwk::{Jwk, KeyAlgorithm, PublicKeyUse, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};

use crate::secret::{base64url, random_bytes};
pub use crate::signing::SigningAlgorithm;

impl SigningAlgorithm {
    pub(crate) fn jose(self) -> Algorithm {
        match self {
            Self::EdDSA => Algorithm::EdDSA,
            Self::ES256 => Algorithm::ES256,
            Self::RS256 => Algorithm::RS256,
        }
    }

    /// The tag of a generated key at rest.
    fn tag(self) -> u8 {
        match self {
            Self::EdDSA => 1,
            Self::ES256 => 2,
            Self::RS256 => 3,
        }
    }
}

/// Why a key could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The PEM text is not a private key of the algorithm (PKCS#8 for EdDSA and ES256, PKCS#1
    /// or PKCS#8 for RS256).
    #[error("the PEM text is not a private key for this algorithm")]
    InvalidPem,
    /// The operating system's random generator failed, or the RSA key search did.
    #[error("the random generator failed")]
    Random,
    /// A kept key is malformed.
    #[error("a stored signing key is malformed")]
    Malformed,
}

/// A signature could not be made (claims that do not serialize, or the backend refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the signature could not be made")]
pub(crate) struct SignError;

/// A private signing key with its public JWK. `Debug` shows its `kid` and algorithm only.
pub struct SigningKey {
    algorithm: SigningAlgorithm,
    kid: String,
    encoding: EncodingKey,
    /// An RS256 key parsed once: `jsonwebtoken` parses (and checks) the DER again for every
    /// signature, which costs about as much as the signature itself.
    rsa: Option<aws_lc_rs::signature::RsaKeyPair>,
    decoding: DecodingKey,
    public: Jwk,
    /// The generated key's secret as [`SigningKey::to_stored`] keeps it; `None` when imported.
    stored: Option<Vec<u8>>,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A new key of `algorithm`: EdDSA and ES256 from grantor's CSPRNG, RS256 (2048 bits) from
    /// `aws-lc-rs` (see the module docs). An RS256 key takes about a tenth of a second of one
    /// core: call it off an async executor's threads.
    pub fn generate(algorithm: SigningAlgorithm) -> Result<Self, KeyError> {
        if algorithm == SigningAlgorithm::RS256 {
            return Self::generate_rsa();
        }
        // A P-256 scalar must be below the group order: a draw above it (odds about 2^-32)
        // is drawn again.
        for _ in 0..4 {
            let secret = random_bytes::<32>().map_err(|_| KeyError::Random)?;
            match Self::from_secret(algorithm, &secret) {
                Err(KeyError::Malformed) => continue,
                made => return made,
            }
        }
        Err(KeyError::Random)
    }

    /// A key of `algorithm` from a PEM private key (PKCS#8; PKCS#1 also for RS256).
    pub fn from_pem(algorithm: SigningAlgorithm, pem: &[u8]) -> Result<Self, KeyError> {
        let encoding = match algorithm {
            SigningAlgorithm::EdDSA => EncodingKey::from_ed_pem(pem),
            SigningAlgorithm::ES256 => EncodingKey::from_ec_pem(pem),
            SigningAlgorithm::RS256 => EncodingKey::from_rsa_pem(pem),
        }
        .map_err(|_| KeyError::InvalidPem)?;
        let public = Jwk::from_encoding_key(&encoding, algorithm.jose())
            .map_err(|_| KeyError::InvalidPem)?;
        Self::assemble(algorithm, encoding, public, None).ok_or(KeyError::InvalidPem)
    }

    /// A 2048-bit RSA key from `aws-lc-rs`, kept as its tag and PKCS#8 document.
    fn generate_rsa() -> Result<Self, KeyError> {
        use aws_lc_rs::encoding::AsDer as _;
        let pair = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048)
            .map_err(|_| KeyError::Random)?;
        let pkcs8 = pair.as_der().map_err(|_| KeyError::Random)?;
        let mut stored = Vec::with_capacity(1 + pkcs8.as_ref().len());
        stored.push(SigningAlgorithm::RS256.tag());
        stored.extend_from_slice(pkcs8.as_ref());
        Self::rsa_from_pkcs8(stored)
    }

    /// An RS256 key from `stored`: its tag, then a PKCS#8 document.
    fn rsa_from_pkcs8(stored: Vec<u8>) -> Result<Self, KeyError> {
        use base64::Engine as _;
        let der = stored.get(1..).ok_or(KeyError::Malformed)?;
        // The PEM reader is the one path in `jsonwebtoken` that unwraps PKCS#8 for RSA.
        let body = base64::engine::general_purpose::STANDARD.encode(der);
        let mut pem = String::with_capacity(body.len() + body.len() / 64 + 64);
        pem.push_str("-----BEGIN PRIVATE KEY-----\n");
        for line in body.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(line).map_err(|_| KeyError::Malformed)?);
            pem.push('\n');
        }
        pem.push_str("-----END PRIVATE KEY-----\n");
        let encoding =
            EncodingKey::from_rsa_pem(pem.as_bytes()).map_err(|_| KeyError::Malformed)?;
        let public =
            Jwk::from_encoding_key(&encoding, Algorithm::RS256).map_err(|_| KeyError::Malformed)?;
        Self::assemble(SigningAlgorithm::RS256, encoding, public, Some(stored))
            .ok_or(KeyError::Malformed)
    }

    /// A generated key as [`SigningKey::to_stored`] kept it.
    pub(crate) fn from_stored(stored: &[u8]) -> Result<Self, KeyError> {
        let (&tag, secret) = stored.split_first().ok_or(KeyError::Malformed)?;
        if tag == SigningAlgorithm::RS256.tag() {
            return Self::rsa_from_pkcs8(stored.to_vec());
        }
        let algorithm = [SigningAlgorithm::EdDSA, SigningAlgorithm::ES256]
            .into_iter()
            .find(|a| a.tag() == tag)
            .ok_or(KeyError::Malformed)?;
        let secret: &[u8; 32] = secret.try_into().map_err(|_| KeyError::Malformed)?;
        Self::from_secret(algorithm, secret)
    }

    /// A generated key's secret with its algorithm's tag, to share it through a store; `None`
    /// for an imported key.
    pub(crate) fn to_stored(&self) -> Option<&[u8]> {
        self.stored.as_deref()
    }

    fn from_secret(algorithm: SigningAlgorithm, secret: &[u8; 32]) -> Result<Self, KeyError> {
        use ed25519_dalek::pkcs8::EncodePrivateKey as _;
        let (der, decoding) = match algorithm {
            SigningAlgorithm::EdDSA => {
                let key = ed25519_dalek::SigningKey::from_bytes(secret);
                let der = key.to_pkcs8_der().map_err(|_| KeyError::Malformed)?;
                let x = base64url(key.verifying_key().as_bytes());
                let decoding = DecodingKey::from_ed_components(&x);
                (der, decoding)
            }
            SigningAlgorithm::ES256 => {
                let key = p256::SecretKey::from_slice(secret).map_err(|_| KeyError::Malformed)?;
                let der = key.to_pkcs8_der().map_err(|_| KeyError::Malformed)?;
                let point = p256::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(
                    &key.public_key(),
                    false,
                );
                let (x, y) = (point.x(), point.y());
                let decoding = match (x, y) {
                    (Some(x), Some(y)) => {
                        DecodingKey::from_ec_components(&base64url(x), &base64url(y))
                    }
                    _ => return Err(KeyError::Malformed),
                };
                (der, decoding)
            }
            SigningAlgorithm::RS256 => return Err(KeyError::Malformed),
        };
        let decoding = decoding.map_err(|_| KeyError::Malformed)?;
        let encoding = match algorithm {
            SigningAlgorithm::EdDSA => EncodingKey::from_ed_der(der.as_bytes()),
            _ => EncodingKey::from_ec_der(der.as_bytes()),
        };
        let public = Jwk::from_decoding_key(&decoding, Some(algorithm.jose()))
            .map_err(|_| KeyError::Malformed)?;
        let mut stored = Vec::with_capacity(33);
        stored.push(algorithm.tag());
        stored.extend_from_slice(secret);
        Self::assemble(algorithm, encoding, public, Some(stored)).ok_or(KeyError::Malformed)
    }

    /// The key with its public JWK completed: `kid` (its RFC 7638 SHA-256 thumbprint), `alg`
    /// and `use: sig`.
    fn assemble(
        algorithm: SigningAlgorithm,
        encoding: EncodingKey,
        mut public: Jwk,
        stored: Option<Vec<u8>>,
    ) -> Option<Self> {
        let kid = public.thumbprint(ThumbprintHash::SHA256).ok()?;
        public.common.key_id = Some(kid.clone());
        public.common.public_key_use = Some(PublicKeyUse::Signature);
        public.common.key_algorithm = Some(match algorithm {
            SigningAlgorithm::EdDSA => KeyAlgorithm::EdDSA,
            SigningAlgorithm::ES256 => KeyAlgorithm::ES256,
            SigningAlgorithm::RS256 => KeyAlgorithm::RS256,
        });
        let decoding = DecodingKey::from_jwk(&public).ok()?;
        let rsa = match algorithm {
            SigningAlgorithm::RS256 => {
                Some(aws_lc_rs::signature::RsaKeyPair::from_der(encoding.as_bytes()).ok()?)
            }
            _ => None,
        };
        Some(Self {
            algorithm,
            kid,
            encoding,
            rsa,
            decoding,
            public,
            stored,
        })
    }

    /// The algorithm.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.algorithm
    }

    /// The key id: the RFC 7638 SHA-256 thumbprint of the public key.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key as a JWK (RFC 7517), with `kid`, `alg` and `use`.
    pub fn public_jwk(&self) -> &Jwk {
        &self.public
    }

    /// A JWS in compact serialization (RFC 7515 §7.1) of `claims` under `header`, whose `alg`
    /// must be this key's: what `jsonwebtoken::encode` makes, byte for byte (RS256 signatures
    /// are deterministic), but with an RS256 key's parsed form kept rather than parsed again.
    pub(crate) fn sign<T: serde::Serialize + ?Sized>(
        &self,
        header: &jsonwebtoken::Header,
        claims: &T,
    ) -> Result<String, SignError> {
        let Some(rsa) = self.rsa.as_ref().filter(|_| header.alg == Algorithm::RS256) else {
            return jsonwebtoken::encode(header, &claims, &self.encoding).map_err(|_| SignError);
        };
        let mut token = base64url(&serde_json::to_vec(header).map_err(|_| SignError)?);
        token.push('.');
        token.push_str(&base64url(
            &serde_json::to_vec(claims).map_err(|_| SignError)?,
        ));
        let mut signature = vec![0; rsa.public_modulus_len()];
        rsa.sign(
            &aws_lc_rs::signature::RSA_PKCS1_SHA256,
            &aws_lc_rs::rand::SystemRandom::new(),
            token.as_bytes(),
            &mut signature,
        )
        .map_err(|_| SignError)?;
        token.push('.');
        token.push_str(&base64url(&signature));
        Ok(token)
    }

    pub(crate) fn decoding(&self) -> &DecodingKey {
        &self.decoding
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{Header, Validation};
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn signatures_are_jsonwebtokens_and_rs256_ones_byte_for_byte() {
        let claims =
            json!({"iss": "https://auth.example", "sub": "alice", "exp": 4_000_000_000u64});
        for algorithm in SigningAlgorithm::ALL {
            let key = SigningKey::generate(algorithm).unwrap();
            let mut header = Header::new(algorithm.jose());
            header.kid = Some(key.kid().to_owned());
            header.typ = Some("JWT".to_owned());
            let token = key.sign(&header, &claims).unwrap();
            if algorithm == SigningAlgorithm::RS256 {
                // RSASSA-PKCS1-v1_5 is deterministic: the kept key signs what a fresh parse does.
                let theirs = jsonwebtoken::encode(&header, &claims, &key.encoding).unwrap();
                assert_eq!(token, theirs);
            }
            let mut validation = Validation::new(algorithm.jose());
            validation.validate_aud = false;
            let read = jsonwebtoken::decode::<Value>(&token, key.decoding(), &validation).unwrap();
            assert_eq!(read.claims, claims);
            assert_eq!(read.header.kid.as_deref(), Some(key.kid()));
        }
    }

    #[test]
    fn a_header_of_another_algorithm_is_not_signed_as_rs256() {
        let key = SigningKey::generate(SigningAlgorithm::RS256).unwrap();
        let header = Header::new(Algorithm::ES256);
        assert_eq!(key.sign(&header, &json!({})), Err(SignError));
    }
}
