//! The rules of the seams for state every node shares: [`SessionStore`], [`AttemptCounter`]
//! and [`SingleUseStore`], and purging them.

use std::time::Duration;

use futures_util::future::join_all;

use super::{Must as _, NOW, alice, at, digest, unique};
use crate::clock::UnixTime;
use crate::secret::SecretDigest;
use crate::store::{AttemptCounter, Attempts, Purge, Session, SessionStore, SingleUseStore};

/// A session for a pending authorization, nobody signed in, usable for a minute.
fn session() -> Session {
    // What grantor keeps is opaque to the store: any text, kept as it is.
    let authorization = format!(
        "{{\"state\":\"ünïcode & \\\"quotes\\\"\",\"n\":\"{}\"}}",
        unique()
    );
    Session::new(authorization, digest("csrf token"), at(60))
}

async fn find_session(
    store: &impl SessionStore,
    id: &SecretDigest,
    at: UnixTime,
) -> Option<Session> {
    store.find_session(id, at).await.must("find_session")
}

pub(super) async fn sessions_are_kept_under_the_digest_of_their_id<
    S: SessionStore + AttemptCounter + SingleUseStore,
>(
    store: &S,
) {
    let (id, pending) = (digest("session id"), session());
    let inserted = store.insert_session(&id, pending.clone(), NOW).await;
    inserted.must("insert_session");
    let (signed_in_id, signed_in) = (digest("session id"), session().signed_in(alice()));
    let inserted = store
        .insert_session(&signed_in_id, signed_in.clone(), NOW)
        .await;
    inserted.must("insert_session");

    assert_eq!(find_session(store, &id, NOW).await, Some(pending.clone()));
    assert_eq!(
        find_session(store, &id, at(59)).await,
        Some(pending),
        "finding took it"
    );
    assert_eq!(
        find_session(store, &signed_in_id, NOW).await,
        Some(signed_in)
    );
    let unknown = digest("session id");
    assert_eq!(
        find_session(store, &unknown, NOW).await,
        None,
        "an unknown id"
    );
    let taken = store.take_session(&unknown, NOW).await.must("take_session");
    assert_eq!(taken, None, "an unknown id");
}

pub(super) async fn a_session_taken_by_many_at_once_goes_to_exactly_one<S>(store: &S)
where
    S: SessionStore + AttemptCounter + SingleUseStore,
{
    let (id, pending) = (digest("session id"), session().signed_in(alice()));
    let inserted = store.insert_session(&id, pending.clone(), NOW).await;
    inserted.must("insert_session");
    let takes = join_all((0..50).map(|_| store.take_session(&id, NOW))).await;
    let mut taken = Vec::new();
    for take in takes {
        taken.extend(take.must("take_session"));
    }
    assert_eq!(
        taken,
        vec![pending],
        "of 50 callers, exactly one takes the session"
    );
    assert_eq!(
        find_session(store, &id, NOW).await,
        None,
        "a taken session is found"
    );
}

pub(super) async fn expired_sessions_are_neither_found_nor_taken<
    S: SessionStore + AttemptCounter + SingleUseStore,
>(
    store: &S,
) {
    let (id, pending) = (digest("session id"), session());
    let inserted = store.insert_session(&id, pending.clone(), NOW).await;
    inserted.must("insert_session");
    assert_eq!(
        find_session(store, &id, at(60)).await,
        None,
        "found at its expiry"
    );
    let taken = store.take_session(&id, at(60)).await.must("take_session");
    assert_eq!(taken, None, "taken at its expiry");
    let later = store.take_session(&id, at(61)).await.must("take_session");
    assert_eq!(later, None, "taken after its expiry");
}

const WINDOW: Duration = Duration::from_secs(600);

async fn attempt(store: &impl AttemptCounter, key: &str, now: UnixTime) -> Attempts {
    store
        .record_attempt(key, WINDOW, now)
        .await
        .must("record_attempt")
}

async fn attempts(store: &impl AttemptCounter, key: &str, now: UnixTime) -> Option<Attempts> {
    store.attempts(key, now).await.must("attempts")
}

