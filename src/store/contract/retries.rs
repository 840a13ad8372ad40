//! The rules of refresh retries and family ends: a retry of the rotation a lost answer carried
//! leaves exactly one live pair; anything else rotated is reuse; a family past its end is gone.

use futures_util::future::join_all;

use super::tokens::{access_found, new_tokens, refresh_found, successor};
use super::{Minted, Must as _, at, authorization};
use crate::clock::UnixTime;
use crate::secret::SecretDigest;
use crate::store::{CodeRedemption, Family, Rotation, TokenIssuer};

async fn rotate(
    store: &impl TokenIssuer,
    token: &SecretDigest,
    next: &Minted,
    retry_since: Option<UnixTime>,
) -> Rotation {
    let rotation = store.rotate_refresh_token(token, next.record.clone(), retry_since);
    rotation.await.must("rotate_refresh_token")
}

pub(super) async fn a_retry_within_the_window_moves_on_and_leaves_one_live_pair<S>(store: &S)
where
    S: TokenIssuer,
{
    let first = new_tokens(store, true).await;
    let (family, r1) = (first.family(), first.refresh());
    let lost = successor(family, "profile", at(10));
    assert_eq!(
        rotate(store, &r1, &lost, Some(at(0))).await,
        Rotation::Rotated
    );
    // The answer carrying `lost` never arrived: the client presents r1 again.
    let retry = successor(family, "profile", at(15));
    let answer = rotate(store, &r1, &retry, Some(at(5))).await;
    assert_eq!(answer, Rotation::Retried, "a retry of the last rotation");
    assert!(
        !access_found(store, &lost.access, at(15)).await,
        "the lost access token lives"
    );
    assert!(access_found(store, &retry.access, at(15)).await);
    let stale = store.find_refresh_token(&lost.refresh(), at(15)).await;
    assert!(
        stale.must("find_refresh_token").is_some_and(|g| g.rotated),
        "the lost refresh"
    );
    let current = store.find_refresh_token(&retry.refresh(), at(15)).await;
    assert!(
        current
            .must("find_refresh_token")
            .is_some_and(|g| !g.rotated)
    );
    // The lost refresh token is no retry (it is not what the current one replaced): reuse.
    let (lost_refresh, other) = (lost.refresh(), successor(family, "profile", at(16)));
    let reuse = rotate(store, &lost_refresh, &other, Some(at(5))).await;
    assert_eq!(reuse, Rotation::Reused { family });
    // Another retry of r1 within the window gives way once more.
    let again = successor(family, "profile", at(17));
    assert_eq!(
        rotate(store, &r1, &again, Some(at(5))).await,
        Rotation::Retried
    );
    assert!(!access_found(store, &retry.access, at(17)).await);
    assert!(access_found(store, &again.access, at(17)).await);
    // The current one rotates as usual; r1 is now older than the replaced one: reuse.
    let next = successor(family, "profile", at(18));
    assert_eq!(
        rotate(store, &again.refresh(), &next, Some(at(5))).await,
        Rotation::Rotated
    );
    let late = successor(family, "profile", at(19));
    assert_eq!(
        rotate(store, &r1, &late, Some(at(0))).await,
        Rotation::Reused { family }
    );
    assert!(
        !access_found(store, &late.access, at(19)).await,
        "reuse kept a successor"
    );
}

pub(super) async fn a_retry_past_the_window_or_without_one_is_reuse<S: TokenIssuer>(store: &S) {
    for since in [Some(at(11)), None] {
        let first = new_tokens(store, true).await;
        let (family, r1) = (first.family(), first.refresh());
        let lost = successor(family, "profile", at(10));
        assert_eq!(rotate(store, &r1, &lost, since).await, Rotation::Rotated);
        let retry = successor(family, "profile", at(20));
        let answer = rotate(store, &r1, &retry, since).await;
        assert_eq!(
            answer,
            Rotation::Reused { family },
            "retry window {since:?}"
        );
        assert!(
            access_found(store, &lost.access, at(20)).await,
            "the store revoked"
        );
        assert!(
            !access_found(store, &retry.access, at(20)).await,
            "reuse kept a successor"
        );
    }
}

