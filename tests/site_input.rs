//! The sign-in pages ([`Site`]) under whatever a browser or an attacker sends: any method, query,
//! cookie and body on the authorization endpoint and the sign-in, approval and device forms, with
//! and without a live session. Never a panic or a 5xx; every answer is either a page with the
//! flow's headers or a redirect to a registered redirect URI; a typed password never comes back.

mod common;

use std::sync::OnceLock;

use common::*;
use grantor::settings::DeviceFlow;
use grantor::signin::Site;
use http::{Method, Request, Response};
use proptest::prelude::*;

const CASES: u32 = 600;

/// One site for every case (the sessions and the throttle carry over, as on a live server).
fn site() -> &'static Site {
    static SITE: OnceLock<Site> = OnceLock::new();
    SITE.get_or_init(|| {
        let f = fixture_with(|b| b.device_flow(DeviceFlow::new()));
        Site::new(&f.server)
    })
}

#[derive(Debug, Clone, Copy)]
enum Page {
    Authorize,
    SignIn,
    Approve,
    Device,
}

/// How far the case's session got before the hostile request.
#[derive(Debug, Clone, Copy)]
enum Session {
    None,
    /// The sign-in page of a valid authorization request.
    AtSignIn,
    /// Signed in (as Bob), at the approval page.
    AtApproval,
}

#[derive(Debug, Clone)]
enum Cookie {
    Absent,
    Live,
    LiveAltered(String),
    LiveTwice,
    Junk(String),
}

#[derive(Debug, Clone)]
enum Csrf {
    Absent,
    Live,
    Junk(String),
}

#[derive(Debug, Clone)]
enum Body {
    Empty,
    Form {
        csrf: Csrf,
        username: String,
        decision: String,
        user_code: String,
        repeat: bool,
    },
    Raw(Vec<u8>),
    Oversized,
}

/// A hostile or malformed value.
fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("%zz".to_owned()),
        Just("a%00b".to_owned()),
        Just("\"><script>".to_owned()),
        Just("x".repeat(4097)),
        "[ -~]{0,40}",
        any::<String>(),
    ]
}

fn query() -> impl Strategy<Value = String> {
    let valid = format!(
        "response_type=code&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&state=s&scope=profile"
    );
    prop_oneof![
        1 => Just(String::new()),
        3 => Just(valid.clone()),
        3 => (junk(), junk()).prop_map(move |(name, value)| {
            let pair = url::form_urlencoded::Serializer::new(String::new())
                .append_pair(&name, &value)
                .finish();
            format!("{valid}&{pair}")
        }),
        1 => "[ -~]{0,80}".prop_map(|raw| raw.replace(['#', ' '], "")),
    ]
}

fn body() -> impl Strategy<Value = Body> {
    let csrf = prop_oneof![
        1 => Just(Csrf::Absent),
        6 => Just(Csrf::Live),
        1 => junk().prop_map(Csrf::Junk),
    ];
    let username = prop_oneof![Just(ALICE.to_owned()), junk()];
    let decision = prop_oneof![Just("approve".to_owned()), Just("deny".to_owned()), junk()];
    let user_code = prop_oneof![Just("BCDF-GHJK".to_owned()), junk()];
    prop_oneof![
        1 => Just(Body::Empty),
        4 => (csrf, username, decision, user_code, any::<bool>()).prop_map(
            |(csrf, username, decision, user_code, repeat)| Body::Form {
                csrf,
                username,
                decision,
                user_code,
                repeat,
            }
        ),
        1 => prop::collection::vec(any::<u8>(), 0..200).prop_map(Body::Raw),
        1 => Just(Body::Oversized),
    ]
}

fn cookie() -> impl Strategy<Value = Cookie> {
    prop_oneof![
        1 => Just(Cookie::Absent),
        6 => Just(Cookie::Live),
        1 => "[ -~]{1,8}".prop_map(Cookie::LiveAltered),
        1 => Just(Cookie::LiveTwice),
        1 => "[ -~]{0,60}".prop_map(Cookie::Junk),
    ]
}

