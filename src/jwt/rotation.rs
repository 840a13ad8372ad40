//! The signing-key seam and its two implementations: keys the host manages, and keys grantor
//! generates and rotates, shared by every node through the key seam.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

use super::keys::{SigningAlgorithm, SigningKey};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::store::{KeyStore, namespace};

/// Where access-token signing keys come from: the key that signs now, and every key whose
/// tokens may still be live (published in the JWKS document, and accepted when verifying).
///
/// A rotation makes a new key current while the previous ones stay published until the tokens
/// they signed have expired. [`StaticKeys`] leaves that to the host; [`RotatingKeys`] does it.
#[async_trait]
pub trait SigningKeys: Send + Sync {
    /// The key that signs tokens at `now`.
    async fn signing_key(&self, now: UnixTime) -> Result<Arc<SigningKey>, StoreError>;

    /// Every key to publish at `now`: the current one, those whose tokens may still be live,
    /// and any about to become current.
    async fn published_keys(&self, now: UnixTime) -> Result<Vec<Arc<SigningKey>>, StoreError>;

    /// The published key with this `kid`, if any.
    async fn verification_key(
        &self,
        kid: &str,
        now: UnixTime,
    ) -> Result<Option<Arc<SigningKey>>, StoreError> {
        let keys = self.published_keys(now).await?;
        Ok(keys.into_iter().find(|key| key.kid() == kid))
    }

    /// How often the signing key changes, when the keys rotate on a schedule: the builder
    /// refuses a period shorter than the access-token lifetime, since a token must stay
    /// verifiable while it lives and only the previous period's key stays published. `None`
    /// (the default) when the host rotates by hand.
    fn rotation_period(&self) -> Option<Duration> {
        None
    }
}

/// Keys the host manages: one current key and the previous ones still published. To rotate,
/// build a new `StaticKeys` with the new key current and the old one among the previous, and
/// drop the old one once the access-token lifetime has passed.
#[derive(Debug, Clone)]
pub struct StaticKeys {
    current: Arc<SigningKey>,
    published: Vec<Arc<SigningKey>>,
}

impl StaticKeys {
    /// `current` signs; it and `previous` are published.
    pub fn new(current: SigningKey, previous: impl IntoIterator<Item = SigningKey>) -> Self {
        let current = Arc::new(current);
        let mut published = vec![Arc::clone(&current)];
        published.extend(previous.into_iter().map(Arc::new));
        Self { current, published }
    }
}

#[async_trait]
impl SigningKeys for StaticKeys {
    async fn signing_key(&self, _now: UnixTime) -> Result<Arc<SigningKey>, StoreError> {
        Ok(Arc::clone(&self.current))
    }

    async fn published_keys(&self, _now: UnixTime) -> Result<Vec<Arc<SigningKey>>, StoreError> {
        Ok(self.published.clone())
    }
}

/// Keys grantor generates and rotates: one per period (default a day), made by the first node
/// that needs it and shared with the others through the [`KeyStore`] under
/// `grantor:jwk:<alg>:<period>` (`insert_key`, then `find_key`), cached per process.
///
/// The key of the current period signs. The previous period's key stays published (tokens it
/// signed live at most an access-token lifetime, which must not exceed the period), and the
/// next period's is published a whole period before it signs, so a resource server's cached
/// JWKS already knows it.
///
/// The private keys rest in the key seam: whoever reads it can sign tokens, unless the server
/// [encrypts keys at rest](crate::AuthorizationServerBuilder::encrypt_keys_at_rest) (build
/// these with [`JwtAccessTokens::rotating`](super::JwtAccessTokens::rotating) to get the
/// server's seam, encryption included). A deployment that keeps keys in a KMS or HSM
/// implements [`SigningKeys`] over it instead.
pub struct RotatingKeys {
    algorithm: SigningAlgorithm,
    period: u64,
    store: Arc<dyn KeyStore>,
    cached: Mutex<Vec<(u64, Arc<SigningKey>)>>,
}

