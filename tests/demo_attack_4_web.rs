//! The demo servers under "Hostile clients 4" (the web rows and items), over real HTTP on
//! loopback, each check against `axum_server` and `actix_server`. The attacker has no account
//! of its own beyond what registration and a sign-in give anyone; each check shows the attack
//! refused and the user's own request still answered.
//!
//! - row 7: a self-registered client cannot register `file:`, custom-scheme or plain-`http`
//!   post-logout URIs, and a browser with no session is asked before it is sent anywhere;
//! - row 8: a DPoP proof made for `https://resource.example/api/me`, replayed at `/api/me` with
//!   that URL as the absolute-form request target, is refused;
//! - `max_age=0` right after a sign-in asks for the password;
//! - an approval remembered for the default resource is not one for `https://resource.example/`;
//! - a self-registered client finds the scopes it may ask for in the RFC 9728 metadata;
//! - unknown paths stay 404, with a token or without;
//! - a node configured with another issuer over the same store answers the first node's
//!   tokens inactive and refuses to refresh them;
//! - look-alike client names and names with bidirectional overrides are refused at
//!   registration.

use std::time::{SystemTime, UNIX_EPOCH};

mod demo;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use demo::Server;
use demo::http::*;
use keys::ProofKey;
use serde_json::{Value, json};

under_attack! {
    post_logout_uris_follow_the_redirect_rules_and_no_session_asks_first => logout_redirects;
    a_proof_for_another_configured_origin_is_refused_in_absolute_form => absolute_form_replay;
    max_age_zero_right_after_a_sign_in_asks_for_the_password => max_age_zero;
    an_approval_for_one_resource_is_not_one_for_another => consent_per_resource;
    a_self_registered_client_finds_its_scopes_in_the_resource_metadata => resource_scopes;
    unknown_paths_stay_404_with_a_token_or_without => unknown_paths;
    look_alike_and_bidi_client_names_are_refused_at_registration => look_alike_names;
}

each_framework! {
    a_node_with_another_issuer_answers_the_first_nodes_tokens_inactive => other_issuer;
}

const LOGGED_OUT: &str = "http://127.0.0.1:8081/logged-out";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// POSTs `metadata` to the registration endpoint, whatever the answer.
async fn try_register(base: &str, metadata: &Value) -> Reply {
    send(
        browser()
            .post(format!("{base}/api/oauth/register"))
            .header("content-type", "application/json")
            .body(metadata.to_string()),
    )
    .await
}

/// The public client's authorization request for `openid`, with PKCE and `extra`.
fn public_openid<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut params = vec![
        ("response_type", "code"),
        ("client_id", "public-client"),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("nonce", "n"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    params.extend_from_slice(extra);
    params
}

/// The public client's tokens for `code`.
async fn redeem_public(base: &str, code: &str) -> Value {
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
            ("client_id", "public-client"),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_tokens(&reply)
}

async fn logout_redirects(server: &Server) {
    let base = &server.base;
    for uri in [
        "file:///etc/passwd",
        "com.attacker.app:/bye",
        "javascript:alert(1)",
        "http://attacker.example/bye",
        "https://attacker.example/bye#x",
    ] {
        let metadata = json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "post_logout_redirect_uris": [uri],
        });
        let reply = try_register(base, &metadata).await;
        assert_oauth_error(&reply, 400, "invalid_client_metadata");
    }
    let accepted = register(
        base,
        &json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "post_logout_redirect_uris": ["https://app.example/bye", LOGGED_OUT],
        }),
    )
    .await;
    assert_eq!(
        accepted["post_logout_redirect_uris"],
        json!(["https://app.example/bye", LOGGED_OUT])
    );

    // Anyone with an account holds ID tokens of their own; sent with one to a browser that has
    // no session, the logout asks instead of redirecting.
    let alice = browser();
    let signed_in = sign_in_via_authorize(&alice, base, &public_openid(&[]), ALICE).await;
    let code = callback_query(&signed_in)["code"].clone();
    let id_token = redeem_public(base, &code).await["id_token"]
        .as_str()
        .expect("an id_token")
        .to_owned();
    let logout_url = format!(
        "{base}/api/oauth/logout?{}",
        form(&[
            ("id_token_hint", &id_token),
            ("post_logout_redirect_uri", LOGGED_OUT),
            ("state", "s"),
        ])
    );
    let stranger = browser();
    let asked = get(&stranger, &logout_url).await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.location().is_none());
    let page = HtmlForm::parse(&asked.body);
    assert!(
        page.buttons.iter().any(|b| b.name == "logout"),
        "{}",
        asked.body
    );
    // The person who confirms is sent back, as the client asked.
    let confirmed = post_form(
        &stranger,
        &format!("{base}/api/oauth/logout"),
        None,
        &[("csrf", page.hidden("csrf")), ("logout", "yes")],
    )
    .await;
    assert_eq!(
        confirmed.location(),
        Some(format!("{LOGGED_OUT}?state=s").as_str())
    );

    // Alice's own browser, signed in as the hint's user: logged out and sent back at once.
    let done = get(&alice, &logout_url).await;
    assert!(matches!(done.status, 302 | 303), "{}", done.body);
    assert_eq!(
        done.location(),
        Some(format!("{LOGGED_OUT}?state=s").as_str())
    );
}