pub(super) async fn concurrent_attempts_on_one_key_each_see_a_different_count<S>(store: &S)
where
    S: SessionStore + AttemptCounter + SingleUseStore,
{
    let key = format!("sign-in:{}", unique());
    let recorded = join_all((0..50).map(|_| store.record_attempt(&key, WINDOW, NOW))).await;
    let mut counts = Vec::new();
    for attempts in recorded {
        let attempts = attempts.must("record_attempt");
        assert_eq!(
            attempts.resets_at,
            at(600),
            "the window starts at the first attempt"
        );
        counts.push(attempts.count);
    }
    counts.sort_unstable();
    assert_eq!(
        counts,
        (1..=50).collect::<Vec<u32>>(),
        "each count seen once"
    );
    assert_eq!(
        attempts(store, &key, NOW).await,
        Some(Attempts::new(50, at(600)))
    );
    let other = format!("sign-in:{}", unique());
    assert_eq!(
        attempt(store, &other, NOW).await.count,
        1,
        "keys are counted apart"
    );
    assert_eq!(
        attempts(store, &key, at(1)).await,
        Some(Attempts::new(50, at(600)))
    );
}

pub(super) async fn a_new_attempt_window_starts_at_one_after_the_last_ends<S>(store: &S)
where
    S: SessionStore + AttemptCounter + SingleUseStore,
{
    let key = format!("sign-in:{}", unique());
    assert_eq!(
        attempts(store, &key, NOW).await,
        None,
        "a key never counted"
    );
    for _ in 0..3 {
        attempt(store, &key, NOW).await;
    }
    let fourth = attempt(store, &key, at(599)).await;
    assert_eq!(fourth, Attempts::new(4, at(600)), "within the window");
    assert_eq!(
        attempts(store, &key, at(600)).await,
        None,
        "the window is over"
    );
    let first = attempt(store, &key, at(600)).await;
    assert_eq!(first, Attempts::new(1, at(1200)), "a new window");
    assert_eq!(attempts(store, &key, at(600)).await, Some(first));
}

/// Keys grantor builds are at most 254 bytes; a key of that length is counted like any other.
pub(super) async fn an_attempt_key_of_254_bytes_is_counted<
    S: SessionStore + AttemptCounter + SingleUseStore,
>(
    store: &S,
) {
    let prefix = format!("client:{}:", unique());
    let key = format!("{prefix}{}", "k".repeat(254 - prefix.len()));
    assert_eq!(key.len(), 254);
    attempt(store, &key, NOW).await;
    assert_eq!(
        attempt(store, &key, NOW).await.count,
        2,
        "a long key's count"
    );
    store.clear_attempts(&key).await.must("clear_attempts");
    assert_eq!(attempts(store, &key, NOW).await, None);
}

pub(super) async fn clearing_attempts_forgets_them<
    S: SessionStore + AttemptCounter + SingleUseStore,
>(
    store: &S,
) {
    let (key, other) = (
        format!("sign-in:{}", unique()),
        format!("sign-in:{}", unique()),
    );
    attempt(store, &key, NOW).await;
    attempt(store, &key, NOW).await;
    attempt(store, &other, NOW).await;
    store.clear_attempts(&key).await.must("clear_attempts");
    assert_eq!(
        attempts(store, &key, NOW).await,
        None,
        "cleared attempts are counted"
    );
    assert_eq!(attempt(store, &key, at(1)).await, Attempts::new(1, at(601)));
    let kept = attempts(store, &other, NOW).await;
    assert_eq!(
        kept,
        Some(Attempts::new(1, at(600))),
        "another key was cleared"
    );
    let unknown = store.clear_attempts("sign-in:nobody").await;
    unknown.must("clear_attempts");
}

async fn peek(store: &impl SingleUseStore, key: &str, now: UnixTime) -> Option<Vec<u8>> {
    store.peek(key, now).await.must("peek")
}

async fn take(store: &impl SingleUseStore, key: &str, now: UnixTime) -> Option<Vec<u8>> {
    store.take(key, now).await.must("take")
}

async fn insert_once(store: &impl SingleUseStore, key: &str, value: &[u8], now: UnixTime) -> bool {
    let inserted = store.insert_once(key, value, at(60), now).await;
    inserted.must("insert_once")
}

pub(super) async fn of_many_concurrent_insert_once_exactly_one_wins<
    S: SessionStore + AttemptCounter + SingleUseStore,
>(
    store: &S,
) {
    let key = format!("dpop:{}", unique());
    let values: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i; 3]).collect();
    let inserts = values
        .iter()
        .map(|value| store.insert_once(&key, value, at(60), NOW));
    let mut winners = Vec::new();
    for (inserted, value) in join_all(inserts).await.into_iter().zip(&values) {
        if inserted.must("insert_once") {
            winners.push(value.clone());
        }
    }
    assert_eq!(
        winners.len(),
        1,
        "of 50 callers, {} kept a value",
        winners.len()
    );
    assert_eq!(
        peek(store, &key, NOW).await,
        winners.pop(),
        "the winner's value is kept"
    );
}

