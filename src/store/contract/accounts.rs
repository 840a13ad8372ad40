//! The rules of [`ClientStore`], [`UserStore`] and [`Admin`]: accounts and clients.

use super::{ContractStore, Must as _};
use crate::client::{Approval, Client, ClientCredentials, GrantType, SecretVerifier};
use crate::secret::{ClientSecret, Password, SecretDigest};
use crate::store::{AdminError, ClientStore, User, UserId, UserStore};

/// What grantor's sign-in would find: the account `username` names, if `password` verifies
/// against the hash the store found for it.
async fn authenticates(store: &impl UserStore, username: &str, password: &str) -> Option<User> {
    let found = store.find_account(username).await.must("find_account")?;
    crate::hash::verify_password(found.password_hash(), password).then(|| found.into_user())
}

pub(super) async fn users_authenticate_by_case_insensitive_email_and_password<S>(store: &S)
where
    S: ContractStore,
{
    let password = Password::new("bob-password-2");
    let bob = store.add_user("Bob@Example.com", &password).await;
    let bob = bob.must("add_user");
    assert_eq!(
        bob.username(),
        "Bob@Example.com",
        "the username as registered"
    );
    let found = authenticates(store, "bob@example.COM", "bob-password-2").await;
    assert_eq!(found.as_ref(), Some(&bob), "the username in another case");
    let found = authenticates(store, "bob@example.com", "nope").await;
    assert_eq!(found, None, "a wrong password");
    let found = authenticates(store, "eve@example.com", "bob-password-2").await;
    assert_eq!(found, None, "an unknown user");
    let found = authenticates(store, "not an email", "bob-password-2").await;
    assert_eq!(found, None, "not an email");
    let found = store.find_user(bob.id()).await.must("find_user");
    assert_eq!(found, Some(bob.clone()));
    let nobody = store.find_user(&UserId::new("nobody")).await;
    assert_eq!(nobody.must("find_user"), None);
    let carol = store
        .add_user("carol@example.com", &Password::new("carol-password-3"))
        .await;
    assert_ne!(
        carol.must("add_user").id(),
        bob.id(),
        "every user gets an id of its own"
    );
}

pub(super) async fn adding_a_user_refuses_a_non_email_and_a_taken_username_in_any_case<S>(store: &S)
where
    S: ContractStore,
{
    let password = Password::new("dave-password-4");
    let refused = store.add_user("not-an-email", &password).await;
    assert!(
        matches!(refused, Err(AdminError::InvalidUsername)),
        "not an email: {refused:?}"
    );
    let dave = store.add_user("Dave@Example.com", &password).await;
    let dave = dave.must("add_user");
    let refused = store.add_user("DAVE@example.com", &password).await;
    assert!(
        matches!(refused, Err(AdminError::UsernameTaken)),
        "the username in another case: {refused:?}"
    );
    // The id is taken too, under another username.
    let phc = crate::hash::hash_password("dave-password-4").must("hash a password");
    let twin = User::new(dave.id().clone(), "twin@example.com");
    let refused = store.insert_user(&twin, &phc).await;
    assert!(
        matches!(refused, Err(AdminError::UsernameTaken)),
        "an id taken: {refused:?}"
    );
    let refused = store
        .insert_user(&User::new(UserId::new("u9"), "u9"), &phc)
        .await;
    assert!(
        matches!(refused, Err(AdminError::InvalidUsername)),
        "insert_user, not an email: {refused:?}"
    );
    let found = authenticates(store, "dave@example.com", "dave-password-4").await;
    assert_eq!(found, Some(dave), "the refusals changed the account");
}

pub(super) async fn setting_a_password_changes_what_authenticates<S: ContractStore>(store: &S) {
    let erin = store
        .add_user("erin@example.com", &Password::new("old-password-5"))
        .await;
    let erin = erin.must("add_user");
    let changed = store
        .set_password(erin.id(), &Password::new("new-password-6"))
        .await;
    assert!(changed.must("set_password"), "the account exists");
    let found = authenticates(store, "erin@example.com", "old-password-5").await;
    assert_eq!(found, None, "the old password still authenticates");
    let found = authenticates(store, "erin@example.com", "new-password-6").await;
    assert_eq!(found, Some(erin), "the new password does not authenticate");
    let nobody = UserId::new("nobody");
    let changed = store
        .set_password(&nobody, &Password::new("new-password-6"))
        .await;
    assert!(!changed.must("set_password"), "a password set for nobody");
}

/// Three clients that between them use every column: generated credentials with every grant,
/// a chosen (Argon2id-verified) secret, and a public client.
fn clients() -> [Client; 3] {
    let creds = ClientCredentials::generate().must("generate client credentials");
    let chosen = SecretVerifier::argon2id(&ClientSecret::new("a chosen secret"));
    [
        Client::confidential(creds.client_id.as_str(), creds.verifier)
            .name("Generated")
            .redirect_uri("https://app.example/cb")
            .redirect_uri("https://app.example/other?a=1&b=%22two%22")
            .grant_types(GrantType::ALL)
            .scopes("profile email")
            .default_scope("profile")
            .build()
            .must("build a client"),
        Client::confidential("chosen", chosen.must("make an Argon2id verifier"))
            .grant_types([GrantType::ClientCredentials, GrantType::Password])
            .scopes("reports")
            .approval(Approval::NotRequired)
            .resource_server("https://api.example/")
            .build()
            .must("build a client"),
        Client::public("public")
            .redirect_uri("http://127.0.0.1:8081/callback")
            .grant_types([GrantType::AuthorizationCode])
            .resource("https://files.example/")
            .resource("https://api.example/")
            .require_dpop(true)
            .require_pushed_requests(true)
            .build()
            .must("build a client"),
    ]
}