pub(super) async fn concurrent_retries_leave_exactly_one_live_pair<S: TokenIssuer>(store: &S) {
    let first = new_tokens(store, true).await;
    let (family, r1) = (first.family(), first.refresh());
    let lost = successor(family, "profile", at(10));
    assert_eq!(
        rotate(store, &r1, &lost, Some(at(0))).await,
        Rotation::Rotated
    );
    let retries: Vec<Minted> = (0..20)
        .map(|_| successor(family, "profile", at(12)))
        .collect();
    let answers = join_all(
        retries
            .iter()
            .map(|next| rotate(store, &r1, next, Some(at(5)))),
    )
    .await;
    let retried = answers.iter().filter(|a| **a == Rotation::Retried).count();
    assert!(retried >= 1, "no retry won: {answers:?}");
    for answer in &answers {
        assert!(
            matches!(answer, Rotation::Retried | Rotation::Invalid),
            "a concurrent retry answered {answer:?}"
        );
    }
    let mut live = usize::from(access_found(store, &lost.access, at(12)).await);
    let mut current = 0;
    for next in &retries {
        live += usize::from(access_found(store, &next.access, at(12)).await);
        let found = store.find_refresh_token(&next.refresh(), at(12)).await;
        current += usize::from(found.must("find_refresh_token").is_some_and(|g| !g.rotated));
    }
    assert_eq!((live, current), (1, 1), "one live pair after {answers:?}");
}

pub(super) async fn a_family_past_its_end_is_gone_and_its_end_never_moves<S>(store: &S)
where
    S: TokenIssuer,
{
    let mut first = Minted::now(Family::New(super::family_id()), true);
    first.record = first.record.clone().with_family_end(at(100));
    store
        .insert_tokens(first.record.clone())
        .await
        .must("insert_tokens");
    let (family, r1) = (first.family(), first.refresh());
    let found = store.find_refresh_token(&r1, at(50)).await;
    let found = found.must("find_refresh_token");
    assert_eq!(found.and_then(|g| g.family_ends_at), Some(at(100)));
    // A later end handed on with a successor does not move it.
    let mut next = successor(family, "profile", at(60));
    next.record = next.record.clone().with_family_end(at(1_000));
    assert_eq!(rotate(store, &r1, &next, None).await, Rotation::Rotated);
    let found = store.find_refresh_token(&next.refresh(), at(99)).await;
    let found = found.must("find_refresh_token");
    assert_eq!(
        found.and_then(|g| g.family_ends_at),
        Some(at(100)),
        "the end moved"
    );
    assert!(
        !refresh_found(store, &next.refresh(), at(100)).await,
        "found past its end"
    );
    let late = successor(family, "profile", at(100));
    let answer = rotate(store, &next.refresh(), &late, None).await;
    assert_eq!(answer, Rotation::Invalid, "rotated past its end");
}

pub(super) async fn tokens_joining_a_code_family_fix_its_end<S>(store: &S)
where
    S: TokenIssuer,
{
    // A code starts the family; the tokens of its exchange join it and bring its end.
    let (code, family) = super::tokens::new_code(store).await;
    let redeemed = store.redeem_code(&code, at(10)).await.must("redeem_code");
    assert!(matches!(redeemed, CodeRedemption::Redeemed { .. }));
    let mut joined = Minted::new(Family::Existing(family), authorization(), true, at(10));
    joined.record = joined.record.clone().with_family_end(at(100));
    store
        .insert_tokens(joined.record.clone())
        .await
        .must("insert_tokens");
    let found = store.find_refresh_token(&joined.refresh(), at(50)).await;
    let found = found.must("find_refresh_token");
    assert_eq!(found.as_ref().map(|g| g.rotated), Some(false));
    assert_eq!(found.and_then(|g| g.family_ends_at), Some(at(100)));
    assert!(
        !refresh_found(store, &joined.refresh(), at(100)).await,
        "found past its end"
    );
}