impl std::fmt::Debug for RotatingKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotatingKeys")
            .field("algorithm", &self.algorithm)
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl RotatingKeys {
    /// Keys of `algorithm` (EdDSA or ES256), a new one each `period` (at least the access
    /// token lifetime, and at least a minute), shared through `store`.
    pub fn new(algorithm: SigningAlgorithm, period: Duration, store: Arc<dyn KeyStore>) -> Self {
        Self {
            algorithm,
            period: Self::period_secs(period),
            store,
            cached: Mutex::new(Vec::new()),
        }
    }

    /// The period in whole seconds that `period` makes: at least a minute.
    pub(crate) fn period_secs(period: Duration) -> u64 {
        period.as_secs().max(60)
    }

    /// The rotation period.
    pub fn period(&self) -> Duration {
        Duration::from_secs(self.period)
    }

    /// The key of `period`: cached, else shared through the store (made first when `make`).
    async fn key(
        &self,
        period: u64,
        now: UnixTime,
        make: bool,
    ) -> Result<Option<Arc<SigningKey>>, StoreError> {
        if let Some(key) = self.cached(period) {
            return Ok(Some(key));
        }
        let name = namespace::signing_key(self.algorithm.as_str(), period);
        if make {
            let fresh = SigningKey::generate(self.algorithm).map_err(StoreError::failed)?;
            let stored = fresh.to_stored().unwrap_or_default();
            // Kept until its tokens are gone: published from a period before it signs to one
            // after, plus a period of margin.
            let until = UnixTime::from_secs((period + 3).saturating_mul(self.period));
            // Of concurrent first callers on every node, one key is kept; all read it back.
            self.store.insert_key(&name, stored, until, now).await?;
        }
        let Some(stored) = self.store.find_key(&name, now).await? else {
            return Ok(None);
        };
        let key = Arc::new(SigningKey::from_stored(&stored).map_err(StoreError::failed)?);
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached.retain(|(p, _)| *p + 2 >= period);
        if cached.iter().all(|(p, _)| *p != period) {
            cached.push((period, Arc::clone(&key)));
        }
        Ok(Some(key))
    }

    fn cached(&self, period: u64) -> Option<Arc<SigningKey>> {
        let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached
            .iter()
            .find(|(p, _)| *p == period)
            .map(|(_, key)| Arc::clone(key))
    }

    fn period_of(&self, now: UnixTime) -> u64 {
        now.as_secs() / self.period
    }
}

#[async_trait]
impl SigningKeys for RotatingKeys {
    fn rotation_period(&self) -> Option<Duration> {
        Some(self.period())
    }

    async fn signing_key(&self, now: UnixTime) -> Result<Arc<SigningKey>, StoreError> {
        self.key(self.period_of(now), now, true)
            .await?
            .ok_or_else(|| StoreError::failed("the signing key could not be made"))
    }

    async fn published_keys(&self, now: UnixTime) -> Result<Vec<Arc<SigningKey>>, StoreError> {
        let current = self.period_of(now);
        let mut keys = Vec::with_capacity(3);
        for (period, make) in [(current, true), (current + 1, true)] {
            keys.extend(self.key(period, now, make).await?);
        }
        if let Some(previous) = current.checked_sub(1) {
            keys.extend(self.key(previous, now, false).await?);
        }
        Ok(keys)
    }

    async fn verification_key(
        &self,
        kid: &str,
        now: UnixTime,
    ) -> Result<Option<Arc<SigningKey>>, StoreError> {
        let cached = {
            let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
            let current = self.period_of(now);
            cached
                .iter()
                .find(|(p, key)| key.kid() == kid && *p + 1 >= current && *p <= current + 1)
                .map(|(_, key)| Arc::clone(key))
        };
        if cached.is_some() {
            return Ok(cached);
        }
        let keys = self.published_keys(now).await?;
        Ok(keys.into_iter().find(|key| key.kid() == kid))
    }
}