/// `GET <target>` in absolute form (RFC 9112 §3.2.2) over a raw connection: the status code.
/// (As `demo_dpop.rs` has it: `tests/demo` is also built where tokio has no `io-util`.)
async fn absolute_form_get(base: &str, target: &str, headers: &[(&str, &str)]) -> u16 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let host = target.split('/').nth(2).unwrap();
    let mut request = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.split(' ').nth(1).unwrap_or_default();
    status
        .parse()
        .unwrap_or_else(|_| panic!("no status in {answer}"))
}

async fn absolute_form_replay(server: &Server) {
    let base = &server.base;
    let key = ProofKey::es256(41);
    let url = format!("{base}/api/oauth/token");
    let reply = send(
        browser()
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("dpop", key.proof("POST", &url, now()))
            .basic_auth(DEMO.0, Some(DEMO.1))
            .body(form(&[
                ("grant_type", "password"),
                ("username", ALICE.0),
                ("password", ALICE.1),
            ])),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let tokens = reply.json();
    assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
    let token = access_token(&tokens).to_owned();
    let scheme = format!("DPoP {token}");
    // A proof made for the other resource the demo knows, replayed with its URL as the target.
    let elsewhere = "https://resource.example/api/me";
    for _ in 0..3 {
        let proof = key.proof_for_token("GET", elsewhere, now(), &token);
        let status = absolute_form_get(
            base,
            elsewhere,
            &[("authorization", &scheme), ("dpop", &proof)],
        )
        .await;
        assert_eq!(status, 401, "a proof for resource.example was accepted");
    }
    // Alice's own call, with a proof for the demo's URL, in either form.
    let own = format!("{base}/api/me");
    let proof = key.proof_for_token("GET", &own, now(), &token);
    let status =
        absolute_form_get(base, &own, &[("authorization", &scheme), ("dpop", &proof)]).await;
    assert_eq!(status, 200);
    let proof = key.proof_for_token("GET", &own, now(), &token);
    let reply = send(
        browser()
            .get(&own)
            .header("authorization", &scheme)
            .header("dpop", proof),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

async fn max_age_zero(server: &Server) {
    let base = &server.base;
    let http = browser();
    let signed_in = sign_in_via_authorize(&http, base, &public_openid(&[]), ALICE).await;
    assert!(callback_query(&signed_in).contains_key("code"));
    // Signed in a moment ago (most likely within the same second): max_age=0 still asks.
    for _ in 0..3 {
        let fresh = get(
            &http,
            &authorize_url(base, &public_openid(&[("max_age", "0")])),
        )
        .await;
        assert_eq!(fresh.status, 200, "{}", fresh.body);
        assert!(fresh.body.contains("name=\"password\""), "{}", fresh.body);
    }
    // Signing in again answers, with an auth_time of now.
    let fresh =
        sign_in_via_authorize(&http, base, &public_openid(&[("max_age", "0")]), ALICE).await;
    let code = callback_query(&fresh)["code"].clone();
    let id_token = redeem_public(base, &code).await["id_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let claims = id_token.split('.').nth(1).unwrap();
    let claims =
        base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, claims).unwrap();
    let claims: Value = serde_json::from_slice(&claims).unwrap();
    let auth_time = claims["auth_time"].as_u64().expect("auth_time");
    assert!(now().abs_diff(auth_time) <= 5, "{claims}");
}

async fn consent_per_resource(server: &Server) {
    let base = &server.base;
    let http = browser();
    approved_code(&http, base, DEMO.0, ALICE).await;
    let params = |resource: Option<&'static str>| {
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", DEMO.0),
            ("redirect_uri", CALLBACK),
            ("state", "again"),
        ];
        params.extend(resource.map(|r| ("resource", r)));
        params
    };
    // Remembered for what was approved.
    let again = get(&http, &authorize_url(base, &params(None))).await;
    assert!(callback_query(&again).contains_key("code"));
    // The same client and scope aimed at another resource: asked again.
    let other = Some("https://resource.example/");
    let asked = get(&http, &authorize_url(base, &params(other))).await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.body.contains("value=\"approve\""), "{}", asked.body);
    let approved = decide(&http, base, &asked, "approve").await;
    let code = callback_query(&approved)["code"].clone();
    let reply = token(
        base,
        Some(DEMO),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
        ],
    )
    .await;
    let tokens = assert_tokens(&reply);
    let described = introspect(base, access_token(&tokens)).await;
    assert_eq!(described["aud"], "https://resource.example/", "{described}");
    // Now both are remembered.
    for resource in [None, other] {
        let within = get(&http, &authorize_url(base, &params(resource))).await;
        assert!(callback_query(&within).contains_key("code"), "{resource:?}");
    }
}

