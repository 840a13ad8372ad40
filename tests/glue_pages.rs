//! The browser's side of the glue over real HTTP, on axum and on actix-web: a host's own
//! [`Pages`] render the sign-in page (grantor's plain ones the rest), the glue sets the session
//! cookie and the pages' security headers, checks every form's CSRF token, refuses other
//! methods and forms over the body limit, and the code flow ends in the redirect and a code
//! the token endpoint of the same router exchanges. The device verification page is mounted only with the device flow.

mod common;

use std::net::SocketAddr;

use common::*;
use grantor::signin::{Pages, Site};
use grantor::signin::{SignInPage, escape_html};
use reqwest::header::{HeaderMap, LOCATION};

/// A host's sign-in page; the other pages stay grantor's.
struct Branded;

impl Pages for Branded {
    fn sign_in(&self, page: &SignInPage, action: &str) -> String {
        let problem = page.problem.map(|p| p.to_string()).unwrap_or_default();
        format!(
            "<!doctype html><title>Acme</title><h1>Acme sign-in for {client}</h1><p>{problem}</p>\
             <form method=post action=\"{action}\">\
             <input type=hidden name=\"csrf\" value=\"{csrf}\">\
             <input name=username><input name=password type=password><button>Go</button></form>",
            client = escape_html(&page.client_name),
            problem = escape_html(&problem),
            action = escape_html(action),
            csrf = escape_html(&page.csrf),
        )
    }
}

/// Serves `site` through `grantor::axum::router` on a free loopback port.
async fn serve_axum(site: Site) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app: ::axum::Router = grantor::axum::router(&site);
    tokio::spawn(async move { ::axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// Serves `site` through `grantor::actix::routes` on a free loopback port, on a thread of its
/// own (actix-web runs its own runtime); it lives as long as the test binary.
fn serve_actix(site: Site) -> String {
    let (sender, receiver) = std::sync::mpsc::channel::<SocketAddr>();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let server = actix_web::HttpServer::new(move || {
                actix_web::App::new().configure(grantor::actix::routes(&site))
            })
            .workers(1)
            .bind("127.0.0.1:0")
            .unwrap();
            sender.send(server.addrs()[0]).unwrap();
            server.run().await
        })
    });
    format!("http://{}", receiver.recv().unwrap())
}

/// A browser: keeps cookies, does not follow redirects.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// A form `POST` as a browser sends it.
fn form(request: reqwest::RequestBuilder, fields: &[(&str, &str)]) -> reqwest::RequestBuilder {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    request
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
}

/// A page's hidden `csrf` value.
fn csrf(page: &str) -> String {
    let start = page.find("name=\"csrf\" value=\"").expect("a csrf input") + 19;
    let end = start + page[start..].find('"').unwrap();
    page[start..end].to_owned()
}

struct Reply {
    status: u16,
    headers: HeaderMap,
    body: String,
}

async fn send(request: reqwest::RequestBuilder) -> Reply {
    let response = request.send().await.unwrap();
    Reply {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: response.text().await.unwrap(),
    }
}

impl Reply {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map_or("", |value| value.to_str().unwrap())
    }

    /// The form's hidden `csrf` value.
    fn csrf(&self) -> String {
        let start = self
            .body
            .find("name=\"csrf\" value=\"")
            .expect("a csrf input")
            + 19;
        let end = start + self.body[start..].find('"').unwrap();
        self.body[start..end].to_owned()
    }

    /// Sent as every page of the flow must be.
    fn assert_page(&self) {
        assert_eq!(self.header("content-type"), "text/html; charset=utf-8");
        assert_eq!(self.header("cache-control"), "no-store");
        assert_eq!(self.header("x-frame-options"), "DENY");
        assert!(
            self.header("content-security-policy")
                .contains("frame-ancestors 'none'")
        );
        assert_eq!(self.header("x-content-type-options"), "nosniff");
        assert!(self.headers.get(LOCATION).is_none(), "a page, no redirect");
    }

    /// Sets the session cookie as the flow must.
    fn assert_cookie(&self) {
        let cookie = self.header("set-cookie");
        assert!(cookie.starts_with("grantor-signin="), "{cookie}");
        assert!(cookie.contains("HttpOnly"), "{cookie}");
        assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    }
}

/// Exchanges `code` (issued to the demo client for [`REDIRECT`]) at `token_url`: tokens.
async fn exchange(http: &reqwest::Client, token_url: &str, code: &str) -> Reply {
    let request = form(
        http.post(token_url)
            .basic_auth("demo-client", Some("demo-secret")),
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
        ],
    );
    let tokens = send(request).await;
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    tokens
}

