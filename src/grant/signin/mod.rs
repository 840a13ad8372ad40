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

mod levels;
mod seal;
mod sign_on;

use std::time::Duration;

pub use levels::SecondFactorProblem;
pub(crate) use levels::{Levels, Needed};
pub(crate) use seal::{SealKeys, Sealed, Unsealed};
pub(crate) use sign_on::{Resumed, SignOn};

use super::device::{Devices, Entered, is_user_code_shaped};
use super::password::{Failure, SignIn, SignInProblem};
use super::pending;
use super::pending::{Authenticated, PendingAuthorization};
use crate::clock::UnixTime;
use crate::device::UserCodeProblem;
use crate::error::OAuthError;
use crate::mint;
use crate::secret::{Password, SecretDigest};
use crate::store::seam::ClientSeam;
use crate::store::{
    AttemptCounter, KeyStore, MAX_SID_BYTES, Session, SessionStore, SingleUseStore, User, UserId,
    UserStore, namespace,
};
use crate::throttle::SignInThrottle;

/// What the sign-in steps need: the sealing keys and where they are shared, the sessions, the
/// clients (a pending authorization is read back with its client as registered now), the
/// password check, the classes and the second factor, and how long a form lives.
pub(crate) struct SignInForms<'a> {
    pub(crate) seal_keys: &'a SealKeys,
    /// Where the sealing keys are shared.
    pub(crate) keys: &'a dyn KeyStore,
    /// Where a form that has served its sign-in is marked.
    pub(crate) single_use: &'a dyn SingleUseStore,
    pub(crate) sessions: &'a dyn SessionStore,
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) password: SignIn<'a>,
    /// The accounts a host's finished sign-in names.
    pub(crate) users: &'a dyn UserStore,
    /// Where wrong second-factor codes are counted.
    pub(crate) attempts: &'a dyn AttemptCounter,
    pub(crate) form_lifetime: Duration,
    /// Single sign-on: the browser's session, remembered approvals, and the levels.
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
    /// The password was right and the request asks for the second factor: its page, under a
    /// new cookie and form (or the same, with the problem, after a wrong code).
    SecondFactor {
        form: Form,
        pending: PendingAuthorization,
        problem: Option<SecondFactorProblem>,
    },
    /// The request requires a class this user cannot reach: refused at the client.
    Refused(PendingAuthorization, OAuthError),
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

/// How a host's own sign-in steps signed a person in, for
/// [`AuthorizationServer::finish_sign_in`](crate::AuthorizationServer::finish_sign_in): who,
/// by which methods (`amr`, RFC 8176), at which class (`acr`) and when (`auth_time`, now
/// unless said).
///
/// ```
/// use grantor::signin::Authentication;
/// use grantor::store::UserId;
///
/// let carol = Authentication::new(UserId::new("42"))
///     .methods(["pwd", "otp"])
///     .acr("urn:example:acr:mfa");
/// # let _ = carol;
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Authentication {
    /// Who signed in: an id the user store finds.
    pub user: UserId,
    /// How (`amr`, RFC 8176 §2: `pwd`, `otp`, `hwk`, `face`…): at most 8 values of at most 64
    /// bytes.
    pub amr: Vec<String>,
    /// The class reached (`acr`), one of the server's
    /// [`AcrLevels`](crate::settings::AcrLevels), if it names any.
    pub acr: Option<String>,
    /// When; `None` for now.
    pub auth_time: Option<UnixTime>,
}

impl Authentication {
    /// `user` signed in just now, by methods not said.
    pub fn new(user: UserId) -> Self {
        Self {
            user,
            amr: Vec::new(),
            acr: None,
            auth_time: None,
        }
    }

    /// The methods used (`amr`, RFC 8176).
    pub fn methods<I, S>(mut self, amr: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.amr = amr.into_iter().map(Into::into).collect();
        self
    }

    /// The class reached (`acr`).
    pub fn acr(mut self, acr: impl Into<String>) -> Self {
        self.acr = Some(acr.into());
        self
    }

    /// When the person authenticated (`auth_time`), if not now.
    pub fn at(mut self, auth_time: UnixTime) -> Self {
        self.auth_time = Some(auth_time);
        self
    }