async fn resource_scopes(server: &Server) {
    let base = &server.base;
    let document = get(
        &browser(),
        &format!("{base}/.well-known/oauth-protected-resource/api"),
    )
    .await;
    assert_eq!(document.status, 200, "{}", document.body);
    let scopes = strings(&document.json()["scopes_supported"]);
    // An MCP client registers itself, asking for no scope: it gets the policy's, each listed.
    let client = register(
        base,
        &json!({"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}),
    )
    .await;
    let granted = client["scope"].as_str().expect("a scope");
    assert!(!granted.is_empty());
    for scope in granted.split(' ') {
        assert!(
            scopes.iter().any(|s| s == scope),
            "{scope} not in {scopes:?}"
        );
    }
}

async fn unknown_paths(server: &Server) {
    let base = &server.base;
    let tokens = password_grant(base, DEMO, ALICE, "profile").await;
    let access = access_token(&tokens).to_owned();
    for path in ["/nothing-here", "/api/nothing", "/api/me/nothing", "/mcp"] {
        for bearer in [None, Some(access.as_str()), Some("not-a-token")] {
            let mut request = browser().get(format!("{base}{path}"));
            if let Some(token) = bearer {
                request = request.bearer_auth(token);
            }
            let reply = send(request).await;
            assert_eq!(reply.status, 404, "{path} with {bearer:?}: {}", reply.body);
            assert!(reply.header("www-authenticate").is_none(), "{path}");
        }
    }
    // The resource itself still answers Alice.
    assert_eq!(me(base, Some(&access)).await.status, 200);
}

async fn other_issuer(framework: &str) {
    let tmp = std::env::temp_dir().join(format!(
        "grantor-issuers-{framework}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&tmp).expect("a temporary directory");
    let store = format!("sqlite:{}", tmp.join("shared.sqlite3").display());
    let first = Server::start_with(framework, &store);
    let second = Server::start_with_args(framework, &store, &["--issuer", "http://other.example"]);
    let tokens = password_grant(&first.base, DEMO, ALICE, "profile").await;
    let access = access_token(&tokens).to_owned();
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    for token in [&access, &refresh] {
        assert_eq!(
            introspect(&second.base, token).await,
            json!({"active": false}),
            "another issuer vouched for the token"
        );
        let here = introspect(&first.base, token).await;
        assert_eq!(here["active"], true, "{here}");
        assert_eq!(here["iss"], first.base.as_str());
    }
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh.as_str()),
    ];
    let refused = token(&second.base, Some(DEMO), &pairs).await;
    assert_oauth_error(&refused, 400, "invalid_grant");
    assert_eq!(me(&second.base, Some(&access)).await.status, 401);
    // On its own node the user's tokens work on.
    assert_tokens(&token(&first.base, Some(DEMO), &pairs).await);
    assert_eq!(me(&first.base, Some(&access)).await.status, 200);
    first.assert_alive_and_calm();
    second.assert_alive_and_calm();
    drop((first, second));
    let _ = std::fs::remove_dir_all(&tmp);
}

async fn look_alike_names(server: &Server) {
    let base = &server.base;
    for name in [
        "Demo Client",
        "demo client",
        "Dеmо Сlіеnt",
        "Ｄｅｍｏ Ｃｌｉｅｎｔ",
        "Dem0 C1ient",
        "Plain\u{00A0}Client",
        "Demo\u{202E}tneilC",
        "Demo\u{200B} Client",
        "\u{2067}Demo API\u{2069}",
    ] {
        let metadata = json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "client_name": name,
        });
        let reply = try_register(base, &metadata).await;
        assert_oauth_error(&reply, 400, "invalid_client_metadata");
    }
    let own = register(
        base,
        &json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "client_name": "Демо клиент",
        }),
    )
    .await;
    assert_eq!(own["client_name"], "Демо клиент");
}
