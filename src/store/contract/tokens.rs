//! The rules of [`TokenIssuer`]: codes, access and refresh tokens, families.

use futures_util::future::join_all;

use super::{
    Minted, Must as _, NOW, at, audience, authorization, code_grant, digest, family_id, scope,
};
use crate::clock::UnixTime;
use crate::error::StoreErrorKind;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::store::{
    Authorization, CodeRedemption, Family, FamilyId, JwkThumbprint, Rotation, SignInFacts,
    TokenIssuer,
};

/// Keeps a new code for [`code_grant`] in a new family; answers its digest and family.
pub(super) async fn new_code(store: &impl TokenIssuer) -> (SecretDigest, FamilyId) {
    let (code, family) = (digest("code"), family_id());
    store
        .insert_code(&code, family, code_grant())
        .await
        .must("insert_code");
    (code, family)
}

/// Keeps new tokens in a new family for [`authorization`].
pub(super) async fn new_tokens(store: &impl TokenIssuer, refresh: bool) -> Minted {
    let tokens = Minted::now(Family::New(family_id()), refresh);
    store
        .insert_tokens(tokens.record.clone())
        .await
        .must("insert_tokens");
    tokens
}

/// A successor for a rotation in `family`, with an access token for `scope` and one resource
/// of the family's audience (a narrower scope and audience, RFC 6749 §6, RFC 8707 §2.2).
pub(super) fn successor(family: FamilyId, access_scope: &str, issued_at: UnixTime) -> Minted {
    let authorization = authorization();
    let authorization = Authorization::new(
        authorization.client_id,
        authorization.user,
        scope(access_scope),
    )
    .with_audience(audience("https://files.example/"));
    Minted::new(Family::Existing(family), authorization, true, issued_at)
}

pub(super) async fn redeem(
    store: &impl TokenIssuer,
    code: &SecretDigest,
    at: UnixTime,
) -> &'static str {
    match store.redeem_code(code, at).await.must("redeem_code") {
        CodeRedemption::Redeemed { .. } => "redeemed",
        CodeRedemption::Replayed { .. } => "replayed",
        _ => "invalid",
    }
}

pub(super) async fn access_found(
    store: &impl TokenIssuer,
    token: &SecretDigest,
    at: UnixTime,
) -> bool {
    let found = store.find_access_token(token, at).await;
    found.must("find_access_token").is_some()
}

pub(super) async fn refresh_found(
    store: &impl TokenIssuer,
    token: &SecretDigest,
    at: UnixTime,
) -> bool {
    let found = store.find_refresh_token(token, at).await;
    found.must("find_refresh_token").is_some()
}

/// Asserts that nothing of a revoked `family` works: its access tokens and refresh token are
/// not found, and the refresh token neither rotates nor keeps a successor.
async fn assert_family_dead(
    store: &impl TokenIssuer,
    family: FamilyId,
    accesses: &[&SecretDigest],
    refresh: &SecretDigest,
) {
    for access in accesses {
        let found = access_found(store, access, NOW).await;
        assert!(!found, "an access token of a revoked family is found");
    }
    let found = refresh_found(store, refresh, NOW).await;
    assert!(!found, "a refresh token of a revoked family is found");
    let next = successor(family, "profile", NOW);
    let rotation = store
        .rotate_refresh_token(refresh, next.record.clone(), None)
        .await;
    assert_eq!(
        rotation.must("rotate_refresh_token"),
        Rotation::Invalid,
        "a refresh token of a revoked family rotates"
    );
    let kept = access_found(store, &next.access, NOW).await;
    assert!(!kept, "a refused rotation kept its successor");
}

pub(super) async fn a_code_redeemed_by_100_callers_at_once_is_won_by_exactly_one<S>(store: &S)
where
    S: TokenIssuer,
{
    let (code, family) = new_code(store).await;
    let answers = join_all((0..100).map(|_| store.redeem_code(&code, NOW))).await;
    let (mut won, mut replayed) = (0, 0);
    for answer in answers {
        match answer.must("redeem_code") {
            CodeRedemption::Redeemed { family: f, .. } => {
                won += 1;
                assert_eq!(f, family, "the redemption names the code's family");
            }
            CodeRedemption::Replayed { family: f } => {
                replayed += 1;
                assert_eq!(f, family, "a replay names the code's family");
            }
            other => panic!("a live code answered {other:?}"),
        }
    }
    assert_eq!((won, replayed), (1, 99), "(redeemed, replayed)");
}

