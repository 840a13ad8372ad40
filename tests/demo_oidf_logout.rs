//! The OpenID Foundation conformance suite's RP-Initiated Logout OP plan
//! (`oidcc-rp-initiated-logout-certification-test-plan`) and Back-Channel Logout OP plan
//! (`oidcc-backchannel-rp-initiated-logout-certification-test-plan`), module by module, over
//! real HTTP against `axum_server` and `actix_server`. Each logout module first signs Alice in
//! with `demo-client` (`client_secret_basic`, its registered `post_logout_redirect_uri`), then
//! calls the `end_session_endpoint`; where the module ends with a second authorization
//! (`prompt=none`, a 128-character `state`) it must answer `login_required`.
//!
//! | module | what it checks | test |
//! |---|---|---|
//! | `oidcc-rp-initiated-logout-discovery-endpoint-verification` | `end_session_endpoint` present; every endpoint https | `oidcc_rp_initiated_logout_discovery_endpoint_verification` (an https issuer) |
//! | `oidcc-rp-initiated-logout` | `id_token_hint`, `post_logout_redirect_uri`, `state`: back to the URI with `state` alone; then signed out | `oidcc_rp_initiated_logout` |
//! | `oidcc-rp-initiated-logout-bad-post-logout-redirect-uri` | an unregistered return URI: no redirect (an error or a confirmation page) | `oidcc_rp_initiated_logout_bad_post_logout_redirect_uri` |
//! | `oidcc-rp-initiated-logout-modified-id-token-hint` | the hint changed to `alg: none`: no redirect | `oidcc_rp_initiated_logout_modified_id_token_hint` |
//! | `oidcc-rp-initiated-logout-no-id-token-hint` | a return URI and `state` without a hint: no redirect | `oidcc_rp_initiated_logout_no_id_token_hint` |
//! | `oidcc-rp-initiated-logout-no-params` | no parameters: the person is logged out (here after confirming), no redirect | `oidcc_rp_initiated_logout_no_params` |
//! | `oidcc-rp-initiated-logout-no-post-logout-redirect-uri` | a hint and `state`: logged out, no redirect | `oidcc_rp_initiated_logout_no_post_logout_redirect_uri` |
//! | `oidcc-rp-initiated-logout-no-state` | a hint and a return URI: back to it with nothing added; then signed out | `oidcc_rp_initiated_logout_no_state` |
//! | `oidcc-rp-initiated-logout-only-state` | `state` alone: logged out (after confirming), no redirect | `oidcc_rp_initiated_logout_only_state` |
//! | `oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri` | `?foo=bar` added to the registered return URI: no redirect | `oidcc_rp_initiated_logout_query_added_to_post_logout_redirect_uri` |
//! | `oidcc-rp-initiated-logout-bad-id-token-hint` | a hint signed by someone else: no redirect | `oidcc_rp_initiated_logout_bad_id_token_hint` |
//! | `oidcc-backchannel-logout-discovery-endpoint-verification` | `backchannel_logout_supported` and `backchannel_logout_session_supported` true, `end_session_endpoint`, every endpoint https | `oidcc_backchannel_logout_discovery_endpoint_verification` (an https issuer) |
//! | `oidcc-backchannel-rp-initiated-logout` | a client registered with `backchannel_logout_uri` and `backchannel_logout_session_required`: the logout returns with `state` and posts a verified logout token (`iss`, `aud`, `iat`, `jti`, the event, the ID token's `sub` and `sid`, no `nonce`) and nothing else; then signed out | `oidcc_backchannel_rp_initiated_logout` |

mod demo;
#[path = "dpop_proofs/mod.rs"]
mod keys;
#[path = "demo/openid.rs"]
mod openid;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use demo::Server;
use demo::http::*;
use jsonwebtoken::Algorithm;
use keys::ProofKey;
use openid::*;
use serde_json::{Value, json};

