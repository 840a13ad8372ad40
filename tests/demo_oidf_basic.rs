//! The OpenID Foundation conformance suite's Basic OP plan (`oidcc-basic-certification-test-plan`)
//! and Form Post OP plan (`oidcc-formpost-basic-certification-test-plan`, the same modules with
//! `response_mode=form_post`), module by module, over real HTTP against `axum_server` and
//! `actix_server`. Each test runs in four variants: `axum` and `actix` in the query (Basic OP),
//! `axum_form_post` and `actix_form_post` (Form Post OP). The static client is `demo-client`
//! (`client_secret_basic`, approval required) signing Alice in, as the plan's
//! `client_secret_basic` variant; the tests of a file share one server per framework.
//!
//! | module | what it checks | test |
//! |---|---|---|
//! | `oidcc-server` | the code flow: `state`, `iss`, a code of ≥ 128 bits, a verified RS256 ID token with `nonce` and no claim nobody asked for, userinfo 200 | `oidcc_server` |
//! | `oidcc-response-type-missing` | no `response_type`: `invalid_request` or `unsupported_response_type` to the client, `state` kept, nothing else | `oidcc_response_type_missing` |
//! | `oidcc-idtoken-signature` | a registered client that names no algorithm gets RS256 ID tokens with a `kid` (dynamic clients only) | `oidcc_idtoken_signature` |
//! | `oidcc-idtoken-unsigned` | `alg: none` ID tokens, skipped when discovery does not list `none` | skipped by the suite: `none` is neither listed nor accepted, held by `demo_openid.rs` `the_discovery_document_has_every_required_member_and_agrees_with_rfc_8414` and `a_client_registered_for_es256_gets_es256_id_tokens` |
//! | `oidcc-userinfo-get` | userinfo by `GET`: 200 JSON, `sub` of the ID token | `oidcc_userinfo_get` |
//! | `oidcc-userinfo-post-header` | userinfo by `POST`, token in the header | `oidcc_userinfo_post_header` |
//! | `oidcc-userinfo-post-body` | userinfo by `POST`, token in the body (a warning if refused) | `oidcc_userinfo_post_body` |
//! | `oidcc-ensure-request-without-nonce-succeeds-for-code-flow` | the code flow needs no `nonce` | `oidcc_ensure_request_without_nonce_succeeds_for_code_flow` |
//! | `oidcc-scope-profile` | `profile`'s claims from userinfo (missing ones are a warning) | `oidcc_scope_profile` |
//! | `oidcc-scope-email` | `email`'s claims from userinfo | `oidcc_scope_email` |
//! | `oidcc-scope-address` | `address`, run only when `scopes_supported` lists it | skipped by the suite: the demo grants no `address` and does not list it; `oidcc_scope_address` holds both (a request for it is `invalid_scope`) |
//! | `oidcc-scope-phone` | `phone`, likewise | skipped likewise; `oidcc_scope_phone` |
//! | `oidcc-scope-all` | every listed claim scope together | `oidcc_scope_all` (`email profile`) |
//! | `oidcc-alternate-happy-flow` | scopes reversed and parameters reordered change nothing | `oidcc_alternate_happy_flow` |
//! | `oidcc-display-page` | `display=page` is no error | `oidcc_display_page` |
//! | `oidcc-display-popup` | `display=popup` is no error | `oidcc_display_popup` |
//! | `oidcc-prompt-login` | `prompt=login` signs in again: a later `auth_time` | `oidcc_prompt_login` |
//! | `oidcc-prompt-none-not-logged-in` | `prompt=none` without a session (a 128-character `state`): `login_required` or another interaction error | `oidcc_prompt_none_not_logged_in` |
//! | `oidcc-prompt-none-logged-in` | `prompt=none` with a session: a code without a page, the same `sub` and `auth_time` | `oidcc_prompt_none_logged_in` |
//! | `oidcc-max-age-1` | after 2 s, `max_age=1` signs in again: `auth_time` present, later, recent | `oidcc_max_age_1` |
//! | `oidcc-max-age-10000` | `max_age=15000` then `max_age=10000`: no second sign-in, `auth_time` present and the same | `oidcc_max_age_10000` |
//! | `oidcc-ensure-request-with-unknown-parameter-succeeds` | `extra=foobar` is ignored | `oidcc_ensure_request_with_unknown_parameter_succeeds` |
//! | `oidcc-id-token-hint` | `prompt=none` with the first ID token as `id_token_hint`: a code, the same `sub` | `oidcc_id_token_hint` |
//! | `oidcc-login-hint` | `login_hint` is no error (here it fills the sign-in form) | `oidcc_login_hint` |
//! | `oidcc-ui-locales` | `ui_locales=se` is no error | `oidcc_ui_locales` |
//! | `oidcc-claims-locales` | `claims_locales=se` is no error | `oidcc_claims_locales` |
//! | `oidcc-ensure-request-with-acr-values-succeeds` | every `acr_values_supported` asked: success, `acr` one of them (Bob: no second factor) | `oidcc_ensure_request_with_acr_values_succeeds` |
//! | `oidcc-codereuse` | a code redeemed twice: `400` `invalid_grant` JSON | `oidcc_codereuse` |
//! | `oidcc-codereuse-30seconds` | the same 30 s later, and the first access token revoked | `oidcc_codereuse_30seconds`, without the 30 s wait (no timed tests): within its lifetime a code's reuse revokes at once, and a reuse after expiry fails the same way |
//! | `oidcc-ensure-registered-redirect-uri` | an unregistered `redirect_uri` (a random path under the registered one): an error page, no redirect | `oidcc_ensure_registered_redirect_uri` |
//! | `oidcc-ensure-post-request-succeeds` | the authorization request by `POST` | `oidcc_ensure_post_request_succeeds` |
//! | `oidcc-server-client-secret-post` | the code flow with `client_secret_post` (`post-client`) | `oidcc_server_client_secret_post` |
//! | `oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported` | an unsigned request object by reference: processed, or `request_uri_not_supported` (then skipped) | `oidcc_request_uri_unsigned_supported_correctly_or_rejected_as_unsupported` (`request_uri_not_supported`, redirected: the suite then skips) |
//! | `oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported` | an unsigned request object by value: processed, or `request_not_supported` (then skipped); skipped outright when the algorithms listed leave out `none` | `oidcc_unsigned_request_object_supported_correctly_or_rejected_as_unsupported` |
//! | `oidcc-claims-essential` | `name` essential in userinfo through `claims`: success, `name` released (a warning if not) | `oidcc_claims_essential` |
//! | `oidcc-ensure-request-object-with-redirect-uri` | a good `redirect_uri` inside an unsigned request object, a bad one outside: never a redirect to the registered URI with `request_not_supported` | `oidcc_ensure_request_object_with_redirect_uri` |
//! | `oidcc-refresh-token` | a refresh token that works (a new verified ID token of the same sign-in, userinfo) and is refused to another client | `oidcc_refresh_token` |
//! | `oidcc-ensure-request-with-valid-pkce-succeeds` | PKCE S256 on a confidential client | `oidcc_ensure_request_with_valid_pkce_succeeds` |
//!
//! Screens the suite asks a person to photograph (the error pages, the second sign-in page) are
//! asserted here by what they are: an HTML page that redirects nowhere, or the sign-in form.

