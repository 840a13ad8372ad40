//! The store contract: the rules every store keeps, checked against a store of your own in a
//! few lines (feature `test-util`).
//!
//! grantor's own stores ([`MemoryStore`](crate::MemoryStore), and the SQL stores on SQLite and
//! PostgreSQL) pass [`run`] in grantor's test suite; a store that passes it too can stand in for
//! them. Each rule gets a fresh store from the closure you hand over, calls the seams the way
//! grantor does (digests in, records out, fixed instants instead of a clock) and asserts what
//! the traits promise: single use under concurrent callers, replays and reuse reported with
//! their family and never revoked by the store itself, expiry, purging, records that carry what
//! was granted (a DPoP key, a delegation's actor, how the user signed in), case-insensitive
//! usernames, the administrator's answers, the session, attempt-counter, single-use and key
//! seams, and single sign-on (signed-in browsers and the grants issued in them, remembered
//! approvals).
//!
//! ```rust,ignore
//! // tests/store_contract.rs of your crate, with grantor's feature `test-util` in
//! // [dev-dependencies]:
//! #[tokio::test]
//! async fn my_store_keeps_grantor_s_contract() {
//!     grantor::store::contract::run(|| async { MyStore::connect_to_a_fresh_database().await })
//!         .await;
//! }
//! ```
//!
//! Concurrent callers are futures joined on the calling task (no runtime of the contract's
//! own), so it runs on any executor: a store that awaits its database sees them interleave at
//! every round trip, on as many connections as it has. A store that never awaits (an in-memory
//! one) answers each call whole before the next starts, which checks its answers but not its
//! locking: race it from threads of your own as well.
//!
//! The contract is test code: it panics, naming every rule the store broke, and never returns
//! an error.

mod accounts;
mod authentication;
mod bindings;
mod clients;
mod expiry;
mod keys;
mod lookups;
mod retries;
mod sign_on;
mod state;
mod tokens;
mod users;

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;

use super::{
    Admin, AttemptCounter, Authorization, ClientActivity, ClientStore, CodeGrant, ConsentStore,
    Family, FamilyId, Jti, KeyStore, NewRefreshToken, NewTokens, Purge, SessionStore,
    SingleUseStore, TokenIssuer, User, UserAdmin, UserId, UserSessionStore, UserStore,
};
use crate::audience::Audience;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::scope::Scope;
use crate::secret::SecretDigest;

/// Every seam a store implements to stand in for grantor's own, and what [`run`] checks: one
/// type implementing them all. Implemented for every such type.
pub trait ContractStore:
    ClientStore
    + UserStore
    + UserAdmin
    + TokenIssuer
    + SessionStore
    + UserSessionStore
    + ConsentStore
    + AttemptCounter
    + SingleUseStore
    + KeyStore
    + Admin
    + ClientActivity
    + Purge
    + Send
    + Sync
    + 'static
{
}

impl<S> ContractStore for S where
    S: ClientStore
        + UserStore
        + UserAdmin
        + TokenIssuer
        + SessionStore
        + UserSessionStore
        + ConsentStore
        + AttemptCounter
        + SingleUseStore
        + KeyStore
        + Admin
        + ClientActivity
        + Purge
        + Send
        + Sync
        + 'static
{
}

