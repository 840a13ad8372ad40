//! The rules of expiry: what expired is never found, and purging drops exactly that.

use super::tokens::{access_found, new_code, new_tokens, redeem, refresh_found, successor};
use super::{Minted, Must as _, NOW, at, digest, family_id};
use crate::clock::UnixTime;
use crate::store::{Family, Purge, Rotation, TokenIssuer};

pub(super) async fn expired_codes_and_tokens_are_not_found<S: TokenIssuer>(store: &S) {
    let (code, _) = new_code(store).await;
    assert_eq!(
        redeem(store, &code, at(60)).await,
        "invalid",
        "an expired code"
    );
    let (code, _) = new_code(store).await;
    assert_eq!(
        redeem(store, &code, at(59)).await,
        "redeemed",
        "a code before its expiry"
    );
    let unknown = digest("never issued");
    assert_eq!(redeem(store, &unknown, NOW).await, "invalid");

    let tokens = new_tokens(store, true).await;
    assert!(access_found(store, &tokens.access, at(3599)).await);
    assert!(
        !access_found(store, &tokens.access, at(3600)).await,
        "an expired access token"
    );
    let refresh = tokens.refresh();
    let found = refresh_found(store, &refresh, at(3600)).await;
    assert!(found, "the refresh token outlives the access token");
    assert!(
        !refresh_found(store, &refresh, at(86_400)).await,
        "an expired refresh token"
    );
    let late = successor(tokens.family(), "profile", at(86_400));
    let rotation = store
        .rotate_refresh_token(&refresh, late.record.clone(), None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Invalid);
    assert!(!access_found(store, &late.access, at(86_400)).await);
}

pub(super) async fn purging_drops_what_expired_or_was_revoked_and_keeps_the_rest<S>(store: &S)
where
    S: TokenIssuer + Purge,
{
    let purge = |now: UnixTime| async move { store.purge_expired(now).await.must("purge_expired") };
    // A: an access token for an hour. B: an access token for two hours and a refresh token.
    let short = new_tokens(store, false).await;
    let mut long = Minted::now(Family::New(family_id()), true);
    long.record.access_expires_at = at(7200);
    let record = long.record.clone();
    store.insert_tokens(record).await.must("insert_tokens");
    // C: a redeemed code (a tombstone, for replays). D: a code never redeemed.
    let (redeemed, _) = new_code(store).await;
    assert_eq!(redeem(store, &redeemed, NOW).await, "redeemed");
    let (unredeemed, _) = new_code(store).await;
    // E: a revoked family.
    let revoked = new_tokens(store, true).await;
    store
        .revoke_family(revoked.family())
        .await
        .must("revoke_family");

    assert!(purge(NOW).await >= 2, "E's tokens go at once");
    assert_eq!(purge(NOW).await, 0, "a second purge finds nothing more");
    assert!(
        access_found(store, &short.access, NOW).await,
        "A went early"
    );
    assert!(access_found(store, &long.access, NOW).await, "B went early");
    assert_eq!(
        redeem(store, &redeemed, NOW).await,
        "replayed",
        "C went early"
    );

    let hour = at(3600);
    assert!(purge(hour).await >= 2, "A and D go after an hour");
    assert_eq!(redeem(store, &unredeemed, hour).await, "invalid");
    assert_eq!(
        redeem(store, &redeemed, hour).await,
        "replayed",
        "C stays an hour"
    );
    assert!(
        access_found(store, &long.access, hour).await,
        "B went early"
    );

    let later = at(3660);
    assert!(purge(later).await >= 1, "C's hour is over");
    assert_eq!(
        redeem(store, &redeemed, later).await,
        "invalid",
        "C's tombstone stays"
    );
    assert!(
        access_found(store, &long.access, later).await,
        "B went early"
    );
    assert!(
        refresh_found(store, &long.refresh(), later).await,
        "B went early"
    );

    let day = at(86_400);
    assert!(
        purge(day).await >= 2,
        "B goes once its refresh token expired"
    );
    assert_eq!(purge(day).await, 0, "a second purge finds nothing more");
}
