//! The host's sign-in and approval pages, minus the HTML: [`SignInFlow`] carries each pending
//! authorization through the sign-in form sealed, keeps the signed-in user's approval in the
//! session store under the digest of a random session id (the host's cookie), guards every
//! form with a CSRF token, throttles password guesses per account, and ends in the redirect to
//! the client.
//!
//! Most hosts need no more than [`Site`]: the same steps as HTTP, each page rendered by the
//! host's [`Pages`] (grantor's [`PlainPages`] by default), with the cookie, the CSRF tokens and
//! the security headers handled; the axum and actix-web glue mount it. Below it, the host maps
//! HTTP to these calls itself and renders what they answer (the last only with the device
//! authorization grant on):
//!
//! | host route | call | then |
//! |---|---|---|
//! | `GET`/`POST` authorization endpoint | [`SignInFlow::authorize`] | render [`Step`] |
//! | `POST` of the sign-in form | [`SignInFlow::sign_in`] | render [`Step`] |
//! | `POST` of the approval form | [`SignInFlow::decide`] | render [`Step`] |
//! | `POST` of the device page's code form (RFC 8628 §3.3) | [`SignInFlow::enter_user_code`] | render [`Step`] |
//!
//! Rendering a [`Step::SignIn`] or [`Step::Approve`] page means: set the session cookie to the
//! page's `session` with [`SignInFlow::set_cookie`] (`HttpOnly`, `SameSite=Lax`; on `https`,
//! `Secure` and the `__Host-` name prefix), put its `csrf` in a hidden input, send the page
//! with `Cache-Control: no-store` and framing forbidden. Read the cookie back with
//! [`SignInFlow::cookie`].
//!
//! What an unauthenticated browser can make the server keep: nothing. Until the user signs
//! in, the pending authorization travels sealed (authenticated encryption) in the sign-in
//! form's `csrf`, bound to the cookie, so a flood of authorization requests fills no table. A
//! successful sign-in spends the form (it cannot sign in again) and, when an approval page
//! follows, opens the first server-side session under a new session id and CSRF token: a
//! cookie planted before the user arrived (session fixation) is worth nothing afterwards.

mod device;
mod pages;
mod seal;
mod site;

pub use pages::{DEFAULT_CONTENT_SECURITY_POLICY, DevicePage, Pages, PlainPages, escape_html};
pub use site::{DEFAULT_APPROVAL_PATH, DEFAULT_SIGN_IN_PATH, Site};

pub(crate) use seal::SealKeys;

use std::fmt;
use std::time::Duration;

use http::{Request, Response};
use seal::{Sealed, Unsealed};

use crate::device::UserCodeProblem;
use crate::endpoint::authorize::Authorize;
use crate::error::OAuthError;
use crate::grant::authorize::{Decision, PendingAuthorization};
use crate::grant::password;
use crate::grant::pending;
use crate::mint;
use crate::scope::Scope;
use crate::secret::{Password, SecretDigest};
use crate::server::AuthorizationServer;
use crate::store::{Session, User};

/// What the host shows or sends next.
#[must_use = "the host must render the step"]
pub enum Step {
    /// Show the sign-in form (with [`SignInPage::problem`] after a failed attempt).
    SignIn(SignInPage),
    /// Show the approval page.
    Approve(ApprovalPage),
    /// Send this response as it is: the redirect to the client, with a code, a token or an
    /// error.
    Respond(Response<String>),
    /// Show an error page, without redirecting, with [`OAuthError::status`]: an invalid
    /// authorization request (unknown client, bad redirect URI), or an expired, unknown or
    /// forged sign-in form.
    Error(OAuthError),
    /// Show the device verification page's code form again, saying what was wrong with the
    /// code (RFC 8628 §3.3).
    EnterUserCode(UserCodeProblem),
    /// A device flow was answered (RFC 8628 §3.3): tell the user to return to the device
    /// (approved) or that it was refused (denied). Nothing is sent to the device from here; it
    /// collects the answer on its next poll.
    DeviceAnswered(Decision),
}