each_framework! {
    oidcc_rp_initiated_logout_discovery_endpoint_verification => rp_initiated_discovery;
    oidcc_rp_initiated_logout => rp_initiated_logout;
    oidcc_rp_initiated_logout_bad_post_logout_redirect_uri => bad_post_logout_redirect_uri;
    oidcc_rp_initiated_logout_modified_id_token_hint => modified_id_token_hint;
    oidcc_rp_initiated_logout_no_id_token_hint => no_id_token_hint;
    oidcc_rp_initiated_logout_no_params => no_params;
    oidcc_rp_initiated_logout_no_post_logout_redirect_uri => no_post_logout_redirect_uri;
    oidcc_rp_initiated_logout_no_state => no_state;
    oidcc_rp_initiated_logout_only_state => only_state;
    oidcc_rp_initiated_logout_query_added_to_post_logout_redirect_uri => query_added;
    oidcc_rp_initiated_logout_bad_id_token_hint => bad_id_token_hint;
    oidcc_backchannel_logout_discovery_endpoint_verification => backchannel_discovery;
    oidcc_backchannel_rp_initiated_logout => backchannel_logout;
}

const LOGGED_OUT: &str = "http://127.0.0.1:8081/logged-out";
const LOGOUT_STATE: &str = "oidf-logout-state";

/// This binary's shared server of `framework`, allowed to post logout tokens to loopback.
fn shared(framework: &str) -> &'static Server {
    Server::shared(framework, &["--fetch-allow-loopback", "1"])
}

/// `client`'s code flow for Alice in `http`'s browser, redeemed: the verified ID token and its
/// claims.
async fn signed_in(http: &reqwest::Client, base: &str, client: (&str, &str)) -> (String, Value) {
    let response = authorize(
        http,
        base,
        &code_request(client.0, "openid"),
        Mode::Query,
        ALICE,
    )
    .await;
    let tokens = redeem(base, client, &response["code"]).await;
    let id_token = tokens["id_token"].as_str().expect("an ID token").to_owned();
    let (_, claims) = verified(base, &id_token, client.0).await;
    (id_token, claims)
}

async fn end_session(http: &reqwest::Client, base: &str, params: &[(&str, &str)]) -> Reply {
    get(http, &format!("{base}/api/oauth/logout?{}", form(params))).await
}

/// The browser's session is over: `prompt=none` answers `login_required` (OIDC Core §3.1.2.6).
async fn assert_signed_out(http: &reqwest::Client, base: &str) {
    let state = "s".repeat(128);
    let mut params = code_request(DEMO.0, "openid");
    params.retain(|(name, _)| *name != "state");
    params.extend([("state", state.as_str()), ("prompt", "none")]);
    let reply = get(http, &authorize_url(base, &params)).await;
    let response = Mode::Query.response(&reply);
    assert_eq!(assert_error_response(&response, &state), "login_required");
}

/// The browser is still signed in: `prompt=none` answers a code.
async fn assert_still_signed_in(http: &reqwest::Client, base: &str) {
    let mut params = code_request(DEMO.0, "openid");
    params.push(("prompt", "none"));
    let reply = get(http, &authorize_url(base, &params)).await;
    assert!(
        callback_query(&reply).contains_key("code"),
        "still signed in"
    );
}

/// A page that sends the browser nowhere: an error page or a confirmation.
fn assert_not_redirected(reply: &Reply) {
    assert!(matches!(reply.status, 200 | 400), "{}", reply.body);
    assert!(reply.location().is_none(), "{:?}", reply.location());
    assert_content_type(reply, "text/html");
}

