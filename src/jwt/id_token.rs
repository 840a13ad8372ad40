//! ID tokens (OpenID Connect Core §2) and logout tokens signed with the server's rotating keys,
//! one schedule per algorithm over the key seam, and the server's own ID tokens read back: the
//! feature's side of [`IdTokenSigner`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jsonwebtoken::{Header, Validation};
use serde_json::Value;

use super::keys::SigningAlgorithm;
use super::pool::Signatures;
use super::rotation::{RotatingKeys, SigningKeys};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::oidc::{ID_TOKEN_TYP, IdTokenSigner};
use crate::store::KeyStore;

/// The server's ID-token keys: for each algorithm, [`RotatingKeys`] under the names the access
/// tokens' keys use (`grantor:jwk:<alg>:<period>`), so with the same algorithm and period the
/// two share keys, told apart by `typ` (`JWT` here, `at+jwt` there, RFC 9068 §4).
pub(crate) struct IdTokenKeys {
    keys: Vec<(SigningAlgorithm, RotatingKeys)>,
    signatures: Arc<Signatures>,
    /// What signs for a client that named no algorithm.
    default: SigningAlgorithm,
}

impl IdTokenKeys {
    /// Keys of every algorithm, rotating each `period`, kept in `store`; slow signatures made
    /// on `signatures`' threads; `default` signs for a client that named no algorithm.
    pub(crate) fn new(
        period: Duration,
        store: &Arc<dyn KeyStore>,
        signatures: Arc<Signatures>,
        default: SigningAlgorithm,
    ) -> Self {
        let keys = SigningAlgorithm::ALL
            .into_iter()
            .map(|alg| (alg, RotatingKeys::new(alg, period, Arc::clone(store))))
            .collect();
        Self {
            keys,
            signatures,
            default,
        }
    }

    fn of(&self, algorithm: SigningAlgorithm) -> Result<&RotatingKeys, StoreError> {
        self.keys
            .iter()
            .find(|(alg, _)| *alg == algorithm)
            .map(|(_, keys)| keys)
            .ok_or_else(|| StoreError::failed("no ID-token keys for this algorithm"))
    }
}

impl IdTokenKeys {
    /// Signs `claims` with the current key of `algorithm`, in the signing lane's low queue when
    /// a client asked for it `at_will`.
    async fn sign_with(
        &self,
        claims: &Value,
        typ: &'static str,
        algorithm: SigningAlgorithm,
        now: UnixTime,
        at_will: bool,
    ) -> Result<String, StoreError> {
        let key = self.of(algorithm)?.signing_key(now).await?;
        let mut header = Header::new(algorithm.jose());
        header.kid = Some(key.kid().to_owned());
        header.typ = Some(typ.to_owned());
        // The claims are written out here, once (as the signature would write them), so that
        // the signature can be made on another thread without a copy of the claims' tree.
        let claims = serde_json::value::to_raw_value(claims).map_err(StoreError::failed)?;
        let sign = move || key.sign(&header, &claims).map_err(StoreError::failed);
        match at_will {
            true => self.signatures.run_at_will(algorithm, sign).await?,
            false => self.signatures.run(algorithm, sign).await?,
        }
    }
}

#[async_trait]
impl IdTokenSigner for IdTokenKeys {
    async fn sign(
        &self,
        claims: &Value,
        typ: &'static str,
        algorithm: SigningAlgorithm,
        now: UnixTime,
    ) -> Result<String, StoreError> {
        self.sign_with(claims, typ, algorithm, now, false).await
    }

    async fn sign_at_will(
        &self,
        claims: &Value,
        typ: &'static str,
        algorithm: SigningAlgorithm,
        now: UnixTime,
    ) -> Result<String, StoreError> {
        self.sign_with(claims, typ, algorithm, now, true).await
    }

    fn default_algorithm(&self) -> SigningAlgorithm {
        self.default
    }

    async fn read(&self, token: &str, now: UnixTime) -> Result<Option<Value>, StoreError> {
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return Ok(None);
        };
        if header.typ.as_deref().is_some_and(|typ| typ != ID_TOKEN_TYP) {
            return Ok(None);
        }
        let (Some(kid), Some(algorithm)) = (
            header.kid.as_deref(),
            SigningAlgorithm::ALL
                .into_iter()
                .find(|alg| alg.jose() == header.alg),
        ) else {
            return Ok(None);
        };
        let Some(key) = self.of(algorithm)?.verification_key(kid, now).await? else {
            return Ok(None);
        };
        let mut validation = Validation::new(algorithm.jose());
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        Ok(
            jsonwebtoken::decode::<Value>(token, key.decoding(), &validation)
                .ok()
                .map(|data| data.claims),
        )
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
