//! The rules of a [`UserStore`] grantor only reads: what the sign-in asks of it, checked against
//! accounts the host's table already holds. Nothing is written; each broken rule is named with
//! the call and the value that broke it.

use super::panic_message;
use crate::secret::Password;
use crate::store::{Account, MAX_CLAIMS_BYTES, UserId, UserStore};
use crate::store::{PasswordVerifier, Verification};
use crate::usernames::Usernames;

/// An account a host's user store already holds, for [`user_lookups`](super::user_lookups): its
/// username as a person types it, and its password.
#[derive(Clone, Copy)]
pub struct KnownAccount<'a> {
    /// The username, as a person types it.
    pub username: &'a str,
    /// The account's password.
    pub password: &'a str,
}

impl std::fmt::Debug for KnownAccount<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownAccount")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The most bytes of a user id: it is the tokens' `sub`, which OIDC Core §2 bounds at 255.
const MAX_SUB_BYTES: usize = 255;

/// Every broken rule, as `- rule: what broke it`.
pub(super) struct Broken(Vec<String>);

impl Broken {
    fn rule(&mut self, name: &str, why: String) {
        self.0.push(format!("- {name}: {why}"));
    }
}

/// Checks each of `accounts` against `store`, as grantor's sign-in would look it up and verify
/// it; answers the rules broken.
pub(super) async fn check(
    store: &(impl UserStore + ?Sized),
    usernames: &Usernames,
    verifier: &dyn PasswordVerifier,
    accounts: &[KnownAccount<'_>],
) -> Vec<String> {
    let mut broken = Broken(Vec::new());
    for known in accounts {
        let Some(account) = found(store, known.username, &mut broken).await else {
            continue;
        };
        spellings(store, usernames, known.username, &account, &mut broken).await;
        id_is_a_subject(account.user().id(), known.username, &mut broken);
        found_by_id(store, &account, &mut broken).await;
        verifies(verifier, &account, known, &mut broken);
        claims(store, account.user().id(), &mut broken).await;
    }
    unknowns(store, &mut broken).await;
    broken.0
}

async fn found(
    store: &(impl UserStore + ?Sized),
    username: &str,
    broken: &mut Broken,
) -> Option<Account> {
    match store.find_account(username).await {
        Ok(Some(account)) => Some(account),
        Ok(None) => {
            broken.rule(
                "an_account_is_found_by_its_username",
                format!(
                    "find_account({username:?}) answered None: grantor looks every sign-in up \
                     by the username as typed"
                ),
            );
            None
        }
        Err(error) => {
            broken.rule(
                "an_account_is_found_by_its_username",
                format!("find_account({username:?}) failed: {error}"),
            );
            None
        }
    }
}

/// Two spellings with one key (as the username rule gives it) are one account.
async fn spellings(
    store: &(impl UserStore + ?Sized),
    usernames: &Usernames,
    username: &str,
    account: &Account,
    broken: &mut Broken,
) {
    let key = usernames.key(username);
    if key.is_none() {
        broken.rule(
            "every_username_follows_the_servers_username_rule",
            format!(
                "{username:?} has no key under the server's usernames ({usernames:?}): grantor \
                 refuses it before any lookup"
            ),
        );
        return;
    }
    for spelling in [username.to_uppercase(), username.to_lowercase()] {
        if spelling == username || usernames.key(&spelling) != key {
            continue;
        }
        let other = store.find_account(&spelling).await;
        let id = other
            .as_ref()
            .ok()
            .and_then(|a| a.as_ref())
            .map(|a| a.user().id());
        if id != Some(account.user().id()) {
            broken.rule(
                "usernames_with_one_key_find_one_account",
                format!(
                    "find_account({spelling:?}) answered {:?}, and find_account({username:?}) \
                     the id {:?}: the server's username rule makes them one account, and \
                     counts their failed attempts together",
                    id,
                    account.user().id()
                ),
            );
        }
    }
}

fn id_is_a_subject(id: &UserId, username: &str, broken: &mut Broken) {
    let text = id.as_str();
    if text.is_empty() || text.len() > MAX_SUB_BYTES || text.chars().any(char::is_control) {
        broken.rule(
            "a_user_id_is_a_subject",
            format!(
                "find_account({username:?}) answered the id {id:?}: an id is the tokens' `sub` \
                 (OIDC Core §2), 1 to 255 bytes without control characters"
            ),
        );
    }
}

async fn found_by_id(store: &(impl UserStore + ?Sized), account: &Account, broken: &mut Broken) {
    let id = account.user().id();
    match store.find_user(id).await {
        Ok(Some(user)) if user == *account.user() => {}
        Ok(Some(user)) => broken.rule(
            "find_user_finds_the_user_find_account_found",
            format!(
                "find_user({id:?}) answered {user:?}, find_account {:?}",
                account.user()
            ),
        ),
        Ok(None) => broken.rule(
            "find_user_finds_the_user_find_account_found",
            format!(
                "find_user({id:?}) answered None, though find_account({:?}) answered that id: \
                 grantor finds the user of every session, code and token by its id",
                account.user().username()
            ),
        ),
        Err(error) => broken.rule(
            "find_user_finds_the_user_find_account_found",
            format!("find_user({id:?}) failed: {error}"),
        ),
    }
}

fn verifies(
    verifier: &dyn PasswordVerifier,
    account: &Account,
    known: &KnownAccount<'_>,
    broken: &mut Broken,
) {
    let username = known.username;
    let right = Password::new(known.password);
    let wrong = Password::new(format!("{}-not", known.password));
    let scheme = crate::hash::scheme_of(account.password_hash());
    match catch(|| verifier.verify(account, &right)) {
        Ok(Ok(verification)) if verification.is_match() => {}
        Ok(Ok(_)) => broken.rule(
            "the_password_verifies_against_what_the_account_keeps",
            format!(
                "the password given for {username:?} does not verify against what \
                 find_account answered (a hash in {scheme}): grantor's default verifier reads \
                 Argon2, bcrypt, scrypt and PBKDF2; give the server a PasswordVerifier for \
                 another scheme"
            ),
        ),
        Ok(Err(error)) => broken.rule(
            "the_password_verifies_against_what_the_account_keeps",
            format!("verifying {username:?}'s password failed: {error}"),
        ),
        Err(panic) => broken.rule(
            "the_password_verifies_against_what_the_account_keeps",
            format!("verifying {username:?}'s password panicked: {panic}"),
        ),
    }
    if !matches!(
        catch(|| verifier.verify(account, &wrong)),
        Ok(Ok(Verification::Mismatch))
    ) {
        broken.rule(
            "a_wrong_password_does_not_verify",
            format!("another password than {username:?}'s verified, or the check failed"),
        );
    }
}

fn catch<T>(check: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(check))
        .map_err(|panic| panic_message(panic.as_ref()).to_owned())
}

