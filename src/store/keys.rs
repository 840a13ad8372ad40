//! The key seam: rotating key material every node shares (the keys that seal sign-in forms,
//! JWT signing keys, the secrets behind DPoP nonces), apart from the one-time values.
//!
//! What this seam keeps is **secret at rest**: whoever reads it can open sign-in forms in
//! flight and, with JWT access tokens, sign tokens the server's own JWKS verifies. Keep its
//! table out of backups and replicas that others read, or give grantor a
//! [`KeyEncryptionKey`] ([`AuthorizationServerBuilder::encrypt_keys_at_rest`](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)):
//! then every piece of material is sealed with XChaCha20-Poly1305 under that key, bound to its
//! name, before it reaches the store, and someone who reads (or writes) the database without
//! the key can neither sign a token nor plant a key of their own.

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};

use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::random_bytes;

/// Keeps rotating key material under names grantor builds (listed with their bounds in
/// [`namespace`](super::namespace)): at most a few dozen names live at once, each at most 128
/// bytes, each value at most 8 KiB.
///
/// grantor makes a key on the first node that needs it ([`insert_key`](Self::insert_key)) and
/// every node reads the one that was kept ([`find_key`](Self::find_key)), so all nodes seal and
/// sign under the same key. A store answers material past its `expires_at` to nobody.
///
/// What it keeps is **secret at rest**: whoever reads it can open sign-in forms in flight and,
/// with JWT access tokens, sign tokens the server's own JWKS verifies. Keep it out of backups
/// and replicas that others read, or have grantor encrypt it first
/// ([`AuthorizationServerBuilder::encrypt_keys_at_rest`](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)),
/// so that the store holds only ciphertext bound to each name.
#[async_trait]
pub trait KeyStore: Send + Sync {
    /// Keeps `material` under `name` until `expires_at`, unless live material holds the name
    /// already: answers whether it was kept. Of concurrent callers with one name, exactly one
    /// is; an expired entry does not hold its name.
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError>;

    /// The live material under `name`, if any.
    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError>;
}

/// The host's key that encrypts grantor's key material before it reaches the
/// [`KeyStore`]: 32 random bytes, kept outside the database (an environment variable, a
/// secrets manager). Its `Debug` shows nothing of it.
///
/// ```
/// use grantor::store::KeyEncryptionKey;
///
/// // 32 bytes in standard base64, as `openssl rand -base64 32` prints them.
/// let key = KeyEncryptionKey::from_base64("q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=").unwrap();
/// assert_eq!(format!("{key:?}"), "KeyEncryptionKey(<redacted>)");
/// assert!(KeyEncryptionKey::from_base64("too short").is_err());
/// ```
#[derive(Clone)]
pub struct KeyEncryptionKey([u8; 32]);

impl KeyEncryptionKey {
    /// The key from its 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The key from 32 bytes in standard base64 (padded or not); anything else is refused
    /// with a reason that does not repeat the input.
    pub fn from_base64(encoded: &str) -> Result<Self, KeyEncryptionKeyError> {
        let trimmed = encoded.trim().trim_end_matches('=');
        let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(trimmed)
            .map_err(|_| KeyEncryptionKeyError)?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| KeyEncryptionKeyError)?;
        Ok(Self(bytes))
    }

    /// A fresh random key from grantor's CSPRNG, in standard base64: what a host generates
    /// once and keeps in its secrets (as `openssl rand -base64 32` would print one).
    pub fn generate_base64() -> Result<String, StoreError> {
        Ok(STANDARD.encode(random_bytes::<32>()?))
    }
}

impl std::fmt::Debug for KeyEncryptionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyEncryptionKey(<redacted>)")
    }
}

/// A key-encryption key that is not 32 bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a key-encryption key is 32 bytes in standard base64")]
pub struct KeyEncryptionKeyError;

/// The first byte of sealed material: the format's version (authenticated with the name).
const SEALED_V1: u8 = 0xE1;
const NONCE_LEN: usize = 24;
/// What binds sealed material to its purpose and name (associated data).
const CONTEXT: &[u8] = b"grantor key material v1\n";

/// A [`KeyStore`] that seals material under the host's [`KeyEncryptionKey`] before handing it
/// to the store behind, and opens what it finds. Material that does not open (stored in the
/// clear before encryption was turned on, moved to another name, or under another key) is a
/// store failure naming the key, never used.
pub(crate) struct EncryptedKeys {
    inner: Arc<dyn KeyStore>,
    cipher: XChaCha20Poly1305,
}

impl EncryptedKeys {
    pub(crate) fn new(inner: Arc<dyn KeyStore>, key: &KeyEncryptionKey) -> Self {
        Self {
            inner,
            cipher: XChaCha20Poly1305::new(Key::from_slice(&key.0)),
        }
    }

