//! The host's own sign-in routes, between grantor's authorization endpoint (which shows the
//! host's login page through `HostPages`) and grantor's redirect to the client:
//!
//! - `POST /host/login`: grantor's `verify_password` (its username rule, throttle, verifier
//!   and Argon2id upgrade); then, for a user without a TOTP secret, `finish_sign_in` at the
//!   password class; for one with a secret, the host's code page.
//! - `POST /host/code`: the host's TOTP check, then `finish_sign_in` at the MFA class.
//!
//! grantor's cookie and sealed form (`csrf`) travel through both pages untouched: grantor
//! opens them in `finish_sign_in`, once, as it would after its own form.

use axum::Form;
use axum::extract::State;
use grantor::signin::{Authentication, Step};
use grantor::{ErrorCode, OAuthError, Password};
use http::header::SET_COOKIE;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use serde::Deserialize;

use crate::HostApp;
use crate::pages::{code_page, stopped_page};
use crate::second_step::{CodeCheck, PENDING_COOKIE, PENDING_TTL};

/// The password alone.
pub const PASSWORD: &str = "urn:example:acr:password";
/// The password and the host's TOTP code.
pub const MFA: &str = "urn:example:acr:mfa";

/// The login form's fields; a missing one is empty, and refused as grantor refuses it.
#[derive(Deserialize)]
pub struct LoginFields {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    login: String,
    #[serde(default)]
    password: String,
}

/// The code form's fields.
#[derive(Deserialize)]
pub struct CodeFields {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    code: String,
}

/// `POST /host/login`.
pub async fn login(
    State(app): State<HostApp>,
    headers: HeaderMap,
    Form(fields): Form<LoginFields>,
) -> Response<String> {
    let server = app.site.server();
    let session = server.sign_in_cookie(&headers);
    // Without grantor's cookie and form no sign-in can finish: say so before any hashing.
    if session.is_empty() || fields.csrf.is_empty() {
        return stopped(&app, "This sign-in has expired.");
    }
    let password = Password::new(fields.password);
    let user = match server.verify_password(&fields.login, &password).await {
        Ok(Ok(user)) => user,
        Ok(Err(problem)) => {
            // The same form and cookie, for another try, naming the client again.
            let again = server.sign_in_again(session, &fields.csrf, problem).await;
            return app.site.render(again);
        }
        Err(error) => return app.site.render(Step::Error(error)),
    };
    match app.users.totp_secret(user.id()).await {
        Ok(None) => {
            let password_only = Authentication::new(user.id().clone())
                .methods(["pwd"])
                .acr(PASSWORD);
            let step = server
                .finish_sign_in(session, &fields.csrf, password_only)
                .await;
            app.site.render(step)
        }
        Ok(Some(_)) => match app.pending.begin(user.id().clone(), &fields.csrf) {
            Some(pending) => {
                let page = app
                    .site
                    .html_page(StatusCode::OK, code_page(&fields.csrf, None));
                with_cookie(page, &pending_cookie(&app, &pending, PENDING_TTL.as_secs()))
            }
            None => {
                let busy = OAuthError::new(
                    ErrorCode::TemporarilyUnavailable,
                    "too many sign-ins are waiting for a code; try again shortly",
                );
                app.site.render(Step::Error(busy))
            }
        },
        Err(error) => app.site.render(Step::Error(error.into())),
    }
}

/// `POST /host/code`.
pub async fn code(
    State(app): State<HostApp>,
    headers: HeaderMap,
    Form(fields): Form<CodeFields>,
) -> Response<String> {
    let pending = cookie(&headers, PENDING_COOKIE);
    let Some(user) = app.pending.user(pending, &fields.csrf) else {
        return spent_login(&app);
    };
    let secret = match app.users.totp_secret(&user).await {
        Ok(Some(secret)) => secret,
        Ok(None) => return spent_login(&app),
        Err(error) => return app.site.render(Step::Error(error.into())),
    };
    match app
        .pending
        .check(pending, &fields.csrf, &secret, &fields.code)
    {
        CodeCheck::Accepted(user) => {
            let with_code = Authentication::new(user).methods(["pwd", "otp"]).acr(MFA);
            let session = app.site.server().sign_in_cookie(&headers);
            let step = app
                .site
                .server()
                .finish_sign_in(session, &fields.csrf, with_code)
                .await;
            with_cookie(app.site.render(step), &pending_cookie(&app, "", 0))
        }
        CodeCheck::Wrong => {
            let problem = "That code is not right. Enter the code your app shows now.";
            let page = code_page(&fields.csrf, Some(problem));
            app.site.html_page(StatusCode::BAD_REQUEST, page)
        }
        CodeCheck::Refused => spent_login(&app),
    }
}

/// The code page of a pending login that is gone: expired, spent, or closed after too many
/// wrong codes. The cookie goes with it.
fn spent_login(app: &HostApp) -> Response<String> {
    let page = stopped(app, "This code page has expired or was already used.");
    with_cookie(page, &pending_cookie(app, "", 0))
}

fn stopped(app: &HostApp, message: &str) -> Response<String> {
    app.site
        .html_page(StatusCode::BAD_REQUEST, stopped_page(message))
}

/// The host's pending-login cookie: `HttpOnly` and `SameSite=Lax` like grantor's, sent only to
/// the host's sign-in routes, `Secure` on an `https` issuer; `max_age` 0 removes it.
fn pending_cookie(app: &HostApp, value: &str, max_age: u64) -> String {
    let secure = if app.site.server().issuer().starts_with("https:") {
        "; Secure"
    } else {
        ""
    };
    format!(
        "{PENDING_COOKIE}={value}; Path=/host; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}"
    )
}

fn with_cookie(mut response: Response<String>, cookie: &str) -> Response<String> {
    // The value is the host's own base64url: always a valid header.
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
    response
}

/// The value of the cookie `name` among the request's `Cookie` headers; empty when absent.
fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> &'h str {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map_or("", |(_, value)| value)
}