async fn check_code_flow(base: &str) {
    let http = browser();
    let authorize = format!(
        "{base}/api/oauth/authorize?response_type=code&client_id=demo-client\
         &redirect_uri={REDIRECT_ENCODED}&scope=profile&state=s1"
    );
    let page = send(http.get(&authorize)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    page.assert_page();
    page.assert_cookie();
    assert!(
        page.body.contains("Acme sign-in for Demo Client"),
        "{}",
        page.body
    );

    let sign_in = |csrf: String, password: &'static str| {
        form(
            http.post(format!("{base}/signin")),
            &[
                ("csrf", csrf.as_str()),
                ("username", ALICE),
                ("password", password),
            ],
        )
    };
    let again = send(sign_in(page.csrf(), "wrong-password")).await;
    assert_eq!(again.status, 200);
    again.assert_page();
    assert!(again.body.contains("incorrect"), "{}", again.body);

    let approval = send(sign_in(again.csrf(), ALICE_PASSWORD)).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    approval.assert_page();
    approval.assert_cookie();
    assert!(
        approval.body.contains("Allow access?"),
        "the plain approval page"
    );
    assert!(approval.body.contains("Demo Client"));

    let forged = form(
        http.post(format!("{base}/approve")),
        &[("csrf", "forged"), ("decision", "approve")],
    );
    let refused = send(forged).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    refused.assert_page();

    let csrf = approval.csrf();
    let approve = form(
        http.post(format!("{base}/approve")),
        &[("csrf", csrf.as_str()), ("decision", "approve")],
    );
    let redirect = send(approve).await;
    assert_eq!(redirect.status, 303, "{}", redirect.body);
    let location = url::Url::parse(redirect.header("location")).unwrap();
    assert!(location.as_str().starts_with(REDIRECT), "{location}");
    let query: std::collections::HashMap<_, _> = location.query_pairs().into_owned().collect();
    assert_eq!(query["state"], "s1");

    let tokens = exchange(&http, &format!("{base}/api/oauth/token"), &query["code"]).await;
    assert!(tokens.body.contains("\"access_token\""), "{}", tokens.body);

    for path in ["/signin", "/approve"] {
        let get = send(http.get(format!("{base}{path}"))).await;
        assert_eq!(get.status, 405, "GET {path}");
        assert_eq!(get.header("allow"), "POST", "GET {path}");
        get.assert_page();
    }
    // A form over the server's body limit (16 KiB by default) is refused.
    let oversized = format!("csrf={}", "a".repeat(256 * 1024));
    let refused = send(http.post(format!("{base}/signin")).body(oversized)).await;
    assert_eq!(refused.status, 413);
    // The rest of that body is unread: the connection closes, and the client's next request
    // goes on a new one.
    assert_eq!(refused.header("connection"), "close");

    // Without the device flow there is no verification page.
    assert_eq!(send(http.get(format!("{base}/device"))).await.status, 404);
}

/// The device verification page: prefilled from the query, escaped, and the code form again
/// (400) for a code no device holds.
async fn check_device_page(base: &str) {
    let http = browser();
    let page = send(http.get(format!("{base}/device?user_code=%22%3E%3Cb%3E"))).await;
    assert_eq!(page.status, 200, "{}", page.body);
    page.assert_page();
    assert!(
        page.body.contains("value=\"&quot;&gt;&lt;b&gt;\""),
        "{}",
        page.body
    );

    let unknown = form(
        http.post(format!("{base}/device")),
        &[("user_code", "BCDF-GHJK")],
    );
    let again = send(unknown).await;
    assert_eq!(again.status, 400, "{}", again.body);
    again.assert_page();
    assert!(again.body.contains("not valid"), "{}", again.body);
    assert!(again.body.contains("name=\"user_code\""));

    let put = send(http.put(format!("{base}/device"))).await;
    assert_eq!(put.status, 405);
    assert_eq!(put.header("allow"), "GET, HEAD, POST");
}

fn site() -> Site {
    Site::new(&fixture().server).pages(Branded)
}

fn device_site() -> Site {
    let f = fixture_with(|b| b.device_flow(grantor::settings::DeviceFlow::new()));
    Site::new(&f.server)
}

#[tokio::test]
async fn axum_serves_the_code_flow_with_the_hosts_pages() {
    check_code_flow(&serve_axum(site()).await).await;
}

#[tokio::test]
async fn actix_serves_the_code_flow_with_the_hosts_pages() {
    check_code_flow(&serve_actix(site())).await;
}

#[tokio::test]
async fn axum_serves_the_device_page() {
    check_device_page(&serve_axum(device_site()).await).await;
}

#[tokio::test]
async fn actix_serves_the_device_page() {
    check_device_page(&serve_actix(device_site())).await;
}

/// A host's own policy for its pages.
struct Strict;

impl Pages for Strict {
    fn content_security_policy(&self) -> &str {
        "default-src 'none'; frame-ancestors 'none'"
    }
}

