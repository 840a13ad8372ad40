//! The steps of the browser's sign-in as the host renders them: what to show or send next
//! ([`Step`]) and what each page carries. Secrets (cookie values, CSRF tokens, sealed forms)
//! never show in `Debug`.

use std::fmt;

use http::Response;

use crate::device::UserCodeProblem;
use crate::error::OAuthError;
use crate::grant::password::SignInProblem;
use crate::grant::pending::Decision;
use crate::grant::signin::SecondFactorProblem;
use crate::scope::Scope;

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
    /// person signed in there, [`AuthorizationServer::enter_user_code_signed_in`](crate::AuthorizationServer::enter_user_code_signed_in)), saying
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
    /// clear the single sign-on cookie ([`AuthorizationServer::clear_sign_on_cookie`](crate::AuthorizationServer::clear_sign_on_cookie)).
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
    /// to set with [`AuthorizationServer::set_sign_on_cookie`](crate::AuthorizationServer::set_sign_on_cookie) beside the session cookie.
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

/// The host and port (when not the default) `redirect_uri` sends the browser to; `None` when
/// there is none (a device flow) or it has no host.
pub(super) fn redirect_host(redirect_uri: &str) -> Option<String> {
    let url = url::Url::parse(redirect_uri).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// The host of a document client's URL (its id), for the approval page.
pub(super) fn document_host(client: &crate::client::Client) -> Option<String> {
    if !client.is_from_metadata_document() {
        return None;
    }
    let url = url::Url::parse(client.id().as_str()).ok()?;
    url.host_str().map(str::to_owned)
}
