//! Whatever a client or browser sends, both endpoints answer with an RFC-shaped response: never a
//! panic, never a 5xx. Property-based: arbitrary bytes, headers and parameter mixes.

mod common;

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::*;
use grantor::{Authorize, Decision, ErrorCode};
use http::{Method, Request, Response};
use proptest::prelude::*;

const CASES: u32 = 4000;

const ERROR_CODES: &[&str] = &[
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
];

fn shared() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(fixture)
}

/// A hostile or malformed value.
fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("admin".to_owned()),
        Just("%zz".to_owned()),
        Just("%ff%fe".to_owned()),
        Just("a%00b".to_owned()),
        Just("x".repeat(4097)),
        "%[0-9a-fA-Fg-z]{0,2}",
        "[ -~]{0,40}",
        any::<String>().prop_map(|s| s.replace(['&', '#'], "")),
    ]
}

/// What happens to one parameter of a valid template.
#[derive(Debug, Clone)]
enum Mutation {
    Keep,
    Drop,
    Replace(String),
    Repeat,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        20 => Just(Mutation::Keep),
        1 => Just(Mutation::Drop),
        1 => junk().prop_map(Mutation::Replace),
        1 => Just(Mutation::Repeat),
    ]
}

/// A valid-looking request (`template`), each parameter mutated, plus stray parameters. Values
/// `{CODE}` and `{REFRESH}` are replaced by live ones when the case runs.
fn mutated(templates: Vec<Vec<(&'static str, String)>>) -> impl Strategy<Value = String> {
    let template = prop::sample::select(templates);
    (
        template,
        prop::collection::vec(mutation(), 8),
        prop::collection::vec(("[a-z_]{1,8}", junk()), 0..3),
    )
        .prop_map(|(template, mutations, strays)| {
            let mut pairs = Vec::new();
            for ((name, value), mutation) in template.into_iter().zip(mutations) {
                match mutation {
                    Mutation::Keep => pairs.push((name.to_owned(), value)),
                    Mutation::Drop => {}
                    Mutation::Replace(junk) => pairs.push((name.to_owned(), junk)),
                    Mutation::Repeat => {
                        pairs.push((name.to_owned(), value.clone()));
                        pairs.push((name.to_owned(), value));
                    }
                }
            }
            pairs.extend(strays);
            let pairs: Vec<String> = pairs.into_iter().map(|(n, v)| format!("{n}={v}")).collect();
            pairs.join("&")
        })
}

fn token_params() -> impl Strategy<Value = Vec<u8>> {
    let p = |pairs: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        pairs.iter().map(|(n, v)| (*n, (*v).to_owned())).collect()
    };
    let templates = vec![
        p(&[
            ("grant_type", "authorization_code"),
            ("code", "{CODE}"),
            ("redirect_uri", REDIRECT_ENCODED),
        ]),
        p(&[
            ("grant_type", "authorization_code"),
            ("code", "{CODE}"),
            ("redirect_uri", REDIRECT_ENCODED),
            ("code_verifier", VERIFIER),
            ("client_id", "public-client"),
        ]),
        p(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "{REFRESH}"),
            ("scope", "profile"),
        ]),
        p(&[
            ("grant_type", "client_credentials"),
            ("scope", "profile%20email"),
        ]),
        p(&[
            ("grant_type", "password"),
            ("username", ALICE),
            ("password", "wrong"),
            ("scope", "email"),
        ]),
    ];
    mutated(templates).prop_map(String::into_bytes)
}

fn authorize_params() -> impl Strategy<Value = String> {
    let f = shared();
    let mut templates = Vec::new();
    for response_type in ["code", "token"] {
        for client in [
            f.fast_id.as_str(),
            "demo-client",
            "public-client",
            "plain-client",
        ] {
            templates.push(vec![
                ("response_type", response_type.to_owned()),
                ("client_id", client.to_owned()),
                ("redirect_uri", REDIRECT_ENCODED.to_owned()),
                ("scope", "profile".to_owned()),
                ("state", "s%20t".to_owned()),
                ("code_challenge", CHALLENGE.to_owned()),
                ("code_challenge_method", "S256".to_owned()),
            ]);
        }
    }
    mutated(templates)
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => token_params(),
        1 => prop::collection::vec(any::<u8>(), 0..512),
        1 => prop::collection::vec(any::<u8>(), 16_000..17_000),
    ]
}

fn authorization() -> impl Strategy<Value = Option<Vec<u8>>> {
    let f = shared();
    let fast = f.fast_basic().into_bytes();
    prop_oneof![
        2 => Just(None),
        8 => Just(Some(fast)),
        1 => Just(Some(basic("public-client", "").into_bytes())),
        1 => Just(Some(basic("unknown", "x").into_bytes())),
        1 => any::<String>().prop_map(|s| Some(format!("Basic {}", STANDARD.encode(s)).into_bytes())),
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Some),
    ]
}

fn content_type() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        8 => Just(Some(b"application/x-www-form-urlencoded".to_vec())),
        1 => Just(Some(b"application/x-www-form-urlencoded; charset=UTF-8".to_vec())),
        1 => Just(Some(b"application/json".to_vec())),
        1 => Just(None),
        1 => prop::collection::vec(any::<u8>(), 0..40).prop_map(Some),
    ]
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        16 => Just(Method::POST),
        1 => Just(Method::GET),
        1 => Just(Method::PUT),
        1 => Just(Method::DELETE),
    ]
}

