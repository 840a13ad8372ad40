//! A relying party's side of OpenID Connect against a demo server, as the OpenID Foundation's
//! conformance suite drives an OP: authorization requests answered in the query or by a form
//! post, the sign-in and approval pages passed through, codes redeemed, ID tokens verified with
//! nothing but the published JWKS.
#![allow(dead_code)]

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::Value;
use sha2::Digest as _;

use crate::demo::http::*;

/// How the authorization response comes back: the code flow's default (the query), or the
/// OAuth 2.0 Form Post Response Mode (a page that posts it to the redirect URI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Query,
    FormPost,
}

impl Mode {
    /// `params` with this mode's `response_mode`, if it needs one.
    pub fn with<'a>(self, params: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut params = params.to_vec();
        if self == Mode::FormPost {
            params.push(("response_mode", "form_post"));
        }
        params
    }

    /// The parameters of the authorization response `reply` carries to [`CALLBACK`].
    pub fn response(self, reply: &Reply) -> HashMap<String, String> {
        match self {
            Mode::Query => callback_query(reply),
            Mode::FormPost => posted_to_callback(reply),
        }
    }
}

/// Whether `reply` is the answer to the client (a redirect, or a page posting to it) rather
/// than a page of the sign-in.
pub fn is_answer(reply: &Reply) -> bool {
    reply.status == 303
        || (reply.status == 200
            && reply.body.contains("<form")
            && HtmlForm::parse(&reply.body).action == CALLBACK)
}

/// Passes the sign-in and approval pages the way a person would: signs `user` in if asked and
/// approves if asked. Answers the reply that carries the authorization response.
pub async fn through_pages(
    http: &reqwest::Client,
    base: &str,
    mut reply: Reply,
    user: (&str, &str),
) -> Reply {
    for _ in 0..3 {
        if is_answer(&reply) {
            return reply;
        }
        assert_eq!(reply.status, 200, "a page: {}", reply.body);
        let form = HtmlForm::parse(&reply.body);
        reply = match form.action.as_str() {
            "/signin" => sign_in(http, base, &sign_in_form(&reply), user).await,
            "/approve" => decide(http, base, &reply, "approve").await,
            other => panic!("an unexpected page posting to {other}: {}", reply.body),
        };
    }
    assert!(is_answer(&reply), "{}", reply.body);
    reply
}

/// The authorization request `params` in `mode` by `GET`, through the pages as `user`: the
/// authorization response.
pub async fn authorize(
    http: &reqwest::Client,
    base: &str,
    params: &[(&str, &str)],
    mode: Mode,
    user: (&str, &str),
) -> HashMap<String, String> {
    let first = get(http, &authorize_url(base, &mode.with(params))).await;
    mode.response(&through_pages(http, base, first, user).await)
}

/// An authorization code request of `client_id` for `scope`, with `state` and `nonce`.
pub fn code_request<'a>(client_id: &'a str, scope: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", scope),
        ("state", "oidf-state"),
        ("nonce", "oidf-nonce"),
    ]
}

/// The token response for `code`, the client authenticating with HTTP Basic.
pub async fn redeem(base: &str, client: (&str, &str), code: &str) -> Value {
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CALLBACK),
    ];
    assert_tokens(&token(base, Some(client), &pairs).await)
}

/// The header and claims of an ID token, after checking its signature against the JWKS at
/// `base`, its `iss` (`issuer`), its `aud` (the client) and its `exp`.
pub async fn verified_by(
    base: &str,
    issuer: &str,
    id_token: &str,
    client_id: &str,
) -> (Value, Value) {
    let required = ["iss", "sub", "aud", "exp", "iat"];
    verified_jwt(base, issuer, id_token, client_id, &required).await
}

/// The header and claims of any JWT the server at `base` signs, after checking its signature
/// against the JWKS at `base`, its `iss` (`issuer`), its `aud` (`audience`), the presence of
/// `required` and `exp` when it has one.
pub async fn verified_jwt(
    base: &str,
    issuer: &str,
    jwt: &str,
    audience: &str,
    required: &[&str],
) -> (Value, Value) {
    let jwks: JwkSet = serde_json::from_str(
        &get(&browser(), &format!("{base}/.well-known/jwks.json"))
            .await
            .body,
    )
    .expect("a JWKS");
    let header = jsonwebtoken::decode_header(jwt).expect("a JWS header");
    let kid = header.kid.clone().expect("a kid (OIDC Core §10.1)");
    let jwk = jwks.find(&kid).expect("the kid is published");
    let key = DecodingKey::from_jwk(jwk).expect("a usable key");
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[audience]);
    validation.set_required_spec_claims(required);
    validation.validate_exp = required.contains(&"exp");
    let data = jsonwebtoken::decode::<Value>(jwt, &key, &validation).expect("it verifies");
    (serde_json::to_value(&data.header).unwrap(), data.claims)
}

