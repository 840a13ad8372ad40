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

use http::{HeaderMap, Request};

use super::AuthorizationServer;
use super::steps::{
    ApprovalPage, SecondFactorPage, SignInPage, Step, document_host, redirect_host,
};
use crate::endpoint::authorize;
use crate::endpoint::authorize::Authorize;
use crate::error::OAuthError;
use crate::grant::authorize::ResponseType;
use crate::grant::decide::{Answer, Refused};
use crate::grant::device::Entered;
use crate::grant::pending::{Decision, PendingAuthorization};
use crate::grant::signin::{Authentication, DeviceSignIn, Resumed, SignedIn};
use crate::secret::Password;
use crate::store::User;

impl AuthorizationServer {
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

    /// A valid request from a browser that may be signed in already: the step the grant's
    /// decision comes to.
    async fn resume(&self, headers: &HeaderMap, pending: PendingAuthorization) -> Step {
        let now = self.inner.now();
        let cookie = self.sign_on_cookie(headers);
        let id_tokens = self.inner.id_tokens();
        let sign_on = self.inner.sign_on();
        let forms = self.inner.sign_in_forms();
        let signed_in = match sign_on.begin(id_tokens, cookie, pending, now).await {
            Ok(Resumed::SignIn(pending)) => return self.sign_in_page(&pending).await,
            Ok(Resumed::Approved(pending, user)) => {
                return self.finish(pending, &user, Decision::Approve).await;
            }
            Ok(Resumed::Refused(pending, error)) => Ok(SignedIn::Refused(pending, error)),
            Ok(Resumed::SecondFactor(pending)) => forms.second_factor_form(pending, now).await,
            Ok(Resumed::Approve(pending, user)) => {
                let expires_at = now.plus(self.inner.config.lifetimes.authorization_request);
                forms
                    .open_approval(pending, user, None, expires_at, now)
                    .await
            }
            Err(error) => Err(error),
        };
        match signed_in {
            Ok(signed_in) => self.signed_in_step(signed_in).await,
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
            Ok(form) => self.sign_in_step(&form.cookie, &form.sealed, pending, None),
            Err(error) => Step::Error(error),
        }
    }

    /// The sign-in page of the form `csrf` under the cookie `session`, for `pending`.
    fn sign_in_step(
        &self,
        session: &str,
        csrf: &str,
        pending: &PendingAuthorization,
        problem: Option<crate::grant::password::SignInProblem>,
    ) -> Step {
        Step::SignIn(SignInPage {
            session: session.to_owned(),
            csrf: csrf.to_owned(),
            client_name: pending.client().name().to_owned(),
            scope: pending.scope().clone(),
            problem,
            login_hint: pending.login_hint().map(str::to_owned),
            usernames: self.inner.config.usernames.clone(),
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
        let started = crate::metrics::Timer::start();
        let forms = self.inner.sign_in_forms();
        let step = match forms
            .sign_in(session, csrf, username, password, self.inner.now())
            .await
        {
            Ok(SignedIn::Again(pending, problem)) => {
                self.sign_in_step(session, csrf, &pending, Some(problem))
            }
            Ok(signed_in) => self.signed_in_step(signed_in).await,
            Err(error) => Step::Error(error),
        };
        let outcome = match &step {
            Step::SignIn(_) => "sign_in",
            Step::Error(error) => error.code().as_str(),
            _ => "ok",
        };
        crate::metrics::request("sign_in", outcome, started);
        step
    }

    /// The sign-in page again, for a host that signs people in on its own route
    /// ([`Site::host_sign_in`](crate::signin::Site::host_sign_in)) and refused an attempt
    /// ([`verify_password`](Self::verify_password)'s problem, or one of its own): the same
    /// cookie and form, what the form asks (client, scope, `login_hint`) and `problem`; an
    /// error page when the form no longer opens with this cookie. Nothing is spent.
    pub async fn sign_in_again(
        &self,
        session: &str,
        csrf: &str,
        problem: crate::grant::password::SignInProblem,
    ) -> Step {
        let forms = self.inner.sign_in_forms();
        match forms.open(session, csrf, self.inner.now()).await {
            Ok((pending, _)) => self.sign_in_step(session, csrf, &pending, Some(problem)),
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
                self_registered: pending.client().tier()
                    == crate::client::ClientTier::SelfRegistered,
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
                let signer = self.inner.id_tokens.as_deref();
                Step::Respond(authorize::redirect_error(&wire, signer, &pending, &error).await)
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