/// A request from raw parts; header values that `http` itself refuses are left out, as no
/// server would hand them over.
fn request(
    method: Method,
    uri: &str,
    content_type: Option<Vec<u8>>,
    authorization: Option<Vec<u8>>,
    body: Vec<u8>,
) -> Option<Request<Vec<u8>>> {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(value) = content_type.and_then(|v| http::HeaderValue::from_bytes(&v).ok()) {
        builder = builder.header("content-type", value);
    }
    if let Some(value) = authorization.and_then(|v| http::HeaderValue::from_bytes(&v).ok()) {
        builder = builder.header("authorization", value);
    }
    builder.body(body).ok()
}

/// Replaces `{CODE}` with a fresh code (PKCE-bound for the public client) and `{REFRESH}` with
/// a fresh refresh token, so that mutated requests reach the grants' deeper checks.
async fn with_live_values(f: &Fixture, body: Vec<u8>) -> Vec<u8> {
    let Ok(mut text) = String::from_utf8(body.clone()) else {
        return body;
    };
    if text.contains("{CODE}") {
        let (client, pkce) = if text.contains("public-client") {
            (
                "public-client",
                format!("&code_challenge={CHALLENGE}&code_challenge_method=S256"),
            )
        } else {
            (f.fast_id.as_str(), String::new())
        };
        text = text.replace("{CODE}", &f.code(client, &pkce).await);
    }
    if text.contains("{REFRESH}") {
        let code = f.code(&f.fast_id, "").await;
        let body =
            format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
        let tokens = json(&f.token(Some(&f.fast_basic()), &body).await);
        text = text.replace(
            "{REFRESH}",
            tokens["refresh_token"].as_str().unwrap_or_default(),
        );
    }
    text.into_bytes()
}

/// The shape every token-endpoint answer must have.
fn assert_rfc_token_response(response: &Response<String>) -> Result<(), TestCaseError> {
    let status = response.status().as_u16();
    prop_assert!(
        matches!(status, 200 | 400 | 401 | 405 | 413),
        "status {status}: {}",
        response.body()
    );
    prop_assert_eq!(&response.headers()["cache-control"], "no-store");
    let body: serde_json::Value = serde_json::from_str(response.body())
        .map_err(|e| TestCaseError::fail(format!("not JSON: {e}")))?;
    if status == 200 {
        prop_assert_eq!(&body["token_type"], "bearer");
        prop_assert!(body["access_token"].is_string() && body["expires_in"].is_u64());
        return Ok(());
    }
    let code = body["error"].as_str().unwrap_or_default();
    prop_assert!(ERROR_CODES.contains(&code), "unexpected error {code}");
    let description = body["error_description"].as_str().unwrap_or_default();
    prop_assert!(!description.is_empty());
    prop_assert!(
        description
            .bytes()
            .all(|b| matches!(b, 0x20..=0x21 | 0x23..=0x5b | 0x5d..=0x7e))
    );
    if status == 401 {
        prop_assert_eq!(code, "invalid_client");
        prop_assert!(response.headers().contains_key("www-authenticate"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn token_endpoint_answers_any_request_with_an_rfc_response(
        method in method(),
        content_type in content_type(),
        authorization in authorization(),
        body in body(),
    ) {
        let f = shared();
        let body = runtime().block_on(with_live_values(f, body));
        let Some(request) = request(method, "/api/oauth/token", content_type, authorization, body)
        else {
            return Ok(());
        };
        let response = runtime().block_on(f.server.token(&request));
        assert_rfc_token_response(&response)?;
    }

    #[test]
    fn authorization_endpoint_never_redirects_to_an_unregistered_uri(
        method in prop_oneof![8 => Just(Method::GET), 2 => Just(Method::POST), 1 => Just(Method::PATCH)],
        query in authorize_params(),
        decision in prop::bool::ANY,
    ) {
        let f = shared();
        // Bytes a URI cannot carry are percent-encoded, as a browser would.
        let query: String = query
            .bytes()
            .map(|b| match b {
                b'!'..=b'~' if b != b'#' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let uri = format!("/api/oauth/authorize?{query}");
        let (body, content_type) = if method == Method::POST {
            (query.into_bytes(), Some(b"application/x-www-form-urlencoded".to_vec()))
        } else {
            (Vec::new(), None)
        };
        let post = method == Method::POST;
        let Some(request) = request(method, &uri, content_type, None, body) else {
            return Ok(());
        };
        match runtime().block_on(f.server.authorize(&request)) {
            Authorize::SignIn(pending) => {
                prop_assert!(pending.redirect_uri() == REDIRECT || pending.redirect_uri() == OTHER_REDIRECT);
                let decision = if decision { Decision::Approve } else { Decision::Deny };
                let response = runtime().block_on(f.server.decide(pending, f.alice.id(), decision));
                let target = redirect(&response);
                prop_assert!(target.base == REDIRECT || target.base == OTHER_REDIRECT);
            }
            Authorize::Redirect(response) => {
                let target = redirect(&response);
                prop_assert!(target.base == REDIRECT || target.base == OTHER_REDIRECT);
                let params = if target.fragment.is_empty() { &target.query } else { &target.fragment };
                prop_assert!(params.contains_key("error") && params.contains_key("error_description"));
                prop_assert_eq!(params.get("iss").map(String::as_str), Some(ISSUER));
            }
            Authorize::Reject(error) => {
                prop_assert_eq!(error.code(), ErrorCode::InvalidRequest);
                // 413 only for a POST body over the server's limit (16 KiB by default).
                let status = error.status().as_u16();
                prop_assert!(matches!(status, 400 | 405) || (status == 413 && post));
            }
        }
    }
}