pub(super) async fn a_single_use_value_is_peeked_without_use_and_taken_once<S>(store: &S)
where
    S: SessionStore + AttemptCounter + SingleUseStore,
{
    let key = format!("par:{}", unique());
    let value = b"a pushed request \x00\xff".to_vec();
    assert!(insert_once(store, &key, &value, NOW).await);
    assert_eq!(peek(store, &key, NOW).await, Some(value.clone()));
    assert_eq!(
        peek(store, &key, at(59)).await,
        Some(value.clone()),
        "peeking used it"
    );
    assert!(
        !insert_once(store, &key, b"another", NOW).await,
        "a live key was taken over"
    );
    assert_eq!(peek(store, &key, NOW).await, Some(value.clone()));
    assert_eq!(take(store, &key, NOW).await, Some(value));
    assert_eq!(take(store, &key, NOW).await, None, "taken twice");
    assert_eq!(peek(store, &key, NOW).await, None, "peeked once taken");
    assert_eq!(take(store, "par:nobody", NOW).await, None, "an unknown key");

    let raced = format!("par:{}", unique());
    assert!(insert_once(store, &raced, b"raced", NOW).await);
    let takes = join_all((0..50).map(|_| store.take(&raced, NOW))).await;
    let mut taken = Vec::new();
    for value in takes {
        taken.extend(value.must("take"));
    }
    assert_eq!(
        taken,
        vec![b"raced".to_vec()],
        "of 50 callers, exactly one takes it"
    );
}

pub(super) async fn an_expired_single_use_value_is_gone_and_its_key_free_again<S>(store: &S)
where
    S: SessionStore + AttemptCounter + SingleUseStore,
{
    let key = format!("device:{}", unique());
    assert!(insert_once(store, &key, b"first", NOW).await);
    assert_eq!(
        peek(store, &key, at(60)).await,
        None,
        "peeked at its expiry"
    );
    let inserted = store.insert_once(&key, b"second", at(120), at(60)).await;
    assert!(
        inserted.must("insert_once"),
        "an expired value holds its key"
    );
    assert_eq!(peek(store, &key, at(60)).await, Some(b"second".to_vec()));

    let other = format!("device:{}", unique());
    assert!(insert_once(store, &other, b"value", NOW).await);
    assert_eq!(
        take(store, &other, at(60)).await,
        None,
        "taken at its expiry"
    );
}

pub(super) async fn purging_drops_expired_sessions_attempt_windows_and_single_use_values<S>(
    store: &S,
) where
    S: SessionStore + AttemptCounter + SingleUseStore + Purge,
{
    // One of each expires at NOW + 60, one of each lives on.
    let live = Session::new("live".to_owned(), digest("csrf token"), at(3600));
    let (live_id, expired_id) = (digest("session id"), digest("session id"));
    let inserted = store.insert_session(&live_id, live.clone(), NOW).await;
    inserted.must("insert_session");
    let inserted = store.insert_session(&expired_id, session(), NOW).await;
    inserted.must("insert_session");
    let (live_key, expired_key) = (format!("k:{}", unique()), format!("k:{}", unique()));
    let recorded = store
        .record_attempt(&expired_key, Duration::from_secs(60), NOW)
        .await;
    recorded.must("record_attempt");
    attempt(store, &live_key, NOW).await;
    assert!(insert_once(store, &expired_key, b"expired", NOW).await);
    let kept = store.insert_once(&live_key, b"live", at(3600), NOW).await;
    assert!(kept.must("insert_once"));

    let purged = store.purge_expired(at(60)).await.must("purge_expired");
    assert_eq!(
        purged, 3,
        "one session, one attempt window and one value expired"
    );
    let purged = store.purge_expired(at(60)).await.must("purge_expired");
    assert_eq!(purged, 0, "a second purge finds nothing more");
    assert_eq!(find_session(store, &live_id, at(60)).await, Some(live));
    assert_eq!(
        attempts(store, &live_key, at(60)).await,
        Some(Attempts::new(1, at(600)))
    );
    assert_eq!(peek(store, &live_key, at(60)).await, Some(b"live".to_vec()));
}
