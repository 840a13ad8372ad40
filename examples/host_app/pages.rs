//! The host's own pages, in its own look: the login page (grantor asks for it through
//! [`Pages::sign_in`]; the host's handler shows it again after a wrong password), the code
//! page of the host's second step, and a page for a step that cannot go on. Every value from a
//! request or the table is escaped; each page is sent with grantor's security headers
//! (`Site::html_page` or `Site::render`).

use grantor::signin::{Pages, SignInPage, escape_html};

/// Where the host's login form posts (the host's route, not grantor's `/signin`).
pub const LOGIN_PATH: &str = "/host/login";
/// Where the host's code form posts.
pub const CODE_PATH: &str = "/host/code";

/// The host's pages in the flow: the login page is its own; approval, device and error pages
/// stay grantor's plain ones (this host's client needs no approval).
pub struct HostPages;

impl Pages for HostPages {
    /// `action` is the host's own route ([`LOGIN_PATH`], given to `Site::host_sign_in`), which
    /// checks the password and runs the host's second step; `page.problem` says why the last
    /// attempt failed (`AuthorizationServer::sign_in_again`).
    fn sign_in(&self, page: &SignInPage, action: &str) -> String {
        debug_assert_eq!(action, LOGIN_PATH);
        login_page(&Login {
            csrf: &page.csrf,
            client_name: Some(&page.client_name),
            login: page.login_hint.as_deref().unwrap_or(""),
            problem: page.problem.map(|problem| problem.to_string()),
        })
    }
}

/// What the login page shows and carries.
pub struct Login<'a> {
    /// grantor's sealed sign-in form, carried back in the hidden `csrf`.
    pub csrf: &'a str,
    /// The application asking, when known (grantor says it on the first showing only).
    pub client_name: Option<&'a str>,
    /// The login to prefill: the client's `login_hint`, or what was typed.
    pub login: &'a str,
    /// Why the last attempt failed.
    pub problem: Option<String>,
}

/// The login page: `login`, `password` and grantor's `csrf`, posted to [`LOGIN_PATH`].
pub fn login_page(page: &Login<'_>) -> String {
    let asking = match page.client_name {
        Some(name) => format!(
            "<p>to continue to <strong>{}</strong></p>",
            escape_html(name)
        ),
        None => "<p>to continue</p>".to_owned(),
    };
    let body = format!(
        "<h1>Sign in to Example Host</h1>{asking}{problem}\
         <form method=\"post\" action=\"{LOGIN_PATH}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <label for=\"login\">Login</label>\
         <input id=\"login\" name=\"login\" type=\"text\" value=\"{login}\" autocomplete=\"username\" \
         required autofocus>\
         <label for=\"password\">Password</label>\
         <input id=\"password\" name=\"password\" type=\"password\" \
         autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>",
        problem = problem(page.problem.as_deref()),
        csrf = escape_html(page.csrf),
        login = escape_html(page.login),
    );
    layout("Sign in · Example Host", &body)
}

/// The code page of the host's second step: `code` and grantor's `csrf`, posted to
/// [`CODE_PATH`] (the host's pending login travels in its own cookie).
pub fn code_page(csrf: &str, problem_text: Option<&str>) -> String {
    let body = format!(
        "<h1>Enter your code</h1><p>Open your authenticator app and type the six-digit code it \
         shows for Example Host.</p>{problem}\
         <form method=\"post\" action=\"{CODE_PATH}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <label for=\"code\">Code</label>\
         <input id=\"code\" name=\"code\" type=\"text\" inputmode=\"numeric\" \
         autocomplete=\"one-time-code\" pattern=\"[0-9]*\" maxlength=\"6\" required autofocus>\
         <button type=\"submit\">Verify</button></form>",
        problem = problem(problem_text),
        csrf = escape_html(csrf),
    );
    layout("Enter your code · Example Host", &body)
}

/// A step that cannot go on (an expired or spent login, a store failure): says so and sends the
/// person back to the application, which starts again.
pub fn stopped_page(message: &str) -> String {
    let body = format!(
        "<h1>This sign-in cannot continue</h1>{}<p>Go back to the application and sign in \
         again.</p>",
        problem(Some(message))
    );
    layout("Sign-in stopped · Example Host", &body)
}

/// A problem line, announced to screen readers.
fn problem(text: Option<&str>) -> String {
    text.map(|text| {
        format!(
            "<p class=\"problem\" role=\"alert\">{}</p>",
            escape_html(text)
        )
    })
    .unwrap_or_default()
}

/// A whole document in the host's look (inline styles only: grantor's CSP allows no more).
fn layout(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head>\
         <body><header>Example Host</header><main>{body}</main></body></html>\n",
        title = escape_html(title),
    )
}

const STYLE: &str = "body{font-family:Georgia,serif;background:#1d3b2a;margin:0;color:#222}\
header{color:#f3e9c6;font-size:1.3rem;letter-spacing:.1em;text-transform:uppercase;\
padding:1.2rem 2rem}main{max-width:22rem;margin:2rem auto;background:#fdfaf0;padding:2rem;\
border-radius:4px;border-top:6px solid #c9a227}h1{font-size:1.3rem;margin-top:0}\
label{display:block;margin:1rem 0 .3rem}input[type=text],input[type=password]{width:100%;\
padding:.5rem;box-sizing:border-box;border:1px solid #777;border-radius:2px}\
button{margin-top:1.2rem;padding:.55rem 1.4rem;border:0;border-radius:2px;background:#1d3b2a;\
color:#f3e9c6;font-size:1rem;cursor:pointer}.problem{color:#a00;font-weight:600}";
