//! The rules of single sign-on: [`UserSessionStore`] (a signed-in browser, found by the digest
//! of its cookie, with the grants issued in it, ended once) and [`ConsentStore`] (remembered
//! approvals), and purging them.

use std::time::Duration;

use futures_util::future::{join, join_all};

use super::{Must as _, NOW, alice, at, client_id, digest, family_id, scope};
use crate::audience::Audience;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::secret::SecretDigest;
use crate::store::{
    Consent, ConsentStore, FamilyId, MAX_SESSION_GRANTS, MAX_SESSIONS_PER_USER, MAX_SID_BYTES,
    Purge, User, UserId, UserSession, UserSessionStore,
};

/// Alice, signed in a minute ago with a password and a one-time code (RFC 8176), for an hour.
fn user_session() -> UserSession {
    let amr = vec!["pwd".to_owned(), "otp".to_owned()];
    let sid = format!("sid-{}", super::unique());
    UserSession::new(
        alice(),
        sid,
        NOW.minus(Duration::from_secs(60)),
        amr,
        at(3600),
    )
}

fn bob() -> User {
    User::new(UserId::new("u2"), "bob@example.com")
}

/// Another client than [`client_id`], numbered `n`.
fn other_client(n: usize) -> ClientId {
    ClientId::new(format!("client-{n}")).must("make a client id")
}

/// A new session kept under a new digest, now.
async fn kept(store: &impl UserSessionStore, session: UserSession) -> SecretDigest {
    let id = digest("browser cookie");
    let inserted = store.insert_user_session(&id, session, NOW).await;
    inserted.must("insert_user_session");
    id
}

async fn find(
    store: &impl UserSessionStore,
    id: &SecretDigest,
    at: UnixTime,
) -> Option<UserSession> {
    store
        .find_user_session(id, at)
        .await
        .must("find_user_session")
}

async fn add_grant(
    store: &impl UserSessionStore,
    id: &SecretDigest,
    grant: &(ClientId, FamilyId),
    at: UnixTime,
) -> bool {
    let added = store.add_session_grant(id, &grant.0, grant.1, at).await;
    added.must("add_session_grant")
}

/// Finds session `id` from many callers at once, so that a store over a pool of connections
/// opens them all: the racers that follow then meet at the database, instead of queueing one
/// by one for connections still being opened.
async fn warm_up(store: &impl UserSessionStore, id: &SecretDigest) {
    for found in join_all((0..32).map(|_| store.find_user_session(id, NOW))).await {
        found.must("find_user_session");
    }
}

/// `n` grants, each of a new family, to clients in turn.
fn grants(n: usize) -> Vec<(ClientId, FamilyId)> {
    (0..n).map(|i| (other_client(i % 5), family_id())).collect()
}

pub(super) async fn a_user_session_is_found_by_its_digest_until_it_expires<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    let session = user_session();
    let id = kept(store, session.clone()).await;
    // Another browser, of another user, kept with grants already (each field its own).
    let mut other = UserSession::new(bob(), "another sid", NOW, vec!["pwd".to_owned()], at(60));
    other = other.with_grants(grants(2));
    let other_id = kept(store, other.clone()).await;

    assert_eq!(find(store, &id, NOW).await, Some(session.clone()));
    assert_eq!(
        find(store, &id, at(3599)).await,
        Some(session),
        "finding changed it"
    );
    assert_eq!(
        find(store, &id, at(3600)).await,
        None,
        "found at its expiry"
    );
    assert_eq!(find(store, &id, at(3601)).await, None, "found after it");
    assert_eq!(find(store, &other_id, NOW).await, Some(other));
    let unknown = digest("browser cookie");
    assert_eq!(find(store, &unknown, NOW).await, None, "an unknown digest");
}

/// A session keeps the authentication context class its sign-in satisfied (`acr`), found and
/// ended with it; a session without one reads without one.
pub(super) async fn a_user_session_keeps_the_class_of_its_sign_in<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    // As long as a class may be (MAX_SID_BYTES), with characters that need quoting.
    let acr = format!("urn:\"é\"\\{}", "a".repeat(MAX_SID_BYTES - 9));
    assert_eq!(acr.len(), MAX_SID_BYTES);
    let strong = user_session().with_acr(Some(acr.clone()));
    let strong_id = kept(store, strong.clone()).await;
    let plain = user_session();
    let plain_id = kept(store, plain.clone()).await;
    let found = find(store, &strong_id, NOW).await;
    assert_eq!(
        found.as_ref().map(|s| s.acr.as_deref()),
        Some(Some(acr.as_str()))
    );
    assert_eq!(found, Some(strong.clone()), "the session with its class");
    let found = find(store, &plain_id, NOW).await;
    assert_eq!(
        found.map(|s| s.acr),
        Some(None),
        "a session without a class"
    );
    let ended = store.end_user_session(&strong_id, NOW).await;
    assert_eq!(
        ended.must("end_user_session"),
        Some(strong),
        "the ended session with its class"
    );
}

