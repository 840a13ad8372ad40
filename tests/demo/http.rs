//! Talking to a demo server over HTTP as a browser and a client would: requests, replies, the
//! sign-in pages' forms, and assertions on what comes back.

use std::collections::HashMap;

use http::HeaderMap;
use http::header::{CONTENT_TYPE, LOCATION};
use reqwest::redirect::Policy;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const CALLBACK: &str = "http://127.0.0.1:8081/callback";
pub const DEMO: (&str, &str) = ("demo-client", "demo-secret");
pub const PLAIN: (&str, &str) = ("plain-client", "plain-secret");
pub const ALICE: (&str, &str) = ("alice@example.com", "alice-password-1");
pub const BOB: (&str, &str) = ("bob@example.com", "bob-password-2");
/// A PKCE pair (RFC 7636 Appendix B's method): the verifier and its S256 challenge.
#[allow(dead_code, reason = "not every test binary uses PKCE")]
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
#[allow(dead_code, reason = "not every test binary uses PKCE")]
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

// ---------------------------------------------------------------------------------------------
// A client and a browser, over reqwest
// ---------------------------------------------------------------------------------------------

/// An HTTP client that keeps cookies and stops at redirects (the client's redirect URI is not
/// served by anyone).
pub fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .cookie_store(true)
        .no_proxy()
        .build()
        .expect("a reqwest client")
}

/// A response, read whole.
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn location(&self) -> Option<&str> {
        self.header(LOCATION.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.body))
    }
}

/// Registers a client with `metadata` (RFC 7591) and expects 201: the registered client's
/// metadata, credentials included.
#[allow(dead_code, reason = "not every test binary registers clients")]
pub async fn register(base: &str, metadata: &Value) -> Value {
    let reply = send(
        browser()
            .post(format!("{base}/api/oauth/register"))
            .header("content-type", "application/json")
            .body(metadata.to_string()),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.json()
}

/// The status of `reply` and its JSON `error_description` (empty when it has none).
#[allow(dead_code, reason = "not every test binary reads descriptions")]
pub fn status_and_description(reply: &Reply) -> (u16, String) {
    let description = serde_json::from_str::<Value>(&reply.body)
        .ok()
        .and_then(|body| body["error_description"].as_str().map(str::to_owned))
        .unwrap_or_default();
    (reply.status, description)
}

/// An OAuth or OpenID Connect client library's HTTP client (the `oauth2` and `openidconnect`
/// crates take any): one request over reqwest, redirects not followed (`http` is a
/// [`browser`], which stops at them).
#[allow(dead_code, reason = "only the client-library tests use it")]
pub async fn over_reqwest(
    http: &reqwest::Client,
    request: http::Request<Vec<u8>>,
) -> Result<http::Response<Vec<u8>>, reqwest::Error> {
    let response = http.execute(reqwest::Request::try_from(request)?).await?;
    let status = response.status();
    let headers = response.headers().clone();
    let mut answer = http::Response::new(response.bytes().await?.to_vec());
    *answer.status_mut() = status;
    *answer.headers_mut() = headers;
    Ok(answer)
}

pub async fn send(request: reqwest::RequestBuilder) -> Reply {
    let response = request.send().await.expect("the request is answered");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.expect("the body");
    let body = String::from_utf8(body.to_vec()).expect("a UTF-8 body");
    Reply {
        status,
        headers,
        body,
    }
}

pub async fn get(http: &reqwest::Client, url: &str) -> Reply {
    send(http.get(url)).await
}

pub fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

pub async fn post_form(
    http: &reqwest::Client,
    url: &str,
    basic: Option<(&str, &str)>,
    pairs: &[(&str, &str)],
) -> Reply {
    let mut request = http
        .post(url)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form(pairs));
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    send(request).await
}

pub async fn token(base: &str, basic: Option<(&str, &str)>, pairs: &[(&str, &str)]) -> Reply {
    post_form(&browser(), &format!("{base}/api/oauth/token"), basic, pairs).await
}

pub async fn password_grant(
    base: &str,
    client: (&str, &str),
    user: (&str, &str),
    scope: &str,
) -> Value {
    let reply = token(
        base,
        Some(client),
        &[
            ("grant_type", "password"),
            ("username", user.0),
            ("password", user.1),
            ("scope", scope),
        ],
    )
    .await;
    assert_tokens(&reply)
}

pub async fn me(base: &str, access_token: Option<&str>) -> Reply {
    let mut request = browser().get(format!("{base}/api/me"));
    if let Some(token) = access_token {
        request = request.bearer_auth(token);
    }
    send(request).await
}