/// The typed password: distinctive, so an echo of it would be found.
const TYPED: &str = "typed-Pa55word-never-echoed";

/// The session's cookie pair and CSRF field from a page.
fn live_parts(page: &Response<String>) -> (String, String) {
    let cookie = page
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .unwrap_or_default()
        .to_owned();
    let body = page.body();
    let csrf = body
        .find("name=\"csrf\" value=\"")
        .map(|start| {
            let rest = &body[start + 19..];
            rest[..rest.find('"').unwrap_or(0)].to_owned()
        })
        .unwrap_or_default();
    (cookie, csrf)
}

/// Brings a new session to `session`: its cookie pair and CSRF field (empty for none).
async fn prepare(site: &Site, session: Session) -> (String, String) {
    if let Session::None = session {
        return (String::new(), String::new());
    }
    let page = site
        .authorize(&authorize_request(&format!(
            "response_type=code&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&state=s&scope=profile"
        )))
        .await;
    assert_eq!(page.status(), 200, "{}", page.body());
    let (cookie, csrf) = live_parts(&page);
    if let Session::AtSignIn = session {
        return (cookie, csrf);
    }
    let form = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("csrf", csrf.as_str()),
            ("username", BOB),
            ("password", BOB_PASSWORD),
        ])
        .finish();
    let signed_in = site
        .sign_in(
            &Request::post("/signin")
                .header("cookie", &cookie)
                .body(form.into_bytes())
                .unwrap(),
        )
        .await;
    assert_eq!(signed_in.status(), 200, "{}", signed_in.body());
    let (renewed, csrf) = live_parts(&signed_in);
    // A signed-in session gets a new id: the new cookie replaces the old.
    assert!(
        !renewed.is_empty() && renewed != cookie,
        "a new session cookie"
    );
    (renewed, csrf)
}

fn request(
    method: &Method,
    query: &str,
    cookie: Option<String>,
    body: Vec<u8>,
) -> Request<Vec<u8>> {
    let uri = if query.is_empty() {
        "/page".to_owned()
    } else {
        format!("/page?{query}")
    };
    // A query no URI takes is the framework's to refuse, before grantor sees it.
    let uri = if uri.parse::<http::Uri>().is_ok() {
        uri
    } else {
        "/page".to_owned()
    };
    let mut builder = Request::builder().method(method.clone()).uri(uri);
    if let Some(cookie) = cookie
        && let Ok(value) = http::HeaderValue::from_str(&cookie)
    {
        builder = builder.header("cookie", value);
    }
    builder
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .unwrap()
}

