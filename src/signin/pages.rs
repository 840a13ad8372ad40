//! The HTML of the sign-in flow: the [`Pages`] a host implements, and the plain ones grantor
//! ships ([`PlainPages`]).

use crate::device::UserCodeProblem;
use crate::error::OAuthError;
use crate::grant::password::SignInProblem;
use crate::grant::pending::Decision;
use crate::settings::Usernames;
use crate::signin::{ApprovalPage, LogoutPage, SecondFactorPage, SignInPage};

/// The Content-Security-Policy of every page, unless [`Pages::content_security_policy`] says
/// otherwise: nothing loads but inline styles, no framing, no `<base>`. (No `form-action`:
/// browsers apply it to the redirect that follows a form, which leads to the client.)
pub const DEFAULT_CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

/// The host's HTML for the sign-in flow's pages: each method answers a whole document. The glue
/// sends it with `Content-Type: text/html; charset=utf-8`, `Cache-Control: no-store`, framing
/// forbidden (`X-Frame-Options: DENY` and the CSP's `frame-ancestors 'none'`),
/// `Referrer-Policy: no-referrer` and `X-Content-Type-Options: nosniff`, and sets the session
/// cookie itself: a page only has to carry its form's fields.
///
/// Every method has a default, the plain page grantor ships ([`PlainPages`]), so a host
/// overrides only the pages it styles. Text from the request (the client's name, a username, a
/// user code) must be HTML-escaped; [`escape_html`] does it.
///
/// ```
/// use grantor::signin::Pages;
/// use grantor::signin::{SignInPage, escape_html};
///
/// struct Branded;
///
/// impl Pages for Branded {
///     fn sign_in(&self, page: &SignInPage, action: &str) -> String {
///         format!(
///             "<!doctype html><title>Acme</title><h1>Sign in to {client}</h1>\
///              <form method=post action=\"{action}\">\
///              <input type=hidden name=csrf value=\"{csrf}\">\
///              <input name=username type=email><input name=password type=password>\
///              <button>Sign in</button></form>",
///             client = escape_html(&page.client_name),
///             action = escape_html(action),
///             csrf = escape_html(&page.csrf),
///         )
///     }
///     // The approval, device and error pages stay grantor's plain ones.
/// }
/// ```
pub trait Pages: Send + Sync + 'static {
    /// The sign-in page: a form `POST`ing to `action` the fields `username`, `password` and
    /// `csrf` (hidden, with `page.csrf`). `page.problem` says why the last attempt failed.
    fn sign_in(&self, page: &SignInPage, action: &str) -> String {
        layout("Sign in", &sign_in_body(page, action))
    }

    /// The second factor's page: a form `POST`ing to `action` the code in an input `otp` and
    /// the hidden `csrf` (`page.csrf`); `page.problem` says why the last code was refused.
    fn second_factor(&self, page: &SecondFactorPage, action: &str) -> String {
        layout("Enter your code", &second_factor_body(page, action))
    }

    /// The approval page: names `page.client_name` and `page.scope`, and holds a form
    /// `POST`ing to `action` the hidden `csrf` (`page.csrf`) and `decision`, `approve` or
    /// `deny` (two submit buttons `name="decision"`).
    fn approval(&self, page: &ApprovalPage, action: &str) -> String {
        layout("Allow access?", &approval_body(page, action))
    }

    /// The device verification page (RFC 8628 §3.3): a form `POST`ing `user_code` to
    /// `page.action`, prefilled with `page.user_code`, saying `page.problem` when there is one.
    fn device(&self, page: &DevicePage<'_>) -> String {
        layout("Connect a device", &device_body(page))
    }

    /// What the user sees once a device's request is answered.
    fn device_answered(&self, decision: Decision) -> String {
        match decision {
            Decision::Approve => layout(
                "Device connected",
                "<h1>Device connected</h1><p>You may return to your device.</p>",
            ),
            Decision::Deny => layout(
                "Request denied",
                "<h1>Request denied</h1><p>The device was not given access.</p>",
            ),
        }
    }

    /// The logout confirmation (OpenID Connect RP-Initiated Logout 1.0 §2): asks whether to
    /// log out, with a form `POST`ing to `action` the hidden `csrf` (`page.csrf`) and a submit
    /// button `name="logout"`.
    fn logout(&self, page: &LogoutPage, action: &str) -> String {
        let asked_by = page
            .client_name
            .as_deref()
            .map(|name| {
                format!(
                    "<p><strong>{}</strong> asks to sign you out.</p>",
                    escape_html(name)
                )
            })
            .unwrap_or_default();
        layout(
            "Sign out?",
            &format!(
                "<h1>Sign out?</h1>{asked_by}<p>You will be signed out of every application that \
             uses this account here.</p><form method=\"post\" action=\"{action}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <button type=\"submit\" name=\"logout\" value=\"yes\">Sign out</button></form>",
                action = escape_html(action),
                csrf = escape_html(&page.csrf),
            ),
        )
    }

    /// What the person sees once logged out, when no client asked for the browser back.
    fn logged_out(&self) -> String {
        layout(
            "Signed out",
            "<h1>Signed out</h1><p>You are signed out. You may close this window.</p>",
        )
    }

    /// A request that cannot continue and cannot go back to the client: an invalid
    /// authorization request (unknown client, unregistered redirect URI), an expired or forged
    /// form. Sent with [`OAuthError::status`].
    fn error(&self, error: &OAuthError) -> String {
        layout(
            "This request cannot continue",
            &format!(
                "<h1>This request cannot continue</h1><p class=\"problem\">{}</p>\
                 <p>Error code: <code>{}</code></p>",
                escape_html(error.description()),
                error.code()
            ),
        )
    }

    /// The `Content-Security-Policy` the pages are sent with. It must keep
    /// `frame-ancestors 'none'`.
    fn content_security_policy(&self) -> &str {
        DEFAULT_CONTENT_SECURITY_POLICY
    }
}

