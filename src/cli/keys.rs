//! The `keys` commands: the JWT signing keys listed and rotated early, key material re-sealed
//! under a new key-encryption key. Key-encryption keys come from a file or the environment,
//! never the command line, and are never printed.

use std::path::PathBuf;
use std::sync::Arc;

use super::Failure;
use super::commands::KeyEncryption;
#[cfg(feature = "jwt")]
use crate::error::StoreError;
use crate::store::{KeyEncryptionKey, KeyStore};

/// `keys reseal` over `store`: the old key-encryption key as `old` names it (none: the store
/// is in the clear), the new one from `new_key_file` or GRANTOR_NEW_KEY_ENCRYPTION_KEY.
pub(super) async fn reseal<S: KeyStore>(
    store: &S,
    old: &KeyEncryption,
    new_key_file: Option<PathBuf>,
) -> Result<(), Failure> {
    let old = read_kek(old, "GRANTOR_KEY_ENCRYPTION_KEY")?;
    let new = KeyEncryption {
        key_file: new_key_file,
    };
    let new = read_kek(&new, "GRANTOR_NEW_KEY_ENCRYPTION_KEY")?.ok_or_else(|| {
        Failure::Refused(
            "no new key-encryption key: give --new-key-file or set \
             GRANTOR_NEW_KEY_ENCRYPTION_KEY"
                .to_owned(),
        )
    })?;
    let done = crate::store::reseal(store, old.as_ref(), &new, super::now())
        .await
        .map_err(|error| Failure::Refused(format!("nothing was re-sealed: {error}")))?;
    say!("sealed_from_clear: {}", done.from_clear);
    say!("resealed: {}", done.from_old_key);
    say!("sealed_already: {}", done.already);
    Ok(())
}

/// The key-encryption key `kek` names (its file), else the one in the environment variable
/// `variable`; `None` when neither is given. Whatever is wrong with it is said without it.
fn read_kek(kek: &KeyEncryption, variable: &str) -> Result<Option<KeyEncryptionKey>, Failure> {
    let (encoded, from) = match &kek.key_file {
        Some(path) => {
            let encoded = std::fs::read_to_string(path).map_err(|error| {
                Failure::Refused(format!("cannot read {}: {error}", path.display()))
            })?;
            (encoded, path.display().to_string())
        }
        None => match std::env::var(variable) {
            Ok(encoded) => (encoded, variable.to_owned()),
            Err(_) => return Ok(None),
        },
    };
    KeyEncryptionKey::from_base64(&encoded)
        .map(Some)
        .map_err(|error| Failure::Refused(format!("{from}: {error}")))
}

/// grantor's key seam over `store` as the server reads it: sealed under the key-encryption
/// key `kek` names, or in the clear without one.
pub(super) fn sealed<S: KeyStore + Clone + 'static>(
    store: &S,
    kek: &KeyEncryption,
) -> Result<Arc<dyn KeyStore>, Failure> {
    let inner: Arc<dyn KeyStore> = Arc::new(store.clone());
    Ok(match read_kek(kek, "GRANTOR_KEY_ENCRYPTION_KEY")? {
        Some(kek) => Arc::new(crate::store::EncryptedKeys::new(inner, &kek)),
        None => Arc::new(crate::store::ClearKeys(inner)),
    })
}

/// `keys list`: a line per signing key, never its material.
#[cfg(feature = "jwt")]
pub(super) async fn list(keys: &dyn KeyStore) -> Result<(), Failure> {
    let listed = crate::jwt::inventory::list(keys, super::now())
        .await
        .map_err(keys_failure)?;
    print_keys(&listed);
    Ok(())
}

/// `keys rotate`: the new current keys.
#[cfg(feature = "jwt")]
pub(super) async fn rotate(keys: &dyn KeyStore) -> Result<(), Failure> {
    let rotated = crate::jwt::inventory::rotate(keys, super::now())
        .await
        .map_err(keys_failure)?;
    if rotated.is_empty() {
        return Err(Failure::Refused(
            "no signing key is in use now: nothing to rotate".to_owned(),
        ));
    }
    print_keys(&rotated);
    Ok(())
}

#[cfg(feature = "jwt")]
fn print_keys(keys: &[crate::jwt::inventory::ListedKey]) {
    for key in keys {
        say!(
            "{}\t{}\t{}\t{}",
            key.kid,
            key.algorithm.as_str(),
            super::print::utc(key.created),
            key.state.as_str()
        );
    }
}

/// A key seam's failure: material that does not open is the administrator's to fix (the
/// message says how), anything else the database's.
#[cfg(feature = "jwt")]
fn keys_failure(error: StoreError) -> Failure {
    match error.kind() {
        crate::store::StoreErrorKind::Unavailable => Failure::Refused(error.to_string()),
        crate::store::StoreErrorKind::Failed => Failure::Store(error),
    }
}

#[cfg(not(feature = "jwt"))]
pub(super) async fn list(_keys: &dyn KeyStore) -> Result<(), Failure> {
    Err(no_jwt())
}

#[cfg(not(feature = "jwt"))]
pub(super) async fn rotate(_keys: &dyn KeyStore) -> Result<(), Failure> {
    Err(no_jwt())
}

#[cfg(not(feature = "jwt"))]
fn no_jwt() -> Failure {
    Failure::Refused("signing keys need grantor's jwt feature, which this build lacks".to_owned())
}
