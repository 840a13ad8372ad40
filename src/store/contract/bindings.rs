//! The rules of DPoP bindings (RFC 9449): a store keeps the key thumbprint an access token and
//! a refresh token are bound to, each its own, and gives it back.

use super::{ContractStore, Minted, Must as _, NOW, at, family_id};
use crate::store::{Family, JwkThumbprint, Rotation};

/// A token's key (thumbprints are hashes of public keys; any 32 bytes will do).
fn key(byte: u8) -> JwkThumbprint {
    JwkThumbprint::from_bytes([byte; 32])
}

/// Access and refresh tokens each keep the key they were bound to, through a rotation to a
/// successor with keys of its own; an unbound token reads as unbound.
pub(super) async fn each_token_keeps_the_dpop_key_it_was_bound_to<S: ContractStore>(store: &S) {
    let mut bound = Minted::now(Family::New(family_id()), true);
    bound.record = bound.record.bound_to(Some(key(1)));
    let refresh = bound
        .record
        .refresh_token
        .take()
        .map(|r| r.bound_to(Some(key(2))));
    bound.record.refresh_token = refresh;
    store
        .insert_tokens(bound.record.clone())
        .await
        .must("insert_tokens");
    let access = store.find_access_token(&bound.access, NOW).await;
    let access = access.must("find_access_token").map(|grant| grant.jkt);
    assert_eq!(access, Some(Some(key(1))), "the access token's key");
    let refresh = store.find_refresh_token(&bound.refresh(), NOW).await;
    let refresh = refresh.must("find_refresh_token").map(|grant| grant.jkt);
    assert_eq!(refresh, Some(Some(key(2))), "the refresh token's key");

    // The successor: a bearer access token, its refresh token bound to another key.
    let mut successor = Minted::new(
        Family::Existing(bound.family()),
        bound.record.authorization.clone(),
        true,
        at(10),
    );
    let refresh = successor.record.refresh_token.take();
    successor.record.refresh_token = refresh.map(|r| r.bound_to(Some(key(3))));
    let rotation = store
        .rotate_refresh_token(&bound.refresh(), successor.record.clone(), None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Rotated);
    let access = store.find_access_token(&successor.access, at(10)).await;
    let access = access.must("find_access_token").map(|grant| grant.jkt);
    assert_eq!(access, Some(None), "an unbound access token reads unbound");
    let refresh = store.find_refresh_token(&successor.refresh(), at(10)).await;
    let refresh = refresh.must("find_refresh_token").map(|grant| grant.jkt);
    assert_eq!(refresh, Some(Some(key(3))), "the successor's refresh key");
    let old = store.find_access_token(&bound.access, at(10)).await;
    let old = old.must("find_access_token").map(|grant| grant.jkt);
    assert_eq!(
        old,
        Some(Some(key(1))),
        "the first access token keeps its key"
    );
}
