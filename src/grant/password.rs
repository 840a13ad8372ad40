//! The resource owner password credentials grant (RFC 6749 §4.3), and the password check it
//! shares with the host's sign-in page: the username is the user's email address, and failed
//! attempts are throttled per account through the attempt-counter seam, so every node counts
//! the guesses made at every node.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;

use super::id_token::{Beside, Subject};
use super::issue::{Issued, Issuer};
use super::pending::Authenticated;
use crate::audience::Audience;
use crate::client::Client;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::events::{Event, EventKind, Events};
use crate::hash::Hashing;
use crate::scope::Scope;
use crate::secret::Password;
use crate::store::{
    AttemptCounter, Authorization, PasswordVerifier, SignInFacts, User, UserAdmin, UserStore,
    Verification,
};
use crate::throttle::{SignInThrottle, Turns};
use crate::usernames::Usernames;

/// What a new grant is for, resolved for its client before any password is checked (so a bad
/// scope or resource costs no hashing).
#[derive(Debug)]
pub(crate) struct Granted {
    pub(crate) scope: Scope,
    pub(crate) audience: Audience,
}

/// What checking a password needs: the accounts, how their passwords are verified, where an
/// upgraded hash goes, the throttle's policy and its counters.
#[derive(Clone, Copy)]
pub(crate) struct SignIn<'a> {
    pub(crate) users: &'a dyn UserStore,
    /// Checks a password against what the account keeps (on the hashing lane).
    pub(crate) verifier: &'a Arc<dyn PasswordVerifier>,
    /// Where an upgraded hash goes after a good sign-in: the users' admin seam, unless the
    /// host turned upgrades off or has none.
    pub(crate) rehash: Option<&'a dyn UserAdmin>,
    /// Where passwords are verified: the server's user lane.
    pub(crate) hashing: &'a Hashing,
    pub(crate) throttle: &'a SignInThrottle,
    /// Which usernames accounts have, and their keys.
    pub(crate) usernames: &'a Usernames,
    /// The class a password alone reaches (`acr`), if the deployment names one.
    pub(crate) password_acr: Option<&'a str>,
    pub(crate) attempts: &'a dyn AttemptCounter,
    pub(crate) turns: &'a Turns,
    /// Where sign-ins are reported.
    pub(crate) events: &'a dyn Events,
}

/// The token request of RFC 6749 §4.3.2; scope and audience are already resolved for the
/// client (checked before the password, so a bad one costs no hashing).
pub(crate) async fn exchange(
    issuer: &Issuer<'_>,
    sign_in: &SignIn<'_>,
    client: &Client,
    credentials: Credentials<'_>,
    granted: Granted,
    openid: bool,
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    let user = sign_in
        .authenticate(
            Some(client.id()),
            credentials.username,
            credentials.password,
            now,
        )
        .await?;
    // Kept only for an ID token: a plain password grant copies nothing more than before.
    let id_token_for = openid.then(|| user.id().clone());
    // A sign-in now, by password: what every token of this grant remembers of it.
    let signed =
        Authenticated::by_password(now, None).with_acr(sign_in.password_acr.map(str::to_owned));
    let acr = signed.acr.clone();
    let authorization = Authorization::new(client.id().clone(), Some(user), granted.scope)
        .with_audience(granted.audience)
        .with_authentication(Some(signed.authentication()));
    let refresh = client.issues_refresh_tokens();
    let mut issued = issuer
        .issue(
            crate::client::GrantType::Password,
            authorization,
            None,
            refresh,
            now,
        )
        .await?;
    // An `openid` scope: an ID token for the sign-in just made (`auth_time` now, `amr` pwd;
    // no nonce or session, which this grant has not).
    if let (Some(user_id), Some(id_tokens)) = (&id_token_for, issuer.id_tokens) {
        let facts = SignInFacts::new(None, now).with_acr(acr);
        let subject = Subject {
            client,
            user: user_id,
            facts: &facts,
        };
        let beside = Beside {
            access_token: Some(issued.access_token()),
            code: None,
        };
        issued.id_token = Some(id_tokens.sign(subject, beside, Map::new(), now).await?);
    }
    Ok(issued)
}

/// The resource owner's credentials of RFC 6749 §4.3.2.
#[derive(Clone, Copy)]
pub(crate) struct Credentials<'a> {
    pub(crate) username: &'a str,
    pub(crate) password: &'a Password,
}

pub(crate) enum Failure {
    /// Wrong credentials, or too many failures: shown on a sign-in page, or `invalid_grant`.
    Problem(SignInProblem),
    /// A store failed.
    Store(OAuthError),
}

impl From<Failure> for OAuthError {
    fn from(failure: Failure) -> Self {
        match failure {
            // A username that cannot be an account's (not an email address) is refused before
            // any count or hash, with the same answer as a wrong password (RFC 6749 §5.2: the
            // resource owner credentials are invalid).
            Failure::Problem(
                SignInProblem::WrongCredentials | SignInProblem::MalformedUsername,
            ) => OAuthError::invalid_grant("the username or password is incorrect"),
            Failure::Problem(SignInProblem::Throttled(_)) => OAuthError::invalid_grant(
                "too many failed sign-ins for this account; try again later",
            ),
            Failure::Store(error) => error,
        }
    }
}