pub(super) async fn session_grants_are_kept_in_order_and_bounded<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    let session = user_session();
    let id = kept(store, session.clone()).await;
    let issued = grants(MAX_SESSION_GRANTS + 6);
    for grant in &issued {
        assert!(add_grant(store, &id, grant, NOW).await, "a live session");
    }
    let newest = issued[6..].to_vec();
    let found = find(store, &id, NOW).await.map(|s| s.grants);
    assert_eq!(
        found.as_ref().map(Vec::len),
        Some(MAX_SESSION_GRANTS),
        "grants past the bound are kept"
    );
    assert_eq!(found, Some(newest.clone()), "the newest, oldest first");

    let late = (client_id(), family_id());
    let expired = add_grant(store, &id, &late, at(3600)).await;
    assert!(!expired, "a grant added to an expired session");
    let unknown = digest("browser cookie");
    let added = add_grant(store, &unknown, &late, NOW).await;
    assert!(!added, "a grant added to an unknown session");
    assert_eq!(
        find(store, &id, NOW).await,
        Some(session.with_grants(newest)),
        "a refused grant changed the session"
    );
}

pub(super) async fn concurrent_grants_are_all_kept<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    let id = kept(store, user_session()).await;
    warm_up(store, &id).await;
    let issued = grants(16);
    let added = join_all(
        issued
            .iter()
            .map(|(client, family)| store.add_session_grant(&id, client, *family, NOW)),
    )
    .await;
    for added in added {
        assert!(added.must("add_session_grant"), "a live session");
    }
    let mut found = find(store, &id, NOW).await.map(|s| s.grants);
    // Concurrent grants are kept in whichever order they came.
    if let Some(grants) = found.as_mut() {
        grants.sort_by_key(|(_, f)| *f);
    }
    let mut expected = issued;
    expected.sort_by_key(|(_, f)| *f);
    assert_eq!(
        found,
        Some(expected),
        "of 16 concurrent grants, each is kept once"
    );
}

pub(super) async fn a_user_keeps_only_the_newest_sessions<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    // Alice signs in MAX_SESSIONS_PER_USER times, a second apart, the first with a grant.
    let mut ids = Vec::new();
    for n in 0..MAX_SESSIONS_PER_USER {
        let mut session = user_session();
        session.auth_time = NOW.minus(Duration::from_secs(1000 - n as u64));
        ids.push(kept(store, session).await);
    }
    add_grant(store, &ids[0], &(client_id(), family_id()), NOW).await;
    let bob_id = kept(
        store,
        UserSession::new(bob(), "sid-bob", NOW, Vec::new(), at(3600)),
    )
    .await;
    // Signing in again under a digest she holds replaces that session: none is forgotten.
    let last = ids[MAX_SESSIONS_PER_USER - 1];
    let again = store.insert_user_session(&last, user_session(), NOW).await;
    again.must("insert_user_session");
    for id in &ids {
        assert!(
            find(store, id, NOW).await.is_some(),
            "a replaced session frees no other"
        );
    }
    // One more browser: the session signed in longest ago is forgotten, grants and all.
    let newest = kept(store, user_session()).await;
    assert_eq!(
        find(store, &ids[0], NOW).await,
        None,
        "the oldest session is forgotten"
    );
    assert!(
        !add_grant(store, &ids[0], &(client_id(), family_id()), NOW).await,
        "a forgotten session takes no grant"
    );
    let ended = store.end_user_session(&ids[0], NOW).await;
    assert_eq!(
        ended.must("end_user_session"),
        None,
        "a forgotten session ends nothing"
    );
    for id in ids[1..].iter().chain([&newest]) {
        assert!(
            find(store, id, NOW).await.is_some(),
            "the newest sessions are kept"
        );
    }
    assert!(
        find(store, &bob_id, NOW).await.is_some(),
        "another user's session is kept"
    );
}

pub(super) async fn a_user_session_ends_once<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    let session = user_session().with_grants(grants(1));
    let id = kept(store, session.clone()).await;
    let more = grants(2);
    for grant in &more {
        assert!(add_grant(store, &id, grant, NOW).await);
    }
    let mut expected = session.grants.clone();
    expected.extend(more);
    let expected = session.with_grants(expected);

    warm_up(store, &id).await;
    let ends = join_all((0..50).map(|_| store.end_user_session(&id, NOW))).await;
    let mut ended = Vec::new();
    for end in ends {
        ended.extend(end.must("end_user_session"));
    }
    assert_eq!(
        ended,
        vec![expected],
        "of 50 callers, exactly one ends the session, with its grants"
    );
    assert_eq!(
        find(store, &id, NOW).await,
        None,
        "an ended session is found"
    );
    let late = (client_id(), family_id());
    assert!(
        !add_grant(store, &id, &late, NOW).await,
        "a grant added to an ended session"
    );

    let expired = kept(store, user_session()).await;
    let ended = store.end_user_session(&expired, at(3600)).await;
    assert_eq!(ended.must("end_user_session"), None, "ended at its expiry");
    let unknown = digest("browser cookie");
    let ended = store.end_user_session(&unknown, NOW).await;
    assert_eq!(ended.must("end_user_session"), None, "an unknown digest");
}

