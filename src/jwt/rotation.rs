//! The signing-key seam and its two implementations: keys the host manages, and keys grantor
//! generates and rotates, shared by every node through the key seam.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_channel::oneshot;

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
/// An administrator may rotate early (`grantor keys rotate`, after a key may have leaked): a
/// key kept under `grantor:jwk:<alg>:<period>.<n>` then signs in place of the period's, which
/// stays published as the period's keys do. Each process looks for such a key at most once a
/// [`ROTATION_CHECK`] (and for a `kid` it does not know, at most once a second), so an early
/// rotation reaches every node's signing within that time.
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
    cached: Mutex<Vec<Generations>>,
    /// The callers waiting for a key this process is making: one maker per process, so a burst
    /// of first requests makes one RSA key, not one each.
    making: Mutex<Option<Vec<oneshot::Sender<()>>>>,
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
    /// Keys of `algorithm`, a new one each `period` (at least the access
    /// token lifetime, and at least a minute), shared through `store`.
    pub fn new(algorithm: SigningAlgorithm, period: Duration, store: Arc<dyn KeyStore>) -> Self {
        Self {
            algorithm,
            period: Self::period_secs(period),
            store,
            cached: Mutex::new(Vec::new()),
            making: Mutex::new(None),
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

    /// Every key of `period` (the period's own made first when `make`), and those of early
    /// rotations after it: as cached, unless `recheck` says to look again.
    async fn generations(
        &self,
        period: u64,
        now: UnixTime,
        make: bool,
        recheck: Recheck,
    ) -> Result<Vec<Arc<SigningKey>>, StoreError> {
        let (mut keys, checked_at) = self.cached(period);
        let fresh = checked_at.is_some_and(|at| recheck.still_fresh(at, now));
        if fresh || keys.len() > namespace::MAX_EARLY_ROTATIONS {
            return Ok(keys);
        }
        if keys.is_empty() {
            match self.key(period, now, make).await? {
                Some(key) => keys.push(key),
                None => return Ok(keys),
            }
        }
        while keys.len() <= namespace::MAX_EARLY_ROTATIONS {
            let name = namespace::rotated_signing_key(self.algorithm.as_str(), period, keys.len());
            let Some(stored) = self.store.find_key(&name, now).await? else {
                break;
            };
            keys.push(Arc::new(
                SigningKey::from_stored(&stored).map_err(StoreError::failed)?,
            ));
        }
        self.remember(period, &keys, now);
        Ok(keys)
    }

    /// The period's own key, shared through the store (made first when `make`).
    async fn key(
        &self,
        period: u64,
        now: UnixTime,
        make: bool,
    ) -> Result<Option<Arc<SigningKey>>, StoreError> {
        let name = namespace::signing_key(self.algorithm.as_str(), period);
        let mut stored = self.store.find_key(&name, now).await?;
        if stored.is_none() && make {
            // Held until the key is kept, so that its waiters read it back.
            let _maker = match self.become_maker() {
                Ok(maker) => maker,
                Err(waiting) => {
                    // Made (or given up) by the process's maker: read what it kept.
                    let _ = waiting.await;
                    return Box::pin(self.key(period, now, make)).await;
                }
            };
            let fresh = generate(self.algorithm).await?;
            let material = fresh.to_stored().unwrap_or_default();
            // Kept until its tokens are gone: published from a period before it signs to one
            // after, plus a period of margin.
            let until = UnixTime::from_secs((period + 3).saturating_mul(self.period));
            // Of concurrent first callers on every node, one key is kept; all read it back.
            self.store.insert_key(&name, material, until, now).await?;
            crate::metrics::key_rotated(self.algorithm.as_str());
            stored = self.store.find_key(&name, now).await?;
        }
        let Some(stored) = stored else {
            return Ok(None);
        };
        let key = SigningKey::from_stored(&stored).map_err(StoreError::failed)?;
        Ok(Some(Arc::new(key)))
    }

    /// Makes this caller the process's key maker, or answers what to await until the maker is
    /// done: its [`Maker`] wakes every waiter when dropped, done or not.
    fn become_maker(&self) -> Result<Maker<'_>, oneshot::Receiver<()>> {
        let mut making = self.making.lock().unwrap_or_else(|p| p.into_inner());
        match making.as_mut() {
            Some(waiting) => {
                let (sender, receiver) = oneshot::channel();
                waiting.push(sender);
                Err(receiver)
            }
            None => {
                *making = Some(Vec::new());
                Ok(Maker(&self.making))
            }
        }
    }

    /// The keys of `period` this process knows, and when it last looked.
    fn cached(&self, period: u64) -> (Vec<Arc<SigningKey>>, Option<UnixTime>) {
        let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached
            .iter()
            .find(|known| known.period == period)
            .map_or((Vec::new(), None), |known| {
                (known.keys.clone(), Some(known.checked_at))
            })
    }

    /// The key that signs in `period`, when this process looked within a [`ROTATION_CHECK`]:
    /// the one key, not a copy of the period's list (every JWT access token asks).
    fn cached_signing_key(&self, period: u64, now: UnixTime) -> Option<Arc<SigningKey>> {
        let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        let known = cached.iter().find(|known| known.period == period)?;
        Recheck::Periodically
            .still_fresh(known.checked_at, now)
            .then(|| known.keys.last().cloned())
            .flatten()
    }

    /// Keeps `keys` as `period`'s, read at `now`, and forgets periods no longer published.
    fn remember(&self, period: u64, keys: &[Arc<SigningKey>], now: UnixTime) {
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached.retain(|known| known.period + 2 >= period && known.period != period);
        cached.push(Generations {
            period,
            keys: keys.to_vec(),
            checked_at: now,
        });
    }

    /// Every key to publish at `now`, looked up again as `recheck` says.
    async fn published(
        &self,
        now: UnixTime,
        recheck: Recheck,
    ) -> Result<Vec<Arc<SigningKey>>, StoreError> {
        let current = self.period_of(now);
        let mut keys = Vec::with_capacity(3);
        for (period, make) in [(current, true), (current + 1, true)] {
            keys.extend(self.generations(period, now, make, recheck).await?);
        }
        if let Some(previous) = current.checked_sub(1) {
            keys.extend(self.generations(previous, now, false, recheck).await?);
        }
        Ok(keys)
    }

    fn period_of(&self, now: UnixTime) -> u64 {
        now.as_secs() / self.period
    }
}

