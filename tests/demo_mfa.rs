//! examples/README.md part 4's sign-in over real HTTP, against `axum_server` and `actix_server`: a plain
//! sign-in is `urn:grantor:acr:password` with `amr` `["pwd"]`; asked for
//! `urn:grantor:acr:mfa`, Alice enters her TOTP code on a page of its own and gets `["pwd",
//! "otp"]`; a code is accepted once; Bob, without a second factor, gets the password class, or
//! `access_denied` when the class is essential; discovery lists both classes.

mod demo;

use demo::Server;
use demo::http::*;
use serde_json::Value;
use totp_rs::{Algorithm, Secret, TOTP};

each_framework! {
    a_plain_sign_in_is_the_password_class => plain_sign_in;
    asked_for_mfa_alice_enters_her_totp_code_once => alice_mfa;
    bob_has_no_second_factor => bob_mfa;
}

const PUBLIC: &str = "public-client";
const PASSWORD_ACR: &str = "urn:grantor:acr:password";
const MFA: &str = "urn:grantor:acr:mfa";

/// Alice's authenticator app: the code of this 30-second step.
fn alice_code() -> String {
    let secret = Secret::Encoded("JBSWY3DPEHPK3PXP".to_owned())
        .to_bytes()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    TOTP::new_unchecked(Algorithm::SHA1, 6, 1, 30, secret).generate(now)
}

fn params<'a>(extra: &'a [(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut params = vec![
        ("response_type", "code"),
        ("client_id", PUBLIC),
        ("redirect_uri", CALLBACK),
        ("scope", "openid email"),
        ("nonce", "n-1"),
        ("state", "s1"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    params.extend_from_slice(extra);
    params
}

/// The second factor's page: posts `otp` and a hidden `csrf`. Answers the form's action and
/// its CSRF token.
fn otp_form(page: &Reply) -> (String, String) {
    let form = HtmlForm::parse(&page.body);
    assert!(form.method.eq_ignore_ascii_case("post"), "{}", page.body);
    assert!(
        form.inputs.iter().any(|i| i.name == "otp"),
        "an otp input: {}",
        page.body
    );
    assert!(!form.buttons.is_empty(), "a submit button: {}", page.body);
    (form.action.clone(), form.hidden("csrf").to_owned())
}

async fn enter_code(http: &reqwest::Client, base: &str, page: &Reply, code: &str) -> Reply {
    let (action, csrf) = otp_form(page);
    post_form(
        http,
        &format!("{base}{action}"),
        None,
        &[("csrf", &csrf), ("otp", code)],
    )
    .await
}

/// The ID token's claims for the code a redirect carries (their signature is checked by the
/// OpenID tests).
async fn id_token_claims(base: &str, redirected: &Reply) -> Value {
    tokens_and_claims(base, redirected).await.1
}

/// The tokens the code a redirect carries is exchanged for, and their ID token's claims.
async fn tokens_and_claims(base: &str, redirected: &Reply) -> (Value, Value) {
    let code = callback_query(redirected).remove("code").expect("a code");
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("client_id", PUBLIC),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    let tokens = assert_tokens(&reply);
    let id_token = tokens["id_token"].as_str().expect("an ID token");
    use base64::Engine as _;
    let payload = id_token.split('.').nth(1).unwrap();
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    (tokens.clone(), serde_json::from_slice(&payload).unwrap())
}

/// `GET /api/me/strong` with `access` as the bearer token.
async fn strong_api(base: &str, access: &str) -> Reply {
    send(
        browser()
            .get(format!("{base}/api/me/strong"))
            .bearer_auth(access),
    )
    .await
}

/// Introspection by the demo API, the resource server of the tokens' audience.
async fn introspect_as_api(base: &str, token: &str) -> Value {
    let reply = post_form(
        &browser(),
        &format!("{base}/api/oauth/introspect"),
        Some(("api-server", "api-secret")),
        &[("token", token)],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

async fn plain_sign_in(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let discovery = get(
        &browser(),
        &format!("{base}/.well-known/openid-configuration"),
    )
    .await;
    assert_eq!(
        discovery.json()["acr_values_supported"],
        serde_json::json!([PASSWORD_ACR, MFA])
    );
    let http = browser();
    let redirected = sign_in_via_authorize(&http, base, &params(&[]), ALICE).await;
    let (tokens, claims) = tokens_and_claims(base, &redirected).await;
    assert_eq!(claims["acr"], PASSWORD_ACR);
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]));
    // A password's token is refused at the step-up route, naming what would pass.
    let access = tokens["access_token"].as_str().unwrap();
    let strong = strong_api(base, access).await;
    assert_eq!(strong.status, 401, "{}", strong.body);
    let challenge = strong.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains("insufficient_user_authentication")
            && challenge.contains(&format!("acr_values=\"{MFA}\""))
            && challenge.contains("max_age=300"),
        "{challenge}"
    );
    assert_eq!(introspect_as_api(base, access).await["acr"], PASSWORD_ACR);
    server.assert_alive_and_calm();
}

async fn alice_mfa(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    let page = sign_in_via_authorize(&http, base, &params(&[("acr_values", MFA)]), ALICE).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let wrong = enter_code(&http, base, &page, "000000").await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert!(wrong.body.contains("not right"), "{}", wrong.body);
    let code = alice_code();
    let redirected = enter_code(&http, base, &wrong, &code).await;
    let (tokens, claims) = tokens_and_claims(base, &redirected).await;
    assert_eq!(claims["acr"], MFA);
    assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp"]));
    // RFC 9470: the token of this sign-in passes the demo's step-up, and says why.
    let access = tokens["access_token"].as_str().unwrap();
    let strong = strong_api(base, access).await;
    assert_eq!(strong.status, 200, "{}", strong.body);
    assert_eq!(strong.json()["email"], "alice@example.com");
    let introspected = introspect_as_api(base, access).await;
    assert_eq!(introspected["acr"], MFA);
    assert_eq!(introspected["auth_time"], claims["auth_time"]);

    // The same code, in another browser's sign-in: never accepted again (RFC 6238 §5.2).
    let other = browser();
    let page = sign_in_via_authorize(&other, base, &params(&[("acr_values", MFA)]), ALICE).await;
    let replayed = enter_code(&other, base, &page, &code).await;
    assert_eq!(replayed.status, 400, "{}", replayed.body);
    server.assert_alive_and_calm();
}

async fn bob_mfa(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    let redirected = sign_in_via_authorize(&http, base, &params(&[("acr_values", MFA)]), BOB).await;
    let claims = id_token_claims(base, &redirected).await;
    assert_eq!(claims["acr"], PASSWORD_ACR);
    let essential = format!(r#"{{"id_token":{{"acr":{{"essential":true,"values":["{MFA}"]}}}}}}"#);
    let http = browser();
    let refused = sign_in_via_authorize(&http, base, &params(&[("claims", &essential)]), BOB).await;
    let query = callback_query(&refused);
    assert_eq!(query["error"], "access_denied");
    assert_eq!(query["state"], "s1");
    server.assert_alive_and_calm();
}
