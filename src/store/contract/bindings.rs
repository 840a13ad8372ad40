//! The rules of what a token is bound to: a store keeps the DPoP key thumbprint (RFC 9449) or
//! the client certificate thumbprint (RFC 8705) an access token and a refresh token are bound
//! to, each its own, and the actor (RFC 8693 §4.1) of an access token issued by delegation, and
//! gives them back.

use super::{Minted, Must as _, NOW, at, family_id};
use crate::mtls::CertificateThumbprint;
use crate::store::{Actor, Family, JwkThumbprint, Rotation, TokenBinding, TokenIssuer};

/// A token's key (thumbprints are hashes of public keys; any 32 bytes will do).
fn key(byte: u8) -> Option<TokenBinding> {
    Some(TokenBinding::Dpop(JwkThumbprint::from_bytes([byte; 32])))
}

/// A token's client certificate (any 32 bytes will do), the same bytes as [`key`]'s so a store
/// that kept only the bytes would be caught.
fn certificate(byte: u8) -> Option<TokenBinding> {
    Some(TokenBinding::Certificate(
        CertificateThumbprint::from_bytes([byte; 32]),
    ))
}

/// Access and refresh tokens each keep the key they were bound to, through a rotation to a
/// successor with keys of its own; an unbound token reads as unbound.
pub(super) async fn each_token_keeps_the_dpop_key_it_was_bound_to<S: TokenIssuer>(store: &S) {
    let mut bound = Minted::now(Family::New(family_id()), true);
    bound.record = bound.record.bound_to(key(1));
    let refresh = bound
        .record
        .refresh_token
        .take()
        .map(|r| r.bound_to(key(2)));
    bound.record.refresh_token = refresh;
    store
        .insert_tokens(bound.record.clone())
        .await
        .must("insert_tokens");
    let access = store.find_access_token(&bound.access, NOW).await;
    let access = access.must("find_access_token").map(|grant| grant.binding);
    assert_eq!(access, Some(key(1)), "the access token's key");
    let refresh = store.find_refresh_token(&bound.refresh(), NOW).await;
    let refresh = refresh
        .must("find_refresh_token")
        .map(|grant| grant.binding);
    assert_eq!(refresh, Some(key(2)), "the refresh token's key");

    // The successor: a bearer access token, its refresh token bound to another key.
    let mut successor = Minted::new(
        Family::Existing(bound.family()),
        bound.record.authorization.clone(),
        true,
        at(10),
    );
    let refresh = successor.record.refresh_token.take();
    successor.record.refresh_token = refresh.map(|r| r.bound_to(key(3)));
    let rotation = store
        .rotate_refresh_token(&bound.refresh(), successor.record.clone(), None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Rotated);
    let access = store.find_access_token(&successor.access, at(10)).await;
    let access = access.must("find_access_token").map(|grant| grant.binding);
    assert_eq!(access, Some(None), "an unbound access token reads unbound");
    let refresh = store.find_refresh_token(&successor.refresh(), at(10)).await;
    let refresh = refresh
        .must("find_refresh_token")
        .map(|grant| grant.binding);
    assert_eq!(refresh, Some(key(3)), "the successor's refresh key");
    let old = store.find_access_token(&bound.access, at(10)).await;
    let old = old.must("find_access_token").map(|grant| grant.binding);
    assert_eq!(old, Some(key(1)), "the first access token keeps its key");
}

/// Access and refresh tokens bound to client certificates keep them, each its own, through a
/// rotation whose successor is bound to a certificate too (a public client's refresh, RFC
/// 8705 §4); a certificate's binding never reads back as a DPoP key of the same bytes.
pub(super) async fn each_token_keeps_the_certificate_it_was_bound_to<S: TokenIssuer>(store: &S) {
    let mut bound = Minted::now(Family::New(family_id()), true);
    bound.record = bound.record.bound_to(certificate(1));
    let refresh = bound.record.refresh_token.take();
    bound.record.refresh_token = refresh.map(|r| r.bound_to(certificate(2)));
    store
        .insert_tokens(bound.record.clone())
        .await
        .must("insert_tokens");
    let access = store.find_access_token(&bound.access, NOW).await;
    let access = access.must("find_access_token").map(|grant| grant.binding);
    assert_eq!(
        access,
        Some(certificate(1)),
        "the access token's certificate"
    );
    let refresh = store.find_refresh_token(&bound.refresh(), NOW).await;
    let refresh = refresh
        .must("find_refresh_token")
        .map(|grant| grant.binding);
    assert_eq!(
        refresh,
        Some(certificate(2)),
        "the refresh token's certificate"
    );

    let mut successor = Minted::new(
        Family::Existing(bound.family()),
        bound.record.authorization.clone(),
        true,
        at(10),
    );
    successor.record = successor.record.bound_to(certificate(2));
    let refresh = successor.record.refresh_token.take();
    successor.record.refresh_token = refresh.map(|r| r.bound_to(certificate(2)));
    let rotation = store
        .rotate_refresh_token(&bound.refresh(), successor.record.clone(), None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Rotated);
    let access = store.find_access_token(&successor.access, at(10)).await;
    let access = access.must("find_access_token").map(|grant| grant.binding);
    assert_eq!(access, Some(certificate(2)), "the successor's certificate");
    let refresh = store.find_refresh_token(&successor.refresh(), at(10)).await;
    let refresh = refresh
        .must("find_refresh_token")
        .map(|grant| grant.binding);
    assert_eq!(
        refresh,
        Some(certificate(2)),
        "the successor's refresh certificate"
    );
    let old = store.find_access_token(&bound.access, at(10)).await;
    let old = old.must("find_access_token").map(|grant| grant.binding);
    assert_eq!(
        old,
        Some(certificate(1)),
        "the first access token keeps its certificate"
    );
}

/// An access token issued by delegation (RFC 8693) keeps its actor, a chain of them as deep as
/// [`Actor::MAX_DEPTH`] whole and in order; another token of the same authorization reads as
/// having none.
pub(super) async fn an_access_token_keeps_its_actor<S: TokenIssuer>(store: &S) {
    let mut chain = Actor::new("prior-7").must_exist();
    for depth in (0..Actor::MAX_DEPTH - 1).rev() {
        chain = Actor::new(&format!("actor {depth} \"quoted\""))
            .must_exist()
            .then(&chain)
            .must_exist();
    }
    let delegated = Minted::now(Family::New(family_id()), false);
    let record = delegated.record.clone().acting(Some(chain.clone()));
    store.insert_tokens(record).await.must("insert_tokens");
    let plain = Minted::now(Family::New(family_id()), false);
    store
        .insert_tokens(plain.record.clone())
        .await
        .must("insert_tokens");
    let found = store.find_access_token(&delegated.access, NOW).await;
    let found = found.must("find_access_token").map(|grant| grant.actor);
    assert_eq!(
        found,
        Some(Some(chain)),
        "the delegated token's actor chain"
    );
    let found = store.find_access_token(&plain.access, NOW).await;
    let found = found.must("find_access_token").map(|grant| grant.actor);
    assert_eq!(
        found,
        Some(None),
        "a token without an actor reads without one"
    );
}

/// A value the rule built itself and knows is there.
trait MustExist<T> {
    fn must_exist(self) -> T;
}

impl<T> MustExist<T> for Option<T> {
    #[track_caller]
    fn must_exist(self) -> T {
        match self {
            Some(value) => value,
            None => panic!("the rule built an invalid actor"),
        }
    }
}
