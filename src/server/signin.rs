//! Sign-in for the host's pages, as server methods: each takes what a browser posted (the
//! cookie, the form's fields) and answers the next [`Step`] to render. The decisions (the
//! sealed form, the password check, spending the form, the session, CSRF) are the grant's;
//! here they meet the authorization endpoint and the redirect.
//!
//! Most hosts need no more than [`Site`](crate::signin::Site): the same steps as HTTP, each page
//! rendered by the host's [`Pages`](crate::signin::Pages), with the cookie, the CSRF tokens and the
//! security headers handled; the axum and actix-web glue mount it. Below it, the host maps HTTP
//! to these calls itself and renders what they answer (the last only with the device
//! authorization grant on):
//!
//! | host route | call | then |
//! |---|---|---|
//! | `GET`/`POST` authorization endpoint | [`AuthorizationServer::begin_sign_in`] | render [`Step`] |
//! | `POST` of the sign-in form | [`AuthorizationServer::sign_in`] | render [`Step`] |
//! | `POST` of the second factor's form | [`AuthorizationServer::second_factor`] | render [`Step`] |
//! | the host's own sign-in steps, done | [`AuthorizationServer::finish_sign_in`] | render [`Step`] |
//! | `POST` of the approval form | [`AuthorizationServer::answer_approval`] | render [`Step`] |
//! | `POST` of the device page's code form (RFC 8628 §3.3) | [`AuthorizationServer::enter_user_code`] | render [`Step`] |
//!
//! Rendering a [`Step::SignIn`] or [`Step::Approve`] page means: set the session cookie to the
//! page's `session` with [`AuthorizationServer::set_sign_in_cookie`] (`HttpOnly`,
//! `SameSite=Lax`; on `https`, `Secure` and the `__Host-` name prefix), put its `csrf` in a
//! hidden input, send the page with `Cache-Control: no-store` and framing forbidden. Read the
//! cookie back with [`AuthorizationServer::sign_in_cookie`].

use std::fmt;

use http::{HeaderMap, Request, Response};

use super::AuthorizationServer;
use crate::device::UserCodeProblem;
use crate::endpoint::authorize;
use crate::endpoint::authorize::Authorize;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::authorize::{Decision, PendingAuthorization, ResponseType};
use crate::grant::decide::{Answer, Refused};
use crate::grant::device::Entered;
use crate::grant::password::SignInProblem;
use crate::grant::signin::{Authentication, DeviceSignIn, Resumed, SecondFactorProblem, SignedIn};
use crate::oidc::Prompt;
use crate::scope::Scope;
use crate::secret::Password;
use crate::store::User;

/// What the host shows or sends next.
#[must_use = "the host must render the step"]
pub enum Step {
    /// Show the sign-in form (with [`SignInPage::problem`] after a failed attempt).
    SignIn(SignInPage),
    /// Show the approval page.
    Approve(ApprovalPage),
    /// Show the second factor's page: the password was right, and the request asks for a
    /// class only the [second factor](crate::store::SecondFactor) reaches.
    SecondFactor(SecondFactorPage),
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
    /// Show the device verification page's code form with the sign-in fields again (the
    /// person signed in there, [`AuthorizationServer::enter_user_code_signed_in`]), saying
    /// what was wrong with the email and password.
    DeviceSignIn(SignInProblem),
    /// A device flow was answered (RFC 8628 §3.3): tell the user to return to the device
    /// (approved) or that it was refused (denied). Nothing is sent to the device from here; it
    /// collects the answer on its next poll.
    DeviceAnswered(Decision),
    /// Ask the person whether to log out (OpenID Connect RP-Initiated Logout 1.0 §2: a logout
    /// request without a valid `id_token_hint`).
    ConfirmLogout(LogoutPage),
    /// The person is logged out and no client asked to have the browser back: say so, and
    /// clear the single sign-on cookie ([`AuthorizationServer::clear_sign_on_cookie`]).
    LoggedOut,
}