/// Every answer a browser can get: a page with the flow's headers, or a redirect to a
/// registered redirect URI; never a 5xx, never the typed password.
fn assert_answer(response: &Response<String>) -> Result<(), TestCaseError> {
    let status = response.status().as_u16();
    prop_assert!(status < 500, "{status}: {}", response.body());
    prop_assert!(!response.body().contains(TYPED), "the password came back");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    if response.status().is_redirection() {
        let location = header("location");
        prop_assert!(
            location.starts_with(REDIRECT) || location.starts_with(OTHER_REDIRECT),
            "redirected to {location:?}"
        );
    } else {
        prop_assert_eq!(header("content-type"), "text/html; charset=utf-8");
        prop_assert_eq!(header("x-frame-options"), "DENY");
        prop_assert_eq!(header("cache-control"), "no-store");
        prop_assert!(header("content-security-policy").contains("frame-ancestors 'none'"));
    }
    for cookie in response.headers().get_all("set-cookie") {
        let cookie = cookie.to_str().unwrap_or_default();
        prop_assert!(cookie.contains("HttpOnly"), "{cookie}");
        prop_assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn every_page_answers_any_request_with_a_page_or_a_registered_redirect(
        page in prop_oneof![
            Just(Page::Authorize),
            Just(Page::SignIn),
            Just(Page::Approve),
            Just(Page::Device),
        ],
        session in prop_oneof![
            1 => Just(Session::None),
            2 => Just(Session::AtSignIn),
            1 => Just(Session::AtApproval),
        ],
        // Mostly the method the page takes, sometimes another.
        other_method in prop::option::weighted(0.15, prop::sample::select(vec![
            Method::GET, Method::POST, Method::HEAD, Method::PUT, Method::DELETE,
        ])),
        device_post in any::<bool>(),
        query in query(),
        cookie in cookie(),
        body in body(),
    ) {
        let site = site();
        runtime().block_on(async {
            let (live_cookie, live_csrf) = prepare(site, session).await;
            let cookie = match cookie {
                Cookie::Absent => None,
                Cookie::Live => Some(live_cookie),
                Cookie::LiveAltered(suffix) => Some(format!("{live_cookie}{suffix}")),
                Cookie::LiveTwice => Some(format!("{live_cookie}; {live_cookie}")),
                Cookie::Junk(junk) => Some(junk),
            };
            let body = match body {
                Body::Empty => Vec::new(),
                Body::Raw(bytes) => bytes,
                Body::Oversized => vec![b'a'; site.server().max_body_bytes() + 1],
                Body::Form { csrf, username, decision, user_code, repeat } => {
                    let csrf = match csrf {
                        Csrf::Absent => None,
                        Csrf::Live => Some(live_csrf),
                        Csrf::Junk(junk) => Some(junk),
                    };
                    let mut form = url::form_urlencoded::Serializer::new(String::new());
                    let times = if repeat { 2 } else { 1 };
                    for _ in 0..times {
                        if let Some(csrf) = &csrf {
                            form.append_pair("csrf", csrf);
                        }
                        form.append_pair("username", &username)
                            .append_pair("password", TYPED)
                            .append_pair("decision", &decision)
                            .append_pair("user_code", &user_code);
                    }
                    form.finish().into_bytes()
                }
            };
            let method = other_method.unwrap_or(match page {
                Page::Authorize => Method::GET,
                Page::Device if !device_post => Method::GET,
                _ => Method::POST,
            });
            let request = request(&method, &query, cookie, body);
            let response = match page {
                Page::Authorize => site.authorize(&request).await,
                Page::SignIn => site.sign_in(&request).await,
                Page::Approve => site.approve(&request).await,
                Page::Device => site.device(&request).await,
            };
            assert_answer(&response)
        })?;
    }
}

/// The pages read forms with the endpoints' strict parser: a repeated field is refused with an
/// error page (nothing signs in, the form is not spent), where a lenient parser let the last
/// value win.
#[tokio::test]
async fn a_repeated_field_is_refused_and_spends_nothing() {
    let site = site();
    let (cookie, csrf) = prepare(site, Session::AtSignIn).await;
    let post = |pairs: &[(&str, &str)]| {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        Request::post("/signin")
            .header("cookie", &cookie)
            .body(form.into_bytes())
            .unwrap()
    };
    let repeated = site
        .sign_in(&post(&[
            ("csrf", &csrf),
            ("username", "mallory@example.com"),
            ("username", BOB),
            ("password", BOB_PASSWORD),
        ]))
        .await;
    assert_eq!(repeated.status(), 400, "{}", repeated.body());
    assert!(
        repeated.body().contains("username is repeated"),
        "{}",
        repeated.body()
    );
    assert!(repeated.headers().get("location").is_none());
    // The form was not spent: the same form, sent once, signs in.
    let once = site
        .sign_in(&post(&[
            ("csrf", &csrf),
            ("username", BOB),
            ("password", BOB_PASSWORD),
        ]))
        .await;
    assert_eq!(once.status(), 200, "{}", once.body());
    assert!(
        once.body().contains("name=\"decision\""),
        "the approval page"
    );
}
