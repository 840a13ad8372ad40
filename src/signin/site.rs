//! [`Site`]: the browser's side of the server as HTTP (the authorization endpoint, the sign-in,
//! approval and device verification pages), rendered with the host's [`Pages`].

use std::fmt;
use std::sync::Arc;

use http::header::{
    ALLOW, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, SET_COOKIE,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use http::{HeaderValue, Method, Request, Response, StatusCode};

use super::Step;
use super::pages::{DevicePage, Pages, PlainPages};
use crate::device::UserCodeProblem;
use crate::endpoint::device::verification_uri;
use crate::endpoint::form;
use crate::error::OAuthError;
use crate::grant::password::SignInProblem;
use crate::grant::pending::Decision;
use crate::secret::Password;
use crate::server::AuthorizationServer;
use crate::settings::Limits;

/// The sign-in form's path unless [`Site::sign_in_path`] says otherwise.
pub const DEFAULT_SIGN_IN_PATH: &str = "/signin";
/// The approval form's path unless [`Site::approval_path`] says otherwise.
pub const DEFAULT_APPROVAL_PATH: &str = "/approve";
/// The second factor's form path unless [`Site::second_factor_path`] says otherwise.
pub const DEFAULT_SECOND_FACTOR_PATH: &str = "/signin/second-factor";

/// The part of the server a browser sees, as HTTP: the authorization endpoint, the sign-in and
/// approval forms, and with the device authorization grant the verification page. It drives a
/// the server's sign-in steps and renders each step with the host's [`Pages`] ([`PlainPages`] unless
/// [`pages`](Self::pages) says otherwise), so a host writes HTML and nothing else:
///
/// - pages go out with `Cache-Control: no-store`, framing forbidden (`X-Frame-Options: DENY`,
///   CSP `frame-ancestors 'none'`), `Referrer-Policy: no-referrer` and
///   `X-Content-Type-Options: nosniff`;
/// - the session cookie is set and read here ([`AuthorizationServer::set_sign_in_cookie`]: `HttpOnly`,
///   `SameSite=Lax`, and `Secure` with the `__Host-` prefix on an `https` issuer);
/// - every form carries its CSRF token, checked against the cookie;
/// - forms are read up to the server's [`max_body_bytes`](AuthorizationServer::max_body_bytes)
///   and only from `POST` (other methods get 405 with `Allow`).
///
/// The axum and actix-web glue (features `axum`, `actix`) mount it at its paths; on any other
/// framework, route the paths to [`authorize`](Self::authorize), [`sign_in`](Self::sign_in),
/// [`approve`](Self::approve) and [`device`](Self::device).
///
/// What an unauthenticated browser can make the server keep through it: nothing (see
/// [`signin`](crate::signin)).
#[derive(Clone)]
pub struct Site {
    server: AuthorizationServer,
    pages: Arc<dyn Pages>,
    authorization: Arc<str>,
    sign_in: Arc<str>,
    approval: Arc<str>,
    second_factor: Arc<str>,
    /// Whether grantor's own password and second-factor forms are served (not when the host
    /// signs people in itself).
    own_forms: bool,
    device: Option<Arc<str>>,
    end_session: Arc<str>,
}

impl fmt::Debug for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Site")
            .field("issuer", &self.server().issuer())
            .field("sign_in", &self.sign_in)
            .field("approval", &self.approval)
            .finish_non_exhaustive()
    }
}

impl Site {
    /// `server`'s pages, plain ([`PlainPages`]), the forms at `/signin` and `/approve`.
    pub fn new(server: &AuthorizationServer) -> Self {
        Self {
            server: server.clone(),
            pages: Arc::new(PlainPages),
            authorization: {
                let settings = server.settings();
                settings
                    .served_path(&settings.endpoints.authorization)
                    .into()
            },
            sign_in: DEFAULT_SIGN_IN_PATH.into(),
            approval: DEFAULT_APPROVAL_PATH.into(),
            second_factor: DEFAULT_SECOND_FACTOR_PATH.into(),
            own_forms: true,
            device: device_path(server),
            end_session: {
                let settings = server.settings();
                settings.served_path(&settings.endpoints.end_session).into()
            },
        }
    }

    /// Renders the pages with `pages`.
    #[must_use]
    pub fn pages(mut self, pages: impl Pages) -> Self {
        self.pages = Arc::new(pages);
        self
    }

    /// The path the sign-in form posts to (a path starting with `/`).
    #[must_use]
    pub fn sign_in_path(mut self, path: impl Into<String>) -> Self {
        self.sign_in = path.into().into();
        self
    }

