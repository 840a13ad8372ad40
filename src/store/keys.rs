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
/// with JWT access tokens or ID tokens, sign tokens the server's own JWKS verifies. Have grantor
/// encrypt it first
/// ([`AuthorizationServerBuilder::encrypt_keys_at_rest`](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)),
/// so that the store holds only ciphertext bound to each name, or keep it out of backups and
/// replicas that others read and say so
/// ([`keys_in_clear`](crate::AuthorizationServerBuilder::keys_in_clear)): over a store that
/// [is durable](Self::is_durable), the builder asks for one or the other.
/// In memory (the material is lost on restart, so the store says it is not durable and the
/// builder asks nothing about keys at rest; a database's table is durable):
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// use grantor::async_trait;
/// use grantor::clock::UnixTime;
/// use grantor::store::{KeyStore, StoreError};
///
/// #[derive(Default)]
/// struct Keys(Mutex<HashMap<String, (Vec<u8>, UnixTime)>>);
///
/// #[async_trait]
/// impl KeyStore for Keys {
///     async fn insert_key(&self, name: &str, material: &[u8], expires_at: UnixTime, now: UnixTime)
///         -> Result<bool, StoreError> {
///         let mut keys = self.0.lock().unwrap();
///         if keys.get(name).is_some_and(|(_, until)| *until > now) {
///             return Ok(false); // the first writer's key stays: every node signs with it
///         }
///         keys.insert(name.to_owned(), (material.to_vec(), expires_at));
///         Ok(true)
///     }
///     async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
///         let keys = self.0.lock().unwrap();
///         Ok(keys.get(name).filter(|(_, until)| *until > now).map(|(m, _)| m.clone()))
///     }
///     fn is_durable(&self) -> bool {
///         false
///     }
/// }
/// # let _ = Keys::default();
/// ```
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

    /// Every name holding live material at `now`, with when it expires, in name order: what an
    /// administrator lists and re-seals (`grantor keys`), never a request's path. The names are
    /// grantor's own, a few dozen at most. The default refuses ([`StoreError::failed`]), so a
    /// store of the host's own that cannot list says so.
    async fn key_names(&self, now: UnixTime) -> Result<Vec<(String, UnixTime)>, StoreError> {
        let _ = now;
        Err(StoreError::failed(
            "this key store cannot list its names (key_names)",
        ))
    }

    /// Replaces the live material under `name` with `material`, its expiry unchanged: how
    /// `grantor keys reseal` puts material sealed under a new key-encryption key in place.
    /// `false` when no live material holds the name. Never called while serving. The default
    /// refuses ([`StoreError::failed`]).
    async fn replace_key(
        &self,
        name: &str,
        material: &[u8],
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let _ = (name, material, now);
        Err(StoreError::failed(
            "this key store cannot replace material (replace_key)",
        ))
    }

    /// Whether what this store keeps outlives the process, in a file or a database that others
    /// may read, copy or back up: `true` unless the store says otherwise (grantor's
    /// [`MemoryStore`](crate::MemoryStore) does). Over a durable key store the builder asks the
    /// host to choose how keys rest: encrypted
    /// ([`encrypt_keys_at_rest`](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)) or
    /// in the clear ([`keys_in_clear`](crate::AuthorizationServerBuilder::keys_in_clear)).
    fn is_durable(&self) -> bool {
        true
    }
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

/// Whether `stored` is in the sealed format (its version byte, a nonce and a tag at least).
/// Nothing grantor keeps in the clear looks so: a sealing key is 32 bytes, a generated signing
/// key its algorithm's tag and 32 bytes (an RSA key starts with DER's `0x30`), a DPoP nonce
/// ASCII text.
fn looks_sealed(stored: &[u8]) -> bool {
    stored.first() == Some(&SEALED_V1) && stored.len() >= 1 + NONCE_LEN + 16
}

/// The name under which material made to replace the material kept in the clear under `name`
/// (from before encryption was turned on) is kept, sealed: the same kind of key
/// ([`namespace::kind`](super::namespace::kind)), so the same bound.
fn resealed(name: &str) -> String {
    format!("{name}:resealed")
}

