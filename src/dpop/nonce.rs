//! Server nonces (RFC 9449 §8, §9): one random value per five-minute period, made by the first
//! node that needs it and shared through the key seam under
//! `grantor:dpop-nonce:<period>`; the current and the previous period's are accepted.

use std::sync::{Arc, Mutex};

use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::{base64url, random_bytes};
use crate::store::{KeyStore, namespace};

/// How long a nonce is handed out; it is accepted one period more.
const PERIOD_SECS: u64 = 300;

pub(super) struct Nonces {
    store: Arc<dyn KeyStore>,
    /// The nonces of recent periods this process has seen.
    cached: Mutex<Vec<(u64, String)>>,
}

impl Nonces {
    pub(super) fn new(store: Arc<dyn KeyStore>) -> Self {
        Self {
            store,
            cached: Mutex::new(Vec::new()),
        }
    }

    /// The nonce to hand out at `now`.
    pub(super) async fn current(&self, now: UnixTime) -> Result<String, StoreError> {
        let period = now.as_secs() / PERIOD_SECS;
        match self.nonce(period, now, true).await? {
            Some(nonce) => Ok(nonce),
            None => Err(StoreError::failed("the DPoP nonce could not be kept")),
        }
    }

    /// Whether `nonce` is the current or the previous period's.
    pub(super) async fn accepts(&self, nonce: &str, now: UnixTime) -> Result<bool, StoreError> {
        let period = now.as_secs() / PERIOD_SECS;
        for (period, make) in [(period, true), (period.saturating_sub(1), false)] {
            if self.nonce(period, now, make).await?.as_deref() == Some(nonce) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The nonce of `period`: cached, else read from the store (made first when `make`).
    async fn nonce(
        &self,
        period: u64,
        now: UnixTime,
        make: bool,
    ) -> Result<Option<String>, StoreError> {
        if let Some(nonce) = self.cached(period) {
            return Ok(Some(nonce));
        }
        let key = namespace::dpop_nonce(period);
        if make {
            let fresh = base64url(&random_bytes::<16>()?);
            let until = UnixTime::from_secs((period + 2).saturating_mul(PERIOD_SECS));
            // Of concurrent first callers on every node, one nonce is kept; all read it back.
            self.store
                .insert_key(&key, fresh.as_bytes(), until, now)
                .await?;
        }
        let Some(stored) = self.store.find_key(&key, now).await? else {
            return Ok(None);
        };
        let nonce = String::from_utf8(stored)
            .map_err(|_| StoreError::failed("a stored DPoP nonce is not text"))?;
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached.retain(|(p, _)| *p + 1 >= period);
        if cached.iter().all(|(p, _)| *p != period) {
            cached.push((period, nonce.clone()));
        }
        Ok(Some(nonce))
    }

    fn cached(&self, period: u64) -> Option<String> {
        let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached
            .iter()
            .find(|(p, _)| *p == period)
            .map(|(_, nonce)| nonce.clone())
    }
}