    /// The path the approval form posts to (a path starting with `/`).
    #[must_use]
    pub fn approval_path(mut self, path: impl Into<String>) -> Self {
        self.approval = path.into().into();
        self
    }

    /// The host signs people in itself, at its own route `path`: the sign-in page's form posts
    /// there (the `action` [`Pages::sign_in`] is given), the host's route runs its steps
    /// ([`AuthorizationServer::verify_password`], a second factor of its own…) and hands the
    /// form back with [`AuthorizationServer::finish_sign_in`]. grantor's own password and
    /// second-factor forms are then not served: the glue mounts neither, and
    /// [`sign_in`](Self::sign_in) and [`second_factor`](Self::second_factor) answer 404, so
    /// nobody holding a sign-in page's form can post a password around the host's steps.
    #[must_use]
    pub fn host_sign_in(mut self, path: impl Into<String>) -> Self {
        self.sign_in = path.into().into();
        self.own_forms = false;
        self
    }

    /// Whether grantor's own password and second-factor forms are served (not after
    /// [`host_sign_in`](Self::host_sign_in)).
    pub fn serves_own_forms(&self) -> bool {
        self.own_forms
    }

    /// The path the second factor's form posts to (a path starting with `/`).
    #[must_use]
    pub fn second_factor_path(mut self, path: impl Into<String>) -> Self {
        self.second_factor = path.into().into();
        self
    }

    /// Where the second factor's form posts.
    pub fn second_factor_at(&self) -> &str {
        &self.second_factor
    }

    /// The server behind the pages.
    pub fn server(&self) -> &AuthorizationServer {
        &self.server
    }

    /// The path the authorization endpoint is served at: the path of its URL in the metadata
    /// (the issuer's own path, if it has one, then the server's
    /// [`EndpointPaths::authorization`](crate::settings::EndpointPaths::authorization)).
    pub fn authorization_path(&self) -> &str {
        &self.authorization
    }

    /// Where the sign-in form posts.
    pub fn sign_in_at(&self) -> &str {
        &self.sign_in
    }

    /// Where the approval form posts.
    pub fn approval_at(&self) -> &str {
        &self.approval
    }

    /// The device verification page's path, when the server serves the device authorization
    /// grant: the path of the `verification_uri` its endpoint hands out
    /// ([`DeviceFlow::verification_uri`](crate::settings::DeviceFlow::verification_uri), under
    /// the issuer when that is a path).
    pub fn device_path(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// The authorization endpoint (`GET`, or `POST` with a form): the sign-in page, the
    /// redirect to the client, or an error page.
    pub async fn authorize<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let step = self.server.begin_sign_in(request).await;
        self.render(step)
    }

