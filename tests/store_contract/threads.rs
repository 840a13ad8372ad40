//! The contract's races, from threads: the contract joins its concurrent callers on one task,
//! which an in-memory store (that never awaits) answers one after the other. Here each caller
//! is a task of its own on a multi-threaded runtime, released together by a barrier, so the
//! memory store's locks are what keeps each step single.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use grantor::MemoryStore;
use grantor::store::SecretDigest;
use grantor::store::{
    AttemptCounter as _, CodeRedemption, Family, Rotation, Session, SessionStore as _,
    SingleUseStore as _, TokenIssuer as _,
};

use super::fixtures::{NOW, at, code_grant, family_id, tokens};

/// Runs `racers` calls of `call` at once, each a task of its own; answers their outcomes.
async fn race<T, F, Fut>(racers: usize, call: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let barrier = Arc::new(tokio::sync::Barrier::new(racers));
    let tasks: Vec<_> = (0..racers)
        .map(|i| {
            let (barrier, call) = (barrier.clone(), call(i));
            tokio::spawn(async move {
                barrier.wait().await;
                call.await
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(racers);
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    outcomes
}

pub async fn single_use_steps_hold_across_threads(store: MemoryStore) {
    let code = SecretDigest::of("code");
    store
        .insert_code(&code, family_id(), code_grant())
        .await
        .unwrap();
    let answers = race(100, |_| {
        let store = store.clone();
        async move { store.redeem_code(&code, NOW).await.unwrap() }
    })
    .await;
    let won = answers
        .iter()
        .filter(|a| matches!(a, CodeRedemption::Redeemed { .. }))
        .count();
    assert_eq!(won, 1, "redeemed by one of 100 threads");

    let family = family_id();
    let (first, [_, (_, refresh)]) = tokens(Family::New(family));
    store.insert_tokens(first).await.unwrap();
    let rotations = race(100, |_| {
        let store = store.clone();
        let (next, _) = tokens(Family::Existing(family));
        async move {
            store
                .rotate_refresh_token(&refresh, next, None)
                .await
                .unwrap()
        }
    })
    .await;
    let rotated = rotations
        .iter()
        .filter(|r| **r == Rotation::Rotated)
        .count();
    let reused = rotations
        .iter()
        .filter(|r| **r == Rotation::Reused { family })
        .count();
    assert_eq!((rotated, reused), (1, 99), "rotated by one of 100 threads");

    let id = SecretDigest::of("session");
    let expires_at = at(60);
    let session = Session::new("pending".to_owned(), SecretDigest::of("csrf"), expires_at);
    store.insert_session(&id, session, NOW).await.unwrap();
    let taken = race(50, |_| {
        let store = store.clone();
        async move { store.take_session(&id, NOW).await.unwrap() }
    })
    .await;
    assert_eq!(
        taken.iter().flatten().count(),
        1,
        "taken by one of 50 threads"
    );

    let kept = race(50, |i| {
        let store = store.clone();
        async move {
            let value = [i as u8];
            store
                .insert_once("once", &value, expires_at, NOW)
                .await
                .unwrap()
        }
    })
    .await;
    assert_eq!(
        kept.iter().filter(|k| **k).count(),
        1,
        "kept by one of 50 threads"
    );

    let mut counts: Vec<u32> = race(50, |_| {
        let store = store.clone();
        async move {
            let window = Duration::from_secs(60);
            store
                .record_attempt("key", window, NOW)
                .await
                .unwrap()
                .count
        }
    })
    .await;
    counts.sort_unstable();
    assert_eq!(
        counts,
        (1..=50).collect::<Vec<_>>(),
        "each count seen by one thread"
    );
}

/// 100 threads retry one lost rotation at once: none is taken for reuse, and exactly one pair
/// (access and current refresh token) stays live.
pub async fn concurrent_retries_leave_one_live_pair_across_threads(store: MemoryStore) {
    let family = family_id();
    let (first, [_, (_, r1)]) = tokens(Family::New(family));
    store.insert_tokens(first).await.unwrap();
    let (lost, lost_secrets) = tokens(Family::Existing(family));
    let rotation = store.rotate_refresh_token(&r1, lost, Some(NOW)).await;
    assert_eq!(rotation.unwrap(), Rotation::Rotated);
    let retries: Vec<_> = (0..100).map(|_| tokens(Family::Existing(family))).collect();
    let records: Vec<_> = retries.iter().map(|(record, _)| record.clone()).collect();
    let records = Arc::new(records);
    let answers = race(100, |i| {
        let (store, records) = (store.clone(), records.clone());
        async move {
            let next = records[i].clone();
            store
                .rotate_refresh_token(&r1, next, Some(NOW))
                .await
                .unwrap()
        }
    })
    .await;
    assert!(
        answers
            .iter()
            .all(|a| matches!(a, Rotation::Retried | Rotation::Invalid)),
        "{answers:?}"
    );
    let mut pairs = vec![lost_secrets];
    pairs.extend(retries.into_iter().map(|(_, secrets)| secrets));
    let (mut live_access, mut current_refresh) = (0, 0);
    for [(_, access), (_, refresh)] in &pairs {
        live_access += usize::from(
            store
                .find_access_token(access, NOW)
                .await
                .unwrap()
                .is_some(),
        );
        let found = store.find_refresh_token(refresh, NOW).await.unwrap();
        current_refresh += usize::from(found.is_some_and(|g| !g.rotated));
    }
    assert_eq!((live_access, current_refresh), (1, 1), "one live pair");
}
