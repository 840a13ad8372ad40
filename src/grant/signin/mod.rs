//! Signing a browser in, decided: the sign-in form sealed around its pending authorization,
//! the password checked (throttled per account), the form spent, and the first server state of
//! the sign-in opened under a new session id and CSRF token; then the approval form's CSRF
//! checked and its session spent. No HTTP here: the server's sign-in methods read cookies and
//! forms and render what these steps answer.
//!
//! What an unauthenticated browser can make the server keep: nothing. Until the user signs in,
//! the pending authorization travels sealed (authenticated encryption) in the sign-in form's
//! `csrf`, bound to the cookie, so a flood of authorization requests fills no table. A
//! successful sign-in spends the form (RFC 9700 §4.3: whoever planted the cookie and the form
//! cannot reuse them) and, when an approval page follows, opens the first server-side session
//! under ids nobody else has seen (session fixation is worth nothing afterwards).

mod seal;
mod sign_on;

use std::time::Duration;

pub(crate) use seal::{SealKeys, Sealed, Unsealed};
pub(crate) use sign_on::{Resumed, SignOn};

use super::authorize::{Authenticated, PendingAuthorization};
use super::device::{Devices, Entered, is_user_code_shaped};
use super::password::{Failure, SignIn, SignInProblem};
use super::pending;
use crate::clock::UnixTime;
use crate::device::UserCodeProblem;
use crate::error::OAuthError;
use crate::memory::ClientSeam;
use crate::mint;
use crate::secret::{Password, SecretDigest};
use crate::store::{KeyStore, Session, SessionStore, SingleUseStore, User, namespace};

/// What the sign-in steps need: the sealing keys and where they are shared, the sessions, the
/// clients (a pending authorization is read back with its client as registered now), the
/// password check, and how long a form lives.
pub(crate) struct SignInForms<'a> {
    pub(crate) seal_keys: &'a SealKeys,
    /// Where the sealing keys are shared.
    pub(crate) keys: &'a dyn KeyStore,
    /// Where a form that has served its sign-in is marked.
    pub(crate) single_use: &'a dyn SingleUseStore,
    pub(crate) sessions: &'a dyn SessionStore,
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) password: SignIn<'a>,
    pub(crate) form_lifetime: Duration,
    /// Single sign-on: the browser's session, remembered approvals.
    pub(crate) sign_on: SignOn<'a>,
}

/// A sign-in form: the value for the browser's cookie and the sealed form bound to it.
pub(crate) struct Form {
    pub(crate) cookie: String,
    pub(crate) sealed: String,
}

/// What a sign-in form's `POST` decided. A sign-in that opened the browser's single sign-on
/// session carries its cookie (`sign_on`) for the browser.
pub(crate) enum SignedIn {
    /// Signed in, and the client needs no approval (or it was given before): approve now.
    Approved(PendingAuthorization, User, Option<String>),
    /// Signed in: the approval page follows, under a new session id and CSRF token.
    Approve {
        session: String,
        csrf: String,
        pending: PendingAuthorization,
        user: User,
        sign_on: Option<String>,
    },
    /// Not signed in: show the form again (the same cookie and form) with the problem.
    Again(PendingAuthorization, SignInProblem),
}

/// What a sign-in on the device verification page came to.
pub(crate) enum DeviceSignIn {
    /// Signed in, the code found: [`SignedIn::Approve`].
    SignedIn(Box<SignedIn>),
    /// The credentials were not accepted: ask again.
    Again(SignInProblem),
    /// Signed in, but the code was not accepted: ask again.
    Code(UserCodeProblem),
}

const STALE: &str =
    "this sign-in form has expired or is not valid; go back to the application and start again";

fn stale() -> OAuthError {
    OAuthError::invalid_request(STALE)
}