/// grantor's own pages: plain, accessible HTML with inline styles and no script.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainPages;

impl Pages for PlainPages {}

/// What the device verification page shows and posts.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct DevicePage<'a> {
    /// Where the form posts `user_code`.
    pub action: &'a str,
    /// The code to prefill: from `verification_uri_complete`'s `user_code`, or as typed.
    pub user_code: &'a str,
    /// Why the code typed was not accepted, if it was not.
    pub problem: Option<UserCodeProblem>,
    /// Whether the form asks for the person's email and password beside the code (inputs
    /// `username` and `password`): once wrong codes from people not signed in have spent the
    /// server-wide limit ([`UserCodeProblem::SignInRequired`]), and while the person signs in.
    pub sign_in: bool,
    /// Why the email and password were not accepted, if they were not.
    pub sign_in_problem: Option<SignInProblem>,
    /// Which usernames accounts have: the username field's label and input type.
    pub usernames: &'a Usernames,
}

// A user code approves a device's request once signed in: `Debug` does not show it.
impl std::fmt::Debug for DevicePage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevicePage")
            .field("action", &self.action)
            .field("user_code", &"<redacted>")
            .field("problem", &self.problem)
            .finish()
    }
}

/// Escapes text for HTML content and for quoted attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A whole document titled `title` (plain text, no markup) around `body`.
fn layout(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head>\
         <body><main>{body}</main></body></html>\n"
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0}\
main{max-width:24rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;\
box-shadow:0 1px 4px rgba(0,0,0,.15)}h1{font-size:1.4rem;margin-top:0}\
label{display:block;margin:1rem 0 .3rem;font-weight:600}\
input[type=email],input[type=password],input[type=text]{width:100%;padding:.5rem;box-sizing:border-box;\
border:1px solid #999;border-radius:4px}button{margin-top:1.2rem;padding:.55rem 1.2rem;\
border:0;border-radius:4px;background:#2457c5;color:#fff;font-size:1rem;cursor:pointer}\
button.secondary{background:#777;margin-left:.5rem}.problem{color:#a00;font-weight:600}\
ul{padding-left:1.2rem}";

/// A problem line, announced to screen readers.
fn problem(text: Option<String>) -> String {
    text.map(|p| {
        format!(
            "<p class=\"problem\" role=\"alert\">{}</p>",
            escape_html(&p)
        )
    })
    .unwrap_or_default()
}

/// What a sign-in problem says on grantor's pages, naming the username field as they label it.
fn sign_in_problem(problem: SignInProblem, usernames: &Usernames) -> String {
    let field = usernames.label().to_lowercase();
    match problem {
        SignInProblem::WrongCredentials => format!("The {field} or password is incorrect."),
        SignInProblem::MalformedUsername => format!("Enter the {field} of your account."),
        other => other.to_string(),
    }
}

/// The username field's label and input type.
fn username_field(usernames: &Usernames) -> (String, &'static str) {
    let kind = if usernames.are_email() {
        "email"
    } else {
        "text"
    };
    (escape_html(usernames.label()), kind)
}

fn sign_in_body(page: &SignInPage, action: &str) -> String {
    let (label, kind) = username_field(&page.usernames);
    format!(
        "<h1>Sign in</h1><p><strong>{client}</strong> wants to access your account.</p>{problem}\
         <form method=\"post\" action=\"{action}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <label for=\"username\">{label}</label>\
         <input id=\"username\" name=\"username\" type=\"{kind}\" autocomplete=\"username\" required autofocus{hint}>\
         <label for=\"password\">Password</label>\
         <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>",
        client = escape_html(&page.client_name),
        problem = problem(page.problem.map(|p| sign_in_problem(p, &page.usernames))),
        action = escape_html(action),
        csrf = escape_html(&page.csrf),
        // OpenID Connect's `login_hint`: a suggestion, escaped like any request text.
        hint = page
            .login_hint
            .as_deref()
            .map(|hint| format!(" value=\"{}\"", escape_html(hint)))
            .unwrap_or_default(),
    )
}

fn second_factor_body(page: &SecondFactorPage, action: &str) -> String {
    format!(
        "<h1>Enter your code</h1><p><strong>{client}</strong> asks for a second step: enter the \
         code your authenticator app shows.</p>{problem}\
         <form method=\"post\" action=\"{action}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <label for=\"otp\">Code</label>\
         <input id=\"otp\" name=\"otp\" type=\"text\" inputmode=\"numeric\" \
         autocomplete=\"one-time-code\" pattern=\"[0-9 ]*\" maxlength=\"12\" required autofocus>\
         <button type=\"submit\">Continue</button></form>",
        client = escape_html(&page.client_name),
        problem = problem(page.problem.map(|p| p.to_string())),
        action = escape_html(action),
        csrf = escape_html(&page.csrf),
    )
}

fn approval_body(page: &ApprovalPage, action: &str) -> String {
    let scopes: String = if page.scope.is_empty() {
        "<li>Only to know that you signed in</li>".to_owned()
    } else {
        page.scope
            .iter()
            .map(|s| {
                format!(
                    "<li><strong>{}</strong>: {}</li>",
                    escape_html(s),
                    describe_scope(s)
                )
            })
            .collect()
    };
    let unverified = match &page.document_host {
        Some(host) => format!(
            "<p class=\"unverified\"><strong>Unverified application</strong> from \
             <strong>{}</strong>. It describes itself in a document on that site: nobody has \
             checked that it is who its name says.</p>",
            escape_html(host)
        ),
        None if page.self_registered => "<p class=\"unverified\"><strong>Unverified \
             application.</strong> It registered itself: nobody has checked that it is who its \
             name says.</p>"
            .to_owned(),
        None => String::new(),
    };
    let destination = match &page.redirect_host {
        Some(host) => format!(
            "<p>Your answer will be sent to <strong>{}</strong>.</p>",
            escape_html(host)
        ),
        None => String::new(),
    };
    format!(
        "<h1>Allow access?</h1><p>Signed in as {user}.</p>\
         <p><strong>{client}</strong> asks for:</p><ul>{scopes}</ul>{unverified}{destination}\
         <form method=\"post\" action=\"{action}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <button type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\" class=\"secondary\">Deny</button>\
         </form>",
        user = escape_html(&page.username),
        client = escape_html(&page.client_name),
        action = escape_html(action),
        csrf = escape_html(&page.csrf),
    )
}

fn describe_scope(scope: &str) -> &'static str {
    match scope {
        "openid" => "to know who you are",
        "profile" => "your profile (your account id)",
        "email" => "your email address",
        "offline_access" => "access while you are away",
        _ => "access named by this scope",
    }
}

fn device_body(page: &DevicePage<'_>) -> String {
    let sign_in = if page.sign_in {
        let (label, kind) = username_field(page.usernames);
        format!(
            "<label for=\"username\">{label}</label>\
             <input id=\"username\" name=\"username\" type=\"{kind}\" autocomplete=\"username\" required>\
             <label for=\"password\">Password</label>\
             <input id=\"password\" name=\"password\" type=\"password\" \
             autocomplete=\"current-password\" required>"
        )
    } else {
        String::new()
    };
    let problems = [
        page.problem.map(|p| p.to_string()),
        page.sign_in_problem
            .map(|p| sign_in_problem(p, page.usernames)),
    ];
    format!(
        "<h1>Connect a device</h1><p>Enter the code your device shows.</p>{problem}\
         <form method=\"post\" action=\"{action}\">\
         <label for=\"user_code\">Code</label>\
         <input id=\"user_code\" name=\"user_code\" type=\"text\" value=\"{code}\" \
         autocomplete=\"off\" autocapitalize=\"characters\" spellcheck=\"false\" required autofocus>\
         {sign_in}<button type=\"submit\">Continue</button></form>",
        problem = problems
            .into_iter()
            .flatten()
            .map(|p| problem(Some(p)))
            .collect::<String>(),
        action = escape_html(page.action),
        code = escape_html(page.user_code),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_html_covers_content_and_quoted_attributes() {
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    /// Each page says what it is in its title (a browser tab, a screen reader's first words).
    #[test]
    fn each_page_has_a_title_of_its_own() {
        let title = |html: &str| {
            let start = html.find("<title>").expect("a title") + "<title>".len();
            let end = html[start..].find("</title>").expect("closed") + start;
            html[start..end].to_owned()
        };
        let device = PlainPages.device(&DevicePage {
            action: "/device",
            user_code: "",
            problem: None,
            sign_in: false,
            sign_in_problem: None,
            usernames: &Usernames::email(),
        });
        let titles = [
            title(&device),
            title(&PlainPages.device_answered(Decision::Approve)),
            title(&PlainPages.device_answered(Decision::Deny)),
            title(&PlainPages.logged_out()),
            title(&PlainPages.error(&OAuthError::invalid_request("no"))),
        ];
        assert_eq!(
            titles,
            [
                "Connect a device",
                "Device connected",
                "Request denied",
                "Signed out",
                "This request cannot continue"
            ]
        );
    }

    #[test]
    fn the_device_page_escapes_what_was_typed() {
        let html = PlainPages.device(&DevicePage {
            action: "/device",
            user_code: "\"><script>",
            problem: Some(UserCodeProblem::Unknown),
            sign_in: false,
            sign_in_problem: None,
            usernames: &Usernames::email(),
        });
        assert!(
            html.contains("value=\"&quot;&gt;&lt;script&gt;\""),
            "{html}"
        );
        assert!(!html.contains("<script>"));
        assert!(html.contains("role=\"alert\""));
        assert!(!html.contains("name=\"password\""));
    }

    #[test]
    fn past_the_server_wide_limit_the_device_page_asks_for_a_sign_in_with_the_code() {
        let html = PlainPages.device(&DevicePage {
            action: "/device",
            user_code: "BCDF-GHJK",
            problem: Some(UserCodeProblem::SignInRequired),
            sign_in: true,
            sign_in_problem: Some(SignInProblem::WrongCredentials),
            usernames: &Usernames::email(),
        });
        for needle in [
            "name=\"user_code\"",
            "name=\"username\"",
            "name=\"password\"",
            "Sign in to enter your code",
            "The email or password is incorrect",
        ] {
            assert!(html.contains(needle), "{needle}: {html}");
        }
    }
}