/// Without a framework: the host calls the site itself, at paths of its choosing, and the forms
/// post where it said; its policy goes out with every page.
#[tokio::test]
async fn a_site_at_paths_of_the_hosts_choosing_without_a_framework() {
    let f = fixture();
    let site = Site::new(&f.server)
        .pages(Strict)
        .sign_in_path("/login")
        .approval_path("/consent");
    let authorize = authorize_request(&format!(
        "response_type=code&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&scope=profile"
    ));
    let page = site.authorize(&authorize).await;
    assert_eq!(page.status(), 200, "{}", page.body());
    assert_eq!(
        page.headers()["content-security-policy"],
        "default-src 'none'; frame-ancestors 'none'"
    );
    assert!(page.body().contains("action=\"/login\""), "{}", page.body());

    let cookie = page.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let csrf = csrf(page.body());
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("csrf", csrf.as_str()),
            ("username", ALICE),
            ("password", ALICE_PASSWORD),
        ])
        .finish();
    let sign_in = http::Request::post("/login")
        .header("cookie", cookie)
        .body(body)
        .unwrap();
    let approval = site.sign_in(&sign_in).await;
    assert_eq!(approval.status(), 200, "{}", approval.body());
    assert!(
        approval.body().contains("action=\"/consent\""),
        "{}",
        approval.body()
    );
}

/// Everything under `/auth`: the issuer has that path (so the endpoints, the metadata and the
/// device page move under it) and the forms are given it; the routes are mounted at the root,
/// as the glue documents for a deployment under a prefix.
fn prefixed_site() -> Site {
    let f = fixture_with(|b| {
        b.issuer(format!("{ISSUER}/auth"))
            .device_flow(grantor::settings::DeviceFlow::new())
    });
    Site::new(&f.server)
        .sign_in_path("/auth/signin")
        .approval_path("/auth/approve")
}

/// The `action` of a page's form.
fn action(page: &Reply) -> String {
    let start = page.body.find("action=\"").expect("a form") + 8;
    let end = start + page.body[start..].find('"').unwrap();
    page.body[start..end].to_owned()
}

/// The path of an endpoint URL the metadata gives.
fn advertised(metadata: &serde_json::Value, name: &str) -> String {
    let url = metadata[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {metadata}"));
    let url = url::Url::parse(url).unwrap();
    assert_eq!(url.origin().ascii_serialization(), ISSUER, "{name}");
    url.path().to_owned()
}

/// Under `/auth`: the metadata at its RFC 8414 place, every endpoint it names served there,
/// the code flow following the forms where they post, and nothing at the bare paths.
async fn check_prefixed(base: &str) {
    let http = browser();
    let metadata = send(http.get(format!(
        "{base}/.well-known/oauth-authorization-server/auth"
    )))
    .await;
    assert_eq!(metadata.status, 200, "{}", metadata.body);
    let metadata: serde_json::Value = serde_json::from_str(&metadata.body).unwrap();
    assert_eq!(metadata["issuer"], format!("{ISSUER}/auth"));
    let authorize = advertised(&metadata, "authorization_endpoint");
    let token = advertised(&metadata, "token_endpoint");
    assert_eq!(authorize, "/auth/api/oauth/authorize");
    for name in [
        "revocation_endpoint",
        "introspection_endpoint",
        "device_authorization_endpoint",
    ] {
        let path = advertised(&metadata, name);
        let answer = send(http.post(format!("{base}{path}"))).await;
        assert_ne!(answer.status, 404, "{name} at {path}");
    }

    let page = send(http.get(format!(
        "{base}{authorize}?response_type=code&client_id=demo-client\
         &redirect_uri={REDIRECT_ENCODED}&scope=profile&state=p"
    )))
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(action(&page), "/auth/signin");
    let approval = send(form(
        http.post(format!("{base}{}", action(&page))),
        &[
            ("csrf", page.csrf().as_str()),
            ("username", ALICE),
            ("password", ALICE_PASSWORD),
        ],
    ))
    .await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    assert_eq!(action(&approval), "/auth/approve");
    let redirect = send(form(
        http.post(format!("{base}{}", action(&approval))),
        &[("csrf", approval.csrf().as_str()), ("decision", "approve")],
    ))
    .await;
    assert_eq!(redirect.status, 303, "{}", redirect.body);
    let location = url::Url::parse(redirect.header("location")).unwrap();
    let code = location
        .query_pairs()
        .find(|(name, _)| name == "code")
        .expect("a code")
        .1
        .into_owned();
    exchange(&http, &format!("{base}{token}"), &code).await;

    // The device page is where the device authorization endpoint sends the user.
    let device = send(http.get(format!("{base}/auth/device"))).await;
    assert_eq!(device.status, 200, "{}", device.body);
    device.assert_page();

    for bare in [
        "/.well-known/oauth-authorization-server",
        "/api/oauth/token",
        "/api/oauth/authorize",
        "/signin",
        "/approve",
        "/device",
    ] {
        let status = send(http.post(format!("{base}{bare}"))).await.status;
        assert_eq!(status, 404, "{bare}");
    }
}

#[tokio::test]
async fn axum_serves_a_deployment_under_a_prefix() {
    check_prefixed(&serve_axum(prefixed_site()).await).await;
}

#[tokio::test]
async fn actix_serves_a_deployment_under_a_prefix() {
    check_prefixed(&serve_actix(prefixed_site())).await;
}