/// Many lookups at once, as a busy resource server makes them, are each answered their own: a
/// store that shares one statement among concurrent lookups must not mix them up, must answer a
/// token looked up twice twice, and must judge each lookup's expiry at its own time.
pub(super) async fn concurrent_lookups_are_each_answered_their_own<S>(store: &S)
where
    S: TokenIssuer,
{
    let mut live = Vec::new();
    for i in 0..10 {
        let base = authorization();
        let granted = Authorization::new(base.client_id, base.user, scope(&format!("scope-{i}")))
            .with_audience(audience("https://files.example/"));
        let tokens = Minted::new(Family::New(family_id()), granted, false, NOW);
        let record = tokens.record.clone();
        store.insert_tokens(record).await.must("insert_tokens");
        live.push(tokens.access);
    }
    let revoked = new_tokens(store, false).await;
    store
        .revoke_family(revoked.family())
        .await
        .must("revoke_family");
    let unknown = digest("never issued");
    // An hour's token, looked up within its hour and after it.
    let ending = live[0];
    let mut lookups: Vec<(SecretDigest, UnixTime, Option<String>)> = Vec::new();
    for (i, token) in live.iter().enumerate() {
        for _ in 0..2 {
            lookups.push((*token, NOW, Some(format!("scope-{i}"))));
        }
    }
    lookups.push((ending, at(3599), Some("scope-0".to_owned())));
    lookups.push((ending, at(3601), None));
    lookups.push((revoked.access, NOW, None));
    lookups.push((unknown, NOW, None));
    let answers = join_all(
        lookups
            .iter()
            .map(|(token, when, _)| store.find_access_token(token, *when)),
    )
    .await;
    for ((_, when, expected), answer) in lookups.iter().zip(answers) {
        let scope = answer
            .must("find_access_token")
            .map(|grant| grant.authorization.scope.as_str().to_owned());
        assert_eq!(
            &scope,
            expected,
            "a lookup at {when:?} among {} at once",
            lookups.len()
        );
    }
}

pub(super) async fn a_replayed_code_names_its_family_and_revoking_it_kills_its_tokens<S>(store: &S)
where
    S: TokenIssuer,
{
    let (code, family) = new_code(store).await;
    let redemption = store.redeem_code(&code, NOW).await.must("redeem_code");
    let CodeRedemption::Redeemed { family: f, grant } = redemption else {
        panic!("the first redemption answered {redemption:?}");
    };
    assert_eq!(f, family);
    assert_eq!(grant.authorization, authorization());
    let tokens = Minted::now(Family::Existing(family), true);
    let record = tokens.record.clone();
    store.insert_tokens(record).await.must("insert_tokens");
    // Replays are recognized past the code's expiry too.
    for when in [NOW, at(600)] {
        let replay = store.redeem_code(&code, when).await.must("redeem_code");
        let CodeRedemption::Replayed { family: f } = replay else {
            panic!("a second redemption answered {replay:?}");
        };
        assert_eq!(f, family, "the replay names the family");
    }
    assert!(access_found(store, &tokens.access, NOW).await);
    // The store revokes only when grantor says so.
    store.revoke_family(family).await.must("revoke_family");
    assert_family_dead(store, family, &[&tokens.access], &tokens.refresh()).await;
    // Revoking twice, or a family nobody knows, is fine.
    store.revoke_family(family).await.must("revoke_family");
    store.revoke_family(family_id()).await.must("revoke_family");
}

pub(super) async fn a_refresh_token_rotated_by_many_at_once_rotates_once_and_keeps_one_successor<
    S,
>(
    store: &S,
) where
    S: TokenIssuer,
{
    for racers in [2, 100] {
        let first = new_tokens(store, true).await;
        let (family, refresh) = (first.family(), first.refresh());
        let successors: Vec<Minted> = (0..racers)
            .map(|_| successor(family, "profile", NOW))
            .collect();
        let rotations = successors
            .iter()
            .map(|next| store.rotate_refresh_token(&refresh, next.record.clone(), None));
        let (mut rotated, mut reused) = (0, 0);
        for rotation in join_all(rotations).await {
            match rotation.must("rotate_refresh_token") {
                Rotation::Rotated => rotated += 1,
                Rotation::Reused { family: f } => {
                    reused += 1;
                    assert_eq!(f, family, "reuse names the family");
                }
                other => panic!("{racers} racers: a current refresh token answered {other:?}"),
            }
        }
        assert_eq!((rotated, reused), (1, racers - 1), "{racers} racers");
        // Reuse is reported, not acted on: grantor revokes, the store does not.
        let found = access_found(store, &first.access, NOW).await;
        assert!(found, "{racers} racers: the store revoked on its own");
        let (mut accesses, mut refreshes) = (0, 0);
        for next in &successors {
            accesses += usize::from(access_found(store, &next.access, NOW).await);
            refreshes += usize::from(refresh_found(store, &next.refresh(), NOW).await);
        }
        assert_eq!(
            (accesses, refreshes),
            (1, 1),
            "{racers} racers: only the winner's successor is kept"
        );
    }
}

