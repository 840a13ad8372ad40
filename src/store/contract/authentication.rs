//! The rules of how a family's user signed in ([`UserAuthentication`]): a property of the
//! family, which a store keeps from the code or the tokens that start it and answers with every
//! code and token of it, through rotations (a refresh keeps the original sign-in, OIDC Core
//! §12.2).

use std::time::Duration;

use super::tokens::successor;
use super::{Minted, Must as _, NOW, at, authorization, code_grant, digest, family_id};
use crate::clock::UnixTime;
use crate::oidc::{MAX_CLAIM_NAME_BYTES, MAX_REQUESTED_CLAIMS};
use crate::store::{
    Authorization, CodeRedemption, Family, MAX_SID_BYTES, Rotation, TokenIssuer, UserAuthentication,
};

/// A sign-in two minutes ago at the class `urn:grantor:acr:mfa` by a password and a one-time
/// code, and as many more methods as one may have, the last as long as one may be.
fn strong_sign_in() -> UserAuthentication {
    let mut amr: Vec<String> = ["pwd", "otp", "hwk", "user", "pin", "mfa", "sms"]
        .map(str::to_owned)
        .to_vec();
    // The longest method, with characters a store must not mangle.
    amr.push(format!("\"é\"\\{}", "m".repeat(MAX_SID_BYTES - 5)));
    let signed_in = UserAuthentication::new(NOW.minus(Duration::from_secs(120)))
        .with_acr(Some("urn:grantor:acr:mfa".to_owned()))
        .with_amr(amr)
        .with_userinfo_claims(&most_claims());
    assert_eq!(
        signed_in.amr().len(),
        UserAuthentication::MAX_AMR,
        "the rule's sign-in keeps every method"
    );
    assert_eq!(signed_in.userinfo_claims().len(), MAX_REQUESTED_CLAIMS);
    signed_in
}

/// As many claims as an authorization request may name for userinfo, as long as may be.
fn most_claims() -> Vec<String> {
    (0..MAX_REQUESTED_CLAIMS)
        .map(|i| format!("{i:02}{}", "c".repeat(MAX_CLAIM_NAME_BYTES - 2)))
        .collect()
}

/// What a store answers of the token `found` as `what`: how its user signed in.
#[track_caller]
fn signed_in(found: Option<Authorization>, what: &str) -> Option<UserAuthentication> {
    match found {
        Some(authorization) => authorization.authentication,
        None => panic!("{what} is not found"),
    }
}

/// A code kept with its user's sign-in answers it when redeemed; the tokens exchanged for it
/// (access, refresh, found by either lookup) answer it too, and so do the successors of a
/// rotation, whose scope and audience are narrower.
pub(super) async fn a_family_keeps_how_its_user_signed_in_through_its_code_and_rotations<S>(
    store: &S,
) where
    S: TokenIssuer,
{
    let sign_in = strong_sign_in();
    let mut grant = code_grant();
    grant.authorization = grant
        .authorization
        .with_authentication(Some(sign_in.clone()));
    let (code, family) = (digest("code"), family_id());
    store
        .insert_code(&code, family, grant)
        .await
        .must("insert_code");
    let redemption = store.redeem_code(&code, NOW).await.must("redeem_code");
    let CodeRedemption::Redeemed { grant, .. } = redemption else {
        panic!("a fresh code answered {redemption:?}");
    };
    let expected = Some(sign_in.clone());
    assert_eq!(grant.authorization.authentication, expected, "the code's");

    // The tokens the code is exchanged for, handed the code's authorization as grantor does.
    let tokens = Minted::new(
        Family::Existing(family),
        grant.authorization.clone(),
        true,
        NOW,
    );
    let record = tokens.record.clone();
    store.insert_tokens(record).await.must("insert_tokens");
    let found = store.find_access_token(&tokens.access, NOW).await;
    let found = found.must("find_access_token").map(|g| g.authorization);
    assert_eq!(
        signed_in(found, "the access token"),
        expected,
        "find_access_token"
    );
    let found = store.check_access_token(&tokens.access, NOW).await;
    let found = found.must("check_access_token").map(|g| g.authorization);
    assert_eq!(
        signed_in(found, "the access token"),
        expected,
        "check_access_token"
    );
    let found = store.find_refresh_token(&tokens.refresh(), NOW).await;
    let found = found.must("find_refresh_token").map(|g| g.authorization);
    assert_eq!(
        signed_in(found, "the refresh token"),
        expected,
        "find_refresh_token"
    );

    // A refresh: the successor carries the family's sign-in, as grantor hands it on.
    let mut next = successor(family, "profile", at(10));
    next.record.authorization = next
        .record
        .authorization
        .with_authentication(Some(sign_in.clone()));
    let rotation = store
        .rotate_refresh_token(&tokens.refresh(), next.record.clone(), None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Rotated);
    let found = store.find_access_token(&next.access, at(10)).await;
    let found = found.must("find_access_token").map(|g| g.authorization);
    assert_eq!(
        signed_in(found, "the successor"),
        expected,
        "the successor's"
    );
    let found = store.find_refresh_token(&next.refresh(), at(10)).await;
    let found = found.must("find_refresh_token").map(|g| g.authorization);
    assert_eq!(
        signed_in(found, "the successor"),
        expected,
        "its refresh token's"
    );
    let found = store.find_refresh_token(&tokens.refresh(), at(10)).await;
    let found = found.must("find_refresh_token").map(|g| g.authorization);
    assert_eq!(
        signed_in(found, "the rotated token"),
        expected,
        "the rotated one's"
    );
}