/// How often a process looks for the key of an administrator's early rotation: within this
/// long of `grantor keys rotate`, every node signs with the new key.
pub const ROTATION_CHECK: Duration = Duration::from_secs(60);

/// The keys of one period as this process last read them: the period's own first, then those
/// of early rotations in the order they were made (the last one signs).
struct Generations {
    period: u64,
    keys: Vec<Arc<SigningKey>>,
    checked_at: UnixTime,
}

/// When the keys of a period this process knows are looked up again.
#[derive(Clone, Copy)]
enum Recheck {
    /// Once a [`ROTATION_CHECK`]: signing and publishing.
    Periodically,
    /// Once a second: a `kid` this process does not know, which another node may sign with.
    Soon,
}

impl Recheck {
    /// Whether keys this process looked up at `checked_at` are still to be trusted at `now`.
    fn still_fresh(self, checked_at: UnixTime, now: UnixTime) -> bool {
        match self {
            Recheck::Periodically => now < checked_at.plus(ROTATION_CHECK),
            Recheck::Soon => now.as_secs() <= checked_at.as_secs(),
        }
    }
}

/// The process's key maker while it lives: dropping it (the key kept, or the maker's request
/// gone) wakes the callers that waited for it.
struct Maker<'a>(&'a Mutex<Option<Vec<oneshot::Sender<()>>>>);

impl Drop for Maker<'_> {
    fn drop(&mut self) {
        let waiting = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        for waiter in waiting.into_iter().flatten() {
            // A waiter whose request went away no longer listens.
            let _ = waiter.send(());
        }
    }
}

/// A new key of `algorithm`. An RSA key's search takes a tenth of a second or more, so it runs
/// on a thread of its own rather than stall the executor that awaits it (once a period).
pub(super) async fn generate(algorithm: SigningAlgorithm) -> Result<SigningKey, StoreError> {
    if algorithm != SigningAlgorithm::RS256 {
        return SigningKey::generate(algorithm).map_err(StoreError::failed);
    }
    let (sender, receiver) = oneshot::channel();
    std::thread::Builder::new()
        .name("grantor-rsa-key".into())
        .spawn(move || {
            // The receiver may have gone (its request dropped): nothing waits for the key.
            let _ = sender.send(SigningKey::generate(algorithm));
        })
        .map_err(StoreError::failed)?;
    receiver
        .await
        .map_err(|_| StoreError::failed("the key generation thread stopped"))?
        .map_err(StoreError::failed)
}

#[async_trait]
impl SigningKeys for RotatingKeys {
    fn rotation_period(&self) -> Option<Duration> {
        Some(self.period())
    }

    async fn signing_key(&self, now: UnixTime) -> Result<Arc<SigningKey>, StoreError> {
        let period = self.period_of(now);
        if let Some(key) = self.cached_signing_key(period, now) {
            return Ok(key);
        }
        let keys = self
            .generations(period, now, true, Recheck::Periodically)
            .await?;
        // The last early rotation's key signs in place of the period's own.
        keys.last()
            .cloned()
            .ok_or_else(|| StoreError::failed("the signing key could not be made"))
    }

    async fn published_keys(&self, now: UnixTime) -> Result<Vec<Arc<SigningKey>>, StoreError> {
        self.published(now, Recheck::Periodically).await
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
                .filter(|known| known.period + 1 >= current && known.period <= current + 1)
                .flat_map(|known| &known.keys)
                .find(|key| key.kid() == kid)
                .cloned()
        };
        if cached.is_some() {
            return Ok(cached);
        }
        // Another node may sign with a key of an early rotation this one has not seen yet.
        let keys = self.published(now, Recheck::Soon).await?;
        Ok(keys.into_iter().find(|key| key.kid() == kid))
    }
}
