//! The key seam's rules: key material kept once under its name, found until it expires, and
//! purged after.

use futures_util::future::join_all;

use super::{Must as _, NOW, at, unique};
use crate::clock::UnixTime;
use crate::store::{KeyStore, Purge};

fn name(kind: &str) -> String {
    format!("grantor:{kind}:{}", unique())
}

async fn find(store: &impl KeyStore, name: &str, now: UnixTime) -> Option<Vec<u8>> {
    store.find_key(name, now).await.must("find_key")
}

pub(super) async fn key_material_is_kept_once_under_its_name_and_found_until_it_expires<
    S: KeyStore,
>(
    store: &S,
) {
    let seal = name("seal");
    // Key material is binary and may be a few KiB (an RSA private key).
    let material: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    let kept = store.insert_key(&seal, &material, at(60), NOW).await;
    assert!(kept.must("insert_key"), "a free name was refused");
    assert_eq!(find(store, &seal, NOW).await, Some(material.clone()));
    assert_eq!(
        find(store, &seal, at(59)).await,
        Some(material.clone()),
        "finding it used it up"
    );
    let again = store.insert_key(&seal, b"another key", at(120), NOW).await;
    assert!(!again.must("insert_key"), "a live key was replaced");
    assert_eq!(find(store, &seal, NOW).await, Some(material));
    assert_eq!(
        find(store, &seal, at(60)).await,
        None,
        "found at its expiry"
    );
    assert_eq!(
        find(store, &name("jwk"), NOW).await,
        None,
        "an unknown name"
    );
}

pub(super) async fn an_expired_key_frees_its_name<S: KeyStore>(store: &S) {
    let nonce = name("dpop-nonce");
    let first = store.insert_key(&nonce, b"first", at(60), NOW).await;
    assert!(first.must("insert_key"));
    let second = store.insert_key(&nonce, b"second", at(120), at(60)).await;
    assert!(second.must("insert_key"), "an expired key holds its name");
    assert_eq!(find(store, &nonce, at(60)).await, Some(b"second".to_vec()));
}

pub(super) async fn of_many_first_callers_one_keeps_its_key_and_all_find_it<S: KeyStore>(
    store: &S,
) {
    let jwk = name("jwk");
    let candidates: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i; 32]).collect();
    let inserts = candidates
        .iter()
        .map(|material| store.insert_key(&jwk, material, at(60), NOW));
    let mut kept = Vec::new();
    for (inserted, material) in join_all(inserts).await.into_iter().zip(&candidates) {
        if inserted.must("insert_key") {
            kept.push(material.clone());
        }
    }
    assert_eq!(kept.len(), 1, "of 50 callers, {} kept a key", kept.len());
    let found = join_all((0..10).map(|_| store.find_key(&jwk, NOW))).await;
    for found in found {
        assert_eq!(
            found.must("find_key"),
            kept.first().cloned(),
            "a node saw another key"
        );
    }
}

pub(super) async fn purging_drops_expired_keys_and_keeps_live_ones<S: KeyStore + Purge>(store: &S) {
    let (old, live) = (name("seal"), name("seal"));
    store
        .insert_key(&old, b"yesterday", at(60), NOW)
        .await
        .must("insert_key");
    store
        .insert_key(&live, b"today", at(3600), NOW)
        .await
        .must("insert_key");
    let purged = store.purge_expired(at(60)).await.must("purge_expired");
    assert!(purged >= 1, "purging removed {purged} rows");
    assert_eq!(find(store, &live, at(60)).await, Some(b"today".to_vec()));
    // Purged, so the name is free even for a store that keeps expired rows until purged.
    let reused = store.insert_key(&old, b"again", at(120), at(60)).await;
    assert!(reused.must("insert_key"));
}

pub(super) async fn live_names_are_listed_and_material_replaced_in_place<S: KeyStore>(store: &S) {
    let (seal, jwk, gone) = (name("seal"), name("jwk"), name("seal"));
    for (key, until) in [(&seal, at(3600)), (&jwk, at(7200)), (&gone, at(60))] {
        let kept = store.insert_key(key, b"material", until, NOW).await;
        assert!(kept.must("insert_key"));
    }
    let listed = store.key_names(at(60)).await.must("key_names");
    let mine: Vec<&(String, UnixTime)> = listed
        .iter()
        .filter(|(listed, _)| [&seal, &jwk, &gone].contains(&listed))
        .collect();
    let mut expected = [(seal.clone(), at(3600)), (jwk.clone(), at(7200))];
    expected.sort();
    assert_eq!(
        mine,
        expected.iter().collect::<Vec<_>>(),
        "the live names with their expiry, by name (not an expired one)"
    );
    let replaced = store.replace_key(&seal, b"resealed", NOW).await;
    assert!(
        replaced.must("replace_key"),
        "live material was not replaced"
    );
    assert_eq!(
        find(store, &seal, at(3599)).await,
        Some(b"resealed".to_vec())
    );
    assert_eq!(
        find(store, &seal, at(3600)).await,
        None,
        "its expiry changed"
    );
    let expired = store.replace_key(&gone, b"resealed", at(60)).await;
    assert!(
        !expired.must("replace_key"),
        "expired material was replaced"
    );
    let unknown = store.replace_key(&name("jwk"), b"resealed", NOW).await;
    assert!(!unknown.must("replace_key"), "a free name took material");
}