/// The end-session request a module sends after a sign-in, with `params`: refused with a page,
/// and the session left alone.
async fn refused(framework: &str, params: impl Fn(&str) -> Vec<(String, String)>) {
    let server = shared(framework);
    let base = &server.base;
    let http = browser();
    let (id_token, _) = signed_in(&http, base, DEMO).await;
    let params = params(&id_token);
    let pairs: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let reply = end_session(&http, base, &pairs).await;
    assert_not_redirected(&reply);
    // Refused, or waiting for the person to confirm: the session lives on either way.
    assert_still_signed_in(&http, base).await;
    server.assert_alive_and_calm();
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Confirms a logout on the confirmation page `page` (its form's `logout` button).
async fn confirm(http: &reqwest::Client, base: &str, page: &Reply) -> Reply {
    assert_eq!(page.status, 200, "a confirmation page: {}", page.body);
    let form = HtmlForm::parse(&page.body);
    assert!(
        form.buttons.iter().any(|b| b.name == "logout"),
        "{}",
        page.body
    );
    post_form(
        http,
        &format!("{base}{}", form.action),
        None,
        &[("csrf", form.hidden("csrf")), ("logout", "yes")],
    )
    .await
}

/// The discovery document under an https issuer, as a deployment has: every endpoint https.
async fn https_discovery(framework: &str) -> Value {
    let server = Server::shared(framework, &["--issuer", "https://op.example"]);
    let document = discovery(&server.base).await;
    assert_eq!(
        document["end_session_endpoint"],
        "https://op.example/api/oauth/logout"
    );
    for (member, value) in document.as_object().unwrap() {
        if member.ends_with("_endpoint") {
            let url = url::Url::parse(value.as_str().unwrap()).expect(member);
            assert_eq!(url.scheme(), "https", "{member}: {value}");
        }
    }
    server.assert_alive_and_calm();
    document
}

async fn rp_initiated_discovery(framework: &str) {
    https_discovery(framework).await;
}

async fn backchannel_discovery(framework: &str) {
    let document = https_discovery(framework).await;
    assert_eq!(document["backchannel_logout_supported"], true);
    assert_eq!(document["backchannel_logout_session_supported"], true);
}

/// After a sign-in, a logout that returns to the client at `expected`; then signed out.
async fn returned(framework: &str, with_state: bool, expected: &str) {
    let server = shared(framework);
    let base = &server.base;
    let http = browser();
    let (id_token, _) = signed_in(&http, base, DEMO).await;
    let mut params = vec![
        ("id_token_hint", id_token.as_str()),
        ("post_logout_redirect_uri", LOGGED_OUT),
    ];
    params.extend(with_state.then_some(("state", LOGOUT_STATE)));
    let reply = end_session(&http, base, &params).await;
    assert!(matches!(reply.status, 302 | 303), "{}", reply.body);
    assert_eq!(reply.location(), Some(expected));
    assert_signed_out(&http, base).await;
    server.assert_alive_and_calm();
}

async fn rp_initiated_logout(framework: &str) {
    returned(
        framework,
        true,
        &format!("{LOGGED_OUT}?state={LOGOUT_STATE}"),
    )
    .await;
}

async fn no_state(framework: &str) {
    returned(framework, false, LOGGED_OUT).await;
}

async fn bad_post_logout_redirect_uri(framework: &str) {
    refused(framework, |hint| {
        pairs(&[
            ("id_token_hint", hint),
            (
                "post_logout_redirect_uri",
                "http://127.0.0.1:8081/logged-out/unregistered",
            ),
            ("state", LOGOUT_STATE),
        ])
    })
    .await;
}

async fn query_added(framework: &str) {
    refused(framework, |hint| {
        pairs(&[
            ("id_token_hint", hint),
            ("post_logout_redirect_uri", &format!("{LOGGED_OUT}?foo=bar")),
            ("state", LOGOUT_STATE),
        ])
    })
    .await;
}

async fn no_id_token_hint(framework: &str) {
    refused(framework, |_| {
        pairs(&[
            ("post_logout_redirect_uri", LOGGED_OUT),
            ("state", LOGOUT_STATE),
        ])
    })
    .await;
}

/// `id_token` with its header replaced by `{"alg":"none"}` and no signature.
fn unsigned(id_token: &str) -> String {
    use base64::Engine as _;
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#);
    let payload = id_token.split('.').nth(1).unwrap();
    format!("{header}.{payload}.")
}

async fn modified_id_token_hint(framework: &str) {
    refused(framework, |hint| {
        pairs(&[
            ("id_token_hint", &unsigned(hint)),
            ("post_logout_redirect_uri", LOGGED_OUT),
            ("state", LOGOUT_STATE),
        ])
    })
    .await;
}

async fn bad_id_token_hint(framework: &str) {
    refused(framework, |hint| {
        // The same claims, signed by a key that is not the server's.
        let claims = claims_of(hint);
        let forged = ProofKey::rsa(Algorithm::RS256).sign_with(&claims, |header| {
            header.typ = Some("JWT".to_owned());
            header.jwk = None;
            header.kid = Some("not-the-servers".to_owned());
        });
        pairs(&[
            ("id_token_hint", &forged),
            ("post_logout_redirect_uri", LOGGED_OUT),
            ("state", LOGOUT_STATE),
        ])
    })
    .await;
}

/// After a sign-in, a logout with `params` that asks the person first: confirmed, it ends the
/// session and redirects nowhere.
async fn confirmed(framework: &str, params: &[(&str, &str)]) {
    let server = shared(framework);
    let base = &server.base;
    let http = browser();
    signed_in(&http, base, DEMO).await;
    let page = end_session(&http, base, params).await;
    assert_not_redirected(&page);
    let done = confirm(&http, base, &page).await;
    assert_not_redirected(&done);
    assert_eq!(done.status, 200, "a logged-out page: {}", done.body);
    assert_signed_out(&http, base).await;
    server.assert_alive_and_calm();
}

async fn no_params(framework: &str) {
    confirmed(framework, &[]).await;
}

async fn only_state(framework: &str) {
    confirmed(framework, &[("state", LOGOUT_STATE)]).await;
}

async fn no_post_logout_redirect_uri(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let http = browser();
    let (id_token, _) = signed_in(&http, base, DEMO).await;
    let params = [
        ("id_token_hint", id_token.as_str()),
        ("state", LOGOUT_STATE),
    ];
    let reply = end_session(&http, base, &params).await;
    assert_not_redirected(&reply);
    assert_eq!(reply.status, 200, "a logged-out page: {}", reply.body);
    assert_signed_out(&http, base).await;
    server.assert_alive_and_calm();
}

async fn backchannel_logout(framework: &str) {
    let server = shared(framework);
    let base = &server.base;
    let (backchannel, mut bodies) = receiver().await;
    let client = register(
        base,
        &json!({
            "redirect_uris": [CALLBACK],
            "post_logout_redirect_uris": [LOGGED_OUT],
            "backchannel_logout_uri": backchannel,
            "backchannel_logout_session_required": true,
        }),
    )
    .await;
    let id = client["client_id"].as_str().unwrap();
    let secret = client["client_secret"].as_str().unwrap();
    let http = browser();
    let (id_token, id_claims) = signed_in(&http, base, (id, secret)).await;
    let params = [
        ("id_token_hint", id_token.as_str()),
        ("post_logout_redirect_uri", LOGGED_OUT),
        ("state", LOGOUT_STATE),
    ];
    let reply = end_session(&http, base, &params).await;
    assert!(matches!(reply.status, 302 | 303), "{}", reply.body);
    let expected = format!("{LOGGED_OUT}?state={LOGOUT_STATE}");
    assert_eq!(reply.location(), Some(expected.as_str()));

    // OIDC Back-Channel Logout 1.0 §2.5: a form POST of `logout_token` alone.
    let body = tokio::time::timeout(Duration::from_secs(5), bodies.recv())
        .await
        .expect("a logout token within 5 s")
        .expect("a body");
    let posted: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_eq!(posted[0].0, "logout_token");
    let (header, claims) = verified(base, &posted[0].1, id).await;
    assert_eq!(header["typ"], "logout+jwt");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        claims["iat"].as_u64().is_some_and(|iat| iat <= now + 5),
        "{claims}"
    );
    assert!(claims["jti"].is_string(), "{claims}");
    assert!(
        claims["events"]["http://schemas.openid.net/event/backchannel-logout"].is_object(),
        "{claims}"
    );
    assert_eq!(claims["sub"], id_claims["sub"]);
    assert_eq!(claims["sid"], id_claims["sid"], "the session required");
    assert!(claims.get("nonce").is_none(), "{claims}");
    assert_signed_out(&http, base).await;
    server.assert_alive_and_calm();
}