/// A [`KeyStore`] that seals material under the host's [`KeyEncryptionKey`] before handing it
/// to the store behind, and opens what it finds.
///
/// Material found **in the clear** (kept before encryption was turned on, or planted by someone
/// who writes the database) is never used: `find_key` answers nothing for it, so grantor makes
/// fresh material, which is kept sealed under a name of its own beside it
/// ([`resealed`]) until the clear material expires. The key is rotated rather than re-sealed,
/// since a re-sealed key would be one anyone who wrote the database could have chosen: tokens
/// signed with the clear key stop verifying, forms sealed with it are asked again, and nothing
/// answers an error. Material in the sealed format that **does not open** (sealed under another
/// key-encryption key, moved from another name, or altered) is
/// [`StoreError::unavailable`] with a message saying what to do, never used and never replaced:
/// replacing it would split nodes that hold the right key from one that does not.
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

    /// Opens material found sealed under `name`.
    fn open(&self, name: &str, stored: &[u8]) -> Result<Vec<u8>, StoreError> {
        let refused = || {
            StoreError::unavailable(format!(
                "the key material under `{name}` does not open under the key-encryption key \
                 (sealed under another key, moved from another name, or altered): give \
                 encrypt_keys_at_rest the key it was sealed with, or delete `{name}` from the \
                 key table (grantor_keys) so that a fresh key is made"
            ))
        };
        if !looks_sealed(stored) {
            return Err(refused());
        }
        let (nonce, sealed) = stored[1..].split_at(NONCE_LEN);
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

    /// The sealed material made to replace what rests in the clear under `name` in `store`,
    /// if it has been made.
    async fn replacement(
        &self,
        store: &dyn KeyStore,
        name: &str,
        now: UnixTime,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let replaced = resealed(name);
        match store.find_key(&replaced, now).await? {
            Some(stored) => self.open(&replaced, &stored).map(Some),
            None => Ok(None),
        }
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
        if self
            .inner
            .insert_key(name, &sealed, expires_at, now)
            .await?
        {
            return Ok(true);
        }
        // The name is held: by sealed material (another node made it first), or by material
        // kept in the clear before encryption was turned on, which fresh material replaces.
        match self.inner.find_key(name, now).await? {
            Some(stored) if !looks_sealed(&stored) => {
                let replaced = resealed(name);
                tracing::warn!(
                    name,
                    "key material kept in the clear (from before encryption at rest was turned \
                     on) is replaced by a fresh key kept encrypted; the clear one is never used \
                     again and goes when it expires (or delete it from the key table)"
                );
                let sealed = self.seal(&replaced, material)?;
                self.inner
                    .insert_key(&replaced, &sealed, expires_at, now)
                    .await
            }
            _ => Ok(false),
        }
    }

    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        match self.inner.find_key(name, now).await? {
            Some(stored) if looks_sealed(&stored) => self.open(name, &stored).map(Some),
            Some(_) => self.replacement(&*self.inner, name, now).await,
            None => Ok(None),
        }
    }

    async fn key_names(&self, now: UnixTime) -> Result<Vec<(String, UnixTime)>, StoreError> {
        self.inner.key_names(now).await
    }

    fn is_durable(&self) -> bool {
        self.inner.is_durable()
    }
}

/// A [`KeyStore`] whose material rests in the clear (no key-encryption key given): material
/// found sealed (encryption was on, and the key-encryption key is missing now) is
/// [`StoreError::unavailable`] with a message saying what to do, rather than a key grantor
/// cannot parse.
pub(crate) struct ClearKeys(pub(crate) Arc<dyn KeyStore>);

#[async_trait]
impl KeyStore for ClearKeys {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        self.0.insert_key(name, material, expires_at, now).await
    }

    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        match self.0.find_key(name, now).await? {
            Some(stored) if looks_sealed(&stored) => Err(StoreError::unavailable(format!(
                "the key material under `{name}` is encrypted at rest, and no key-encryption \
                 key was given: give encrypt_keys_at_rest the key it was sealed with (or delete \
                 `{name}` from the key table, grantor_keys, so that a fresh key is made)"
            ))),
            found => Ok(found),
        }
    }

    async fn key_names(&self, now: UnixTime) -> Result<Vec<(String, UnixTime)>, StoreError> {
        self.0.key_names(now).await
    }

    fn is_durable(&self) -> bool {
        self.0.is_durable()
    }
}

#[cfg(feature = "cli")]
/// What `grantor keys reseal` did: how many names it sealed from the clear, re-sealed from
/// the old key-encryption key, and found sealed under the new one already (a re-run).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resealed {
    pub(crate) from_clear: usize,
    pub(crate) from_old_key: usize,
    pub(crate) already: usize,
}