pub(super) async fn rotation_hands_on_the_family_and_reuse_is_reported_not_revoked<S>(store: &S)
where
    S: TokenIssuer,
{
    let first = new_tokens(store, true).await;
    let (family, old) = (first.family(), first.refresh());
    let found = store
        .find_refresh_token(&old, NOW)
        .await
        .must("find_refresh_token");
    let Some(found) = found else {
        panic!("a new refresh token is not found");
    };
    assert!(!found.rotated);
    assert_eq!(found.authorization, authorization());
    assert_eq!(found.family, family);
    assert_eq!((found.issued_at, found.expires_at), (NOW, at(86_400)));

    // A narrower access scope (RFC 6749 §6); the refresh token keeps the family's.
    let second = successor(family, "email", at(10));
    let rotation = store
        .rotate_refresh_token(&old, second.record.clone(), None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Rotated);
    let access = store.find_access_token(&second.access, at(10)).await;
    let Some(access) = access.must("find_access_token") else {
        panic!("the successor's access token is not found");
    };
    assert_eq!(access.authorization.scope.as_str(), "email");
    assert_eq!(
        access.authorization.audience.as_str(),
        "https://files.example/",
        "an access token keeps its own audience, narrower than its family's"
    );
    assert_eq!(access.authorization.user, authorization().user);
    assert_eq!(access.family, family);
    assert_eq!(access.issued_at, at(10));
    let new = second.refresh();
    let found = store.find_refresh_token(&new, at(10)).await;
    let Some(found) = found.must("find_refresh_token") else {
        panic!("the successor's refresh token is not found");
    };
    assert!(!found.rotated);
    assert_eq!(found.authorization.scope, authorization().scope);
    assert_eq!(
        found.authorization.audience,
        authorization().audience,
        "a refresh token keeps its family's audience"
    );
    assert_eq!((found.issued_at, found.expires_at), (at(10), at(86_410)));
    let found = store.find_refresh_token(&old, at(10)).await;
    let Some(found) = found.must("find_refresh_token") else {
        panic!("a rotated refresh token is not found");
    };
    assert!(found.rotated, "the old token reads as rotated");

    // The successor rotates in turn; the old token is reuse, reported with its family.
    let third = successor(family, "profile", at(20));
    let rotation = store
        .rotate_refresh_token(&new, third.record.clone(), None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Rotated);
    let fourth = successor(family, "profile", at(30));
    let reuse = store
        .rotate_refresh_token(&old, fourth.record.clone(), None)
        .await;
    assert_eq!(
        reuse.must("rotate_refresh_token"),
        Rotation::Reused { family }
    );
    assert!(
        !access_found(store, &fourth.access, NOW).await,
        "reuse kept a successor"
    );
    assert!(
        access_found(store, &third.access, at(30)).await,
        "the store revoked on its own"
    );
    let newest = third.refresh();
    assert!(
        refresh_found(store, &newest, at(30)).await,
        "the store revoked on its own"
    );

    // grantor revokes the family after the reuse.
    store.revoke_family(family).await.must("revoke_family");
    let accesses = [&first.access, &second.access, &third.access];
    assert_family_dead(store, family, &accesses, &newest).await;
    let unknown = digest("never issued");
    let next = successor(family, "profile", NOW);
    let rotation = store
        .rotate_refresh_token(&unknown, next.record, None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Invalid);
}

pub(super) async fn revoking_a_family_or_an_access_token_reaches_only_it<S>(store: &S)
where
    S: TokenIssuer,
{
    let doomed = new_tokens(store, true).await;
    let kept = new_tokens(store, true).await;
    store
        .revoke_family(doomed.family())
        .await
        .must("revoke_family");
    assert!(!access_found(store, &doomed.access, NOW).await);
    assert!(!refresh_found(store, &doomed.refresh(), NOW).await);
    assert!(
        access_found(store, &kept.access, NOW).await,
        "another family was revoked"
    );
    assert!(
        refresh_found(store, &kept.refresh(), NOW).await,
        "another family was revoked"
    );

    // One access token revoked (RFC 7009 §2.1): the rest of its family stays.
    let sibling = Minted::now(Family::Existing(kept.family()), false);
    let record = sibling.record.clone();
    store.insert_tokens(record).await.must("insert_tokens");
    let revoked = store.revoke_access_token(&kept.access).await;
    revoked.must("revoke_access_token");
    assert!(!access_found(store, &kept.access, NOW).await);
    assert!(
        access_found(store, &sibling.access, NOW).await,
        "the family went too"
    );
    let next = successor(kept.family(), "profile", NOW);
    let rotation = store
        .rotate_refresh_token(&kept.refresh(), next.record, None)
        .await;
    assert_eq!(rotation.must("rotate_refresh_token"), Rotation::Rotated);
    // Revoking an unknown token is fine.
    let unknown = store.revoke_access_token(&digest("never issued")).await;
    unknown.must("revoke_access_token");
}