/// What the sign-in page shows and carries.
#[derive(Clone)]
pub struct SignInPage {
    /// The value of the host's session cookie: a random value the form is bound to (no
    /// session exists on the server yet).
    pub session: String,
    /// The form's hidden input: the pending authorization, sealed and bound to `session`, so
    /// it also serves as the form's CSRF token (a few hundred bytes to a few KiB).
    pub csrf: String,
    /// The name of the client asking.
    pub client_name: String,
    /// The scope it asks for.
    pub scope: Scope,
    /// Why the last attempt failed, if it did.
    pub problem: Option<SignInProblem>,
}

/// What the approval page shows and carries.
#[derive(Clone)]
pub struct ApprovalPage {
    /// The session id: the value of the host's session cookie.
    pub session: String,
    /// The CSRF token for the form's hidden input.
    pub csrf: String,
    /// The name of the client asking.
    pub client_name: String,
    /// The scope it asks for.
    pub scope: Scope,
    /// The signed-in user's username (email).
    pub username: String,
}

// The session id and CSRF token are secrets, and a response may carry a code or a token in its
// `Location`: `Debug` shows none of them.

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SignIn(page) => f.debug_tuple("SignIn").field(page).finish(),
            Self::Approve(page) => f.debug_tuple("Approve").field(page).finish(),
            Self::Respond(response) => f
                .debug_struct("Respond")
                .field("status", &response.status())
                .finish_non_exhaustive(),
            Self::Error(error) => f.debug_tuple("Error").field(error).finish(),
            Self::EnterUserCode(problem) => f.debug_tuple("EnterUserCode").field(problem).finish(),
            Self::DeviceAnswered(decision) => {
                f.debug_tuple("DeviceAnswered").field(decision).finish()
            }
        }
    }
}

impl fmt::Debug for SignInPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignInPage")
            .field("session", &"<redacted>")
            .field("csrf", &"<redacted>")
            .field("client_name", &self.client_name)
            .field("scope", &self.scope)
            .field("problem", &self.problem)
            .finish()
    }
}

impl fmt::Debug for ApprovalPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalPage")
            .field("session", &"<redacted>")
            .field("csrf", &"<redacted>")
            .field("client_name", &self.client_name)
            .field("scope", &self.scope)
            .field("username", &self.username)
            .finish()
    }
}

/// Why a sign-in attempt failed; shown on the sign-in page, never sent to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignInProblem {
    /// The email or the password is wrong (the page does not say which).
    WrongCredentials,
    /// Too many attempts for this account; try again after the duration.
    Throttled(Duration),
    /// What was typed is not an email address (checked before any password hashing).
    MalformedUsername,
}

impl fmt::Display for SignInProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongCredentials => f.write_str("The email or password is incorrect."),
            Self::MalformedUsername => f.write_str("Enter your email address."),
            Self::Throttled(wait) => write!(
                f,
                "Too many failed sign-ins for this account. Try again in {} minute(s).",
                wait.as_secs().div_ceil(60).max(1)
            ),
        }
    }
}

/// The sign-in and approval steps over an [`AuthorizationServer`], with sessions kept through
/// its [`SessionStore`](crate::store::SessionStore) (the builder's `sessions` or `store`): on a
/// store that every node shares, each step may reach a different node.
#[derive(Debug, Clone)]
pub struct SignInFlow {
    server: AuthorizationServer,
}

impl SignInFlow {
    /// The flow over `server`'s session store.
    pub fn new(server: AuthorizationServer) -> Self {
        Self { server }
    }

    /// The server the flow drives.
    pub fn server(&self) -> &AuthorizationServer {
        &self.server
    }

