//! Logout over real HTTP, against `axum_server` and `actix_server` (examples/README.md part 3):
//! RP-Initiated Logout 1.0 with and without an `id_token_hint`, single sign-on across clients
//! until then, and Back-Channel Logout 1.0 to a self-registered client's loopback endpoint,
//! whose refresh token dies with the session.

mod demo;
#[path = "demo/openid.rs"]
mod openid;

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use demo::Server;
use demo::http::*;
use openid::receiver;
use serde_json::Value;

each_framework! {
    a_logout_with_an_id_token_hint_ends_single_sign_on_and_returns_to_the_client => hinted;
    a_logout_without_a_hint_asks_first_and_unregistered_returns_are_refused => confirmed;
    back_channel_logout_reaches_the_client_and_revokes_its_session_refresh_tokens => back_channel;
}

const LOGGED_OUT: &str = "http://127.0.0.1:8081/logged-out";

fn code_params<'a>(client_id: &'a str, nonce: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("nonce", nonce),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
}

/// Tokens for a public client's code.
async fn redeem(base: &str, client_id: &str, code: &str) -> Value {
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
            ("client_id", client_id),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_tokens(&reply)
}

fn claims_of(jwt: &str) -> Value {
    let part = jwt.split('.').nth(1).expect("a JWS");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

fn header_of(jwt: &str) -> Value {
    let part = jwt.split('.').next().expect("a JWS");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

async fn hinted(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    let signed_in =
        sign_in_via_authorize(&http, base, &code_params("public-client", "n1"), ALICE).await;
    let code = callback_query(&signed_in)["code"].clone();
    let tokens = redeem(base, "public-client", &code).await;
    let id_token = tokens["id_token"].as_str().unwrap().to_owned();
    // Signed in: another authorization needs no password.
    let again = get(
        &http,
        &authorize_url(base, &code_params("public-client", "n2")),
    )
    .await;
    assert!(
        callback_query(&again).contains_key("code"),
        "single sign-on"
    );

    let logout = get(
        &http,
        &format!(
            "{base}/api/oauth/logout?{}",
            form(&[
                ("id_token_hint", &id_token),
                ("post_logout_redirect_uri", LOGGED_OUT),
                ("state", "bye-1"),
            ])
        ),
    )
    .await;
    assert!(matches!(logout.status, 302 | 303), "{}", logout.body);
    assert_eq!(
        logout.location(),
        Some(format!("{LOGGED_OUT}?state=bye-1").as_str())
    );
    let cleared = logout.header("set-cookie").unwrap_or_default();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    // Signed out: the password again.
    let page = get(
        &http,
        &authorize_url(base, &code_params("public-client", "n3")),
    )
    .await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("name=\"password\""), "{}", page.body);
    // The session ended in the events.
    assert!(
        server
            .events_with("session_ended")
            .await
            .contains("session_ended")
    );
    server.assert_alive_and_calm();
}

async fn confirmed(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    sign_in_via_authorize(&http, base, &code_params("public-client", "n1"), ALICE).await;
    let url = format!(
        "{base}/api/oauth/logout?{}",
        form(&[
            ("client_id", "public-client"),
            ("post_logout_redirect_uri", LOGGED_OUT),
            ("state", "bye-2"),
        ])
    );
    let page = get(&http, &url).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_page_headers(&page, false);
    let form_html = HtmlForm::parse(&page.body);
    assert_eq!(form_html.action, "/api/oauth/logout");
    assert!(
        form_html.buttons.iter().any(|b| b.name == "logout"),
        "{}",
        page.body
    );
    // Still signed in until the person confirms.
    let still = get(
        &http,
        &authorize_url(base, &code_params("public-client", "n2")),
    )
    .await;
    assert!(callback_query(&still).contains_key("code"));
    let csrf = form_html.hidden("csrf").to_owned();
    // Another browser cannot confirm this one's logout with the form.
    let forged = post_form(
        &browser(),
        &format!("{base}/api/oauth/logout"),
        None,
        &[("csrf", &csrf), ("logout", "yes")],
    )
    .await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    assert!(forged.location().is_none());
    let done = post_form(
        &http,
        &format!("{base}/api/oauth/logout"),
        None,
        &[("csrf", &csrf), ("logout", "yes")],
    )
    .await;
    assert!(matches!(done.status, 302 | 303), "{}", done.body);
    assert_eq!(
        done.location(),
        Some(format!("{LOGGED_OUT}?state=bye-2").as_str())
    );
    let page = get(
        &http,
        &authorize_url(base, &code_params("public-client", "n3")),
    )
    .await;
    assert!(page.body.contains("name=\"password\""), "signed out");

    // Refusals are pages, never redirects: an unregistered return, a hint that is not ours.
    for params in [
        vec![
            ("client_id", "public-client"),
            ("post_logout_redirect_uri", "https://evil.example/"),
        ],
        vec![("post_logout_redirect_uri", LOGGED_OUT)],
        vec![("id_token_hint", "eyJhbGciOiJub25lIn0.e30.")],
    ] {
        let reply = get(&http, &format!("{base}/api/oauth/logout?{}", form(&params))).await;
        assert_eq!(reply.status, 400, "{params:?}: {}", reply.body);
        assert!(reply.location().is_none());
    }
    server.assert_alive_and_calm();
}

async fn back_channel(framework: &str) {
    let server = Server::start_with_args(framework, "memory", &["--fetch-allow-loopback", "1"]);
    let base = &server.base;
    let (backchannel, mut bodies) = receiver().await;
    let registered = register(
        base,
        &serde_json::json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "backchannel_logout_uri": backchannel,
            "post_logout_redirect_uris": [LOGGED_OUT],
        }),
    )
    .await;
    assert_eq!(registered["backchannel_logout_uri"], backchannel.as_str());
    let client_id = registered["client_id"].as_str().unwrap().to_owned();
    let http = browser();
    let approval = sign_in_via_authorize(&http, base, &code_params(&client_id, "n1"), BOB).await;
    let code = callback_query(&decide(&http, base, &approval, "approve").await)["code"].clone();
    let tokens = redeem(base, &client_id, &code).await;
    let refresh = tokens["refresh_token"]
        .as_str()
        .expect("a refresh token")
        .to_owned();
    let id_token = tokens["id_token"].as_str().unwrap().to_owned();
    let sid = claims_of(&id_token)["sid"]
        .as_str()
        .expect("a sid")
        .to_owned();

    let logout = get(
        &http,
        &format!(
            "{base}/api/oauth/logout?{}",
            form(&[("id_token_hint", &id_token)])
        ),
    )
    .await;
    assert_eq!(logout.status, 200, "the logged-out page: {}", logout.body);
    // Back-Channel Logout 1.0 §2.5: a form POST with the logout token, within 5 seconds.
    let body = tokio::time::timeout(Duration::from_secs(5), bodies.recv())
        .await
        .expect("a logout token within 5 s")
        .expect("a body");
    let pairs: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(body.as_bytes())
            .into_owned()
            .collect();
    let logout_token = &pairs["logout_token"];
    assert_eq!(header_of(logout_token)["typ"], "logout+jwt");
    let claims = claims_of(logout_token);
    assert_eq!(claims["iss"], base.as_str());
    assert_eq!(claims["aud"], client_id.as_str());
    assert_eq!(claims["sid"], sid.as_str());
    assert_eq!(claims["sub"], claims_of(&id_token)["sub"]);
    assert!(claims["jti"].is_string() && claims["iat"].is_u64());
    assert!(
        claims["events"]["http://schemas.openid.net/event/backchannel-logout"].is_object(),
        "{claims}"
    );
    assert!(
        claims.get("nonce").is_none(),
        "a logout token never has a nonce"
    );
    // It verifies with the published keys.
    let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_str(
        &get(&browser(), &format!("{base}/.well-known/jwks.json"))
            .await
            .body,
    )
    .unwrap();
    let header = jsonwebtoken::decode_header(logout_token).unwrap();
    let key =
        jsonwebtoken::DecodingKey::from_jwk(jwks.find(&header.kid.unwrap()).unwrap()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_audience(&[&client_id]);
    validation.set_issuer(&[base]);
    assert!(jsonwebtoken::decode::<Value>(logout_token, &key, &validation).is_ok());

    // The session's refresh token for this client is revoked.
    let refused = token(
        base,
        None,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_oauth_error(&refused, 400, "invalid_grant");
    assert!(
        server
            .events_with("backchannel_logout_delivered")
            .await
            .contains("backchannel_logout_delivered")
    );
    server.assert_alive_and_calm();
}