    /// The sign-in form's `POST` (`username`, `password`, `csrf`); 404 after
    /// [`host_sign_in`](Self::host_sign_in).
    pub async fn sign_in<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        if !self.own_forms {
            return self.not_served();
        }
        let form = match self.form(request, "POST") {
            Ok(form) => form,
            Err(refused) => return *refused,
        };
        let password = Password::new(form.get("password"));
        let session = self.server.sign_in_cookie(request.headers());
        let step = self
            .server
            .sign_in(session, form.get("csrf"), form.get("username"), &password)
            .await;
        self.render(step)
    }

    /// The second factor's form `POST` (`otp`, `csrf`); 404 after
    /// [`host_sign_in`](Self::host_sign_in).
    pub async fn second_factor<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        if !self.own_forms {
            return self.not_served();
        }
        let form = match self.form(request, "POST") {
            Ok(form) => form,
            Err(refused) => return *refused,
        };
        let session = self.server.sign_in_cookie(request.headers());
        let step = self
            .server
            .second_factor(session, form.get("csrf"), form.get("otp"))
            .await;
        self.render(step)
    }

    /// The approval form's `POST` (`csrf`, `decision` = `approve` or anything else for deny).
    pub async fn approve<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let form = match self.form(request, "POST") {
            Ok(form) => form,
            Err(refused) => return *refused,
        };
        let decision = match form.get("decision") {
            "approve" => Decision::Approve,
            _ => Decision::Deny,
        };
        let session = self.server.sign_in_cookie(request.headers());
        let step = self
            .server
            .answer_approval(session, form.get("csrf"), decision)
            .await;
        self.render(step)
    }

    /// The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0, `GET` or `POST`): the
    /// confirmation page, the redirect back to the client, the logged-out page, or an error
    /// page ([`AuthorizationServer::logout`]).
    pub async fn logout<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let step = self.server.logout(request).await;
        self.render(step)
    }

    /// The path the end-session endpoint is served at (the issuer's own path, then
    /// [`EndpointPaths::end_session`](crate::settings::EndpointPaths::end_session)).
    pub fn end_session_path(&self) -> &str {
        &self.end_session
    }

    /// The device verification page (RFC 8628 §3.3): `GET` shows the code form, prefilled
    /// from the query's `user_code` (`verification_uri_complete`); `POST` takes the code typed
    /// and goes on to the sign-in page.
    pub async fn device<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let Some(action) = self.device_path() else {
            let error = OAuthError::invalid_request(
                "this server does not serve the device authorization grant",
            );
            return self.page(StatusCode::NOT_FOUND, self.pages.error(&error), None);
        };
        if matches!(*request.method(), Method::GET | Method::HEAD) {
            // A malformed query prefills nothing: the user types the code.
            let query = request.uri().query().unwrap_or("").as_bytes();
            let query = Fields::parse(query, self.server().max_body_bytes());
            let prefill = query.as_ref().map_or("", |query| query.get("user_code"));
            return self.code_form(action, prefill, None, false, None);
        }
        let form = match self.form(request, "GET, HEAD, POST") {
            Ok(form) => form,
            Err(refused) => return *refused,
        };
        let user_code = form.get("user_code");
        // With the person's email and password beside the code: the signed-in entry.
        let signed_in = !form.get("username").is_empty();
        let step = if signed_in {
            let password = Password::new(form.get("password"));
            self.server
                .enter_user_code_signed_in(user_code, form.get("username"), &password)
                .await
        } else {
            self.server.enter_user_code(user_code).await
        };
        match step {
            // Shown again with the code as typed, to correct it (and the sign-in fields when
            // the person is signing in or now must).
            Step::EnterUserCode(problem) => {
                let ask = signed_in || problem == UserCodeProblem::SignInRequired;
                self.code_form(action, user_code, Some(problem), ask, None)
            }
            Step::DeviceSignIn(problem) => {
                self.code_form(action, user_code, None, true, Some(problem))
            }
            step => self.render(step),
        }
    }

    /// A step as the browser gets it: a page (with the session cookie when the step has
    /// one), the redirect to the client as it is, or an error page with the error's status.
    pub fn render(&self, step: Step) -> Response<String> {
        match step {
            Step::SignIn(page) => {
                let html = self.pages.sign_in(&page, &self.sign_in);
                self.page(StatusCode::OK, html, Some(&page.session))
            }
            Step::SecondFactor(page) => {
                let html = self.pages.second_factor(&page, &self.second_factor);
                let status = match page.problem {
                    Some(_) => StatusCode::BAD_REQUEST,
                    None => StatusCode::OK,
                };
                self.page(status, html, Some(&page.session))
            }
            Step::Approve(page) => {
                let html = self.pages.approval(&page, &self.approval);
                let mut response = self.page(StatusCode::OK, html, Some(&page.session));
                // A sign-in just opened the browser's single sign-on session.
                if let Some(sign_on) = &page.sign_on
                    && let Ok(value) =
                        HeaderValue::from_str(&self.server.set_sign_on_cookie(sign_on))
                {
                    response.headers_mut().append(SET_COOKIE, value);
                }
                response
            }
            Step::Respond(response) => response,
            Step::Error(error) => self.page(error.status(), self.pages.error(&error), None),
            Step::EnterUserCode(problem) => {
                let action = self.device_path().unwrap_or("/device");
                let ask = problem == UserCodeProblem::SignInRequired;
                self.code_form(action, "", Some(problem), ask, None)
            }
            Step::DeviceSignIn(problem) => {
                let action = self.device_path().unwrap_or("/device");
                self.code_form(action, "", None, true, Some(problem))
            }
            Step::DeviceAnswered(decision) => {
                self.page(StatusCode::OK, self.pages.device_answered(decision), None)
            }
            Step::ConfirmLogout(page) => {
                let html = self.pages.logout(&page, &self.end_session);
                self.page(StatusCode::OK, html, None)
            }
            Step::LoggedOut => {
                let mut response = self.page(StatusCode::OK, self.pages.logged_out(), None);
                if let Ok(clear) = HeaderValue::from_str(&self.server.clear_sign_on_cookie()) {
                    response.headers_mut().append(SET_COOKIE, clear);
                }
                response
            }
        }
    }

    /// The device page's code form (with the sign-in fields when `sign_in`): 200, or 400
    /// saying what was wrong with the code or the sign-in.
    fn code_form(
        &self,
        action: &str,
        user_code: &str,
        problem: Option<UserCodeProblem>,
        sign_in: bool,
        sign_in_problem: Option<SignInProblem>,
    ) -> Response<String> {
        let status = match (problem, sign_in_problem) {
            (None, None) => StatusCode::OK,
            _ => StatusCode::BAD_REQUEST,
        };
        let page = DevicePage {
            action,
            user_code,
            problem,
            sign_in,
            sign_in_problem,
            usernames: &self.server.settings().usernames,
        };
        self.page(status, self.pages.device(&page), None)
    }

    /// A posted form, or the page refusing it: 405 (with `Allow: allow`) for another method,
    /// 413 for a body over the server's limit.
    fn form<'r, B: AsRef<[u8]>>(
        &self,
        request: &'r Request<B>,
        allow: &'static str,
    ) -> Result<Fields<'r>, Box<Response<String>>> {
        if request.method() != Method::POST {
            let error = OAuthError::invalid_request("this form takes POST");
            let mut response = self.page(
                StatusCode::METHOD_NOT_ALLOWED,
                self.pages.error(&error),
                None,
            );
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allow));
            return Err(Box::new(response));
        }
        let body = request.body().as_ref();
        if body.len() > self.server().max_body_bytes() {
            let error = OAuthError::invalid_request("the form is larger than this server accepts");
            let html = self.pages.error(&error);
            return Err(Box::new(self.page(
                StatusCode::PAYLOAD_TOO_LARGE,
                html,
                None,
            )));
        }
        Fields::parse(body, self.server().max_body_bytes())
            .map_err(|error| Box::new(self.page(error.status(), self.pages.error(&error), None)))
    }

    /// 404: a form of grantor's that this host does not serve.
    fn not_served(&self) -> Response<String> {
        let error = OAuthError::invalid_request("this server signs people in on its own pages");
        self.page(StatusCode::NOT_FOUND, self.pages.error(&error), None)
    }

    /// A page of the host's own (a home page, say) with the headers of the flow's pages
    /// (framing forbidden, `no-store`, the CSP of [`Pages::content_security_policy`]).
    pub fn html_page(&self, status: StatusCode, html: impl Into<String>) -> Response<String> {
        self.page(status, html.into(), None)
    }

    /// An HTML page with the headers every page of the flow carries.
    fn page(&self, status: StatusCode, html: String, session: Option<&str>) -> Response<String> {
        let mut response = Response::new(html);
        *response.status_mut() = status;
        let headers = response.headers_mut();
        let fixed = [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "no-store"),
            (X_FRAME_OPTIONS, "DENY"),
            (REFERRER_POLICY, "no-referrer"),
            (X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ];
        for (name, value) in fixed {
            headers.insert(name, HeaderValue::from_static(value));
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            // The store was unavailable: a second, then the person may try again.
            headers.insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        let policy = HeaderValue::from_str(self.pages.content_security_policy()).unwrap_or(
            HeaderValue::from_static(super::pages::DEFAULT_CONTENT_SECURITY_POLICY),
        );
        headers.insert(CONTENT_SECURITY_POLICY, policy);
        // The cookie value is the flow's own (URL-safe base64): always a valid header.
        if let Some(session) = session
            && let Ok(value) = HeaderValue::from_str(&self.server.set_sign_in_cookie(session))
        {
            headers.insert(SET_COOKIE, value);
        }
        response
    }
}