    /// The name of the host's session cookie: `__Host-grantor-signin` when the issuer is
    /// `https`, else `grantor-signin`. With the `__Host-` prefix a browser keeps the cookie only
    /// if it is `Secure`, has `Path=/` and no `Domain` (RFC 6265bis §4.1.3.2), so neither a
    /// sibling subdomain nor a plain-http page can plant or overwrite it.
    pub fn cookie_name(&self) -> &'static str {
        if self.https() {
            "__Host-grantor-signin"
        } else {
            "grantor-signin"
        }
    }

    /// The `Set-Cookie` value for a page's `session`: [`cookie_name`](Self::cookie_name),
    /// `Path=/; HttpOnly; SameSite=Lax`, a `Max-Age` of the authorization request's lifetime,
    /// and `Secure` when the issuer is `https`.
    ///
    /// ```
    /// # use grantor::{AuthorizationServer, MemoryStore, SignInFlow};
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example.com")
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// let flow = SignInFlow::new(server);
    /// assert_eq!(
    ///     flow.set_cookie("abc"),
    ///     "__Host-grantor-signin=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure"
    /// );
    /// ```
    pub fn set_cookie(&self, session: &str) -> String {
        let max_age = self
            .server
            .inner
            .config
            .lifetimes
            .authorization_request
            .as_secs();
        let secure = if self.https() { "; Secure" } else { "" };
        format!(
            "{}={session}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}",
            self.cookie_name()
        )
    }

    /// The session cookie's value among a request's `Cookie` headers; empty when absent.
    pub fn cookie<'h>(&self, headers: &'h http::HeaderMap) -> &'h str {
        let name = self.cookie_name();
        headers
            .get_all(http::header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(key, _)| *key == name)
            .map_or("", |(_, value)| value)
    }

    fn https(&self) -> bool {
        self.server.issuer().starts_with("https:")
    }

    /// The authorization endpoint: a valid request asks for sign-in, keeping nothing on the
    /// server. The page's `csrf` is the sealed pending authorization, bound to the page's
    /// `session` (a random value for the cookie, not yet a session).
    pub async fn authorize<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Step {
        let pending = match self.server.authorize(request).await {
            Authorize::SignIn(pending) => pending,
            Authorize::Redirect(response) => return Step::Respond(response),
            Authorize::Reject(error) => return Step::Error(error),
        };
        self.sign_in_page(&pending).await
    }

    /// The sign-in page for `pending`, sealed into the form and bound to a new cookie value.
    async fn sign_in_page(&self, pending: &PendingAuthorization) -> Step {
        let inner = &self.server.inner;
        let now = inner.clock.now();
        let cookie = match mint::cookie() {
            Ok(cookie) => cookie,
            Err(e) => return Step::Error(e.into()),
        };
        let sealed = Sealed {
            authorization: pending::to_session(pending),
            binding: SecretDigest::of(&cookie),
            expires_at: now.plus(inner.config.lifetimes.authorization_request),
        };
        let csrf = match inner.seal_keys.seal(&*inner.single_use, &sealed, now).await {
            Ok(csrf) => csrf,
            Err(e) => return Step::Error(e.into()),
        };
        Step::SignIn(SignInPage {
            session: cookie,
            csrf,
            client_name: pending.client().name().to_owned(),
            scope: pending.scope().clone(),
            problem: None,
        })
    }

    /// The sign-in form's `POST`: opens the sealed form (bound to the cookie) and checks the
    /// credentials (throttled per account). A wrong password shows the sign-in page again and
    /// never reaches the client. A good one signs the form in once: the form cannot sign in
    /// again, and when the approval page follows it carries a new session id and CSRF token.
    pub async fn sign_in(
        &self,
        session: &str,
        csrf: &str,
        username: &str,
        password: &Password,
    ) -> Step {
        match self.try_sign_in(session, csrf, username, password).await {
            Ok(step) | Err(step) => step,
        }
    }

    async fn try_sign_in(
        &self,
        cookie: &str,
        form: &str,
        username: &str,
        password: &Password,
    ) -> Result<Step, Step> {
        let inner = &self.server.inner;
        let now = inner.clock.now();
        let sealed = match inner
            .seal_keys
            .open(&*inner.single_use, form, cookie, now)
            .await
        {
            Ok(sealed) => sealed,
            Err(Unsealed::Stale) => return Err(Step::Error(form_error(STALE))),
            Err(Unsealed::Store(e)) => return Err(Step::Error(e.into())),
        };
        let pending = pending::from_session(&sealed.authorization, &*inner.clients)
            .await
            .map_err(Step::Error)?;
        let user = match inner
            .sign_in()
            .authenticate(pending.client().id(), username, password, now)
            .await
        {
            Ok(user) => user,
            Err(password::Failure::Problem(problem)) => {
                return Ok(Step::SignIn(SignInPage {
                    session: cookie.to_owned(),
                    csrf: form.to_owned(),
                    client_name: pending.client().name().to_owned(),
                    scope: pending.scope().clone(),
                    problem: Some(problem),
                }));
            }
            Err(password::Failure::Store(error)) => return Err(Step::Error(error)),
        };
        // One sign-in per form: whoever else holds the cookie and the form (someone who planted
        // them, RFC 9700 §4.3 on session fixation) cannot reuse them once they have served.
        let used = format!(
            "grantor:signed-in:{}",
            SecretDigest::of(form).to_base64url()
        );
        match inner
            .single_use
            .insert_once(&used, &[], sealed.expires_at, now)
            .await
        {
            Ok(true) => {}
            Ok(false) => return Err(Step::Error(form_error(STALE))),
            Err(e) => return Err(Step::Error(e.into())),
        }
        if !pending.needs_approval() {
            return Ok(self.finish(pending, &user, Decision::Approve).await);
        }
        // The first server state of this sign-in, under ids nobody else has seen.
        let (session, csrf) = mint::session().map_err(|e| Step::Error(e.into()))?;
        let record = Session::new(
            sealed.authorization,
            SecretDigest::of(&csrf),
            sealed.expires_at,
        )
        .signed_in(user.clone());
        let id = SecretDigest::of(&session);
        if let Err(error) = inner.sessions.insert_session(&id, record, now).await {
            return Err(Step::Error(error.into()));
        }
        Ok(Step::Approve(ApprovalPage {
            session,
            csrf,
            client_name: pending.client().name().to_owned(),
            scope: pending.scope().clone(),
            username: user.username().to_owned(),
        }))
    }

    /// The approval form's `POST`: the signed-in user's decision, answered with the redirect
    /// to the client.
    pub async fn decide(&self, session: &str, csrf: &str, decision: Decision) -> Step {
        let (record, pending) = match self.open(session, csrf).await {
            Ok(found) => found,
            Err(error) => return Step::Error(error),
        };
        let Some(user) = record.user else {
            return Step::Error(form_error("sign in before answering"));
        };
        // Taking the session is the single-use step: one decision per sign-in.
        match self.take(session).await {
            Ok(Some(_)) => self.finish(pending, &user, decision).await,
            Ok(None) => Step::Error(form_error(STALE)),
            Err(error) => Step::Error(error),
        }
    }

    async fn finish(&self, pending: PendingAuthorization, user: &User, decision: Decision) -> Step {
        if pending.response_type() == crate::ResponseType::Device {
            return self.finish_device(&pending, user, decision).await;
        }
        Step::Respond(self.server.decide(pending, user.id(), decision).await)
    }

    /// The live session `id` and its pending authorization, if `csrf` is the session's.
    async fn open(
        &self,
        id: &str,
        csrf: &str,
    ) -> Result<(Session, PendingAuthorization), OAuthError> {
        let inner = &self.server.inner;
        let now = inner.clock.now();
        let found = inner
            .sessions
            .find_session(&SecretDigest::of(id), now)
            .await?;
        let record = found
            .filter(|s| s.csrf.ct_eq(&SecretDigest::of(csrf)))
            .ok_or_else(|| form_error(STALE))?;
        let pending = pending::from_session(&record.authorization, &*inner.clients).await?;
        Ok((record, pending))
    }

    async fn take(&self, id: &str) -> Result<Option<Session>, OAuthError> {
        let inner = &self.server.inner;
        let id = SecretDigest::of(id);
        Ok(inner.sessions.take_session(&id, inner.clock.now()).await?)
    }
}

const STALE: &str =
    "this sign-in form has expired or is not valid; go back to the application and start again";

fn form_error(description: &'static str) -> OAuthError {
    OAuthError::invalid_request(description)
}