    /// The sign-in as grantor records it, or why it cannot be: too many or too long methods.
    fn recorded(self, levels: Levels<'_>, now: UnixTime) -> Result<Authenticated, OAuthError> {
        let fits = |v: &String| !v.is_empty() && v.len() <= MAX_SID_BYTES;
        if self.amr.len() > 8 || !self.amr.iter().all(fits) {
            return Err(OAuthError::invalid_request(
                "the sign-in names more than 8 methods, or one longer than 64 bytes",
            ));
        }
        if let Some(acr) = &self.acr
            && !levels.acr.classes().contains(acr)
        {
            return Err(OAuthError::invalid_request(
                "the sign-in names an acr that is not one of the server's acr levels",
            ));
        }
        Ok(Authenticated {
            auth_time: self.auth_time.unwrap_or(now).min(now),
            amr: self.amr,
            sid: None,
            session: None,
            acr: self.acr,
            user: None,
        })
    }
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

    /// The pending authorization sealed in `form`, if it is bound to `cookie` and live.
    pub(crate) async fn open(
        &self,
        cookie: &str,
        form: &str,
        now: UnixTime,
    ) -> Result<(PendingAuthorization, Sealed), OAuthError> {
        let sealed = match self.seal_keys.open(self.keys, form, cookie, now).await {
            Ok(sealed) => sealed,
            Err(Unsealed::Stale) => return Err(stale()),
            Err(Unsealed::Store(e)) => return Err(e.into()),
        };
        let pending = pending::from_session(&sealed.authorization, self.clients).await?;
        Ok((pending, sealed))
    }

    /// Marks `form` as having served its step: whoever else holds the cookie and the form
    /// (someone who planted them, RFC 9700 §4.3 on session fixation) cannot reuse them.
    async fn spend(&self, form: &str, sealed: &Sealed, now: UnixTime) -> Result<(), OAuthError> {
        let used = namespace::signed_in_form(form);
        if self
            .single_use
            .insert_once(&used, &[], sealed.expires_at, now)
            .await?
        {
            Ok(())
        } else {
            Err(stale())
        }
    }

    /// The sign-in form's `POST`: opens the form (bound to `cookie`), checks the credentials
    /// and, when they are good, spends the form and goes on: to the second factor when the
    /// request asks for it, else to the approval or the answer.
    pub(crate) async fn sign_in(
        &self,
        cookie: &str,
        form: &str,
        username: &str,
        password: &Password,
        now: UnixTime,
    ) -> Result<SignedIn, OAuthError> {
        let (pending, sealed) = self.open(cookie, form, now).await?;
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
        self.spend(form, &sealed, now).await?;
        let levels = self.sign_on.levels;
        let authenticated = Authenticated::by_password(now, None).with_acr(levels.by_password());
        self.authenticated(pending, user, authenticated, true, now)
            .await
    }

    /// The host's own sign-in steps are done (the interaction API): opens the form (bound to
    /// `cookie`), spends it, and goes on as a sign-in of grantor's own would, for the user
    /// `authentication` names. A class the request requires that it did not reach is refused;
    /// grantor asks for no further step.
    pub(crate) async fn finish(
        &self,
        cookie: &str,
        form: &str,
        authentication: Authentication,
        now: UnixTime,
    ) -> Result<SignedIn, OAuthError> {
        let (pending, sealed) = self.open(cookie, form, now).await?;
        let user = self
            .users
            .find_user(&authentication.user)
            .await?
            .ok_or_else(|| {
                OAuthError::invalid_request("the signed-in user is not one the user store finds")
            })?;
        let authenticated = authentication.recorded(self.sign_on.levels, now)?;
        self.spend(form, &sealed, now).await?;
        self.authenticated(pending, user, authenticated, false, now)
            .await
    }

