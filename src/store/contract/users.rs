//! The rules of [`UserStore`] and [`UserAdmin`]: accounts found by username in any case, with
//! the hash they were given. The rules add accounts as grantor does (the username checked, the
//! id minted and the password hashed before the store is called), then check what the store
//! finds: a store is held to keeping and finding, never to verifying.

use super::Must as _;
use crate::secret::Password;
use crate::store::{AdminError, User, UserAdmin, UserClaims, UserId, UserStore, new_user};

/// Adds an account the way the server's `add_user` does.
async fn add<S: UserAdmin>(
    store: &S,
    username: &str,
    password: &Password,
) -> Result<User, AdminError> {
    let user = new_user(username)?;
    let phc = crate::hash::hash_password(password.expose_secret())?;
    let kept = store.insert_user(&user, &phc).await?;
    assert_eq!(
        kept.username(),
        user.username(),
        "users_insert_user_answers_the_user_as_kept: insert_user({user:?}) answered {kept:?}, \
         another username"
    );
    Ok(kept)
}

/// Changes a password the way the server's `set_password` does.
async fn set_password<S: UserAdmin>(
    store: &S,
    user: &UserId,
    password: &str,
) -> Result<bool, AdminError> {
    let phc = crate::hash::hash_password(password)?;
    Ok(store.set_password_hash(user, &phc).await?)
}

/// What grantor's sign-in would find: the account `username` names, if `password` verifies
/// against the hash the store found for it.
async fn authenticates(store: &impl UserStore, username: &str, password: &str) -> Option<User> {
    let found = store.find_account(username).await.must("find_account")?;
    crate::hash::verify_password(found.password_hash(), password).then(|| found.into_user())
}

pub(super) async fn users_authenticate_by_case_insensitive_email_and_password<S>(store: &S)
where
    S: UserStore + UserAdmin,
{
    let password = Password::new("bob-password-2");
    let bob = add(store, "Bob@Example.com", &password).await;
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
    let carol = add(
        store,
        "carol@example.com",
        &Password::new("carol-password-3"),
    )
    .await;
    assert_ne!(
        carol.must("add_user").id(),
        bob.id(),
        "every user gets an id of its own"
    );
}

pub(super) async fn adding_a_user_refuses_a_non_email_and_a_taken_username_in_any_case<S>(store: &S)
where
    S: UserStore + UserAdmin,
{
    let password = Password::new("dave-password-4");
    let refused = add(store, "not-an-email", &password).await;
    assert!(
        matches!(refused, Err(AdminError::InvalidUsername)),
        "not an email: {refused:?}"
    );
    let minted = new_user("Dave@Example.com").must("mint a user");
    let phc = crate::hash::hash_password("dave-password-4").must("hash a password");
    let dave = store.insert_user(&minted, &phc).await.must("insert_user");
    let refused = add(store, "DAVE@example.com", &password).await;
    assert!(
        matches!(refused, Err(AdminError::UsernameTaken)),
        "the username in another case: {refused:?}"
    );
    // The id is taken too, under another username (for a store that keeps the ids grantor
    // mints; one that assigns its own never sees a taken one).
    if dave.id() == minted.id() {
        let twin = User::new(dave.id().clone(), "twin@example.com");
        let refused = store.insert_user(&twin, &phc).await;
        assert!(
            matches!(refused, Err(AdminError::UsernameTaken)),
            "an id taken: {refused:?}"
        );
    }
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

pub(super) async fn setting_a_password_changes_what_authenticates<S: UserStore + UserAdmin>(
    store: &S,
) {
    let erin = add(store, "erin@example.com", &Password::new("old-password-5")).await;
    let erin = erin.must("add_user");
    let changed = set_password(store, erin.id(), "new-password-6").await;
    assert!(changed.must("set_password"), "the account exists");
    let found = authenticates(store, "erin@example.com", "old-password-5").await;
    assert_eq!(found, None, "the old password still authenticates");
    let found = authenticates(store, "erin@example.com", "new-password-6").await;
    assert_eq!(found, Some(erin), "the new password does not authenticate");
    let nobody = UserId::new("nobody");
    let changed = set_password(store, &nobody, "new-password-6").await;
    assert!(!changed.must("set_password"), "a password set for nobody");
}

pub(super) async fn claims_are_kept_per_account_and_replaced_whole<S: UserStore + UserAdmin>(
    store: &S,
) {
    let frank = add(
        store,
        "frank@example.com",
        &Password::new("frank-password-7"),
    )
    .await;
    let frank = frank.must("add_user");
    let none = store.claims(frank.id()).await.must("claims");
    assert_eq!(none, Some(UserClaims::new()), "a new account has no claims");
    let claims = UserClaims::new()
        .name("Frank Example")
        .email("frank@example.com", false)
        .with("groups", serde_json::json!(["ops", "dev"]));
    assert!(
        store
            .set_claims(frank.id(), &claims)
            .await
            .must("set_claims")
    );
    let found = store.claims(frank.id()).await.must("claims");
    assert_eq!(found, Some(claims), "the claims as they were set");
    let fewer = UserClaims::new().name("Frank");
    assert!(
        store
            .set_claims(frank.id(), &fewer)
            .await
            .must("set_claims")
    );
    let found = store.claims(frank.id()).await.must("claims");
    assert_eq!(found, Some(fewer), "set_claims replaces every claim");
    let nobody = UserId::new("nobody");
    assert_eq!(
        store.claims(&nobody).await.must("claims"),
        None,
        "no account"
    );
    let changed = store
        .set_claims(&nobody, &UserClaims::new().name("x"))
        .await;
    assert!(!changed.must("set_claims"), "claims set for nobody");
    let found = authenticates(store, "frank@example.com", "frank-password-7").await;
    assert_eq!(found, Some(frank), "claims changed the account");
}
