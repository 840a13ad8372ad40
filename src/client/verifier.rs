//! How a client's secret is verified: a SHA-256 digest for secrets grantor generated, an
//! Argon2id hash for secrets people chose. Only verifiers are kept, never the secret.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::ClientError;
use crate::error::StoreError;
use crate::hash;
use crate::secret::{ClientSecret, SecretDigest};

/// How a client verifies a presented secret. Only verifiers are kept, never the secret.
///
/// Secrets grantor generates carry 256 bits, so a SHA-256 digest compared in constant time is a
/// sound verifier; secrets chosen by people get an Argon2id hash.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretVerifier(pub(super) Verifier);

#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Verifier {
    Digest(SecretDigest),
    Argon2id(Arc<str>),
}

const DIGEST_PREFIX: &str = "sha256:";

impl SecretVerifier {
    /// An Argon2id verifier for a secret that may have low entropy (one a person chose).
    /// Hashing takes tens of milliseconds; call it at registration, not per request.
    pub fn argon2id(secret: &ClientSecret) -> Result<Self, StoreError> {
        let phc = hash::hash_password(secret.expose_secret())?;
        Ok(Self(Verifier::Argon2id(Arc::from(phc))))
    }

    /// A SHA-256 verifier, sound only for high-entropy secrets such as those of
    /// [`ClientCredentials::generate`](super::ClientCredentials::generate); anything shorter than 32 characters is refused.
    pub fn digest(secret: &ClientSecret) -> Result<Self, ClientError> {
        if secret.expose_secret().len() < 32 {
            return Err(ClientError::WeakSecretForDigest);
        }
        Ok(Self(Verifier::Digest(secret.digest())))
    }

    /// Restores a verifier from [`SecretVerifier::to_stored`]'s form: `sha256:<base64url>` or
    /// an Argon2id PHC string (`$argon2id$…`).
    pub fn from_stored(stored: &str) -> Result<Self, ClientError> {
        if let Some(encoded) = stored.strip_prefix(DIGEST_PREFIX) {
            let bytes = URL_SAFE_NO_PAD
                .decode(encoded)
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or(ClientError::MalformedVerifier)?;
            return Ok(Self(Verifier::Digest(SecretDigest::from_bytes(bytes))));
        }
        if hash::is_argon2id_phc(stored) {
            return Ok(Self(Verifier::Argon2id(Arc::from(stored))));
        }
        Err(ClientError::MalformedVerifier)
    }

    /// The verifier as a string for a database column.
    pub fn to_stored(&self) -> String {
        match &self.0 {
            Verifier::Digest(d) => {
                format!("{DIGEST_PREFIX}{}", URL_SAFE_NO_PAD.encode(d.as_bytes()))
            }
            Verifier::Argon2id(phc) => phc.to_string(),
        }
    }

    pub(crate) fn inner(&self) -> &Verifier {
        &self.0
    }
}

impl fmt::Debug for SecretVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Verifier::Digest(_) => f.write_str("SecretVerifier::Digest(<redacted>)"),
            Verifier::Argon2id(_) => f.write_str("SecretVerifier::Argon2id(<redacted>)"),
        }
    }
}
