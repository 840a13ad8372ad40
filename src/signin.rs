//! The host's sign-in and approval pages, minus the HTML: [`SignInFlow`] keeps each pending
//! authorization server-side under a random session id (the host's cookie), guards every form
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

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{Request, Response};
use subtle::ConstantTimeEq as _;

use crate::authorize::{Authorize, Decision, PendingAuthorization};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::password;
use crate::scope::Scope;
use crate::secret::{Password, random_bytes};
use crate::server::AuthorizationServer;
use crate::store::User;

/// What the host shows or sends next.
#[derive(Debug)]
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
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
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

/// Why a sign-in attempt failed; shown on the sign-in page, never sent to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInProblem {
    /// The email or the password is wrong (the page does not say which).
    WrongCredentials,
    /// Too many failed attempts for this account; try again after the duration.
    Throttled(Duration),
}

impl fmt::Display for SignInProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongCredentials => f.write_str("The email or password is incorrect."),
            Self::Throttled(wait) => write!(
                f,
                "Too many failed sign-ins for this account. Try again in {} minute(s).",
                wait.as_secs().div_ceil(60).max(1)
            ),
        }
    }
}

/// Server-side sign-in sessions over an [`AuthorizationServer`].
pub struct SignInFlow {
    server: AuthorizationServer,
    sessions: Mutex<Sessions>,
}

#[derive(Default)]
struct Sessions {
    by_id: HashMap<String, Session>,
    swept_len: usize,
}

struct Session {
    pending: PendingAuthorization,
    csrf: String,
    user: Option<User>,
    expires_at: UnixTime,
}

/// Sessions held at most; past it new authorization requests get `temporarily_unavailable`.
const MAX_SESSIONS: usize = 100_000;

impl SignInFlow {
    /// A flow with no sessions yet.
    pub fn new(server: AuthorizationServer) -> Self {
        Self {
            server,
            sessions: Mutex::new(Sessions::default()),
        }
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
        let now = self.now();
        let lifetime = self.server.inner.config.authorization_request_lifetime;
        let (session, csrf) = match random_bytes::<32>() {
            Ok(bytes) => (
                URL_SAFE_NO_PAD.encode(&bytes[..16]),
                URL_SAFE_NO_PAD.encode(&bytes[16..]),
            ),
            Err(e) => return Step::Error(e.into()),
        };
        let page = SignInPage {
            session: session.clone(),
            csrf: csrf.clone(),
            client_name: pending.client().name().to_owned(),
            scope: pending.scope().clone(),
            problem: None,
        };
        let entry = Session {
            pending,
            csrf,
            user: None,
            expires_at: now.plus(lifetime),
        };
        let mut sessions = self.lock();
        if !sessions.make_room(now) {
            return Step::Error(OAuthError::new(
                ErrorCode::TemporarilyUnavailable,
                "too many sign-ins are in progress; try again later",
            ));
        }
        sessions.by_id.insert(session, entry);
        Step::SignIn(page)
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
        let page = match self.with_session(session, csrf, |s| {
            (
                s.pending.client().name().to_owned(),
                s.pending.scope().clone(),
            )
        }) {
            Ok((client_name, scope)) => SignInPage {
                session: session.to_owned(),
                csrf: csrf.to_owned(),
                client_name,
                scope,
                problem: None,
            },
            Err(error) => return Step::Error(error),
        };
        let now = self.now();
        let user = match password::authenticate(&self.server.inner, username, password, now).await {
            Ok(user) => user,
            Err(password::Failure::Problem(problem)) => {
                return Step::SignIn(SignInPage {
                    problem: Some(problem),
                    ..page
                });
            }
            Err(password::Failure::Store(error)) => return Step::Error(error),
        };
        let approval = self.with_session(session, csrf, |s| {
            s.user = Some(user.clone());
            s.pending.needs_approval()
        });
        match approval {
            Ok(true) => Step::Approve(ApprovalPage {
                session: page.session,
                csrf: page.csrf,
                client_name: page.client_name,
                scope: page.scope,
                username: user.username().to_owned(),
            }),
            Ok(false) => self.finish(session, csrf, Decision::Approve).await,
            Err(error) => Step::Error(error),
        }
    }

    /// The approval form's `POST`: the signed-in user's decision, answered with the redirect
    /// to the client.
    pub async fn decide(&self, session: &str, csrf: &str, decision: Decision) -> Step {
        self.finish(session, csrf, decision).await
    }

    async fn finish(&self, session: &str, csrf: &str, decision: Decision) -> Step {
        let taken = {
            let mut sessions = self.lock();
            match sessions.by_id.get(session) {
                Some(s) if !ct_eq(&s.csrf, csrf) => Err(form_error(STALE)),
                Some(s) if s.user.is_none() => Err(form_error("sign in before answering")),
                Some(_) => sessions
                    .by_id
                    .remove(session)
                    .ok_or_else(|| form_error(STALE)),
                None => Err(form_error(STALE)),
            }
        };
        let (pending, user) = match taken {
            Ok(Session {
                pending,
                user: Some(user),
                ..
            }) => (pending, user),
            Ok(_) => return Step::Error(form_error(STALE)),
            Err(error) => return Step::Error(error),
        };
        Step::Respond(self.server.decide(pending, user.id(), decision).await)
    }

    /// Runs `f` on the live session `id` if `csrf` matches it.
    fn with_session<T>(
        &self,
        id: &str,
        csrf: &str,
        f: impl FnOnce(&mut Session) -> T,
    ) -> Result<T, OAuthError> {
        let now = self.now();
        let mut sessions = self.lock();
        match sessions.by_id.get_mut(id) {
            Some(s) if s.expires_at > now && ct_eq(&s.csrf, csrf) => Ok(f(s)),
            _ => Err(form_error(STALE)),
        }
    }

    fn now(&self) -> UnixTime {
        self.server.inner.clock.now()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Sessions {
    /// Sweeps expired sessions once the map has doubled since the last sweep; answers whether
    /// one more fits.
    fn make_room(&mut self, now: UnixTime) -> bool {
        if self.by_id.len() >= 1024.max(self.swept_len * 2) || self.by_id.len() >= MAX_SESSIONS {
            self.by_id.retain(|_, s| s.expires_at > now);
            self.swept_len = self.by_id.len();
        }
        self.by_id.len() < MAX_SESSIONS
    }
}

impl fmt::Debug for SignInFlow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignInFlow")
            .field("sessions", &self.lock().by_id.len())
            .finish_non_exhaustive()
    }
}

const STALE: &str =
    "this sign-in form has expired or is not valid; go back to the application and start again";

fn form_error(description: &'static str) -> OAuthError {
    OAuthError::invalid_request(description)
}

fn ct_eq(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}