/// Tokens starting a family of their own (a password grant, with and without a refresh
/// token; a device flow; a token exchange) keep their user's sign-in, each its own; a family
/// without a sign-in (a client acting for itself) answers none.
pub(super) async fn new_families_keep_their_sign_in_and_a_client_s_own_has_none<S>(store: &S)
where
    S: TokenIssuer,
{
    let by_password = |at: UnixTime| UserAuthentication::new(at).with_amr(["pwd"]);
    let mut kept = Vec::new();
    for (n, refresh) in [(1, false), (2, true), (3, false)] {
        let sign_in = by_password(NOW.minus(Duration::from_secs(n)));
        let authorization = authorization().with_authentication(Some(sign_in.clone()));
        let tokens = Minted::new(Family::New(family_id()), authorization, refresh, NOW);
        let record = tokens.record.clone();
        store.insert_tokens(record).await.must("insert_tokens");
        kept.push((tokens, sign_in));
    }
    // A sign-in of a named class by no method grantor knows, without a refresh token.
    let bare = UserAuthentication::new(NOW).with_acr(Some("urn:example:loa:2".to_owned()));
    let authorization = authorization().with_authentication(Some(bare.clone()));
    let tokens = Minted::new(Family::New(family_id()), authorization, false, NOW);
    let record = tokens.record.clone();
    store.insert_tokens(record).await.must("insert_tokens");
    kept.push((tokens, bare));
    for (tokens, sign_in) in &kept {
        let found = store.find_access_token(&tokens.access, NOW).await;
        let found = found.must("find_access_token").map(|g| g.authorization);
        assert_eq!(
            signed_in(found, "a new family's access token"),
            Some(sign_in.clone()),
            "each new family's own sign-in"
        );
        if let Some(refresh) = tokens.refresh {
            let found = store.find_refresh_token(&refresh, NOW).await;
            let found = found.must("find_refresh_token").map(|g| g.authorization);
            assert_eq!(
                signed_in(found, "a new family's refresh token"),
                Some(sign_in.clone())
            );
        }
    }

    let mut own = Minted::now(Family::New(family_id()), false);
    own.record.authorization.user = None;
    store
        .insert_tokens(own.record.clone())
        .await
        .must("insert_tokens");
    let found = store.find_access_token(&own.access, NOW).await;
    let found = found.must("find_access_token").map(|g| g.authorization);
    assert_eq!(
        signed_in(found, "a client's own token"),
        None,
        "a family without a sign-in answers none"
    );
}