async fn claims(store: &(impl UserStore + ?Sized), id: &UserId, broken: &mut Broken) {
    match store.claims(id).await {
        Ok(Some(claims)) if claims.fits() => {}
        Ok(Some(claims)) => broken.rule(
            "claims_fit_their_bound",
            format!(
                "claims({id:?}) answered {} bytes of JSON, past the {MAX_CLAIMS_BYTES} grantor \
                 puts in an ID token",
                claims.to_stored().len()
            ),
        ),
        Ok(None) => broken.rule(
            "every_account_has_claims",
            format!(
                "claims({id:?}) answered None for an account find_user finds: None means no \
                 such account; answer empty claims instead"
            ),
        ),
        Err(error) => broken.rule(
            "every_account_has_claims",
            format!("claims({id:?}) failed: {error}"),
        ),
    }
}

async fn unknowns(store: &(impl UserStore + ?Sized), broken: &mut Broken) {
    let username = "no-such-account@grantor.invalid";
    if !matches!(store.find_account(username).await, Ok(None)) {
        broken.rule(
            "unknown_usernames_and_ids_find_nothing",
            format!("find_account({username:?}) did not answer None"),
        );
    }
    let id = UserId::new("no-such-user-id");
    if !matches!(store.find_user(&id).await, Ok(None)) {
        broken.rule(
            "unknown_usernames_and_ids_find_nothing",
            format!("find_user({id:?}) did not answer None"),
        );
    }
    if !matches!(store.claims(&id).await, Ok(None)) {
        broken.rule(
            "unknown_usernames_and_ids_find_nothing",
            format!("claims({id:?}) did not answer None"),
        );
    }
}
