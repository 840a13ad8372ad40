//! The host's pages: HTML for the sign-in, approval and error pages, the session cookie, and
//! the posted forms.

use grantor::signin::{ApprovalPage, SignInPage};
use grantor::{Decision, OAuthError};

/// The sign-in session cookie.
/// A posted HTML form (last value wins; these are the host's own forms).
pub struct Form(Vec<(String, String)>);

impl Form {
    pub fn parse(body: &[u8]) -> Self {
        Self(url::form_urlencoded::parse(body).into_owned().collect())
    }

    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

pub fn layout(body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>grantor demo</title><style>{STYLE}</style></head>\
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

pub fn sign_in_html(page: &SignInPage) -> String {
    let problem = page
        .problem
        .map(|p| {
            format!(
                "<p class=\"problem\" role=\"alert\">{}</p>",
                escape(&p.to_string())
            )
        })
        .unwrap_or_default();
    format!(
        "<h1>Sign in</h1><p><strong>{client}</strong> wants to access your account.</p>{problem}\
         <form method=\"post\" action=\"/signin\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <label for=\"username\">Email</label>\
         <input id=\"username\" name=\"username\" type=\"email\" autocomplete=\"username\" required autofocus>\
         <label for=\"password\">Password</label>\
         <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>",
        client = escape(&page.client_name),
        csrf = escape(&page.csrf),
    )
}

pub fn approval_html(page: &ApprovalPage) -> String {
    let scopes: String = if page.scope.is_empty() {
        "<li>Only to know that you signed in</li>".to_owned()
    } else {
        page.scope
            .iter()
            .map(|s| {
                format!(
                    "<li><strong>{}</strong>: {}</li>",
                    escape(s),
                    describe_scope(s)
                )
            })
            .collect()
    };
    format!(
        "<h1>Allow access?</h1><p>Signed in as {user}.</p>\
         <p><strong>{client}</strong> asks for:</p><ul>{scopes}</ul>\
         <form method=\"post\" action=\"/approve\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <button type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\" class=\"secondary\">Deny</button>\
         </form>",
        user = escape(&page.username),
        client = escape(&page.client_name),
        csrf = escape(&page.csrf),
    )
}

fn describe_scope(scope: &str) -> &'static str {
    match scope {
        "profile" => "your profile (your account id)",
        "email" => "your email address",
        _ => "access named by this scope",
    }
}

/// The device verification page: one input, `user_code`.
pub fn device_html(user_code: &str, problem: Option<&str>) -> String {
    let problem = problem
        .map(|p| format!("<p class=\"problem\" role=\"alert\">{}</p>", escape(p)))
        .unwrap_or_default();
    format!(
        "<h1>Connect a device</h1><p>Enter the code your device shows.</p>{problem}\
         <form method=\"post\" action=\"/device\">\
         <label for=\"user_code\">Code</label>\
         <input id=\"user_code\" name=\"user_code\" type=\"text\" value=\"{code}\" \
         autocomplete=\"off\" autocapitalize=\"characters\" spellcheck=\"false\" required autofocus>\
         <button type=\"submit\">Continue</button></form>",
        code = escape(user_code),
    )
}

/// What the user sees once a device's request is answered.
pub fn device_answered_html(decision: Decision) -> String {
    match decision {
        Decision::Approve => {
            "<h1>Device connected</h1><p>You may return to your device.</p>".to_owned()
        }
        Decision::Deny => {
            "<h1>Request denied</h1><p>The device was not given access.</p>".to_owned()
        }
    }
}

pub fn error_html(error: &OAuthError) -> String {
    format!(
        "<h1>This request cannot continue</h1><p class=\"problem\">{}</p>\
         <p>Error code: <code>{}</code></p>",
        escape(error.description()),
        error.code()
    )
}

/// Escapes text for HTML content and quoted attributes.
pub fn escape(text: &str) -> String {
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