/// [`verified_by`] with the issuer the demo names by default: its base URL.
pub async fn verified(base: &str, id_token: &str, client_id: &str) -> (Value, Value) {
    verified_by(base, base, id_token, client_id).await
}

/// The claims of a JWS, unverified.
pub fn claims_of(jwt: &str) -> Value {
    let part = jwt.split('.').nth(1).expect("a JWS");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

/// The left half of the SHA-256 of `value`, as `at_hash` is for RS256 and ES256 (OIDC Core
/// §3.1.3.6).
pub fn sha256_half(value: &str) -> String {
    URL_SAFE_NO_PAD.encode(&sha2::Sha256::digest(value.as_bytes())[..16])
}

/// The ID token of a token response, verified for `client_id`; its claims.
pub async fn id_token_claims(base: &str, tokens: &Value, client_id: &str) -> Value {
    let id_token = tokens["id_token"].as_str().expect("an id_token");
    let (header, claims) = verified(base, id_token, client_id).await;
    assert_eq!(header["alg"], "RS256", "the default algorithm");
    if let Some(at_hash) = claims.get("at_hash") {
        assert_eq!(*at_hash, sha256_half(access_token(tokens)));
    }
    claims
}

/// `GET` userinfo with `access` as the bearer token: 200 JSON, its claims.
pub async fn userinfo(base: &str, access: &str) -> Value {
    let reply = send(
        browser()
            .get(format!("{base}/api/oauth/userinfo"))
            .bearer_auth(access),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, "application/json");
    reply.json()
}

/// The discovery document (OIDC Discovery 1.0 §4).
pub async fn discovery(base: &str) -> Value {
    let reply = get(
        &browser(),
        &format!("{base}/.well-known/openid-configuration"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, "application/json");
    reply.json()
}

/// An authorization error response as RFC 6749 §4.1.2.1 shapes it: `error`, `state` echoed,
/// no code, nothing but the error's members, `error_description` in its character set.
pub fn assert_error_response(response: &HashMap<String, String>, state: &str) -> String {
    let error = response.get("error").expect("an error").clone();
    assert_eq!(response.get("state").map(String::as_str), Some(state));
    assert!(!response.contains_key("code"), "{response:?}");
    for name in response.keys() {
        assert!(
            ["error", "error_description", "error_uri", "state", "iss"].contains(&name.as_str()),
            "an unexpected member {name}: {response:?}"
        );
    }
    if let Some(description) = response.get("error_description") {
        // RFC 6749 §4.1.2.1: %x20-21 / %x23-5B / %x5D-7E.
        assert!(
            description
                .chars()
                .all(|c| matches!(c, '\x20'..='\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e')),
            "{description:?}"
        );
    }
    error
}

/// A page that is neither an answer to the client nor a redirect anywhere: what a refused
/// redirect URI must get (RFC 6749 §4.1.2.1).
pub fn assert_error_page(reply: &Reply) {
    assert_eq!(reply.status, 400, "an error page: {}", reply.body);
    assert!(reply.location().is_none(), "{:?}", reply.location());
    assert_content_type(reply, "text/html");
    assert!(
        !reply.body.contains("<form") || !HtmlForm::parse(&reply.body).action.starts_with("http"),
        "nothing posts to a client: {}",
        reply.body
    );
}

/// A loopback HTTP server that answers 200 to every request and hands over each body: a
/// client's `backchannel_logout_uri` (OIDC Back-Channel Logout 1.0 §2.5).
pub async fn receiver() -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (address, mut requests) = requests_at("127.0.0.1:0").await;
    let (sender, bodies) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some((_, body)) = requests.recv().await {
            let _ = sender.send(body);
        }
    });
    (format!("http://{address}/backchannel"), bodies)
}

/// An HTTP server on `address` that answers 200 to every request and hands over each one's
/// head and body, once the body is whole (as its `content-length` says).
pub async fn requests_at(
    address: &str,
) -> (
    std::net::SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .unwrap_or_else(|e| panic!("listen on {address}: {e}"));
    let bound = listener.local_addr().unwrap();
    let (sender, requests) = tokio::sync::mpsc::unbounded_channel();
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
                            let _ = sender.send((head.to_owned(), body.to_owned()));
                            break;
                        }
                    }
                }
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    (bound, requests)
}