/// Checks every rule of the contract, each against a fresh store from `fresh` (which should
/// answer an empty store every time: a new database, schema or file). Runs them all, then
/// panics naming each rule the store broke and why; returns when it broke none.
pub async fn run<S, F, Fut>(fresh: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: ContractStore,
{
    check("grantor's store contract", rules::<S>(), fresh).await;
}

/// Checks the rules of the users seam alone: [`UserStore`] and [`UserAdmin`], for a host that
/// keeps its accounts in a store of its own and grantor's stores for the rest. Each rule adds
/// accounts as grantor does (username checked, id minted, password hashed, then
/// [`UserAdmin::insert_user`]) and checks what [`UserStore`] finds: accounts by username in any
/// case (as [`username_key`](super::username_key) writes it) with the hash they were given, by
/// id, a taken username or id refused, a changed hash kept.
///
/// ```rust,ignore
/// #[tokio::test]
/// async fn my_user_store_keeps_grantor_s_users_contract() {
///     grantor::store::contract::users(|| async { MyUsers::over_a_fresh_database().await }).await;
/// }
/// ```
pub async fn users<S, F, Fut>(fresh: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: UserStore + UserAdmin + 'static,
{
    check(
        "the users rules of grantor's store contract",
        user_rules(),
        fresh,
    )
    .await;
}

pub use lookups::KnownAccount;

/// Checks a [`UserStore`] of the host's own that grantor only reads (no [`UserAdmin`]: the
/// host adds its users itself), against `accounts` its table already holds, as grantor's
/// sign-in with the default username rule (email addresses) and password verifier
/// ([`KnownHashes`](crate::store::KnownHashes)) would: see [`user_lookups_with`].
///
/// ```rust,ignore
/// #[tokio::test]
/// async fn my_user_table_keeps_grantor_s_lookups() {
///     let users = MyUsers::over_the_test_database().await;
///     let carol = KnownAccount { username: "carol@example.com", password: "carol's password" };
///     grantor::store::contract::user_lookups(&users, &[carol]).await;
/// }
/// ```
pub async fn user_lookups<S: UserStore + ?Sized>(store: &S, accounts: &[KnownAccount<'_>]) {
    let usernames = crate::usernames::Usernames::email();
    user_lookups_with(store, &usernames, &crate::store::KnownHashes, accounts).await;
}

/// Checks a [`UserStore`] grantor only reads against `accounts` its table already holds, under
/// the server's `usernames` rule and password `verifier`: no more than grantor asks of it. For
/// each account, `find_account` finds it by its username (and by any other spelling with the
/// same key, such as another case of an email address); its id is a valid `sub` (1 to 255
/// bytes, no control characters) that `find_user` finds again; its password verifies against
/// what the account keeps and another does not; `claims` answers for it, within
/// [`MAX_CLAIMS_BYTES`](super::MAX_CLAIMS_BYTES). An unknown username or id finds nothing.
/// Panics naming every rule broken with the call and the value that broke it.
pub async fn user_lookups_with<S: UserStore + ?Sized>(
    store: &S,
    usernames: &crate::usernames::Usernames,
    verifier: &dyn crate::store::PasswordVerifier,
    accounts: &[KnownAccount<'_>],
) {
    let broken = lookups::check(store, usernames, verifier, accounts).await;
    if !broken.is_empty() {
        panic!(
            "the user store broke {} checks of the lookup rules of grantor's store contract:\n{}",
            broken.len(),
            broken.join("\n")
        );
    }
}

/// Checks the rules of the clients seam alone: [`ClientStore`] and [`Admin`] (clients found as
/// registered, with every member, rotated verifiers and keys; a taken id refused; replace and
/// remove answering whether there was a client).
pub async fn clients<S, F, Fut>(fresh: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: ClientStore + Admin + 'static,
{
    check(
        "the clients rules of grantor's store contract",
        client_rules(),
        fresh,
    )
    .await;
}

/// Checks the rules of the codes and tokens seam alone: [`TokenIssuer`] and [`Purge`]
/// (single-use codes and rotations under concurrent callers, replays and reuse reported with
/// their family, revocation, expiry and purging, what each record carries, retry windows and
/// family ends).
pub async fn tokens<S, F, Fut>(fresh: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: TokenIssuer + Purge + 'static,
{
    check(
        "the tokens rules of grantor's store contract",
        token_rules(),
        fresh,
    )
    .await;
}

/// Checks the rules of the state every node shares alone: [`SessionStore`],
/// [`AttemptCounter`], [`SingleUseStore`] and [`Purge`].
pub async fn shared_state<S, F, Fut>(fresh: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: SessionStore + AttemptCounter + SingleUseStore + Purge + 'static,
{
    check(
        "the shared-state rules of grantor's store contract",
        state_rules(),
        fresh,
    )
    .await;
}

/// Checks the rules of single sign-on alone: [`UserSessionStore`] (a signed-in browser found
/// by the digest of its cookie until it expires, its grants kept in order, bounded at
/// [`MAX_SESSION_GRANTS`](super::MAX_SESSION_GRANTS) and none lost to concurrent callers, ended
/// by exactly one of them), [`ConsentStore`] (approvals kept per user and client, replaced,
/// expired and forgotten) and [`Purge`].
pub async fn sign_on<S, F, Fut>(fresh: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: UserSessionStore + ConsentStore + Purge + 'static,
{
    check(
        "the single sign-on rules of grantor's store contract",
        sign_on_rules(),
        fresh,
    )
    .await;
}

/// Checks the rules of the key seam alone: [`KeyStore`] (material kept once under its name,
/// found by every caller until it expires, its name free after) and [`Purge`], for a host that
/// keeps signing and sealing keys apart (a vault, say).
pub async fn keys<S, F, Fut>(fresh: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: KeyStore + Purge + 'static,
{
    check(
        "the key rules of grantor's store contract",
        key_rules(),
        fresh,
    )
    .await;
}

/// Runs each of `rules` against a fresh store, then panics naming each rule broken and why.
async fn check<S, F, Fut>(contract: &str, rules: Vec<Rule<S>>, mut fresh: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
{
    let mut broken = Vec::new();
    for (name, rule) in &rules {
        let store = fresh().await;
        let outcome = AssertUnwindSafe(rule(&store)).catch_unwind().await;
        drop(store);
        if let Err(panic) = outcome {
            broken.push(format!("- {name}: {}", panic_message(panic.as_ref())));
        }
    }
    if !broken.is_empty() {
        panic!(
            "the store broke {} of the {} rules of {contract}:\n{}",
            broken.len(),
            rules.len(),
            broken.join("\n")
        );
    }
}

/// One rule: its name, and a check of one fresh store.
type Rule<S> = (&'static str, RuleFn<S>);

/// A check of one fresh store.
type RuleFn<S> = for<'a> fn(&'a S) -> BoxFuture<'a, ()>;

/// Names each rule after its function (which says what it proves).
macro_rules! rules {
    ($($module:ident::$rule:ident),* $(,)?) => {
        vec![$((stringify!($rule), (|store| $module::$rule(store).boxed()) as RuleFn<_>)),*]
    };
}

/// Every rule of every seam.
fn rules<S: ContractStore>() -> Vec<Rule<S>> {
    let mut rules = token_rules();
    rules.extend(user_rules());
    rules.extend(client_rules());
    rules.extend(activity_rules());
    rules.extend(state_rules());
    rules.extend(key_rules());
    rules.extend(sign_on_rules());
    rules
}

fn sign_on_rules<S: UserSessionStore + ConsentStore + Purge>() -> Vec<Rule<S>> {
    rules![
        sign_on::a_user_session_is_found_by_its_digest_until_it_expires,
        sign_on::a_user_session_keeps_the_class_of_its_sign_in,
        sign_on::session_grants_are_kept_in_order_and_bounded,
        sign_on::concurrent_grants_are_all_kept,
        sign_on::a_user_session_ends_once,
        sign_on::a_user_keeps_only_the_newest_sessions,
        sign_on::a_grant_racing_the_end_is_ended_with_it_or_refused,
        sign_on::consents_are_remembered_replaced_and_forgotten,
        sign_on::every_session_of_a_user_ends_at_once_and_once,
        sign_on::a_users_consents_are_listed_by_client,
        sign_on::purging_drops_expired_user_sessions_and_consents,
    ]
}

fn key_rules<S: KeyStore + Purge>() -> Vec<Rule<S>> {
    rules![
        keys::key_material_is_kept_once_under_its_name_and_found_until_it_expires,
        keys::an_expired_key_frees_its_name,
        keys::of_many_first_callers_one_keeps_its_key_and_all_find_it,
        keys::purging_drops_expired_keys_and_keeps_live_ones,
        keys::live_names_are_listed_and_material_replaced_in_place,
    ]
}

fn token_rules<S: TokenIssuer + Purge>() -> Vec<Rule<S>> {
    rules![
        tokens::a_code_redeemed_by_100_callers_at_once_is_won_by_exactly_one,
        tokens::a_replayed_code_names_its_family_and_revoking_it_kills_its_tokens,
        tokens::a_refresh_token_rotated_by_many_at_once_rotates_once_and_keeps_one_successor,
        tokens::rotation_hands_on_the_family_and_reuse_is_reported_not_revoked,
        tokens::revoking_a_family_or_an_access_token_reaches_only_it,
        tokens::revoking_a_client_kills_every_family_of_it_and_no_other,
        tokens::concurrent_lookups_are_each_answered_their_own,
        expiry::expired_codes_and_tokens_are_not_found,
        expiry::purging_drops_what_expired_or_was_revoked_and_keeps_the_rest,
        tokens::codes_and_tokens_carry_what_was_granted,
        tokens::tokens_for_an_unknown_family_are_refused,
        bindings::each_token_keeps_the_dpop_key_it_was_bound_to,
        bindings::each_token_keeps_the_certificate_it_was_bound_to,
        bindings::an_access_token_keeps_its_actor,
        authentication::a_family_keeps_how_its_user_signed_in_through_its_code_and_rotations,
        authentication::new_families_keep_their_sign_in_and_a_client_s_own_has_none,
        retries::a_retry_within_the_window_moves_on_and_leaves_one_live_pair,
        retries::a_retry_past_the_window_or_without_one_is_reuse,
        retries::concurrent_retries_leave_exactly_one_live_pair,
        retries::a_family_past_its_end_is_gone_and_its_end_never_moves,
        retries::tokens_joining_a_code_family_fix_its_end,
    ]
}

fn user_rules<S: UserStore + UserAdmin>() -> Vec<Rule<S>> {
    rules![
        users::users_authenticate_by_case_insensitive_email_and_password,
        users::adding_a_user_refuses_a_non_email_and_a_taken_username_in_any_case,
        users::setting_a_password_changes_what_authenticates,
        users::claims_are_kept_per_account_and_replaced_whole,
    ]
}

fn activity_rules<S: ClientStore + Admin + ClientActivity>() -> Vec<Rule<S>> {
    rules![clients::self_registered_clients_record_their_last_use]
}

fn client_rules<S: ClientStore + Admin>() -> Vec<Rule<S>> {
    rules![
        accounts::clients_round_trip,
        accounts::registering_refuses_a_taken_id_and_replace_and_remove_say_if_there_was_one,
        accounts::a_registration_access_token_digest_round_trips,
        clients::a_rotated_client_keeps_both_verifiers_and_round_trips,
        clients::a_private_key_jwt_client_keeps_its_keys,
        clients::certificate_clients_keep_their_method_and_subject,
    ]
}

fn state_rules<S: SessionStore + AttemptCounter + SingleUseStore + Purge>() -> Vec<Rule<S>> {
    rules![
        state::sessions_are_kept_under_the_digest_of_their_id,
        state::a_session_taken_by_many_at_once_goes_to_exactly_one,
        state::expired_sessions_are_neither_found_nor_taken,
        state::concurrent_attempts_on_one_key_each_see_a_different_count,
        state::a_new_attempt_window_starts_at_one_after_the_last_ends,
        state::clearing_attempts_forgets_them,
        state::an_attempt_key_of_254_bytes_is_counted,
        state::of_many_concurrent_insert_once_exactly_one_wins,
        state::a_single_use_value_is_peeked_without_use_and_taken_once,
        state::an_expired_single_use_value_is_gone_and_its_key_free_again,
        state::purging_drops_expired_sessions_attempt_windows_and_single_use_values,
    ]
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    if let Some(message) = panic.downcast_ref::<&str>() {
        message
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message
    } else {
        "(a panic without a message)"
    }
}

/// A store call that must succeed: panics naming what failed and why.
trait Must<T> {
    fn must(self, doing: &str) -> T;
}

impl<T, E: fmt::Debug> Must<T> for Result<T, E> {
    #[track_caller]
    fn must(self, doing: &str) -> T {
        match self {
            Ok(value) => value,
            Err(error) => panic!("{doing} failed: {error:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What the rules hand the stores

/// The instant every rule starts at.
const NOW: UnixTime = UnixTime::from_secs(1_800_000_000);

/// `NOW` plus `seconds`.
fn at(seconds: u64) -> UnixTime {
    NOW.plus(Duration::from_secs(seconds))
}

/// Text no other call answers, in this process or (with all but certainty) another.
fn unique() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static SALT: OnceLock<u128> = OnceLock::new();
    let salt = SALT.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        nanos ^ u128::from(std::process::id()) << 96
    });
    format!("{salt:x}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The digest of a new secret, as grantor hands it to a store.
fn digest(what: &str) -> SecretDigest {
    SecretDigest::of(&format!("grantor store contract {what} {}", unique()))
}

/// A new family id, as grantor mints one.
fn family_id() -> FamilyId {
    let digest = digest("family");
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest.as_bytes()[..16]);
    FamilyId::from_bytes(id)
}

fn alice() -> User {
    User::new(UserId::new("u1"), "alice@example.com")
}

fn client_id() -> ClientId {
    ClientId::new("client").must("make a client id")
}

fn scope(text: &str) -> Scope {
    Scope::parse(text).must("parse a scope")
}

/// The audience of every grant of the rules: two resources (RFC 8707).
const AUDIENCE: &str = "https://api.example/ https://files.example/";

fn audience(text: &str) -> Audience {
    match Audience::from_stored(text) {
        Some(audience) => audience,
        None => panic!("{text:?} is not a canonical audience"),
    }
}

/// `client` authorized by Alice for `profile email`, for two resources.
fn authorization() -> Authorization {
    Authorization::new(client_id(), Some(alice()), scope("profile email"))
        .with_audience(audience(AUDIENCE))
}

/// A code for [`authorization`], issued now, redeemable for a minute.
fn code_grant() -> CodeGrant {
    CodeGrant::new(authorization(), "https://app.example/cb", None, NOW, at(60))
}

/// Tokens grantor just minted, with the digests the client would present.
struct Minted {
    record: NewTokens,
    access: SecretDigest,
    refresh: Option<SecretDigest>,
}

impl Minted {
    /// An access token for an hour and, when `refresh`, a refresh token for a day, for
    /// `authorization` in `family`, issued at `issued_at`.
    fn new(
        family: Family,
        authorization: Authorization,
        refresh: bool,
        issued_at: UnixTime,
    ) -> Self {
        let access = digest("access token");
        let jti = Jti::new(unique());
        let expires_at = issued_at.plus(Duration::from_secs(3600));
        let mut record = NewTokens::new(family, authorization, issued_at, access, jti, expires_at);
        let refresh = refresh.then(|| digest("refresh token"));
        if let Some(digest) = refresh {
            let expires_at = issued_at.plus(Duration::from_secs(86_400));
            record = record.with_refresh_token(NewRefreshToken::new(digest, expires_at));
        }
        Self {
            record,
            access,
            refresh,
        }
    }

    /// Tokens for [`authorization`], issued now.
    fn now(family: Family, refresh: bool) -> Self {
        Self::new(family, authorization(), refresh, NOW)
    }

    fn family(&self) -> FamilyId {
        self.record.family.id()
    }

    /// The refresh token's digest (every caller asked for one).
    fn refresh(&self) -> SecretDigest {
        match self.refresh {
            Some(digest) => digest,
            None => panic!("the rule minted no refresh token"),
        }
    }
}
