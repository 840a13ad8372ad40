//! ID tokens (OpenID Connect Core §2) signed with the server's rotating keys, one schedule per
//! algorithm over the key seam: the signing side of [`IdTokenSigner`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jsonwebtoken::Header;
use serde_json::Value;

use super::keys::SigningAlgorithm;
use super::rotation::{RotatingKeys, SigningKeys};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::oidc::{IdTokenClaims, IdTokenSigner};
use crate::store::KeyStore;

/// The server's ID-token keys: for each algorithm, [`RotatingKeys`] under the names the access
/// tokens' keys use (`grantor:jwk:<alg>:<period>`), so with the same algorithm and period the
/// two share keys, told apart by `typ` (`JWT` here, `at+jwt` there, RFC 9068 §4).
pub(crate) struct IdTokenKeys {
    keys: Vec<(SigningAlgorithm, RotatingKeys)>,
}

impl IdTokenKeys {
    /// Keys of every algorithm, rotating each `period`, kept in `store`.
    pub(crate) fn new(period: Duration, store: &Arc<dyn KeyStore>) -> Self {
        let keys = SigningAlgorithm::ALL
            .into_iter()
            .map(|alg| (alg, RotatingKeys::new(alg, period, Arc::clone(store))))
            .collect();
        Self { keys }
    }

    fn of(&self, algorithm: SigningAlgorithm) -> Result<&RotatingKeys, StoreError> {
        self.keys
            .iter()
            .find(|(alg, _)| *alg == algorithm)
            .map(|(_, keys)| keys)
            .ok_or_else(|| StoreError::failed("no ID-token keys for this algorithm"))
    }
}

#[async_trait]
impl IdTokenSigner for IdTokenKeys {
    async fn sign(
        &self,
        claims: &IdTokenClaims<'_>,
        algorithm: SigningAlgorithm,
        now: UnixTime,
    ) -> Result<String, StoreError> {
        let key = self.of(algorithm)?.signing_key(now).await?;
        let mut header = Header::new(algorithm.jose());
        header.kid = Some(key.kid().to_owned());
        header.typ = Some("JWT".to_owned());
        jsonwebtoken::encode(&header, claims, key.encoding()).map_err(StoreError::failed)
    }

    async fn published(&self, now: UnixTime) -> Result<Vec<Value>, StoreError> {
        let mut published = Vec::new();
        for (_, keys) in &self.keys {
            for key in keys.published_keys(now).await? {
                published.push(serde_json::to_value(key.public_jwk()).map_err(StoreError::failed)?);
            }
        }
        Ok(published)
    }
}
