//! The sealed sign-in form: until the user has signed in, the pending authorization lives in
//! the browser, not on the server.
//!
//! An authorization request an unauthenticated browser (or a flood) makes keeps nothing on the
//! server: its validated pending authorization is sealed with XChaCha20-Poly1305 (authenticated
//! encryption: nobody without the key can read or alter it) into the sign-in form's hidden
//! input, together with its expiry and the digest of a random value the browser holds as its
//! cookie. Only a browser that holds both can post the form; only a successful sign-in creates
//! server state (a session under a new id, see [`AuthorizationServer::sign_in`](crate::AuthorizationServer::sign_in)).
//!
//! The keys are shared by every node through the key seam: one key per UTC day, under
//! `grantor:seal:<day>`, made by the first node that needs it (`insert_key`) and read by the
//! others (`find_key`), kept three days so a form sealed just before midnight still opens. Each
//! process caches the keys it has read.

use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};

use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::{SecretDigest, random_bytes};
use crate::store::{KeyStore, namespace};

/// The format's version, the first byte of every sealed value (authenticated as associated data).
const VERSION: u8 = 1;
const DAY: u64 = 86_400;
const KEY_LEN: usize = 32;
const NONCE_LEN: usize = 24;
/// Version, day, nonce.
const HEADER_LEN: usize = 1 + 8 + NONCE_LEN;

/// What a sealed form carries.
pub(crate) struct Sealed {
    /// The pending authorization as [`crate::grant::pending`] writes it.
    pub(crate) authorization: String,
    /// The digest of the browser's cookie the form is bound to.
    pub(crate) binding: SecretDigest,
    /// When the form stops opening.
    pub(crate) expires_at: UnixTime,
}

/// Why a sealed value does not open: expired, forged, from another browser, or under a key
/// that has gone. Each is answered alike (the form is stale).
#[derive(Debug)]
pub(crate) enum Unsealed {
    Stale,
    Store(StoreError),
}

impl From<StoreError> for Unsealed {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

/// The process's cache of the shared sealing keys (at most the two newest days).
#[derive(Default)]
pub(crate) struct SealKeys {
    cached: Mutex<Vec<(u64, [u8; KEY_LEN])>>,
}

impl std::fmt::Debug for SealKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKeys(<redacted>)")
    }
}

impl SealKeys {
    /// Seals `sealed` under today's key.
    pub(crate) async fn seal(
        &self,
        store: &dyn KeyStore,
        sealed: &Sealed,
        now: UnixTime,
    ) -> Result<String, StoreError> {
        let day = now.as_secs() / DAY;
        let key = self
            .key(store, day, now, true)
            .await?
            .ok_or_else(|| StoreError::failed("the sealing key could not be made"))?;
        let nonce = random_bytes::<NONCE_LEN>()?;
        let mut header = [0u8; HEADER_LEN];
        header[0] = VERSION;
        header[1..9].copy_from_slice(&day.to_be_bytes());
        header[9..].copy_from_slice(&nonce);
        let mut plain = Vec::with_capacity(8 + 32 + sealed.authorization.len());
        plain.extend_from_slice(&sealed.expires_at.as_secs().to_be_bytes());
        plain.extend_from_slice(sealed.binding.as_bytes());
        plain.extend_from_slice(sealed.authorization.as_bytes());
        let cipher = XChaCha20Poly1305::new(Key::from_slice(&key));
        let payload = Payload {
            msg: &plain,
            aad: &header,
        };
        let sealed = cipher
            .encrypt(XNonce::from_slice(&nonce), payload)
            .map_err(|_| StoreError::failed("sealing the sign-in form failed"))?;
        let mut out = Vec::with_capacity(HEADER_LEN + sealed.len());
        out.extend_from_slice(&header);
        out.extend_from_slice(&sealed);
        Ok(URL_SAFE_NO_PAD.encode(out))
    }