/// The RFC 8414 metadata document.
pub async fn metadata_document(base: &str) -> Value {
    let reply = get(
        &browser(),
        &format!("{base}/.well-known/oauth-authorization-server"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

pub async fn introspect(base: &str, token: &str) -> Value {
    let reply = post_form(
        &browser(),
        &format!("{base}/api/oauth/introspect"),
        Some(DEMO),
        &[("token", token)],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, "application/json");
    reply.json()
}

pub fn authorize_url(base: &str, params: &[(&str, &str)]) -> String {
    format!("{base}/api/oauth/authorize?{}", form(params))
}

/// Posts the sign-in form.
pub async fn sign_in(http: &reqwest::Client, base: &str, csrf: &str, user: (&str, &str)) -> Reply {
    post_form(
        http,
        &format!("{base}/signin"),
        None,
        &[("csrf", csrf), ("username", user.0), ("password", user.1)],
    )
    .await
}

/// The authorization request, then the sign-in form: answers what the sign-in `POST` got.
pub async fn sign_in_via_authorize(
    http: &reqwest::Client,
    base: &str,
    params: &[(&str, &str)],
    user: (&str, &str),
) -> Reply {
    let page = get(http, &authorize_url(base, params)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    sign_in(http, base, &sign_in_form(&page), user).await
}

/// A code for `client_id` at [`CALLBACK`]: `user` signs in through the authorization endpoint
/// and approves on the approval page (the step every self-registered client has).
pub async fn approved_code(
    http: &reqwest::Client,
    base: &str,
    client_id: &str,
    user: (&str, &str),
) -> String {
    let params = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("state", "approved"),
    ];
    let approval = sign_in_via_authorize(http, base, &params, user).await;
    callback_query(&decide(http, base, &approval, "approve").await)
        .remove("code")
        .expect("a code")
}

/// Posts the approval page's form with the button `decision` (`approve` or `deny`).
pub async fn decide(http: &reqwest::Client, base: &str, approval: &Reply, decision: &str) -> Reply {
    let form = HtmlForm::parse(&approval.body);
    assert_eq!(form.action, "/approve", "{}", approval.body);
    assert!(
        form.method.eq_ignore_ascii_case("post"),
        "{}",
        approval.body
    );
    let buttons: Vec<(&str, &str)> = form
        .buttons
        .iter()
        .map(|b| (b.name.as_str(), b.value.as_str()))
        .collect();
    assert_eq!(
        buttons,
        [("decision", "approve"), ("decision", "deny")],
        "{}",
        approval.body
    );
    let csrf = form.hidden("csrf");
    post_form(
        http,
        &format!("{base}/approve"),
        None,
        &[("csrf", csrf), ("decision", decision)],
    )
    .await
}

/// The sign-in page's form, checked: posts to `/signin` with a hidden `csrf`, `username` and
/// `password`. Answers the CSRF token.
pub fn sign_in_form(page: &Reply) -> String {
    let form = HtmlForm::parse(&page.body);
    assert_eq!(form.action, "/signin", "{}", page.body);
    assert!(form.method.eq_ignore_ascii_case("post"), "{}", page.body);
    let kind = |name: &str| {
        form.inputs
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.kind.as_str())
    };
    assert_eq!(kind("username"), Some("email"), "{}", page.body);
    assert_eq!(kind("password"), Some("password"), "{}", page.body);
    assert!(!form.buttons.is_empty(), "a submit button: {}", page.body);
    let csrf = form.hidden("csrf");
    assert!(!csrf.is_empty());
    csrf.to_owned()
}

/// The query of a redirect to the client's callback.
pub fn callback_query(reply: &Reply) -> HashMap<String, String> {
    assert_eq!(reply.status, 303, "a redirect: {}", reply.body);
    let location = reply.location().expect("a Location");
    let url = url::Url::parse(location).expect("an absolute Location");
    assert_eq!(
        &url[..url::Position::AfterPath],
        CALLBACK,
        "to the callback"
    );
    assert!(url.fragment().is_none(), "{location}");
    url.query_pairs().into_owned().collect()
}

pub fn assert_tokens(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(reply, "application/json");
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let tokens = reply.json();
    assert!(tokens["access_token"].is_string(), "{tokens}");
    let token_type = tokens["token_type"].as_str().unwrap_or_default();
    assert!(token_type.eq_ignore_ascii_case("bearer"), "{tokens}");
    assert!(
        tokens["expires_in"].as_u64().is_some_and(|s| s > 0),
        "{tokens}"
    );
    tokens
}

pub fn access_token(tokens: &Value) -> &str {
    tokens["access_token"].as_str().expect("an access token")
}

pub fn assert_oauth_error(reply: &Reply, status: u16, error: &str) {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_content_type(reply, "application/json");
    assert_eq!(reply.json()["error"], error, "{}", reply.body);
}

pub fn assert_content_type(reply: &Reply, expected: &str) {
    let content_type = reply.header("content-type").unwrap_or_default();
    assert!(
        content_type.starts_with(expected),
        "content-type {content_type:?}, not {expected}"
    );
}

/// Scopes compare as sets (RFC 6749 §3.3: the order is not significant).
pub fn assert_scope(scope: &Value, expected: &str) {
    let mut got: Vec<&str> = scope.as_str().unwrap_or_default().split(' ').collect();
    let mut expected: Vec<&str> = expected.split(' ').collect();
    got.sort_unstable();
    expected.sort_unstable();
    assert_eq!(got, expected, "scope {scope}");
}

pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// What every page of the sign-in flow carries: HTML, framing forbidden, not stored, and (when
/// it starts or continues a sign-in) an `HttpOnly`, `SameSite=Lax` session cookie.
pub fn assert_page_headers(page: &Reply, sets_cookie: bool) {
    assert_content_type(page, "text/html");
    let no_framing = page
        .header("x-frame-options")
        .is_some_and(|v| v.eq_ignore_ascii_case("deny"))
        || page
            .header("content-security-policy")
            .is_some_and(|v| v.contains("frame-ancestors 'none'"));
    assert!(no_framing, "framing is forbidden: {:?}", page.headers);
    let cache = page.header("cache-control").unwrap_or_default();
    assert!(cache.contains("no-store"), "Cache-Control {cache:?}");
    let cookies: Vec<&str> = page
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(!cookies.is_empty(), sets_cookie, "Set-Cookie {cookies:?}");
    for cookie in cookies {
        let attributes: Vec<String> = cookie
            .split(';')
            .skip(1)
            .map(|a| a.trim().to_ascii_lowercase())
            .collect();
        assert!(attributes.contains(&"httponly".to_owned()), "{cookie}");
        assert!(attributes.contains(&"samesite=lax".to_owned()), "{cookie}");
    }
}

// ---------------------------------------------------------------------------------------------
// Just enough HTML: the first <form> of a page, by string search
// ---------------------------------------------------------------------------------------------

pub struct HtmlForm {
    pub action: String,
    pub method: String,
    pub inputs: Vec<Control>,
    pub buttons: Vec<Control>,
}

pub struct Control {
    pub name: String,
    pub kind: String,
    pub value: String,
}

impl HtmlForm {
    pub fn parse(html: &str) -> Self {
        let start = html.find("<form").expect("a <form>");
        let end = start + html[start..].find("</form>").expect("a </form>");
        let form = &html[start..end];
        let open = tags(form, "form").into_iter().next().expect("<form …>");
        let controls = |tag: &str| {
            tags(form, tag)
                .into_iter()
                .map(|t| Control {
                    name: attribute(t, "name").unwrap_or_default(),
                    kind: attribute(t, "type").unwrap_or_default(),
                    value: attribute(t, "value").unwrap_or_default(),
                })
                .collect()
        };
        Self {
            action: attribute(open, "action").unwrap_or_default(),
            method: attribute(open, "method").unwrap_or_else(|| "get".to_owned()),
            inputs: controls("input"),
            buttons: controls("button"),
        }
    }

    /// The value of the hidden input `name`.
    pub fn hidden(&self, name: &str) -> &str {
        self.inputs
            .iter()
            .find(|i| i.name == name && i.kind == "hidden")
            .map(|i| i.value.as_str())
            .unwrap_or_else(|| panic!("a hidden input {name}"))
    }
}

/// Each `<name …>` start tag in `html`.
pub fn tags<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    html.match_indices(&open)
        .filter_map(|(at, _)| html[at..].find('>').map(|end| &html[at..=at + end]))
        .collect()
}

/// A double-quoted attribute of a start tag, unescaped.
pub fn attribute(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(
        tag[start..start + len]
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

/// A loopback HTTP server that answers 200 to every request and hands over each body: where a
/// demo posts back-channel logout tokens (under `--fetch-allow-loopback 1`).
#[allow(dead_code, reason = "not every test binary receives posts")]
pub async fn receiver() -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/backchannel", listener.local_addr().unwrap());
    let (sender, bodies) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let sender = sender.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                loop {
                    let read = stream.read(&mut buffer).await.unwrap_or(0);
                    if read == 0 {
                        break;
                    }
                    request.extend_from_slice(&buffer[..read]);
                    let text = String::from_utf8_lossy(&request);
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length = head
                            .lines()
                            .find_map(|l| {
                                let (name, value) = l.split_once(':')?;
                                name.eq_ignore_ascii_case("content-length")
                                    .then(|| value.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if body.len() >= length {
                            let _ = sender.send(body.to_owned());
                            break;
                        }
                    }
                }
                let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                let _ = stream.write_all(ok).await;
            });
        }
    });
    (url, bodies)
}