/// A client registered as `public` is, with everything else changed.
fn renamed_public_client() -> Client {
    Client::public("public")
        .name("Renamed")
        .redirect_uri("http://localhost:8081/callback")
        .grant_types([GrantType::AuthorizationCode, GrantType::Implicit])
        .scopes("email")
        .build()
        .must("build a client")
}

pub(super) async fn find(store: &impl ClientStore, client_id: &str) -> Option<Client> {
    let found = store.find_client(client_id).await.must("find_client");
    found.map(|client| Client::clone(&client))
}

#[track_caller]
pub(super) fn assert_same_client(found: Option<Client>, expected: &Client) {
    let Some(found) = found else {
        panic!("client {} is not found", expected.id().as_str());
    };
    assert_eq!(found.id(), expected.id());
    assert_eq!(found.name(), expected.name());
    assert_eq!(
        found.secret().map(SecretVerifier::to_stored),
        expected.secret().map(SecretVerifier::to_stored)
    );
    assert_eq!(found.is_public(), expected.is_public());
    assert_eq!(found.redirect_uris(), expected.redirect_uris());
    for grant in GrantType::ALL {
        assert_eq!(found.allows(grant), expected.allows(grant), "{grant:?}");
    }
    assert_eq!(found.scopes(), expected.scopes());
    assert_eq!(found.default_scope(), expected.default_scope());
    assert_eq!(found.approval(), expected.approval());
    assert_eq!(
        found.audiences(),
        expected.audiences(),
        "resource server of"
    );
    assert_eq!(found.resources(), expected.resources(), "allowed resources");
    assert_eq!(
        found.requires_dpop(),
        expected.requires_dpop(),
        "DPoP required"
    );
    assert_eq!(
        found.requires_pushed_requests(),
        expected.requires_pushed_requests(),
        "pushed requests required"
    );
    assert_eq!(found.keys(), expected.keys(), "the private_key_jwt keys");
    let retiring = |c: &Client| c.retiring_secret().map(|(v, until)| (v.to_stored(), until));
    assert_eq!(retiring(&found), retiring(expected), "the retiring secret");
    let digest = |c: &Client| c.registration_access_token().map(|d| *d.as_bytes());
    assert_eq!(
        digest(&found),
        digest(expected),
        "the registration token digest"
    );
}

/// RFC 7592: a self-registered client's registration access token digest is kept, replaced
/// with the client, and absent for an administrator's client.
pub(super) async fn a_registration_access_token_digest_round_trips<S: ContractStore>(store: &S) {
    let creds = ClientCredentials::generate().must("generate client credentials");
    let token = SecretDigest::of("a registration access token of 256 bits, say");
    let registered = Client::confidential(creds.client_id.as_str(), creds.verifier.clone())
        .redirect_uri("https://app.example/cb")
        .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
        .registration_access_token(token)
        .build()
        .must("build a client");
    store
        .register_client(&registered)
        .await
        .must("register_client");
    let found = find(store, creds.client_id.as_str()).await;
    assert_same_client(found.clone(), &registered);
    let kept = found.and_then(|c| c.registration_access_token().copied());
    assert!(kept.is_some_and(|d| d.ct_eq(&token)), "the digest is kept");

    let other = SecretDigest::of("another registration access token");
    let replaced = Client::confidential(creds.client_id.as_str(), creds.verifier)
        .redirect_uri("https://app.example/other")
        .grant_types([GrantType::AuthorizationCode])
        .registration_access_token(other)
        .build()
        .must("build a client");
    assert!(store.replace_client(&replaced).await.must("replace_client"));
    assert_same_client(find(store, creds.client_id.as_str()).await, &replaced);

    let [_, _, public] = clients();
    store.register_client(&public).await.must("register_client");
    let found = find(store, "public").await;
    assert!(
        found.is_some_and(|c| c.registration_access_token().is_none()),
        "an administrator's client has no registration token digest"
    );
}

pub(super) async fn clients_round_trip<S: ContractStore>(store: &S) {
    let registered = clients();
    for client in &registered {
        store.register_client(client).await.must("register_client");
    }
    for client in &registered {
        assert_same_client(find(store, client.id().as_str()).await, client);
    }
    assert!(
        find(store, "nobody").await.is_none(),
        "an unknown client is found"
    );
}

pub(super) async fn registering_refuses_a_taken_id_and_replace_and_remove_say_if_there_was_one<S>(
    store: &S,
) where
    S: ContractStore,
{
    let [_, _, public] = clients();
    let renamed = renamed_public_client();
    let replaced = store.replace_client(&renamed).await.must("replace_client");
    assert!(!replaced, "replacing a client nobody registered");
    assert!(
        find(store, "public").await.is_none(),
        "replacing registered a client"
    );

    store.register_client(&public).await.must("register_client");
    let refused = store.register_client(&renamed).await;
    assert!(
        matches!(refused, Err(AdminError::ClientIdTaken)),
        "registering a taken id: {refused:?}"
    );
    assert_same_client(find(store, "public").await, &public);

    let replaced = store.replace_client(&renamed).await.must("replace_client");
    assert!(replaced, "replacing a registered client");
    assert_same_client(find(store, "public").await, &renamed);

    assert!(store.remove_client("public").await.must("remove_client"));
    assert!(!store.remove_client("public").await.must("remove_client"));
    assert!(
        find(store, "public").await.is_none(),
        "a removed client is found"
    );
}