pub(super) async fn revoking_a_client_kills_every_family_of_it_and_no_other<S>(store: &S)
where
    S: TokenIssuer,
{
    let first = new_tokens(store, true).await;
    let second = new_tokens(store, false).await;
    let another = Authorization::new(
        crate::client::ClientId::new("another-client").must("make a client id"),
        Some(super::alice()),
        scope("profile"),
    );
    let other = Minted::new(Family::New(family_id()), another, true, NOW);
    store
        .insert_tokens(other.record.clone())
        .await
        .must("insert_tokens");
    let revoked = store.revoke_client(super::client_id().as_str()).await;
    let revoked = revoked.must("revoke_client");
    assert!(
        revoked >= 2,
        "{revoked} families revoked of the client's two"
    );
    assert!(!access_found(store, &first.access, NOW).await);
    assert!(!refresh_found(store, &first.refresh(), NOW).await);
    assert!(!access_found(store, &second.access, NOW).await);
    assert!(
        access_found(store, &other.access, NOW).await,
        "another client's family was revoked"
    );
    assert!(refresh_found(store, &other.refresh(), NOW).await);
    let again = store.revoke_client(super::client_id().as_str()).await;
    assert_eq!(
        again.must("revoke_client"),
        0,
        "revoked families counted twice"
    );
    let nobody = store.revoke_client("no-such-client").await;
    assert_eq!(nobody.must("revoke_client"), 0);
}

pub(super) async fn codes_and_tokens_carry_what_was_granted<S: TokenIssuer>(store: &S) {
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    let challenge = CodeChallenge::new(challenge, Some("S256"), false).must("a challenge");
    let facts = SignInFacts::new(Some("n-0S6_WzA2Mj".to_owned()), NOW);
    let jkt = JwkThumbprint::from_bytes([7; 32]);
    let mut grant = code_grant()
        .with_openid(Some(facts.clone()))
        .bound_to(Some(jkt));
    grant.code_challenge = Some(challenge.clone());
    grant.authorization.scope = Scope::empty();
    let (code, family) = (digest("code"), family_id());
    store
        .insert_code(&code, family, grant)
        .await
        .must("insert_code");
    let redemption = store.redeem_code(&code, NOW).await.must("redeem_code");
    let CodeRedemption::Redeemed { grant, .. } = redemption else {
        panic!("a fresh code answered {redemption:?}");
    };
    assert_eq!(grant.code_challenge.as_ref(), Some(&challenge));
    assert!(challenge.verify(verifier));
    assert_eq!(grant.redirect_uri, "https://app.example/cb");
    assert_eq!((grant.issued_at, grant.expires_at), (NOW, at(60)));
    assert!(grant.authorization.scope.is_empty());
    assert_eq!(grant.authorization.user, authorization().user);
    assert_eq!(grant.authorization.client_id, authorization().client_id);
    assert_eq!(
        grant.openid,
        Some(facts),
        "an OpenID Connect code's sign-in facts"
    );
    assert_eq!(grant.dpop_jkt, Some(jkt), "the DPoP key a code is bound to");

    let mut tokens = Minted::now(Family::Existing(family), false);
    tokens.record.authorization.scope = Scope::empty();
    let record = tokens.record.clone();
    store.insert_tokens(record).await.must("insert_tokens");
    let found = store.find_access_token(&tokens.access, NOW).await;
    let Some(found) = found.must("find_access_token") else {
        panic!("a new access token is not found");
    };
    assert_eq!(found.family, family);
    assert_eq!((found.issued_at, found.expires_at), (NOW, at(3600)));
    assert!(found.authorization.scope.is_empty());
    assert_eq!(found.authorization.user, authorization().user);

    // A client acting for itself: no user.
    let mut tokens = Minted::now(Family::New(family_id()), false);
    tokens.record.authorization.user = None;
    let record = tokens.record.clone();
    store.insert_tokens(record).await.must("insert_tokens");
    let found = store.find_access_token(&tokens.access, NOW).await;
    let Some(found) = found.must("find_access_token") else {
        panic!("a new access token is not found");
    };
    assert_eq!(found.authorization.user, None);
    assert_eq!(found.authorization.client_id.as_str(), "client");
    assert_eq!(found.authorization.scope, authorization().scope);
}

pub(super) async fn tokens_for_an_unknown_family_are_refused<S: TokenIssuer>(store: &S) {
    let tokens = Minted::now(Family::Existing(family_id()), true);
    let Err(error) = store.insert_tokens(tokens.record.clone()).await else {
        panic!("tokens were kept in a family nobody started");
    };
    assert_eq!(error.kind(), StoreErrorKind::Failed);
    assert!(!access_found(store, &tokens.access, NOW).await);
}