mod demo;
#[path = "demo/openid.rs"]
mod openid;

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use demo::Server;
use demo::http::*;
use openid::*;
use serde_json::Value;

/// Makes the four variants of each check: `axum` and `actix` answering in the query (the Basic
/// OP plan), `axum_form_post` and `actix_form_post` by form post (the Form Post OP plan).
/// Attributes written before a module go on each of its four tests.
macro_rules! oidf {
    ($($(#[$attribute:meta])* $module:ident => $check:ident;)*) => {$(
        mod $module {
            use super::Mode;

            $(#[$attribute])*
            #[tokio::test]
            async fn axum() {
                super::run("axum", Mode::Query, super::$check).await;
            }

            $(#[$attribute])*
            #[tokio::test]
            async fn actix() {
                super::run("actix", Mode::Query, super::$check).await;
            }

            $(#[$attribute])*
            #[tokio::test]
            async fn axum_form_post() {
                super::run("axum", Mode::FormPost, super::$check).await;
            }

            $(#[$attribute])*
            #[tokio::test]
            async fn actix_form_post() {
                super::run("actix", Mode::FormPost, super::$check).await;
            }
        }
    )*};
}

oidf! {
    oidcc_server => server_test;
    oidcc_response_type_missing => response_type_missing;
    oidcc_idtoken_signature => idtoken_signature;
    oidcc_userinfo_get => userinfo_get;
    oidcc_userinfo_post_header => userinfo_post_header;
    oidcc_userinfo_post_body => userinfo_post_body;
    oidcc_ensure_request_without_nonce_succeeds_for_code_flow => without_nonce;
    oidcc_scope_profile => scope_profile;
    oidcc_scope_email => scope_email;
    oidcc_scope_address => scope_address;
    oidcc_scope_phone => scope_phone;
    oidcc_scope_all => scope_all;
    oidcc_alternate_happy_flow => alternate_happy_flow;
    oidcc_display_page => display_page;
    oidcc_display_popup => display_popup;
    oidcc_prompt_login => prompt_login;
    oidcc_prompt_none_not_logged_in => prompt_none_not_logged_in;
    oidcc_prompt_none_logged_in => prompt_none_logged_in;
    oidcc_max_age_1 => max_age_1;
    oidcc_max_age_10000 => max_age_10000;
    oidcc_ensure_request_with_unknown_parameter_succeeds => unknown_parameter;
    oidcc_id_token_hint => id_token_hint;
    oidcc_login_hint => login_hint;
    oidcc_ui_locales => ui_locales;
    oidcc_claims_locales => claims_locales;
    oidcc_ensure_request_with_acr_values_succeeds => acr_values;
    oidcc_codereuse => codereuse;
    oidcc_codereuse_30seconds => codereuse_revokes;
    oidcc_ensure_registered_redirect_uri => unregistered_redirect_uri;
    oidcc_ensure_post_request_succeeds => post_request;
    oidcc_server_client_secret_post => client_secret_post;
    oidcc_request_uri_unsigned_supported_correctly_or_rejected_as_unsupported => request_uri_unsigned;
    oidcc_unsigned_request_object_supported_correctly_or_rejected_as_unsupported => request_object_unsigned;
    oidcc_claims_essential => claims_essential;
    oidcc_ensure_request_object_with_redirect_uri => request_object_with_redirect_uri;
    oidcc_refresh_token => refresh_token;
    oidcc_ensure_request_with_valid_pkce_succeeds => valid_pkce;
}

/// Runs `check` against this binary's shared server of `framework`, then asserts it calm.
async fn run<F>(framework: &str, mode: Mode, check: fn(&'static Server, Mode) -> F)
where
    F: Future<Output = ()>,
{
    let server = Server::shared(framework, &[]);
    check(server, mode).await;
    server.assert_alive_and_calm();
}

/// A finished code flow: the authorization response, the token response, the ID token's claims.
struct Flow {
    response: HashMap<String, String>,
    tokens: Value,
    claims: Value,
}

impl Flow {
    fn access_token(&self) -> &str {
        access_token(&self.tokens)
    }
}

/// `demo-client`'s code flow for `scope` with `extra` parameters in `http`'s browser, through
/// the pages as `user`, redeemed; the ID token verified and its `nonce` checked.
async fn flow(
    http: &reqwest::Client,
    base: &str,
    mode: Mode,
    scope: &str,
    extra: &[(&str, &str)],
    user: (&str, &str),
) -> Flow {
    let mut params = code_request(DEMO.0, scope);
    params.extend_from_slice(extra);
    let response = authorize(http, base, &params, mode, user).await;
    redeemed(base, response).await
}

/// The code of `response` redeemed by `demo-client`.
async fn redeemed(base: &str, response: HashMap<String, String>) -> Flow {
    assert!(response.contains_key("code"), "a code: {response:?}");
    assert_eq!(response["state"], "oidf-state", "{response:?}");
    assert_eq!(response["iss"], base, "{response:?}");
    let tokens = redeem(base, DEMO, &response["code"]).await;
    let claims = id_token_claims(base, &tokens, DEMO.0).await;
    assert_eq!(claims["nonce"], "oidf-nonce");
    Flow {
        response,
        tokens,
        claims,
    }
}

/// The answer to `params` in `mode` from a browser that already has a session: no page.
async fn silent(http: &reqwest::Client, base: &str, params: &[(&str, &str)], mode: Mode) -> Reply {
    let reply = get(http, &authorize_url(base, &mode.with(params))).await;
    assert!(is_answer(&reply), "no page: {}", reply.body);
    reply
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The claims an ID token may carry when no scope or `claims` asked for more (the suite's
/// `EnsureIdTokenDoesNotContainNonRequestedClaims`).
const ID_TOKEN_CLAIMS: [&str; 15] = [
    "iss",
    "sub",
    "aud",
    "exp",
    "iat",
    "auth_time",
    "nonce",
    "acr",
    "amr",
    "azp",
    "at_hash",
    "c_hash",
    "nbf",
    "jti",
    "sid",
];

async fn server_test(server: &Server, mode: Mode) {
    let base = &server.base;
    let done = flow(&browser(), base, mode, "openid", &[], ALICE).await;
    // RFC 6749 §10.10: a code of at least 128 bits (22 base64url characters).
    assert!(done.response["code"].len() >= 22, "{:?}", done.response);
    assert!(done.tokens["expires_in"].as_u64().is_some());
    assert!(done.claims["sub"].is_string());
    for claim in done.claims.as_object().unwrap().keys() {
        assert!(
            ID_TOKEN_CLAIMS.contains(&claim.as_str()),
            "{claim} was not asked for: {}",
            done.claims
        );
    }
    let info = userinfo(base, done.access_token()).await;
    assert_eq!(info["sub"], done.claims["sub"]);
}

async fn response_type_missing(server: &Server, mode: Mode) {
    let base = &server.base;
    let params = [
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("state", "oidf-state"),
        ("nonce", "oidf-nonce"),
    ];
    let reply = get(&browser(), &authorize_url(base, &mode.with(&params))).await;
    let response = mode.response(&reply);
    let error = assert_error_response(&response, "oidf-state");
    assert!(
        ["invalid_request", "unsupported_response_type"].contains(&error.as_str()),
        "{response:?}"
    );
}

async fn idtoken_signature(server: &Server, mode: Mode) {
    let base = &server.base;
    let client = register(
        base,
        &serde_json::json!({
            "redirect_uris": [CALLBACK],
            "client_name": "oidcc-idtoken-signature",
        }),
    )
    .await;
    let id = client["client_id"].as_str().unwrap();
    let secret = client["client_secret"].as_str().unwrap();
    let http = browser();
    let response = authorize(&http, base, &code_request(id, "openid"), mode, ALICE).await;
    let tokens = redeem(base, (id, secret), &response["code"]).await;
    let id_token = tokens["id_token"].as_str().expect("an ID token");
    let (header, claims) = verified(base, id_token, id).await;
    assert_eq!(header["alg"], "RS256", "the default (OIDC Core §3.1.3.7)");
    assert!(header["kid"].is_string(), "{header}");
    assert_eq!(claims["nonce"], "oidf-nonce");
}

async fn userinfo_get(server: &Server, mode: Mode) {
    let base = &server.base;
    let done = flow(&browser(), base, mode, "openid", &[], ALICE).await;
    let info = userinfo(base, done.access_token()).await;
    assert_eq!(info["sub"], done.claims["sub"]);
}

async fn userinfo_post_header(server: &Server, mode: Mode) {
    let base = &server.base;
    let done = flow(&browser(), base, mode, "openid", &[], ALICE).await;
    let reply = send(
        browser()
            .post(format!("{base}/api/oauth/userinfo"))
            .bearer_auth(done.access_token()),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, "application/json");
    assert_eq!(reply.json()["sub"], done.claims["sub"]);
}

async fn userinfo_post_body(server: &Server, mode: Mode) {
    let base = &server.base;
    let done = flow(&browser(), base, mode, "openid", &[], ALICE).await;
    let reply = post_form(
        &browser(),
        &format!("{base}/api/oauth/userinfo"),
        None,
        &[("access_token", done.access_token())],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, "application/json");
    assert_eq!(reply.json()["sub"], done.claims["sub"]);
}

async fn without_nonce(server: &Server, mode: Mode) {
    let base = &server.base;
    let mut params = code_request(DEMO.0, "openid");
    params.retain(|(name, _)| *name != "nonce");
    let response = authorize(&browser(), base, &params, mode, ALICE).await;
    assert_eq!(response["state"], "oidf-state");
    assert!(response.contains_key("code"), "{response:?}");
}

/// `scope`'s flow, and userinfo with the same `sub` as the ID token: its claims.
async fn scoped_userinfo(server: &Server, mode: Mode, scope: &str) -> Value {
    let base = &server.base;
    let done = flow(&browser(), base, mode, scope, &[], ALICE).await;
    let info = userinfo(base, done.access_token()).await;
    assert_eq!(info["sub"], done.claims["sub"]);
    // OIDC Core §5.4: the code flow's scope claims come from userinfo, not the ID token.
    for claim in done.claims.as_object().unwrap().keys() {
        assert!(ID_TOKEN_CLAIMS.contains(&claim.as_str()), "{}", done.claims);
    }
    info
}

fn assert_profile(info: &Value) {
    assert_eq!(info["name"], "Alice Example", "{info}");
    assert_eq!(info["given_name"], "Alice", "{info}");
    assert_eq!(info["family_name"], "Example", "{info}");
}

fn assert_email(info: &Value) {
    assert_eq!(info["email"], "alice@example.com", "{info}");
    assert_eq!(info["email_verified"], true, "{info}");
}

async fn scope_profile(server: &Server, mode: Mode) {
    let info = scoped_userinfo(server, mode, "openid profile").await;
    assert_profile(&info);
    assert!(
        info.get("email").is_none(),
        "only the scope's claims: {info}"
    );
}

async fn scope_email(server: &Server, mode: Mode) {
    let info = scoped_userinfo(server, mode, "openid email").await;
    assert_email(&info);
    assert!(
        info.get("name").is_none(),
        "only the scope's claims: {info}"
    );
}

/// The scopes the suite runs its address and phone modules with are listed, so they run.
async fn assert_listed(server: &Server, scopes: &[&str]) {
    let listed = strings(&discovery(&server.base).await["scopes_supported"]);
    for scope in scopes {
        assert!(listed.contains(&(*scope).to_owned()), "{scope}: {listed:?}");
    }
}

/// `address` and `phone` are not among the demo's scopes: discovery does not list them, so the
/// suite skips the module, and a request for one is `invalid_scope` at the client.
async fn unlisted_scope(server: &Server, mode: Mode, scope: &str) {
    let listed = strings(&discovery(&server.base).await["scopes_supported"]);
    assert!(!listed.contains(&scope.to_owned()), "{scope}: {listed:?}");
    let scope = format!("openid {scope}");
    let params = mode.with(&[
        ("response_type", "code"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("scope", &scope),
        ("state", "unlisted"),
        ("nonce", "oidf-nonce"),
    ]);
    let reply = get(&browser(), &authorize_url(&server.base, &params)).await;
    let answer = mode.response(&reply);
    assert_eq!(answer["error"], "invalid_scope", "{answer:?}");
    assert_eq!(answer["state"], "unlisted");
}

async fn scope_address(server: &Server, mode: Mode) {
    unlisted_scope(server, mode, "address").await;
}

async fn scope_phone(server: &Server, mode: Mode) {
    unlisted_scope(server, mode, "phone").await;
}

/// The scopes listed, all at once (`address` and `phone` are not).
async fn scope_all(server: &Server, mode: Mode) {
    assert_listed(server, &["email", "profile"]).await;
    let info = scoped_userinfo(server, mode, "openid email profile").await;
    assert_profile(&info);
    assert_email(&info);
}

async fn alternate_happy_flow(server: &Server, mode: Mode) {
    let base = &server.base;
    // RFC 6749 §3.3: the order of scopes is not significant; nor is the parameters'.
    let params = [
        ("nonce", "oidf-nonce"),
        ("state", "oidf-state"),
        ("scope", "email openid"),
        ("redirect_uri", CALLBACK),
        ("client_id", DEMO.0),
        ("response_type", "code"),
    ];
    let http = browser();
    let response = authorize(&http, base, &params, mode, ALICE).await;
    let done = redeemed(base, response).await;
    assert_scope(&done.tokens["scope"], "openid email");
    let info = userinfo(base, done.access_token()).await;
    assert_eq!(info["sub"], done.claims["sub"]);
    assert_email(&info);
}

/// The flow with one more parameter the OP must accept without error.
async fn accepted(server: &Server, mode: Mode, extra: (&str, &str)) {
    let done = flow(&browser(), &server.base, mode, "openid", &[extra], ALICE).await;
    assert!(done.claims["sub"].is_string());
}

async fn display_page(server: &Server, mode: Mode) {
    accepted(server, mode, ("display", "page")).await;
}

async fn display_popup(server: &Server, mode: Mode) {
    accepted(server, mode, ("display", "popup")).await;
}

async fn unknown_parameter(server: &Server, mode: Mode) {
    accepted(server, mode, ("extra", "foobar")).await;
}

async fn ui_locales(server: &Server, mode: Mode) {
    accepted(server, mode, ("ui_locales", "se")).await;
}

async fn claims_locales(server: &Server, mode: Mode) {
    accepted(server, mode, ("claims_locales", "se")).await;
}

async fn valid_pkce(server: &Server, mode: Mode) {
    let base = &server.base;
    let mut params = code_request(DEMO.0, "openid");
    params.extend([
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]);
    let response = authorize(&browser(), base, &params, mode, ALICE).await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", response["code"].as_str()),
        ("redirect_uri", CALLBACK),
        ("code_verifier", VERIFIER),
    ];
    let tokens = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    assert!(id_token_claims(base, &tokens, DEMO.0).await["sub"].is_string());
}

/// Answers the sign-in page a request in a signed-in browser gets, asserting that it is one.
async fn sign_in_page_again(http: &reqwest::Client, base: &str, params: &[(&str, &str)]) -> Reply {
    let page = get(http, &authorize_url(base, params)).await;
    assert_eq!(page.status, 200, "a sign-in page: {}", page.body);
    sign_in_form(&page);
    page
}

async fn prompt_login(server: &Server, mode: Mode) {
    let base = &server.base;
    let http = browser();
    let first = flow(&http, base, mode, "openid", &[], ALICE).await;
    // A second later, so that a new sign-in has a later `auth_time` (whole seconds).
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let mut params = mode.with(&code_request(DEMO.0, "openid"));
    params.push(("prompt", "login"));
    let page = sign_in_page_again(&http, base, &params).await;
    let answer = through_pages(&http, base, page, ALICE).await;
    let second = redeemed(base, mode.response(&answer)).await;
    assert!(
        second.claims["auth_time"].as_u64() > first.claims["auth_time"].as_u64(),
        "{} then {}",
        first.claims,
        second.claims
    );
    assert_eq!(second.claims["sub"], first.claims["sub"]);
}

async fn prompt_none_not_logged_in(server: &Server, mode: Mode) {
    let base = &server.base;
    let state = "s".repeat(128);
    let mut params = code_request(DEMO.0, "openid");
    params.retain(|(name, _)| *name != "state");
    params.extend([("state", state.as_str()), ("prompt", "none")]);
    let reply = get(&browser(), &authorize_url(base, &mode.with(&params))).await;
    let response = mode.response(&reply);
    assert_eq!(assert_error_response(&response, &state), "login_required");
}

/// A first flow, then the same request with `second` added from the same browser, answered
/// without a page: both flows.
async fn twice_silently(server: &Server, mode: Mode, second: &[(&str, &str)]) -> (Flow, Flow) {
    let base = &server.base;
    let http = browser();
    let first = flow(&http, base, mode, "openid", &[], ALICE).await;
    let mut params = code_request(DEMO.0, "openid");
    params.extend_from_slice(second);
    let reply = silent(&http, base, &params, mode).await;
    let again = redeemed(base, mode.response(&reply)).await;
    assert_eq!(again.claims["sub"], first.claims["sub"]);
    assert_eq!(again.claims["auth_time"], first.claims["auth_time"]);
    (first, again)
}

async fn prompt_none_logged_in(server: &Server, mode: Mode) {
    twice_silently(server, mode, &[("prompt", "none")]).await;
}

async fn max_age_1(server: &Server, mode: Mode) {
    let base = &server.base;
    let http = browser();
    let first = flow(&http, base, mode, "openid", &[], ALICE).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut params = mode.with(&code_request(DEMO.0, "openid"));
    params.push(("max_age", "1"));
    let page = sign_in_page_again(&http, base, &params).await;
    let before = now();
    let answer = through_pages(&http, base, page, ALICE).await;
    let second = redeemed(base, mode.response(&answer)).await;
    let auth_time = second.claims["auth_time"].as_u64().expect("auth_time");
    assert!(auth_time > first.claims["auth_time"].as_u64().unwrap());
    assert!(
        auth_time >= before && auth_time <= now(),
        "recent: {auth_time}"
    );
}

async fn max_age_10000(server: &Server, mode: Mode) {
    let base = &server.base;
    let http = browser();
    let first = flow(&http, base, mode, "openid", &[("max_age", "15000")], ALICE).await;
    assert!(first.claims["auth_time"].is_u64(), "{}", first.claims);
    let mut params = code_request(DEMO.0, "openid");
    params.push(("max_age", "10000"));
    let reply = silent(&http, base, &params, mode).await;
    let second = redeemed(base, mode.response(&reply)).await;
    assert_eq!(second.claims["auth_time"], first.claims["auth_time"]);
    assert_eq!(second.claims["sub"], first.claims["sub"]);
}

async fn id_token_hint(server: &Server, mode: Mode) {
    let base = &server.base;
    let http = browser();
    let first = flow(&http, base, mode, "openid", &[], ALICE).await;
    let hint = first.tokens["id_token"].as_str().unwrap();
    let mut params = code_request(DEMO.0, "openid");
    params.extend([("prompt", "none"), ("id_token_hint", hint)]);
    let reply = silent(&http, base, &params, mode).await;
    let second = redeemed(base, mode.response(&reply)).await;
    assert_eq!(second.claims["sub"], first.claims["sub"]);
    assert_eq!(second.claims["auth_time"], first.claims["auth_time"]);
}

async fn login_hint(server: &Server, mode: Mode) {
    let base = &server.base;
    let http = browser();
    let mut params = mode.with(&code_request(DEMO.0, "openid"));
    params.push(("login_hint", ALICE.0));
    let page = get(&http, &authorize_url(base, &params)).await;
    sign_in_form(&page);
    let username = HtmlForm::parse(&page.body)
        .inputs
        .into_iter()
        .find(|input| input.name == "username")
        .unwrap();
    assert_eq!(username.value, ALICE.0, "the hint fills the form");
    let answer = through_pages(&http, base, page, ALICE).await;
    redeemed(base, mode.response(&answer)).await;
}

async fn acr_values(server: &Server, mode: Mode) {
    let base = &server.base;
    let supported = strings(&discovery(base).await["acr_values_supported"]);
    assert!(!supported.is_empty());
    let all = supported.join(" ");
    let done = flow(
        &browser(),
        base,
        mode,
        "openid",
        &[("acr_values", &all)],
        BOB,
    )
    .await;
    let acr = done.claims["acr"].as_str().expect("an acr");
    assert!(supported.iter().any(|value| value == acr), "{acr}");
}

async fn codereuse(server: &Server, mode: Mode) {
    let base = &server.base;
    let done = flow(&browser(), base, mode, "openid", &[], ALICE).await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", done.response["code"].as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let again = token(base, Some(DEMO), &pairs).await;
    assert_oauth_error(&again, 400, "invalid_grant");
    let description = again.json()["error_description"].clone();
    assert!(
        description.is_null() || description.is_string(),
        "{description}"
    );
}

async fn codereuse_revokes(server: &Server, mode: Mode) {
    let base = &server.base;
    let done = flow(&browser(), base, mode, "openid", &[], ALICE).await;
    userinfo(base, done.access_token()).await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", done.response["code"].as_str()),
        ("redirect_uri", CALLBACK),
    ];
    assert_oauth_error(&token(base, Some(DEMO), &pairs).await, 400, "invalid_grant");
    // RFC 6749 §4.1.2: what the first redemption issued is revoked.
    let refused = send(
        browser()
            .get(format!("{base}/api/oauth/userinfo"))
            .bearer_auth(done.access_token()),
    )
    .await;
    assert_eq!(refused.status, 401, "{}", refused.body);
}

async fn unregistered_redirect_uri(server: &Server, mode: Mode) {
    let base = &server.base;
    let unregistered = format!("{CALLBACK}/Xq7b2LpR0c");
    let mut params = code_request(DEMO.0, "openid");
    params.retain(|(name, _)| *name != "redirect_uri");
    params.push(("redirect_uri", &unregistered));
    let reply = get(&browser(), &authorize_url(base, &mode.with(&params))).await;
    assert_error_page(&reply);
}

async fn post_request(server: &Server, mode: Mode) {
    let base = &server.base;
    let http = browser();
    let params = mode.with(&code_request(DEMO.0, "openid"));
    let first = post_form(&http, &format!("{base}/api/oauth/authorize"), None, &params).await;
    let answer = through_pages(&http, base, first, ALICE).await;
    redeemed(base, mode.response(&answer)).await;
}

async fn client_secret_post(server: &Server, mode: Mode) {
    let base = &server.base;
    let client = ("post-client", "post-secret");
    let response = authorize(
        &browser(),
        base,
        &code_request(client.0, "openid"),
        mode,
        ALICE,
    )
    .await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", response["code"].as_str()),
        ("redirect_uri", CALLBACK),
        ("client_id", client.0),
        ("client_secret", client.1),
    ];
    let tokens = assert_tokens(&token(base, None, &pairs).await);
    let id_token = tokens["id_token"].as_str().expect("an ID token");
    let (_, claims) = verified(base, id_token, client.0).await;
    assert_eq!(claims["nonce"], "oidf-nonce");
    assert_eq!(
        userinfo(base, access_token(&tokens)).await["sub"],
        claims["sub"]
    );
}

/// `{"alg":"none"}` over `claims`: an unsigned request object (RFC 9101 §4).
fn unsigned_object(claims: &Value) -> String {
    use base64::Engine as _;
    let encode = |json: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
    format!(
        "{}.{}.",
        encode(r#"{"alg":"none"}"#),
        encode(&claims.to_string())
    )
}

/// The request of `demo-client` as a request object's claims.
fn object_claims(redirect_uri: &str) -> Value {
    serde_json::json!({
        "response_type": "code",
        "client_id": DEMO.0,
        "redirect_uri": redirect_uri,
        "scope": "openid",
        "state": "oidf-state",
        "nonce": "oidf-nonce",
    })
}

async fn request_uri_unsigned(server: &Server, mode: Mode) {
    let base = &server.base;
    let mut params = code_request(DEMO.0, "openid");
    params.push(("request_uri", "https://rp.example/requests/unsigned.jwt"));
    let reply = get(&browser(), &authorize_url(base, &mode.with(&params))).await;
    let response = mode.response(&reply);
    // By reference, only a pushed request's `request_uri` is served: the suite skips the rest.
    let error = assert_error_response(&response, "oidf-state");
    assert_eq!(error, "request_uri_not_supported", "{response:?}");
}

async fn request_object_unsigned(server: &Server, mode: Mode) {
    let base = &server.base;
    let object = unsigned_object(&object_claims(CALLBACK));
    let mut params = code_request(DEMO.0, "openid");
    params.push(("request", &object));
    let reply = get(&browser(), &authorize_url(base, &mode.with(&params))).await;
    let response = mode.response(&reply);
    let metadata = discovery(base).await;
    if metadata["request_parameter_supported"] == true {
        // Request objects served, `none` not among their algorithms: the suite skips the module
        // before sending; an unsigned object is refused, never followed.
        let algorithms = strings(&metadata["request_object_signing_alg_values_supported"]);
        assert!(!algorithms.is_empty() && !algorithms.contains(&"none".to_owned()));
        let error = assert_error_response(&response, "oidf-state");
        assert_eq!(error, "invalid_request_object", "{response:?}");
    } else {
        let error = assert_error_response(&response, "oidf-state");
        assert_eq!(error, "request_not_supported", "{response:?}");
    }
}

async fn request_object_with_redirect_uri(server: &Server, mode: Mode) {
    let base = &server.base;
    let object = unsigned_object(&object_claims(CALLBACK));
    let invalid = format!("{CALLBACK}/_invalid");
    let mut params = code_request(DEMO.0, "openid");
    params.retain(|(name, _)| *name != "redirect_uri");
    params.extend([("redirect_uri", invalid.as_str()), ("request", &object)]);
    let reply = get(&browser(), &authorize_url(base, &mode.with(&params))).await;
    // Not processed: the bad `redirect_uri` outside is the request's, so an error page, never
    // the registered URI with `request_not_supported`.
    assert_error_page(&reply);
}

async fn claims_essential(server: &Server, mode: Mode) {
    let base = &server.base;
    let claims = r#"{"userinfo":{"name":{"essential":true}}}"#;
    let done = flow(
        &browser(),
        base,
        mode,
        "openid",
        &[("claims", claims)],
        ALICE,
    )
    .await;
    let info = userinfo(base, done.access_token()).await;
    assert_eq!(info["name"], "Alice Example", "{info}");
    assert!(done.claims.get("name").is_none(), "{}", done.claims);
}

async fn refresh_token(server: &Server, mode: Mode) {
    let base = &server.base;
    let first = flow(&browser(), base, mode, "openid", &[], ALICE).await;
    let refresh = first.tokens["refresh_token"]
        .as_str()
        .expect("a refresh token");
    // RFC 6749 Appendix A.17: VSCHAR only.
    assert!(refresh.chars().all(|c| matches!(c, '\x20'..='\x7e')));
    let pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let refreshed = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    let claims = id_token_claims(base, &refreshed, DEMO.0).await;
    // OIDC Core §12.2: the same sign-in.
    for claim in ["iss", "sub", "aud", "auth_time"] {
        assert_eq!(claims[claim], first.claims[claim], "{claim}");
    }
    let info = userinfo(base, access_token(&refreshed)).await;
    assert_eq!(info["sub"], first.claims["sub"]);
    // Another client cannot use it (RFC 6749 §6: bound to the client it was issued to).
    let rotated = refreshed["refresh_token"]
        .as_str()
        .expect("a rotated refresh token");
    let other = [
        ("grant_type", "refresh_token"),
        ("refresh_token", rotated),
        ("client_id", "post-client"),
        ("client_secret", "post-secret"),
    ];
    assert_oauth_error(&token(base, None, &other).await, 400, "invalid_grant");
}