    /// `user` authenticated for `pending` as `authenticated` says: the second factor's page
    /// when the request asks for it (and `second_factor` allows grantor's own), a refusal when
    /// it requires a class out of reach, else the browser's session and the approval or the
    /// answer.
    async fn authenticated(
        &self,
        mut pending: PendingAuthorization,
        user: User,
        mut authenticated: Authenticated,
        second_factor: bool,
        now: UnixTime,
    ) -> Result<SignedIn, OAuthError> {
        let levels = self.sign_on.levels;
        match levels
            .needed(&pending, &authenticated, &user, second_factor)
            .await?
        {
            Needed::Nothing => {}
            Needed::SecondFactor => {
                authenticated.user = Some(user.id().as_str().to_owned());
                pending.authenticated = Some(Box::new(authenticated));
                let form = self.form(&pending, now).await?;
                return Ok(SignedIn::SecondFactor {
                    form,
                    pending,
                    problem: None,
                });
            }
            Needed::Refused(error) => return Ok(SignedIn::Refused(pending, error)),
        }
        let sign_on = self
            .sign_on
            .open(&user, &mut pending, authenticated, now)
            .await?;
        // A person who just signed in sees the approval page the client needs; a remembered
        // approval stands in for it only when the browser is already signed in.
        if !pending.needs_approval() {
            return Ok(SignedIn::Approved(pending, user, sign_on));
        }
        let expires_at = now.plus(self.form_lifetime);
        self.open_approval(pending, user, sign_on, expires_at, now)
            .await
    }

    /// A second-factor page for `pending`, whose `authenticated` names the user so far (a
    /// browser whose session asks only for the missing step).
    pub(crate) async fn second_factor_form(
        &self,
        pending: PendingAuthorization,
        now: UnixTime,
    ) -> Result<SignedIn, OAuthError> {
        let form = self.form(&pending, now).await?;
        Ok(SignedIn::SecondFactor {
            form,
            pending,
            problem: None,
        })
    }

    /// The second factor's form `POST`: opens the form (bound to `cookie`), counts the attempt
    /// against the account's throttle, asks the host's factor whether `code` is right, spends
    /// the code (never accepted again) and the form, and goes on with the sign-in at the class
    /// the second factor reaches.
    pub(crate) async fn second_factor(
        &self,
        cookie: &str,
        form: &str,
        code: &str,
        now: UnixTime,
    ) -> Result<SignedIn, OAuthError> {
        let (mut pending, sealed) = self.open(cookie, form, now).await?;
        let levels = self.sign_on.levels;
        let Some(factor) = levels.second_factor else {
            return Err(stale());
        };
        let Some(mut authenticated) = pending.authenticated.take().map(|a| *a) else {
            return Err(stale());
        };
        let Some(user_id) = authenticated.user.as_deref().map(UserId::new) else {
            return Err(stale());
        };
        let Some(user) = self.users.find_user(&user_id).await? else {
            return Err(stale());
        };
        let again = |pending: PendingAuthorization, authenticated: Authenticated, problem| {
            let mut pending = pending;
            pending.authenticated = Some(Box::new(authenticated));
            SignedIn::SecondFactor {
                form: Form {
                    cookie: cookie.to_owned(),
                    sealed: form.to_owned(),
                },
                pending,
                problem: Some(problem),
            }
        };
        let throttle: &SignInThrottle = levels.acr.throttle();
        let key = namespace::second_factor_attempts(&user_id);
        let reserved = self
            .attempts
            .record_attempt(&key, throttle.window(), now)
            .await?;
        if let Some(wait) = throttle.wait(reserved, now) {
            let problem = SecondFactorProblem::Throttled(wait);
            return Ok(again(pending, authenticated, problem));
        }
        let accepted = match factor.verify(&user, code.trim(), now).await? {
            // RFC 6238 §5.2: a code once accepted is never accepted again.
            Some(step) => {
                let spent = namespace::second_factor_code(&user_id, step);
                let until = now.plus(Duration::from_secs(600));
                self.single_use.insert_once(&spent, &[], until, now).await?
            }
            None => false,
        };
        if !accepted {
            return Ok(again(
                pending,
                authenticated,
                SecondFactorProblem::WrongCode,
            ));
        }
        self.attempts.clear_attempts(&key).await?;
        self.spend(form, &sealed, now).await?;
        authenticated.amr.push(factor.method().to_owned());
        authenticated.acr = levels.acr.by_second_factor().map(str::to_owned);
        authenticated.auth_time = now;
        authenticated.user = None;
        self.authenticated(pending, user, authenticated, false, now)
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
        let acr = self.sign_on.levels.by_password();
        pending.authenticated = Some(Box::new(
            Authenticated::by_password(now, None).with_acr(acr),
        ));
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
