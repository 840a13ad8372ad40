//! The host's sign-in and approval pages, minus the HTML: [`SignInFlow`] keeps each pending
//! authorization in the session store under the digest of a random session id (the host's
//! cookie), guards every form
//! with a CSRF token, throttles password guesses per account, and ends in the redirect to the
//! client.
//!
//! The host maps HTTP to three calls and renders what they answer:
//!
//! | host route | call | then |
//! |---|---|---|
//! | `GET`/`POST` authorization endpoint | [`SignInFlow::authorize`] | render [`Step`] |
//! | `POST` of the sign-in form | [`SignInFlow::sign_in`] | render [`Step`] |
//! | `POST` of the approval form | [`SignInFlow::decide`] | render [`Step`] |
//!
//! Rendering a [`Step::SignIn`] or [`Step::Approve`] page means: set the session cookie
//! (`HttpOnly`, `SameSite=Lax`) to the page's `session`, put its `csrf` in a hidden input, send
//! the page with `Cache-Control: no-store` and framing forbidden.

use std::fmt;
use std::time::Duration;

use http::{Request, Response};

use crate::endpoint::authorize::Authorize;
use crate::endpoint::pending;
use crate::error::OAuthError;
use crate::grant::authorize::{Decision, PendingAuthorization};
use crate::grant::password;
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
}

/// What the sign-in page shows and carries.
#[derive(Clone)]
pub struct SignInPage {
    /// The session id: the value of the host's session cookie.
    pub session: String,
    /// The CSRF token for the form's hidden input.
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

    /// The authorization endpoint: a valid request starts a session and asks for sign-in.
    pub async fn authorize<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Step {
        let pending = match self.server.authorize(request).await {
            Authorize::SignIn(pending) => pending,
            Authorize::Redirect(response) => return Step::Respond(response),
            Authorize::Reject(error) => return Step::Error(error),
        };
        let inner = &self.server.inner;
        let now = inner.clock.now();
        let (session, csrf) = match mint::session() {
            Ok(ids) => ids,
            Err(e) => return Step::Error(e.into()),
        };
        let expires_at = now.plus(inner.config.lifetimes.authorization_request);
        let record = Session::new(
            pending::to_session(&pending),
            SecretDigest::of(&csrf),
            expires_at,
        );
        let id = SecretDigest::of(&session);
        if let Err(error) = inner.sessions.insert_session(&id, record, now).await {
            return Step::Error(error.into());
        }
        Step::SignIn(SignInPage {
            session,
            csrf,
            client_name: pending.client().name().to_owned(),
            scope: pending.scope().clone(),
            problem: None,
        })
    }

    /// The sign-in form's `POST`: checks the CSRF token and the credentials (throttled per
    /// account). A wrong password shows the sign-in page again and never reaches the client.
    pub async fn sign_in(
        &self,
        session: &str,
        csrf: &str,
        username: &str,
        password: &Password,
    ) -> Step {
        let inner = &self.server.inner;
        let (record, pending) = match self.open(session, csrf).await {
            Ok(found) => found,
            Err(error) => return Step::Error(error),
        };
        let page = SignInPage {
            session: session.to_owned(),
            csrf: csrf.to_owned(),
            client_name: pending.client().name().to_owned(),
            scope: pending.scope().clone(),
            problem: None,
        };
        let now = inner.clock.now();
        let user = match inner.sign_in().authenticate(username, password, now).await {
            Ok(user) => user,
            Err(password::Failure::Problem(problem)) => {
                return Step::SignIn(SignInPage {
                    problem: Some(problem),
                    ..page
                });
            }
            Err(password::Failure::Store(error)) => return Step::Error(error),
        };
        if !pending.needs_approval() {
            return match self.take(session).await {
                Ok(Some(_)) => self.finish(pending, &user, Decision::Approve).await,
                Ok(None) => Step::Error(form_error(STALE)),
                Err(error) => Step::Error(error),
            };
        }
        // The session now carries the signed-in user; the approval form posts back to it.
        let id = SecretDigest::of(session);
        let signed_in = record.signed_in(user.clone());
        let kept = match self.take(session).await {
            Ok(Some(_)) => inner.sessions.insert_session(&id, signed_in, now).await,
            Ok(None) => return Step::Error(form_error(STALE)),
            Err(error) => return Step::Error(error),
        };
        if let Err(error) = kept {
            return Step::Error(error.into());
        }
        Step::Approve(ApprovalPage {
            session: page.session,
            csrf: page.csrf,
            client_name: page.client_name,
            scope: page.scope,
            username: user.username().to_owned(),
        })
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