/// Logout racing grants: each grant either happened before the end (and the end answers it)
/// or after (and was refused); none is answered added and then lost.
pub(super) async fn a_grant_racing_the_end_is_ended_with_it_or_refused<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    let id = kept(store, user_session()).await;
    warm_up(store, &id).await;
    let issued = grants(16);
    let adds = join_all(
        issued
            .iter()
            .map(|(client, family)| store.add_session_grant(&id, client, *family, NOW)),
    );
    let (added, ended) = join(adds, store.end_user_session(&id, NOW)).await;
    let mut added: Vec<_> = issued
        .into_iter()
        .zip(added)
        .filter_map(|(grant, added)| added.must("add_session_grant").then_some(grant))
        .collect();
    let ended = ended.must("end_user_session");
    let mut ended = ended.map(|s| s.grants).unwrap_or_default();
    added.sort_by_key(|(_, f)| *f);
    ended.sort_by_key(|(_, f)| *f);
    assert_eq!(
        ended, added,
        "the ended session's grants are those answered added"
    );
    assert_eq!(
        find(store, &id, NOW).await,
        None,
        "an ended session is found"
    );
}

async fn remember(
    store: &impl ConsentStore,
    user: &User,
    client: &ClientId,
    approved: &str,
    until: UnixTime,
) {
    let approved = Consent::new(scope(approved), Audience::default());
    let remembered = store
        .remember_consent(user.id(), client, &approved, until, NOW)
        .await;
    remembered.must("remember_consent");
}

async fn consent(
    store: &impl ConsentStore,
    user: &User,
    client: &ClientId,
    at: UnixTime,
) -> Option<String> {
    let found = store.find_consent(user.id(), client, at).await;
    found
        .must("find_consent")
        .map(|consent| consent.scope.as_str().to_owned())
}

pub(super) async fn consents_are_remembered_replaced_and_forgotten<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    let (alice, bob, client, other) = (alice(), bob(), client_id(), other_client(1));
    assert_eq!(
        consent(store, &alice, &client, NOW).await,
        None,
        "never given"
    );
    remember(store, &alice, &client, "openid profile", at(3600)).await;
    remember(store, &bob, &client, "openid", at(3600)).await;
    remember(store, &alice, &other, "email", at(3600)).await;
    let found = consent(store, &alice, &client, at(3599)).await;
    assert_eq!(found.as_deref(), Some("openid profile"));
    let found = consent(store, &bob, &client, NOW).await;
    assert_eq!(found.as_deref(), Some("openid"), "kept per user");
    let found = consent(store, &alice, &other, NOW).await;
    assert_eq!(found.as_deref(), Some("email"), "kept per client");

    // Replaced whole: scope and expiry.
    remember(store, &alice, &client, "email openid", at(60)).await;
    let found = consent(store, &alice, &client, at(59)).await;
    assert_eq!(found.as_deref(), Some("email openid"), "replaced");
    let found = consent(store, &alice, &client, at(60)).await;
    assert_eq!(found, None, "found at its expiry");
    let found = consent(store, &bob, &client, at(60)).await;
    assert_eq!(found.as_deref(), Some("openid"), "another user's changed");

    let forgot = store.forget_consent(alice.id(), &other).await;
    assert!(forgot.must("forget_consent"), "forgetting what was given");
    assert_eq!(consent(store, &alice, &other, NOW).await, None, "forgotten");
    let again = store.forget_consent(alice.id(), &other).await;
    assert!(!again.must("forget_consent"), "forgetting twice");
    let found = consent(store, &bob, &client, NOW).await;
    assert_eq!(
        found.as_deref(),
        Some("openid"),
        "forgetting reached another user"
    );
    remember(store, &alice, &other, "profile", at(3600)).await;
    let found = consent(store, &alice, &other, NOW).await;
    assert_eq!(
        found.as_deref(),
        Some("profile"),
        "given again once forgotten"
    );

    // The resources approved are kept with the scope, and replaced with it.
    let resources = ["https://api.example/", "https://files.example/"];
    let audience = Audience::from_resources(resources).expect("resources");
    let approved = Consent::new(scope("profile"), audience);
    let remembered = store
        .remember_consent(bob.id(), &other, &approved, at(3600), NOW)
        .await;
    remembered.must("remember_consent");
    let found = store.find_consent(bob.id(), &other, NOW).await;
    assert_eq!(found.must("find_consent"), Some(approved), "the audience");
    remember(store, &bob, &other, "profile", at(3600)).await;
    let found = store.find_consent(bob.id(), &other, NOW).await;
    let found = found.must("find_consent").expect("an approval");
    assert!(found.audience.is_empty(), "replaced whole");
}