#[cfg(feature = "cli")]
/// Re-seals every piece of material `store` (the store itself, not a sealing wrapper) holds
/// under `new`: material sealed under `old` is opened and sealed again, material in the clear
/// is sealed (an administrator's choice, unlike the server's, which never trusts clear
/// material once encryption is on), and material sealed under `new` already is left, so an
/// interrupted run can be run again. Every name is opened before any is written: material that
/// opens under neither key refuses the whole run, naming it, and nothing changes. A clear name
/// the server replaced (`<name>:resealed`, see [`EncryptedKeys`]) takes its replacement's
/// material, so the key in use stays the one in use.
pub(crate) async fn reseal(
    store: &dyn KeyStore,
    old: Option<&KeyEncryptionKey>,
    new: &KeyEncryptionKey,
    now: UnixTime,
) -> Result<Resealed, StoreError> {
    let new_keys = EncryptedKeys::new(Arc::new(NoStore), new);
    let old_keys = old.map(|old| EncryptedKeys::new(Arc::new(NoStore), old));
    let names = store.key_names(now).await?;
    let mut done = Resealed::default();
    let mut writes = Vec::with_capacity(names.len());
    for (name, _) in &names {
        let Some(stored) = store.find_key(name, now).await? else {
            continue;
        };
        if looks_sealed(&stored) && new_keys.open(name, &stored).is_ok() {
            done.already += 1;
            continue;
        }
        let material = if looks_sealed(&stored) {
            let Some(old_keys) = &old_keys else {
                return Err(StoreError::failed(format!(
                    "the key material under `{name}` is sealed: give the key-encryption key it \
                     was sealed with as the old key"
                )));
            };
            done.from_old_key += 1;
            old_keys.open(name, &stored)?
        } else {
            done.from_clear += 1;
            match &old_keys {
                // The server never used this clear material: its replacement is the key.
                Some(old_keys) => old_keys
                    .replacement(store, name, now)
                    .await?
                    .unwrap_or(stored),
                None => stored,
            }
        };
        writes.push((name, new_keys.seal(name, &material)?));
    }
    for (name, sealed) in writes {
        store.replace_key(name, &sealed, now).await?;
    }
    Ok(done)
}

#[cfg(feature = "cli")]
/// A store that keeps nothing: what [`reseal`]'s sealers stand on, as they only seal and open.
struct NoStore;

#[cfg(feature = "cli")]
#[async_trait]
impl KeyStore for NoStore {
    async fn insert_key(
        &self,
        _name: &str,
        _material: &[u8],
        _expires_at: UnixTime,
        _now: UnixTime,
    ) -> Result<bool, StoreError> {
        Ok(false)
    }

    async fn find_key(&self, _name: &str, _now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(None)
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
    fn material_in_the_clear_is_never_used_and_fresh_material_replaces_it_sealed() {
        let plain = Arc::new(MemoryStore::new());
        let keys = EncryptedKeys::new(plain.clone(), &kek(7));
        // Kept in the clear before encryption was turned on (or planted by a writer).
        block_on(plain.insert_key("grantor:seal:1", &[1; 32], LATER, T0)).unwrap();
        assert_eq!(block_on(keys.find_key("grantor:seal:1", T0)).unwrap(), None);
        // The caller makes fresh material: kept sealed beside the clear one, and found.
        assert!(block_on(keys.insert_key("grantor:seal:1", &[9; 32], LATER, T0)).unwrap());
        let found = block_on(keys.find_key("grantor:seal:1", T0)).unwrap();
        assert_eq!(found.as_deref(), Some(&[9; 32][..]));
        // Of two makers, the second reads the first's.
        assert!(!block_on(keys.insert_key("grantor:seal:1", &[8; 32], LATER, T0)).unwrap());
        let found = block_on(keys.find_key("grantor:seal:1", T0)).unwrap();
        assert_eq!(found.as_deref(), Some(&[9; 32][..]));
        let resealed = block_on(plain.find_key("grantor:seal:1:resealed", T0))
            .unwrap()
            .unwrap();
        assert!(looks_sealed(&resealed));
        // Once the clear material is gone, the name is made again as usual.
        assert_eq!(
            block_on(keys.find_key("grantor:seal:1", LATER)).unwrap(),
            None
        );
    }

    #[test]
    fn material_sealed_under_another_key_or_name_is_refused_with_what_to_do() {
        use crate::store::StoreErrorKind;
        let plain = Arc::new(MemoryStore::new());
        let keys = EncryptedKeys::new(plain.clone(), &kek(7));
        // Sealed under another host key: not used, not replaced, and the error says what to do.
        let other = EncryptedKeys::new(plain.clone(), &kek(8));
        block_on(other.insert_key("grantor:seal:2", &[2; 32], LATER, T0)).unwrap();
        let error = block_on(keys.find_key("grantor:seal:2", T0)).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Unavailable);
        let said = error.to_string();
        assert!(said.contains("grantor:seal:2"), "{said}");
        assert!(
            said.contains("encrypt_keys_at_rest") && said.contains("grantor_keys"),
            "{said}"
        );
        assert!(!block_on(keys.insert_key("grantor:seal:2", &[3; 32], LATER, T0)).unwrap());
        assert!(block_on(keys.find_key("grantor:seal:2", T0)).is_err());
        assert!(block_on(other.find_key("grantor:seal:2", T0)).is_ok());

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
    fn sealed_material_without_a_key_encryption_key_says_to_give_it() {
        use crate::store::StoreErrorKind;
        let plain = Arc::new(MemoryStore::new());
        let sealed = EncryptedKeys::new(plain.clone(), &kek(7));
        block_on(sealed.insert_key("grantor:jwk:ES256:1", &[5; 33], LATER, T0)).unwrap();
        let clear = ClearKeys(plain.clone());
        let error = block_on(clear.find_key("grantor:jwk:ES256:1", T0)).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Unavailable);
        assert!(
            error.to_string().contains("encrypt_keys_at_rest"),
            "{error}"
        );
        // What grantor keeps in the clear never looks sealed.
        block_on(plain.insert_key("grantor:seal:5", &[0xE1; 32], LATER, T0)).unwrap();
        assert!(
            block_on(clear.find_key("grantor:seal:5", T0))
                .unwrap()
                .is_some()
        );
    }