/// The path of the verification URI the device authorization endpoint hands out, when the
/// server serves the grant (a setting that is a path is under the issuer).
fn device_path(server: &AuthorizationServer) -> Option<Arc<str>> {
    let settings = server.settings();
    settings.device.as_ref()?;
    let advertised = verification_uri(settings);
    url::Url::parse(&advertised)
        .ok()
        .map(|url| url.path().into())
}

/// A posted form of the pages, read by the endpoints' strict parser: malformed encoding and a
/// repeated field are refused (`invalid_request`), as at every endpoint; a field may be as long
/// as the body (a sealed sign-in form is).
struct Fields<'r>(form::Form<'r>);

impl<'r> Fields<'r> {
    fn parse(body: &'r [u8], max_body: usize) -> Result<Self, OAuthError> {
        let limits = Limits {
            max_input: max_body,
            max_param: max_body,
        };
        let fields = form::parse(body, limits).map_err(|e| {
            let error = OAuthError::invalid_request(e.description());
            if e == form::FormError::TooLarge {
                error.with_status(StatusCode::PAYLOAD_TOO_LARGE)
            } else {
                error
            }
        })?;
        if let Some(name) = fields.repeated() {
            return Err(OAuthError::invalid_request(format!("{name} is repeated")));
        }
        Ok(Self(fields))
    }

    /// The field's value; empty when absent.
    fn get(&self, name: &str) -> &str {
        self.0.get(name).unwrap_or("")
    }
}