    fn associated(name: &str) -> Vec<u8> {
        let mut aad = Vec::with_capacity(1 + CONTEXT.len() + name.len());
        aad.push(SEALED_V1);
        aad.extend_from_slice(CONTEXT);
        aad.extend_from_slice(name.as_bytes());
        aad
    }

    fn seal(&self, name: &str, material: &[u8]) -> Result<Vec<u8>, StoreError> {
        let nonce = random_bytes::<NONCE_LEN>()?;
        let aad = Self::associated(name);
        let sealed = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: material,
                    aad: &aad,
                },
            )
            .map_err(|_| StoreError::failed("key material could not be encrypted"))?;
        let mut out = Vec::with_capacity(1 + NONCE_LEN + sealed.len());
        out.push(SEALED_V1);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn open(&self, name: &str, stored: &[u8]) -> Result<Vec<u8>, StoreError> {
        let refused = || {
            StoreError::failed(format!(
                "the key material under `{name}` does not open under the key-encryption key \
                 (stored unencrypted, under another key, or altered)"
            ))
        };
        let Some((&SEALED_V1, rest)) = stored.split_first() else {
            return Err(refused());
        };
        if rest.len() < NONCE_LEN {
            return Err(refused());
        }
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let aad = Self::associated(name);
        self.cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: &aad,
                },
            )
            .map_err(|_| refused())
    }
}

#[async_trait]
impl KeyStore for EncryptedKeys {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let sealed = self.seal(name, material)?;
        self.inner.insert_key(name, &sealed, expires_at, now).await
    }

    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        match self.inner.find_key(name, now).await? {
            Some(stored) => self.open(name, &stored).map(Some),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    const T0: UnixTime = UnixTime::from_secs(1_000);
    const LATER: UnixTime = UnixTime::from_secs(10_000);

    /// The in-memory store never waits, so one poll answers.
    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        use std::task::{Context, Poll, Waker};
        let mut future = std::pin::pin!(future);
        match future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(out) => out,
            Poll::Pending => panic!("the in-memory store never waits"),
        }
    }

    fn kek(byte: u8) -> KeyEncryptionKey {
        KeyEncryptionKey::from_bytes([byte; 32])
    }

    #[test]
    fn material_reaches_the_store_sealed_and_comes_back_opened() {
        let plain = Arc::new(MemoryStore::new());
        let keys = EncryptedKeys::new(plain.clone(), &kek(7));
        let material = b"a signing key's private half";
        assert!(block_on(keys.insert_key("grantor:jwk:ES256:1", material, LATER, T0)).unwrap());
        let stored = block_on(plain.find_key("grantor:jwk:ES256:1", T0))
            .unwrap()
            .unwrap();
        assert!(
            !stored.windows(material.len()).any(|w| w == material),
            "the store holds ciphertext only"
        );
        let found = block_on(keys.find_key("grantor:jwk:ES256:1", T0)).unwrap();
        assert_eq!(found.as_deref(), Some(&material[..]));
    }

    #[test]
    fn material_stored_in_the_clear_or_under_another_key_or_name_is_refused() {
        let plain = Arc::new(MemoryStore::new());
        let keys = EncryptedKeys::new(plain.clone(), &kek(7));
        // Planted in the clear by someone who can write the database.
        block_on(plain.insert_key("grantor:seal:1", &[1; 32], LATER, T0)).unwrap();
        let error = block_on(keys.find_key("grantor:seal:1", T0)).unwrap_err();
        assert!(error.to_string().contains("grantor:seal:1"), "{error}");

        // Sealed under another host key.
        let other = EncryptedKeys::new(plain.clone(), &kek(8));
        block_on(other.insert_key("grantor:seal:2", &[2; 32], LATER, T0)).unwrap();
        assert!(block_on(keys.find_key("grantor:seal:2", T0)).is_err());

        // Copied from one name to another.
        block_on(keys.insert_key("grantor:seal:3", &[3; 32], LATER, T0)).unwrap();
        let sealed = block_on(plain.find_key("grantor:seal:3", T0))
            .unwrap()
            .unwrap();
        block_on(plain.insert_key("grantor:seal:4", &sealed, LATER, T0)).unwrap();
        assert!(block_on(keys.find_key("grantor:seal:4", T0)).is_err());
        assert!(block_on(keys.find_key("grantor:seal:3", T0)).is_ok());
    }

    #[test]
    fn a_key_encryption_key_is_32_bytes_of_base64_and_never_shown() {
        let encoded = KeyEncryptionKey::generate_base64().unwrap();
        assert!(KeyEncryptionKey::from_base64(&encoded).is_ok());
        assert!(KeyEncryptionKey::from_base64(encoded.trim_end_matches('=')).is_ok());
        assert!(KeyEncryptionKey::from_base64(&STANDARD.encode([0u8; 31])).is_err());
        assert!(KeyEncryptionKey::from_base64("not base64!").is_err());
        let error = KeyEncryptionKey::from_base64("c2VjcmV0").unwrap_err();
        assert!(!error.to_string().contains("c2VjcmV0"));
    }
}