    #[cfg(feature = "cli")]
    #[test]
    fn resealing_seals_clear_material_and_moves_sealed_material_to_the_new_key() {
        let plain = Arc::new(MemoryStore::new());
        block_on(plain.insert_key("grantor:seal:1", &[1; 32], LATER, T0)).unwrap();
        block_on(plain.insert_key("grantor:jwk:ES256:1", &[2; 33], LATER, T0)).unwrap();
        // A database in the clear, sealed.
        let done = block_on(reseal(&*plain, None, &kek(7), T0)).unwrap();
        assert_eq!(
            (done.from_clear, done.from_old_key, done.already),
            (2, 0, 0)
        );
        let sealed = EncryptedKeys::new(plain.clone(), &kek(7));
        let found = block_on(sealed.find_key("grantor:seal:1", T0)).unwrap();
        assert_eq!(found.as_deref(), Some(&[1; 32][..]), "the same key, sealed");
        let stored = block_on(plain.find_key("grantor:seal:1", T0))
            .unwrap()
            .unwrap();
        assert!(looks_sealed(&stored));
        assert!(block_on(ClearKeys(plain.clone()).find_key("grantor:seal:1", T0)).is_err());

        // Under another key: a wrong old key changes nothing; the right one moves all.
        let wrong = block_on(reseal(&*plain, Some(&kek(9)), &kek(8), T0)).unwrap_err();
        assert!(wrong.to_string().contains("grantor:"), "{wrong}");
        assert!(block_on(sealed.find_key("grantor:seal:1", T0)).is_ok());
        let done = block_on(reseal(&*plain, Some(&kek(7)), &kek(8), T0)).unwrap();
        assert_eq!(
            (done.from_clear, done.from_old_key, done.already),
            (0, 2, 0)
        );
        assert!(block_on(sealed.find_key("grantor:seal:1", T0)).is_err());
        let resealed = EncryptedKeys::new(plain.clone(), &kek(8));
        let found = block_on(resealed.find_key("grantor:jwk:ES256:1", T0)).unwrap();
        assert_eq!(found.as_deref(), Some(&[2; 33][..]));
        // Run again: nothing to do.
        let done = block_on(reseal(&*plain, Some(&kek(7)), &kek(8), T0)).unwrap();
        assert_eq!(
            (done.from_clear, done.from_old_key, done.already),
            (0, 0, 2)
        );
    }

    #[cfg(feature = "cli")]
    #[test]
    fn resealing_keeps_the_key_the_server_replaced_clear_material_with() {
        let plain = Arc::new(MemoryStore::new());
        block_on(plain.insert_key("grantor:seal:1", &[1; 32], LATER, T0)).unwrap();
        let sealed = EncryptedKeys::new(plain.clone(), &kek(7));
        // The server made a fresh key beside the clear one, and uses it.
        assert!(block_on(sealed.insert_key("grantor:seal:1", &[9; 32], LATER, T0)).unwrap());
        block_on(reseal(&*plain, Some(&kek(7)), &kek(8), T0)).unwrap();
        let resealed = EncryptedKeys::new(plain.clone(), &kek(8));
        let found = block_on(resealed.find_key("grantor:seal:1", T0)).unwrap();
        assert_eq!(
            found.as_deref(),
            Some(&[9; 32][..]),
            "the key in use, not the clear one"
        );
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
