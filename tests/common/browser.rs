//! A browser over a [`Site`], for the tests that drive the pages in process.

use std::collections::HashMap;

use grantor::signin::Site;
use http::{Request, Response};

use super::Fixture;

/// A browser over a [`Site`]: it keeps the cookies the site sets and sends them back.
pub struct Browser {
    pub site: Site,
    pub cookies: HashMap<String, String>,
}

impl Browser {
    pub fn new(f: &Fixture) -> Self {
        Self {
            site: Site::new(&f.server),
            cookies: HashMap::new(),
        }
    }

    fn cookie_header(&self) -> String {
        let pairs: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        pairs.join("; ")
    }

    fn keep_cookies(&mut self, response: &Response<String>) {
        for value in response.headers().get_all("set-cookie") {
            let value = value.to_str().unwrap();
            let (pair, attributes) = value.split_once(';').unwrap_or((value, ""));
            let (name, cookie) = pair.split_once('=').unwrap();
            if attributes.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), cookie.to_owned());
            }
        }
    }

    pub async fn authorize(&mut self, query: &str) -> Response<String> {
        let request = Request::get(format!("/api/oauth/authorize?{query}"))
            .header("cookie", self.cookie_header())
            .body(Vec::new())
            .unwrap();
        let response = self.site.authorize(&request).await;
        self.keep_cookies(&response);
        response
    }

    pub async fn post(&mut self, path: &str, pairs: &[(&str, &str)]) -> Response<String> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        let request = Request::post(path)
            .header("cookie", self.cookie_header())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.into_bytes())
            .unwrap();
        let response = match path {
            "/signin" => self.site.sign_in(&request).await,
            "/signin/second-factor" => self.site.second_factor(&request).await,
            _ => self.site.approve(&request).await,
        };
        self.keep_cookies(&response);
        response
    }

    /// Signs `user` in on the sign-in page `page`.
    pub async fn sign_in(
        &mut self,
        page: &Response<String>,
        user: (&str, &str),
    ) -> Response<String> {
        assert_eq!(page.status(), 200, "the sign-in page: {}", page.body());
        assert!(page.body().contains("name=\"password\""), "{}", page.body());
        let csrf = hidden_csrf(page.body());
        let pairs = [
            ("csrf", csrf.as_str()),
            ("username", user.0),
            ("password", user.1),
        ];
        self.post("/signin", &pairs).await
    }

    /// Answers the approval page `page`.
    pub async fn approve(&mut self, page: &Response<String>) -> Response<String> {
        assert_eq!(page.status(), 200, "the approval page: {}", page.body());
        assert!(page.body().contains("value=\"approve\""), "{}", page.body());
        let csrf = hidden_csrf(page.body());
        self.post("/approve", &[("csrf", &csrf), ("decision", "approve")])
            .await
    }

    /// Enters `code` on the second factor's page `page`.
    pub async fn enter_code(&mut self, page: &Response<String>, code: &str) -> Response<String> {
        assert!(page.body().contains("name=\"otp\""), "{}", page.body());
        let csrf = hidden_csrf(page.body());
        self.post("/signin/second-factor", &[("csrf", &csrf), ("otp", code)])
            .await
    }

    pub fn signed_on(&self) -> Option<&str> {
        self.cookies.get("grantor-session").map(String::as_str)
    }
}

/// The value of the page's hidden `csrf` input.
pub fn hidden_csrf(html: &str) -> String {
    let at = html.find("name=\"csrf\" value=\"").expect("a csrf input") + 19;
    html[at..].split('"').next().unwrap().to_owned()
}