impl SignIn<'_> {
    /// Checks a username and password against the user store, throttled per account.
    ///
    /// The attempt is counted *before* the password is hashed, atomically through the
    /// attempt-counter seam (shared by every node): of any number of concurrent guesses at one
    /// account, at most the throttle's limit reach the hash; the rest are refused without one.
    /// On each node, checks of one account take turns, so a user's own concurrent sign-ins
    /// wait rather than throttle each other. A success clears the account's count; a failure
    /// leaves its reservation counted.
    ///
    /// The outcome is reported as an event for `client` (the one the user signs in to):
    /// succeeded (with the user), failed or throttled (without saying which account).
    pub(crate) async fn authenticate(
        &self,
        client: Option<&ClientId>,
        username: &str,
        password: &Password,
        now: UnixTime,
    ) -> Result<User, Failure> {
        let answer = self.check(username, password, now).await;
        let kind = match &answer {
            Ok(_) => Some(EventKind::SignInSucceeded),
            Err(Failure::Problem(SignInProblem::WrongCredentials)) => Some(EventKind::SignInFailed),
            Err(Failure::Problem(SignInProblem::Throttled(_))) => Some(EventKind::AccountThrottled),
            Err(_) => None,
        };
        if let Some(kind) = kind {
            let user = answer.as_ref().ok().map(User::id);
            let mut event = Event::new(kind, now).user(user);
            event.client_id = client.cloned();
            self.events.record(&event);
        }
        answer
    }

    async fn check(
        &self,
        username: &str,
        password: &Password,
        now: UnixTime,
    ) -> Result<User, Failure> {
        let store = |e: crate::error::StoreError| Failure::Store(e.into());
        // A malformed username costs nothing: no count, no hash.
        let account = self
            .usernames
            .key(username)
            .ok_or(Failure::Problem(SignInProblem::MalformedUsername))?;
        let key = self.throttle.key(&account);
        // Concurrent checks of one account on this node go one at a time, so that what each
        // reserves below is counted against what the previous one found.
        let _turn = self.turns.take(&key).await;
        // An unknown username refused unchecked (every dummy check's place is taken) is not
        // counted: a flood of them makes counter keys only as fast as they are hashed. (Looked
        // up here only then, so a throttled guess otherwise costs no lookup.)
        if !self.hashing.has_room_for_dummy()
            && self
                .users
                .find_account(username)
                .await
                .map_err(store)?
                .is_none()
        {
            return Err(store(crate::error::StoreError::unavailable(
                "too many sign-ins are being checked; try again later",
            )));
        }
        let window = self.throttle.window();
        let reserved = self
            .attempts
            .record_attempt(&key, window, now)
            .await
            .map_err(store)?;
        if let Some(wait) = self.throttle.wait(reserved, now) {
            return Err(Failure::Problem(SignInProblem::Throttled(wait)));
        }
        match self.verify(username, password).await.map_err(store)? {
            Some(user) => {
                self.attempts.clear_attempts(&key).await.map_err(store)?;
                Ok(user)
            }
            None => Err(Failure::Problem(SignInProblem::WrongCredentials)),
        }
    }

    /// The account `username` names if `password` is its password. The store only finds the
    /// account and what it keeps; the check is the verifier's, on the server's user lane, and
    /// an unknown username costs a check against a dummy Argon2id hash, so that timing does
    /// not tell which accounts exist (outside a flood of unknown usernames: see
    /// [`crate::hash`]). A right password kept in an older scheme is upgraded.
    async fn verify(
        &self,
        username: &str,
        password: &Password,
    ) -> Result<Option<User>, crate::error::StoreError> {
        let Some(account) = self.users.find_account(username).await? else {
            self.hashing
                .verify_against_dummy(password.expose_secret())
                .await?;
            return Ok(None);
        };
        let user = account.user().clone();
        // On the user lane, off the executor: the verifier may be slow, or block.
        let verifier = Arc::clone(self.verifier);
        let secret = password.clone();
        let verified = self
            .hashing
            .on_user_lane(move || verifier.verify(&account, &secret))
            .await??;
        if verified == Verification::MatchRehash {
            self.upgrade(&user, password).await;
        }
        Ok(verified.is_match().then_some(user))
    }

    /// Replaces `user`'s stored hash by grantor's Argon2id of `password`, through the users'
    /// admin seam. A failure costs the upgrade, never the sign-in: it is tried again at the
    /// next one.
    async fn upgrade(&self, user: &User, password: &Password) {
        let Some(admin) = self.rehash else {
            return;
        };
        let upgraded = match self.hashing.hash(password).await {
            Ok(phc) => admin.set_password_hash(user.id(), &phc).await,
            Err(error) => Err(error),
        };
        match upgraded {
            Ok(true) => tracing::info!(user = %user.id(), "password hash upgraded to Argon2id"),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(user = %user.id(), %error, "the password hash was not upgraded")
            }
        }
    }
}

/// Why a sign-in attempt failed; shown on the sign-in page, never sent to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignInProblem {
    /// The username or the password is wrong (the page does not say which).
    WrongCredentials,
    /// Too many attempts for this account; try again after the duration.
    Throttled(Duration),
    /// What was typed cannot be any account's username (not an email address, by default;
    /// [`Usernames`](crate::settings::Usernames)): checked before any count or hashing.
    MalformedUsername,
}

impl fmt::Display for SignInProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongCredentials => f.write_str("The username or password is incorrect."),
            Self::MalformedUsername => f.write_str("Enter the username of your account."),
            Self::Throttled(wait) => write!(
                f,
                "Too many failed sign-ins for this account. Try again in {} minute(s).",
                wait.as_secs().div_ceil(60).max(1)
            ),
        }
    }
}
