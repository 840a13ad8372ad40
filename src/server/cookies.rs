//! The sign-in's two cookies, in one place: the sign-in cookie a sealed form is bound to, and
//! the single sign-on cookie of a signed-in browser. Both `HttpOnly; SameSite=Lax; Path=/`,
//! `Secure` with the `__Host-` prefix on an `https` issuer.

use http::HeaderMap;

use super::AuthorizationServer;
use super::steps::Step;

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

    /// `step` with the single sign-on cookie a sign-in just opened, when it is a response to
    /// send (an approval page carries it itself).
    pub(super) fn with_sign_on(&self, step: Step, sign_on: Option<String>) -> Step {
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
}