    /// Opens `text` if it was sealed by a node of this deployment within the last two days, has
    /// not expired and is bound to `cookie`.
    pub(crate) async fn open(
        &self,
        store: &dyn KeyStore,
        text: &str,
        cookie: &str,
        now: UnixTime,
    ) -> Result<Sealed, Unsealed> {
        let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| Unsealed::Stale)?;
        if bytes.len() < HEADER_LEN || bytes[0] != VERSION {
            return Err(Unsealed::Stale);
        }
        let (header, sealed) = bytes.split_at(HEADER_LEN);
        let mut day = [0u8; 8];
        day.copy_from_slice(&header[1..9]);
        let day = u64::from_be_bytes(day);
        let today = now.as_secs() / DAY;
        if day > today || day + 1 < today {
            return Err(Unsealed::Stale);
        }
        let key = self
            .key(store, day, now, false)
            .await?
            .ok_or(Unsealed::Stale)?;
        let cipher = XChaCha20Poly1305::new(Key::from_slice(&key));
        let payload = Payload {
            msg: sealed,
            aad: header,
        };
        let plain = cipher
            .decrypt(XNonce::from_slice(&header[9..]), payload)
            .map_err(|_| Unsealed::Stale)?;
        let (expires_at, rest) = plain.split_at_checked(8).ok_or(Unsealed::Stale)?;
        let (binding, authorization) = rest.split_at_checked(32).ok_or(Unsealed::Stale)?;
        let mut seconds = [0u8; 8];
        seconds.copy_from_slice(expires_at);
        let expires_at = UnixTime::from_secs(u64::from_be_bytes(seconds));
        let mut digest = [0u8; 32];
        digest.copy_from_slice(binding);
        let binding = SecretDigest::from_bytes(digest);
        if expires_at <= now || !binding.ct_eq(&SecretDigest::of(cookie)) {
            return Err(Unsealed::Stale);
        }
        let authorization =
            String::from_utf8(authorization.to_vec()).map_err(|_| Unsealed::Stale)?;
        Ok(Sealed {
            authorization,
            binding,
            expires_at,
        })
    }

    /// The key of `day`: cached, else shared through the store (made there first when `make`).
    async fn key(
        &self,
        store: &dyn KeyStore,
        day: u64,
        now: UnixTime,
        make: bool,
    ) -> Result<Option<[u8; KEY_LEN]>, StoreError> {
        if let Some(key) = self.cached(day) {
            return Ok(Some(key));
        }
        let name = namespace::seal_key(day);
        if make {
            let fresh = random_bytes::<KEY_LEN>()?;
            let until = UnixTime::from_secs((day + 3) * DAY);
            // Of concurrent first callers on every node, one key is kept; all read it back.
            store.insert_key(&name, &fresh, until, now).await?;
        }
        let Some(stored) = store.find_key(&name, now).await? else {
            return Ok(None);
        };
        let key: [u8; KEY_LEN] = stored
            .as_slice()
            .try_into()
            .map_err(|_| StoreError::failed("a stored sealing key is malformed"))?;
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached.retain(|(d, _)| *d + 1 >= day);
        if cached.iter().all(|(d, _)| *d != day) {
            cached.push((day, key));
        }
        Ok(Some(key))
    }

    fn cached(&self, day: u64) -> Option<[u8; KEY_LEN]> {
        let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached.iter().find(|(d, _)| *d == day).map(|(_, key)| *key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    const NOW: UnixTime = UnixTime::from_secs(20_000 * DAY + 100);

    fn sealed(cookie: &str) -> Sealed {
        Sealed {
            authorization: r#"{"state":"s"}"#.to_owned(),
            binding: SecretDigest::of(cookie),
            expires_at: NOW.plus(std::time::Duration::from_secs(600)),
        }
    }

    fn open(store: &MemoryStore, text: &str, cookie: &str, now: UnixTime) -> Option<String> {
        let keys = SealKeys::default();
        let opened = block_on(keys.open(store, text, cookie, now));
        opened.ok().map(|s| s.authorization)
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn a_sealed_form_opens_only_with_its_cookie_unaltered_and_in_time() {
        let store = MemoryStore::new();
        let keys = SealKeys::default();
        let text = block_on(keys.seal(&store, &sealed("cookie"), NOW)).unwrap();
        assert!(!text.contains("state"), "the content is encrypted");
        // Another node (another cache) opens it through the shared key.
        assert_eq!(
            open(&store, &text, "cookie", NOW).as_deref(),
            Some(r#"{"state":"s"}"#)
        );
        assert_eq!(open(&store, &text, "another cookie", NOW), None);
        let late = NOW.plus(std::time::Duration::from_secs(600));
        assert_eq!(open(&store, &text, "cookie", late), None);
        let mut altered = text.clone().into_bytes();
        let last = altered.len() - 2;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).unwrap();
        assert_eq!(open(&store, &altered, "cookie", NOW), None);
        assert_eq!(open(&MemoryStore::new(), &text, "cookie", NOW), None);
        assert_eq!(open(&store, "", "cookie", NOW), None);
        assert_eq!(open(&store, "not base64 !", "cookie", NOW), None);
    }

    #[test]
    fn every_node_seals_under_the_same_key_of_the_day() {
        let store = MemoryStore::new();
        let (a, b) = (SealKeys::default(), SealKeys::default());
        block_on(a.seal(&store, &sealed("c"), NOW)).unwrap();
        let text = block_on(b.seal(&store, &sealed("c"), NOW)).unwrap();
        assert_eq!(a.cached(NOW.as_secs() / DAY), b.cached(NOW.as_secs() / DAY));
        assert!(open(&store, &text, "c", NOW).is_some());
    }
}