/// What the logout confirmation page shows and carries: a form `POST`ing to the end-session
/// path the hidden `csrf` and a submit button `name="logout"`.
#[derive(Clone)]
pub struct LogoutPage {
    /// The form's hidden input: the logout request, sealed and bound to the browser's cookie.
    pub csrf: String,
    /// The name of the client that asked, when it said which it is.
    pub client_name: Option<String>,
}

impl fmt::Debug for LogoutPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogoutPage")
            .field("csrf", &"<redacted>")
            .field("client_name", &self.client_name)
            .finish()
    }
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
    /// Who the client thinks signs in (OpenID Connect's `login_hint`): the username field's
    /// initial value. Shown back, never trusted; escape it.
    pub login_hint: Option<String>,
    /// Which usernames accounts have: the username field's label and input type.
    pub usernames: crate::settings::Usernames,
}

/// What the second factor's page shows and carries: a form `POST`ing the hidden `csrf` and
/// the code in an input `otp`, under the session cookie `session`.
#[derive(Clone)]
pub struct SecondFactorPage {
    /// The value of the host's session cookie, to set as for the sign-in page.
    pub session: String,
    /// The form's hidden input: the pending authorization and the sign-in so far, sealed and
    /// bound to `session`.
    pub csrf: String,
    /// The name of the client asking.
    pub client_name: String,
    /// The method asked for (`otp`).
    pub method: String,
    /// Why the last code was not accepted, if it was not.
    pub problem: Option<SecondFactorProblem>,
}

impl fmt::Debug for SecondFactorPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecondFactorPage")
            .field("session", &"<redacted>")
            .field("csrf", &"<redacted>")
            .field("client_name", &self.client_name)
            .field("method", &self.method)
            .field("problem", &self.problem)
            .finish()
    }
}

/// What the approval page shows and carries.
#[derive(Clone)]
pub struct ApprovalPage {
    /// The session id: the value of the host's session cookie.
    pub session: String,
    /// After a sign-in that opened the browser's single sign-on session: its cookie's value,
    /// to set with [`AuthorizationServer::set_sign_on_cookie`] beside the session cookie.
    pub sign_on: Option<String>,
    /// The CSRF token for the form's hidden input.
    pub csrf: String,
    /// The name of the client asking.
    pub client_name: String,
    /// The scope it asks for.
    pub scope: Scope,
    /// The signed-in user's username (email).
    pub username: String,
    /// Where the answer goes: the host (and port, when not the scheme's default) of the
    /// redirect URI; `None` for a device flow, whose answer goes to no browser address. Shown
    /// so that a person can tell apart two clients of the same name.
    pub redirect_host: Option<String>,
    /// Whether the client registered itself (RFC 7591): nobody vouched for its name, so the
    /// page marks it unverified.
    pub self_registered: bool,
    /// For a client read from a client ID metadata document: the host of its URL, which the
    /// page names and marks unverified (the name is the document's own word).
    pub document_host: Option<String>,
}

// The session id and CSRF token are secrets, and a response may carry a code or a token in its
// `Location`: `Debug` shows none of them.

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SignIn(page) => f.debug_tuple("SignIn").field(page).finish(),
            Self::Approve(page) => f.debug_tuple("Approve").field(page).finish(),
            Self::SecondFactor(page) => f.debug_tuple("SecondFactor").field(page).finish(),
            Self::Respond(response) => f
                .debug_struct("Respond")
                .field("status", &response.status())
                .finish_non_exhaustive(),
            Self::Error(error) => f.debug_tuple("Error").field(error).finish(),
            Self::EnterUserCode(problem) => f.debug_tuple("EnterUserCode").field(problem).finish(),
            Self::DeviceSignIn(problem) => f.debug_tuple("DeviceSignIn").field(problem).finish(),
            Self::DeviceAnswered(decision) => {
                f.debug_tuple("DeviceAnswered").field(decision).finish()
            }
            Self::ConfirmLogout(page) => f.debug_tuple("ConfirmLogout").field(page).finish(),
            Self::LoggedOut => f.write_str("LoggedOut"),
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
            .field("login_hint", &self.login_hint)
            .finish()
    }
}