impl SignInForms<'_> {
    /// A sign-in form for `pending`, sealed and bound to a new cookie value. Keeps nothing on
    /// the server but the day's sealing key.
    pub(crate) async fn form(
        &self,
        pending: &PendingAuthorization,
        now: UnixTime,
    ) -> Result<Form, OAuthError> {
        let cookie = mint::cookie()?;
        let sealed = Sealed {
            authorization: pending::to_session(pending),
            binding: SecretDigest::of(&cookie),
            expires_at: now.plus(self.form_lifetime),
        };
        let sealed = self.seal_keys.seal(self.keys, &sealed, now).await?;
        Ok(Form { cookie, sealed })
    }

    /// The sign-in form's `POST`: opens the form (bound to `cookie`), checks the credentials
    /// and, when they are good, spends the form and opens the session an approval page needs.
    pub(crate) async fn sign_in(
        &self,
        cookie: &str,
        form: &str,
        username: &str,
        password: &Password,
        now: UnixTime,
    ) -> Result<SignedIn, OAuthError> {
        let sealed = match self.seal_keys.open(self.keys, form, cookie, now).await {
            Ok(sealed) => sealed,
            Err(Unsealed::Stale) => return Err(stale()),
            Err(Unsealed::Store(e)) => return Err(e.into()),
        };
        let mut pending = pending::from_session(&sealed.authorization, self.clients).await?;
        let client = pending.client().id();
        let user = match self
            .password
            .authenticate(Some(client), username, password, now)
            .await
        {
            Ok(user) => user,
            Err(Failure::Problem(problem)) => return Ok(SignedIn::Again(pending, problem)),
            Err(Failure::Store(error)) => return Err(error),
        };
        // One sign-in per form: whoever else holds the cookie and the form (someone who planted
        // them, RFC 9700 §4.3 on session fixation) cannot reuse them once they have served.
        let used = namespace::signed_in_form(form);
        if !self
            .single_use
            .insert_once(&used, &[], sealed.expires_at, now)
            .await?
        {
            return Err(stale());
        }
        let sign_on = self.sign_on.open(&user, &mut pending, now).await?;
        // A person who just typed their password sees the approval page the client needs; a
        // remembered approval stands in for it only when the browser is already signed in.
        if !pending.needs_approval() {
            return Ok(SignedIn::Approved(pending, user, sign_on));
        }
        self.open_approval(pending, user, sign_on, sealed.expires_at, now)
            .await
    }

    /// The first server state of `user`'s sign-in for `pending`, under ids nobody else has
    /// seen, until `expires_at`: the session the approval page answers with.
    pub(crate) async fn open_approval(
        &self,
        pending: PendingAuthorization,
        user: User,
        sign_on: Option<String>,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<SignedIn, OAuthError> {
        let (session, csrf) = mint::session()?;
        let record = Session::new(
            pending::to_session(&pending),
            SecretDigest::of(&csrf),
            expires_at,
        )
        .signed_in(user.clone());
        self.sessions
            .insert_session(&SecretDigest::of(&session), record, now)
            .await?;
        Ok(SignedIn::Approve {
            session,
            csrf,
            pending,
            user,
            sign_on,
        })
    }

    /// The verification page's sign-in (RFC 8628 §3.3, once wrong codes from people not
    /// signed in have spent the server-wide limit): the password checked as on the sign-in
    /// page (throttled per account), then the code looked up under the account's own limit,
    /// then the approval session opened. A device flow always asks for approval.
    pub(crate) async fn sign_in_with_user_code(
        &self,
        devices: &Devices<'_>,
        user_code: &str,
        username: &str,
        password: &Password,
        now: UnixTime,
    ) -> Result<DeviceSignIn, OAuthError> {
        if !is_user_code_shaped(user_code) {
            return Ok(DeviceSignIn::Code(UserCodeProblem::Malformed));
        }
        let user = match self
            .password
            .authenticate(None, username, password, now)
            .await
        {
            Ok(user) => user,
            Err(Failure::Problem(problem)) => return Ok(DeviceSignIn::Again(problem)),
            Err(Failure::Store(error)) => return Err(error),
        };
        let mut pending = match devices
            .enter_user_code_signed_in(user_code, user.id(), now)
            .await
        {
            Ok(pending) => pending,
            Err(Entered::Problem(problem)) => return Ok(DeviceSignIn::Code(problem)),
            Err(Entered::Failed(error)) => return Err(error),
        };
        // The device page signs in for the device alone: no browser session is opened.
        pending.authenticated = Some(Box::new(Authenticated::by_password(now, None)));
        let expires_at = now.plus(self.form_lifetime);
        self.open_approval(pending, user, None, expires_at, now)
            .await
            .map(|signed_in| DeviceSignIn::SignedIn(Box::new(signed_in)))
    }

    /// The approval form's `POST`: the signed-in session `session` if `csrf` is its CSRF token,
    /// taken (one decision per sign-in), with its pending authorization and user.
    pub(crate) async fn approval(
        &self,
        session: &str,
        csrf: &str,
        now: UnixTime,
    ) -> Result<(PendingAuthorization, User), OAuthError> {
        let id = SecretDigest::of(session);
        let record = self
            .sessions
            .find_session(&id, now)
            .await?
            .filter(|s| s.csrf.ct_eq(&SecretDigest::of(csrf)))
            .ok_or_else(stale)?;
        let pending = pending::from_session(&record.authorization, self.clients).await?;
        let Some(user) = record.user else {
            return Err(OAuthError::invalid_request("sign in before answering"));
        };
        // Taking the session is the single-use step: one decision per sign-in.
        match self.sessions.take_session(&id, now).await? {
            Some(_) => Ok((pending, user)),
            None => Err(stale()),
        }
    }
}