pub(super) async fn every_session_of_a_user_ends_at_once_and_once<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    let first = user_session().with_grants(grants(2));
    let first_id = kept(store, first.clone()).await;
    let second = user_session();
    let second_id = kept(store, second.clone()).await;
    let mut expired = user_session();
    expired.expires_at = at(60);
    kept(store, expired).await;
    let other = UserSession::new(bob(), "bob's sid", NOW, vec!["pwd".to_owned()], at(3600));
    let other_id = kept(store, other.clone()).await;

    let ended = store.end_user_sessions(alice().id(), at(60)).await;
    let mut ended = ended.must("end_user_sessions");
    ended.sort_by(|a, b| a.sid.cmp(&b.sid));
    let mut expected = vec![first, second];
    expected.sort_by(|a, b| a.sid.cmp(&b.sid));
    assert_eq!(
        ended, expected,
        "the user's live sessions, grants included (not an expired one)"
    );
    for id in [&first_id, &second_id] {
        assert_eq!(
            find(store, id, NOW).await,
            None,
            "an ended session is found"
        );
    }
    assert_eq!(
        find(store, &other_id, NOW).await,
        Some(other),
        "another user's session ended"
    );
    let again = store.end_user_sessions(alice().id(), at(60)).await;
    assert!(
        again.must("end_user_sessions").is_empty(),
        "a session ended twice"
    );
    let ended = store.end_user_session(&first_id, NOW).await;
    assert_eq!(
        ended.must("end_user_session"),
        None,
        "ended again one by one"
    );
    let nobody = store.end_user_sessions(&UserId::new("nobody"), NOW).await;
    assert!(nobody.must("end_user_sessions").is_empty());
}

pub(super) async fn a_users_consents_are_listed_by_client<S>(store: &S)
where
    S: UserSessionStore + ConsentStore,
{
    let (alice, bob) = (alice(), bob());
    let listed = store.consents(alice.id(), NOW).await;
    assert!(listed.must("consents").is_empty(), "none given");
    remember(store, &alice, &other_client(2), "email", at(3600)).await;
    remember(store, &alice, &other_client(1), "openid profile", at(3600)).await;
    remember(store, &alice, &client_id(), "openid", at(60)).await;
    remember(store, &bob, &other_client(3), "openid", at(3600)).await;
    let listed = store.consents(alice.id(), at(60)).await;
    let listed: Vec<(String, String)> = listed
        .must("consents")
        .into_iter()
        .map(|(client, consent)| {
            (
                client.as_str().to_owned(),
                consent.scope.as_str().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("client-1".to_owned(), "openid profile".to_owned()),
            ("client-2".to_owned(), "email".to_owned()),
        ],
        "the user's live approvals, by client id (not another user's, not an expired one)"
    );
    let forgot = store.forget_consent(alice.id(), &other_client(1)).await;
    assert!(forgot.must("forget_consent"));
    let listed = store.consents(alice.id(), NOW).await.must("consents");
    let clients: Vec<&str> = listed.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(
        clients,
        [client_id().as_str(), "client-2"],
        "a forgotten one"
    );
}

pub(super) async fn purging_drops_expired_user_sessions_and_consents<S>(store: &S)
where
    S: UserSessionStore + ConsentStore + Purge,
{
    // One session and one approval expire at NOW + 60, one of each lives on; both sessions
    // have grants, which go with their session and are not counted apart.
    let live = user_session().with_grants(grants(2));
    let live_id = kept(store, live.clone()).await;
    let mut expired = user_session().with_grants(grants(1));
    expired.expires_at = at(60);
    let expired_id = kept(store, expired).await;
    assert!(add_grant(store, &expired_id, &(client_id(), family_id()), NOW).await);
    let (alice, client, other) = (alice(), client_id(), other_client(1));
    remember(store, &alice, &client, "openid", at(3600)).await;
    remember(store, &alice, &other, "openid", at(60)).await;

    let purged = store.purge_expired(at(60)).await.must("purge_expired");
    assert_eq!(purged, 2, "one session and one approval expired");
    let purged = store.purge_expired(at(60)).await.must("purge_expired");
    assert_eq!(purged, 0, "a second purge finds nothing more");
    assert_eq!(find(store, &live_id, at(60)).await, Some(live));
    let found = consent(store, &alice, &client, at(60)).await;
    assert_eq!(found.as_deref(), Some("openid"));
}