impl fmt::Debug for ApprovalPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalPage")
            .field("session", &"<redacted>")
            .field("sign_on", &self.sign_on.as_ref().map(|_| "<redacted>"))
            .field("csrf", &"<redacted>")
            .field("client_name", &self.client_name)
            .field("scope", &self.scope)
            .field("username", &self.username)
            .field("redirect_host", &self.redirect_host)
            .field("self_registered", &self.self_registered)
            .finish()
    }
}

/// The value of the cookie `name` among `headers`' `Cookie` headers; empty when absent.
fn cookie_value<'h>(headers: &'h HeaderMap, name: &str) -> &'h str {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map_or("", |(_, value)| value)
}

/// The host and port (when not the default) `redirect_uri` sends the browser to; `None` when
/// there is none (a device flow) or it has no host.
fn redirect_host(redirect_uri: &str) -> Option<String> {
    let url = url::Url::parse(redirect_uri).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

impl AuthorizationServer {
    /// The name of the host's session cookie: `__Host-grantor-signin` when the issuer is
    /// `https`, else `grantor-signin`. With the `__Host-` prefix a browser keeps the cookie only
    /// if it is `Secure`, has `Path=/` and no `Domain` (RFC 6265bis §4.1.3.2), so neither a
    /// sibling subdomain nor a plain-http page can plant or overwrite it.
    pub fn sign_in_cookie_name(&self) -> &'static str {
        if self.https() {
            "__Host-grantor-signin"
        } else {
            "grantor-signin"
        }
    }

    /// The `Set-Cookie` value for a page's `session`: [`sign_in_cookie_name`](Self::sign_in_cookie_name),
    /// `Path=/; HttpOnly; SameSite=Lax`, a `Max-Age` of the authorization request's lifetime,
    /// and `Secure` when the issuer is `https`.
    ///
    /// ```
    /// # use grantor::{AuthorizationServer, MemoryStore};
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example.com")
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(
    ///     server.set_sign_in_cookie("abc"),
    ///     "__Host-grantor-signin=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure"
    /// );
    /// ```
    pub fn set_sign_in_cookie(&self, session: &str) -> String {
        let max_age = self.inner.config.lifetimes.authorization_request.as_secs();
        let secure = if self.https() { "; Secure" } else { "" };
        format!(
            "{}={session}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}",
            self.sign_in_cookie_name()
        )
    }

    /// The session cookie's value among a request's `Cookie` headers; empty when absent.
    pub fn sign_in_cookie<'h>(&self, headers: &'h HeaderMap) -> &'h str {
        cookie_value(headers, self.sign_in_cookie_name())
    }

    /// The name of the single sign-on cookie, which keeps a browser signed in for
    /// [`session_ttl`](crate::AuthorizationServerBuilder::session_ttl):
    /// `__Host-grantor-session` when the issuer is `https`, else `grantor-session`.
    pub fn sign_on_cookie_name(&self) -> &'static str {
        if self.https() {
            "__Host-grantor-session"
        } else {
            "grantor-session"
        }
    }

    /// The `Set-Cookie` value for the single sign-on cookie `value`:
    /// [`sign_on_cookie_name`](Self::sign_on_cookie_name), `Path=/; HttpOnly; SameSite=Lax`,
    /// a `Max-Age` of the session's lifetime, and `Secure` when the issuer is `https`.
    pub fn set_sign_on_cookie(&self, value: &str) -> String {
        let max_age = self.inner.config.session_ttl.as_secs();
        let secure = if self.https() { "; Secure" } else { "" };
        format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}",
            self.sign_on_cookie_name()
        )
    }

    /// The `Set-Cookie` value that removes the single sign-on cookie (after a logout).
    pub fn clear_sign_on_cookie(&self) -> String {
        let secure = if self.https() { "; Secure" } else { "" };
        format!(
            "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}",
            self.sign_on_cookie_name()
        )
    }

    /// The single sign-on cookie's value among a request's `Cookie` headers; empty when
    /// absent.
    pub fn sign_on_cookie<'h>(&self, headers: &'h HeaderMap) -> &'h str {
        cookie_value(headers, self.sign_on_cookie_name())
    }

    fn https(&self) -> bool {
        self.issuer().starts_with("https:")
    }

    /// The authorization endpoint for the host's pages. From a browser signed in within
    /// [`session_ttl`](crate::AuthorizationServerBuilder::session_ttl) (its
    /// [single sign-on cookie](Self::sign_on_cookie)), a valid request needs no password: the
    /// redirect to the client follows at once, or the approval page when the client needs one
    /// that was not given before. Otherwise it asks for sign-in, keeping nothing on the server:
    /// the page's `csrf` is the sealed pending authorization, bound to the page's `session` (a
    /// random value for the cookie, not yet a session). OpenID Connect's `prompt=login` and
    /// `max_age` ask for the password all the same, `prompt=consent` for the approval page, and
    /// `prompt=none` is answered `login_required` or `consent_required` when either would be
    /// needed (OIDC Core §3.1.2.6).
    pub async fn begin_sign_in<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Step {
        match self.authorize(request).await {
            Authorize::SignIn(pending) => self.resume(request.headers(), pending).await,
            Authorize::Redirect(redirect) => Step::Respond(redirect.into_response()),
            Authorize::Reject(error) => Step::Error(error),
        }
    }

    /// A valid request from a browser that may be signed in already.
    async fn resume(&self, headers: &HeaderMap, mut pending: PendingAuthorization) -> Step {
        let now = self.inner.now();
        if let Err(error) = self.read_id_token_hint(&mut pending, now).await {
            let wire = self.inner.wire();
            return Step::Respond(authorize::redirect_error(&wire, &pending, &error));
        }
        let prompt_none = pending.prompt() == Prompt::None;
        let cookie = self.sign_on_cookie(headers);
        let resumed = self.inner.sign_on().resume(cookie, pending, now).await;
        let wire = self.inner.wire();
        let refuse = |pending: &PendingAuthorization, code, description| {
            let error = OAuthError::new(code, description);
            Step::Respond(authorize::redirect_error(&wire, pending, &error))
        };
        match resumed {
            Ok(Resumed::SignIn(pending)) if prompt_none => refuse(
                &pending,
                ErrorCode::LoginRequired,
                "prompt=none, and the user would have to sign in",
            ),
            Ok(Resumed::SignIn(pending)) => self.sign_in_page(&pending).await,
            Ok(Resumed::Approved(pending, user)) => {
                self.finish(pending, &user, Decision::Approve).await
            }
            Ok(Resumed::Approve(pending, _)) if prompt_none => refuse(
                &pending,
                ErrorCode::ConsentRequired,
                "prompt=none, and the user would have to approve this client",
            ),
            Ok(Resumed::SecondFactor(pending)) if prompt_none => refuse(
                &pending,
                ErrorCode::InteractionRequired,
                "prompt=none, and the request asks for the second factor",
            ),
            Ok(Resumed::SecondFactor(pending)) => {
                let forms = self.inner.sign_in_forms();
                match forms.second_factor_form(pending, now).await {
                    Ok(signed_in) => self.signed_in_step(signed_in).await,
                    Err(error) => Step::Error(error),
                }
            }
            Ok(Resumed::Refused(pending, error)) => {
                Step::Respond(authorize::redirect_error(&wire, &pending, &error))
            }
            Ok(Resumed::Approve(pending, user)) => {
                let expires_at = now.plus(self.inner.config.lifetimes.authorization_request);
                let forms = self.inner.sign_in_forms();
                match forms
                    .open_approval(pending, user, None, expires_at, now)
                    .await
                {
                    Ok(signed_in) => self.signed_in_step(signed_in).await,
                    Err(error) => Step::Error(error),
                }
            }
            Err(error) => Step::Error(error),
        }
    }

    /// The sign-in page for `pending`, sealed into the form and bound to a new cookie value.
    async fn sign_in_page(&self, pending: &PendingAuthorization) -> Step {
        match self
            .inner
            .sign_in_forms()
            .form(pending, self.inner.now())
            .await
        {
            Ok(form) => Step::SignIn(SignInPage {
                session: form.cookie,
                csrf: form.sealed,
                client_name: pending.client().name().to_owned(),
                scope: pending.scope().clone(),
                problem: None,
                login_hint: pending.login_hint().map(str::to_owned),
                usernames: self.inner.config.usernames.clone(),
            }),
            Err(error) => Step::Error(error),
        }
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
        let forms = self.inner.sign_in_forms();
        match forms
            .sign_in(session, csrf, username, password, self.inner.now())
            .await
        {
            Ok(SignedIn::Again(pending, problem)) => Step::SignIn(SignInPage {
                session: session.to_owned(),
                csrf: csrf.to_owned(),
                client_name: pending.client().name().to_owned(),
                scope: pending.scope().clone(),
                problem: Some(problem),
                login_hint: pending.login_hint().map(str::to_owned),
                usernames: self.inner.config.usernames.clone(),
            }),
            Ok(signed_in) => self.signed_in_step(signed_in).await,
            Err(error) => Step::Error(error),
        }
    }

    /// The step after a good sign-in: the redirect (or the device's answer) when no approval
    /// is needed, else the approval page.
    async fn signed_in_step(&self, signed_in: SignedIn) -> Step {
        match signed_in {
            SignedIn::Approved(pending, user, sign_on) => {
                let step = self.finish(pending, &user, Decision::Approve).await;
                self.with_sign_on(step, sign_on)
            }
            SignedIn::Approve {
                session,
                csrf,
                pending,
                user,
                sign_on,
            } => Step::Approve(ApprovalPage {
                session,
                sign_on,
                csrf,
                client_name: pending.client().name().to_owned(),
                scope: pending.scope().clone(),
                username: user.username().to_owned(),
                redirect_host: redirect_host(pending.redirect_uri()),
                self_registered: pending.client().registration_access_token().is_some(),
                document_host: document_host(pending.client()),
            }),
            SignedIn::SecondFactor {
                form,
                pending,
                problem,
            } => Step::SecondFactor(SecondFactorPage {
                session: form.cookie,
                csrf: form.sealed,
                client_name: pending.client().name().to_owned(),
                method: self
                    .inner
                    .second_factor
                    .as_ref()
                    .map_or("otp", |factor| factor.method())
                    .to_owned(),
                problem,
            }),
            SignedIn::Refused(pending, error) => {
                let wire = self.inner.wire();
                Step::Respond(authorize::redirect_error(&wire, &pending, &error))
            }
            SignedIn::Again(..) => {
                Step::Error(OAuthError::invalid_request("the sign-in was not accepted"))
            }
        }
    }

    /// The second factor's form `POST` (the page of [`Step::SecondFactor`]): `code` is
    /// checked by the host's [`SecondFactor`](crate::store::SecondFactor), with the account's
    /// wrong codes throttled and a code once accepted never accepted again (RFC 6238 §5.2).
    /// A wrong code shows the page again with the problem; a right one goes on as a sign-in
    /// at the class the second factor reaches, under a new session.
    pub async fn second_factor(&self, session: &str, csrf: &str, code: &str) -> Step {
        let forms = self.inner.sign_in_forms();
        match forms
            .second_factor(session, csrf, code, self.inner.now())
            .await
        {
            Ok(signed_in) => self.signed_in_step(signed_in).await,
            Err(error) => Step::Error(error),
        }
    }

    /// The host's own sign-in steps are done: the interaction API. A host that signs people in
    /// by its own pages (passkeys, a second factor of its own, an upstream identity provider)
    /// takes the sign-in page's `session` and `csrf` ([`Step::SignIn`]: the pending
    /// authorization, sealed and bound to the browser's cookie) through its steps, then hands
    /// them back with who signed in and how. grantor keeps the guarantees of its own form: the
    /// form opens only with its cookie, on any node, and serves once; the browser's single
    /// sign-on session is opened with the `amr`, `acr` and `auth_time` given; the request's
    /// required `acr` is enforced (refused with `access_denied` when not reached) and ID tokens
    /// carry what was given. The next step follows as after grantor's own sign-in: the
    /// approval page, or the redirect.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use grantor::signin::{Authentication, Step};
    /// use grantor::store::UserId;
    /// # use grantor::{AuthorizationServer, MemoryStore};
    /// # let server = AuthorizationServer::builder().issuer("https://auth.example")
    /// #     .store(MemoryStore::new()).build().unwrap();
    /// # let (session, csrf) = ("cookie", "form");
    /// // After the host's passkey page verified user 42:
    /// let signed_in = Authentication::new(UserId::new("42")).methods(["hwk", "user"]);
    /// let step = server.finish_sign_in(session, csrf, signed_in).await;
    /// # assert!(matches!(step, Step::Error(_)));
    /// # }
    /// ```
    pub async fn finish_sign_in(
        &self,
        session: &str,
        csrf: &str,
        authentication: Authentication,
    ) -> Step {
        let forms = self.inner.sign_in_forms();
        match forms
            .finish(session, csrf, authentication, self.inner.now())
            .await
        {
            Ok(signed_in) => self.signed_in_step(signed_in).await,
            Err(error) => Step::Error(error),
        }
    }

    /// The approval form's `POST`: the signed-in user's decision, answered with the redirect
    /// to the client. An approval is remembered for
    /// [`consent_ttl`](crate::AuthorizationServerBuilder::consent_ttl): a later request of the
    /// client for no more, from a browser still signed in, skips the page.
    pub async fn answer_approval(&self, session: &str, csrf: &str, decision: Decision) -> Step {
        let now = self.inner.now();
        let (pending, user) = match self
            .inner
            .sign_in_forms()
            .approval(session, csrf, now)
            .await
        {
            Ok(approval) => approval,
            Err(error) => return Step::Error(error),
        };
        if decision == Decision::Approve
            && let Err(error) = self.inner.sign_on().remember(&pending, &user, now).await
        {
            return Step::Error(error);
        }
        self.finish(pending, &user, decision).await
    }

    /// Verifies an OpenID Connect request's `id_token_hint` (an ID token of this server, expired
    /// or not) and keeps only the `sub` it names; one that is not is `invalid_request`.
    async fn read_id_token_hint(
        &self,
        pending: &mut PendingAuthorization,
        now: crate::clock::UnixTime,
    ) -> Result<(), OAuthError> {
        let (Some(openid), Some(id_tokens)) = (pending.openid.as_mut(), self.inner.id_tokens())
        else {
            return Ok(());
        };
        let Some(hint) = openid.id_token_hint.take() else {
            return Ok(());
        };
        let claims = id_tokens.signer.read(&hint, now).await?;
        let sub = claims
            .filter(|claims| claims["iss"] == id_tokens.issuer_id)
            .and_then(|claims| claims["sub"].as_str().map(str::to_owned))
            .ok_or_else(|| {
                OAuthError::invalid_request("id_token_hint is not an ID token of this server")
            })?;
        openid.hinted_sub = Some(sub);
        Ok(())
    }

    /// `step` with the single sign-on cookie a sign-in just opened, when it is a response to
    /// send (an approval page carries it itself).
    fn with_sign_on(&self, step: Step, sign_on: Option<String>) -> Step {
        match (step, sign_on) {
            (Step::Respond(mut response), Some(cookie)) => {
                // The cookie is grantor's own base64url: always a valid header value.
                let set = self.set_sign_on_cookie(&cookie);
                if let Ok(value) = http::HeaderValue::from_str(&set) {
                    response
                        .headers_mut()
                        .append(http::header::SET_COOKIE, value);
                }
                Step::Respond(response)
            }
            (step, _) => step,
        }
    }

    /// The device verification page's form `POST` with the `user_code` the user typed (dashes,
    /// spaces and case do not matter): the sign-in page for the device's request
    /// ([`Step::SignIn`]), or the code form again ([`Step::EnterUserCode`]) when the code is
    /// malformed, unknown, expired or already answered, or when too many wrong codes were
    /// entered on this server lately ([`DeviceFlow::user_code_guesses`]).
    ///
    /// The code form may be prefilled from `verification_uri_complete`'s `user_code` query
    /// parameter, but the user should still submit it, which is what this call stands for
    /// (RFC 8628 §5.4: the user confirms what their device shows).
    ///
    /// [`DeviceFlow::user_code_guesses`]: crate::settings::DeviceFlow::user_code_guesses
    pub async fn enter_user_code(&self, user_code: &str) -> Step {
        let Some(devices) = self.inner.devices() else {
            return Step::Error(OAuthError::invalid_request(
                "this server does not serve the device authorization grant",
            ));
        };
        match devices.enter_user_code(user_code, self.inner.now()).await {
            Ok(pending) => self.sign_in_page(&pending).await,
            Err(Entered::Problem(problem)) => Step::EnterUserCode(problem),
            Err(Entered::Failed(error)) => Step::Error(error),
        }
    }

    /// The device verification page's `POST` with the person's email and password beside the
    /// code (RFC 8628 §3.3): what the page takes once wrong codes from people not signed in
    /// have spent the server-wide limit
    /// ([`DeviceFlow::user_code_guesses`](crate::settings::DeviceFlow::user_code_guesses)).
    /// The password is checked as on the sign-in page; then the code, with this account's wrong
    /// codes counted apart; then the approval page follows, signed in.
    pub async fn enter_user_code_signed_in(
        &self,
        user_code: &str,
        username: &str,
        password: &Password,
    ) -> Step {
        let Some(devices) = self.inner.devices() else {
            return Step::Error(OAuthError::invalid_request(
                "this server does not serve the device authorization grant",
            ));
        };
        let forms = self.inner.sign_in_forms();
        let now = self.inner.now();
        match forms
            .sign_in_with_user_code(&devices, user_code, username, password, now)
            .await
        {
            Ok(DeviceSignIn::SignedIn(signed_in)) => self.signed_in_step(*signed_in).await,
            Ok(DeviceSignIn::Again(problem)) => Step::DeviceSignIn(problem),
            Ok(DeviceSignIn::Code(problem)) => Step::EnterUserCode(problem),
            Err(error) => Step::Error(error),
        }
    }

    async fn finish(&self, pending: PendingAuthorization, user: &User, decision: Decision) -> Step {
        if pending.response_type() != ResponseType::Device {
            return Step::Respond(self.decide(pending, user.id(), decision).await);
        }
        // A device flow's decision is recorded for the device, which collects it on its next
        // poll; the browser is told, not redirected.
        let decider = self.inner.decider();
        match decider
            .decide(&pending, user.id(), decision, self.inner.now())
            .await
        {
            Ok(Answer::Device(decision)) => Step::DeviceAnswered(decision),
            Ok(_) => Step::Error(OAuthError::invalid_request(
                "the device authorization is not valid",
            )),
            Err(Refused::Redirect(error) | Refused::NotRedirectable(error)) => Step::Error(error),
        }
    }
}

/// The host of a document client's URL (its id), for the approval page.
fn document_host(client: &crate::client::Client) -> Option<String> {
    if !client.is_from_metadata_document() {
        return None;
    }
    let url = url::Url::parse(client.id().as_str()).ok()?;
    url.host_str().map(str::to_owned)
}
