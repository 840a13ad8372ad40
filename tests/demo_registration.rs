//! Self-registration on the demo servers over real HTTP, against `axum_server` and
//! `actix_server` (examples/README.md, "Self-registration"): a public client registers, runs the code
//! flow with PKCE through the sign-in and approval pages, calls `/api/me`, then reads and
//! deletes its registration (RFC 7591, RFC 7592); a confidential client rotates its secret with
//! an update (RFC 7592 §2.2) and uses the old and the new one during the overlap.

mod demo;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use demo::Server;
use demo::http::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

each_framework! {
    a_self_registered_public_client_signs_alice_in_and_manages_its_registration => public_client;
    what_an_administrator_agrees_and_admin_scope_are_refused => refusals;
    a_self_registered_confidential_client_authenticates_with_its_secret => confidential_client;
    a_confidential_client_rotates_its_secret_and_both_work_in_the_overlap => rotation;
    default_max_age_and_require_auth_time_are_kept_and_honoured => max_age_members;
    a_client_idle_past_the_registration_idle_ttl_is_gone_on_memory => idle_on_memory;
    a_client_idle_past_the_registration_idle_ttl_is_gone_on_sqlite => idle_on_sqlite;
}

async fn register(base: &str, metadata: &Value) -> Reply {
    let request = browser()
        .post(format!("{base}/api/oauth/register"))
        .header("content-type", "application/json")
        .body(metadata.to_string());
    send(request).await
}

fn registered(reply: &Reply) -> Value {
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_content_type(reply, "application/json");
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    reply.json()
}

/// `method` on the client's `registration_client_uri` with its registration access token.
async fn configuration(method: reqwest::Method, client: &Value, token: Option<&str>) -> Reply {
    let uri = client["registration_client_uri"].as_str().expect("a URI");
    let mut request = browser().request(method, uri);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    send(request).await
}

fn string<'v>(value: &'v Value, member: &str) -> &'v str {
    value[member]
        .as_str()
        .unwrap_or_else(|| panic!("{member}: {value}"))
}

async fn public_client(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = metadata_document(base).await;
    assert_eq!(
        metadata["registration_endpoint"],
        format!("{base}/api/oauth/register")
    );
    let client = registered(
        &register(
            base,
            &json!({
                "redirect_uris": [CALLBACK],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": "none",
                "client_name": "Registered Native App",
                // As discovery lists them: `openid` is every client's.
                "scope": "openid profile email",
            }),
        )
        .await,
    );
    let client_id = string(&client, "client_id");
    let registration_token = string(&client, "registration_access_token");
    assert!(client.get("client_secret").is_none(), "{client}");
    assert_eq!(
        client["registration_client_uri"],
        format!("{base}/api/oauth/register/{client_id}")
    );

    // The code flow with PKCE, through the sign-in and approval pages.
    let verifier = "a-code-verifier-for-a-self-registered-client-0123456789";
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let http = browser();
    let approval = sign_in_via_authorize(
        &http,
        base,
        &[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", CALLBACK),
            ("scope", "openid profile email"),
            ("state", "registered"),
            ("nonce", "registered-nonce"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
        ALICE,
    )
    .await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    assert!(
        approval.body.contains("Registered Native App"),
        "the approval page names the client: {}",
        approval.body
    );
    let params = callback_query(&decide(&http, base, &approval, "approve").await);
    assert_eq!(params.get("state").map(String::as_str), Some("registered"));
    let code = params.get("code").expect("a code");
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
            ("client_id", client_id),
            ("code_verifier", verifier),
        ],
    )
    .await;
    let tokens = assert_tokens(&reply);
    assert_scope(&tokens["scope"], "openid profile email");
    assert!(tokens["id_token"].is_string(), "an ID token: {tokens}");
    let refresh_token = string(&tokens, "refresh_token").to_owned();
    let profile = me(base, Some(access_token(&tokens))).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    assert_eq!(profile.json()["email"], ALICE.0);

    // RFC 7592: read, then delete, with the registration access token.
    let read = configuration(reqwest::Method::GET, &client, Some(registration_token)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.json()["client_name"], "Registered Native App");
    let refused = configuration(reqwest::Method::GET, &client, Some("not-its-token")).await;
    assert_oauth_error(&refused, 401, "invalid_token");
    let challenge = refused.header("www-authenticate").unwrap_or_default();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    let deleted = configuration(reqwest::Method::DELETE, &client, Some(registration_token)).await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    let gone = configuration(reqwest::Method::GET, &client, Some(registration_token)).await;
    assert_oauth_error(&gone, 401, "invalid_token");
    // RFC 7592 §2.3: the access token issued to it dies with it.
    let after = me(base, Some(access_token(&tokens))).await;
    assert_oauth_error(&after, 401, "invalid_token");
    let refresh = token(
        base,
        None,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh_token),
            ("client_id", client_id),
        ],
    )
    .await;
    assert_oauth_error(&refresh, 401, "invalid_client");
    server.assert_alive_and_calm();
}

async fn refusals(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    for (metadata, error) in [
        (
            json!({"redirect_uris": [CALLBACK], "grant_types": ["implicit"],
                   "response_types": ["token"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": [CALLBACK], "grant_types": ["password"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"grant_types": ["client_credentials"], "response_types": []}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": [CALLBACK], "scope": "profile admin"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_jwt"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["http://app.example/callback"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": "not a list"}),
            "invalid_client_metadata",
        ),
    ] {
        assert_oauth_error(&register(base, &metadata).await, 400, error);
    }
    let form = post_form(
        &browser(),
        &format!("{base}/api/oauth/register"),
        None,
        &[("redirect_uris", CALLBACK)],
    )
    .await;
    assert_oauth_error(&form, 400, "invalid_request");
    let get = send(browser().get(format!("{base}/api/oauth/register"))).await;
    assert_eq!(get.status, 405);
    server.assert_alive_and_calm();
}

async fn confidential_client(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let client = registered(&register(base, &json!({"redirect_uris": [CALLBACK]})).await);
    assert_eq!(client["token_endpoint_auth_method"], "client_secret_basic");
    assert_eq!(client["client_secret_expires_at"], 0);
    let (id, secret) = (
        string(&client, "client_id"),
        string(&client, "client_secret"),
    );
    let http = browser();
    let code = approved_code(&http, base, id, BOB).await;
    let redeem = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let tokens = assert_tokens(&token(base, Some((id, secret)), &redeem).await);
    assert_scope(&tokens["scope"], "email profile");
    let profile = me(base, Some(access_token(&tokens))).await;
    assert_eq!(profile.json()["email"], BOB.0);
    server.assert_alive_and_calm();
}

async fn rotation(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = json!({
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
    });
    let client = registered(&register(base, &metadata).await);
    let (id, old) = (
        string(&client, "client_id"),
        string(&client, "client_secret"),
    );
    let mut update = metadata.clone();
    update["client_id"] = json!(id);
    update["rotate_client_secret"] = json!(true);
    let uri = string(&client, "registration_client_uri");
    let request = browser()
        .put(uri)
        .bearer_auth(string(&client, "registration_access_token"))
        .header("content-type", "application/json")
        .body(update.to_string());
    let reply = send(request).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let updated = reply.json();
    let new = string(&updated, "client_secret");
    assert_ne!(new, old);
    assert_eq!(updated["client_secret_expires_at"], 0);
    assert!(
        !server.log().contains(new),
        "the new secret is never logged"
    );

    // The old secret redeems a code, the new one refreshes, both revoke: the demo's policy
    // keeps the old secret for the default overlap (a day).
    let http = browser();
    let code = approved_code(&http, base, id, ALICE).await;
    let redeem = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let tokens = assert_tokens(&token(base, Some((id, old)), &redeem).await);
    let refresh_token = string(&tokens, "refresh_token");
    let refresh = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
    ];
    let refreshed = assert_tokens(&token(base, Some((id, new)), &refresh).await);
    let revoke_url = format!("{base}/api/oauth/revoke");
    for secret in [old, new] {
        let pairs = [("token", access_token(&refreshed))];
        let revoked = post_form(&http, &revoke_url, Some((id, secret)), &pairs).await;
        assert_eq!(revoked.status, 200, "{}", revoked.body);
    }
    let wrong = post_form(
        &http,
        &revoke_url,
        Some((id, "not-a-secret")),
        &[("token", "x")],
    )
    .await;
    assert_oauth_error(&wrong, 401, "invalid_client");
    server.assert_alive_and_calm();
}

async fn max_age_members(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let client = registered(
        &register(
            base,
            &json!({
                "redirect_uris": [CALLBACK],
                "token_endpoint_auth_method": "none",
                "scope": "openid profile",
                "default_max_age": 0,
                "require_auth_time": true,
            }),
        )
        .await,
    );
    assert_eq!(client["default_max_age"], 0, "{client}");
    assert_eq!(client["require_auth_time"], true, "{client}");
    let client_id = string(&client, "client_id");
    let params = |max_age: Option<&'static str>| {
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", CALLBACK),
            ("scope", "openid"),
            ("nonce", "n"),
            ("state", "age"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ];
        params.extend(max_age.map(|age| ("max_age", age)));
        params
    };
    let http = browser();
    let approval = sign_in_via_authorize(&http, base, &params(None), ALICE).await;
    let answer = decide(&http, base, &approval, "approve").await;
    let code = callback_query(&answer)["code"].clone();
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", CALLBACK),
        ("client_id", client_id),
        ("code_verifier", VERIFIER),
    ];
    let tokens = assert_tokens(&token(base, None, &pairs).await);
    let id_token = tokens["id_token"].as_str().expect("an ID token");
    let claims = id_token.split('.').nth(1).unwrap();
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
    assert!(claims["auth_time"].is_u64(), "{claims}");
    // The browser is signed in, and the client was approved; its default_max_age of 0 still
    // asks for the password (OIDC Registration section 2)...
    let again = get(&http, &authorize_url(base, &params(None))).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(again.body.contains("name=\"password\""), "{}", again.body);
    // ...unless the request sends a max_age of its own, which the session is within.
    let within = get(&http, &authorize_url(base, &params(Some("3600")))).await;
    assert!(
        callback_query(&within).contains_key("code"),
        "{:?}",
        within.location()
    );
    // A default_max_age that is not a whole number of seconds is refused.
    let refused = register(
        base,
        &json!({"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none",
                "default_max_age": -1}),
    )
    .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.json()["error"], "invalid_client_metadata");
    server.assert_alive_and_calm();
}

async fn idle_on_memory(framework: &str) {
    idle_clients(framework, "memory").await;
}

async fn idle_on_sqlite(framework: &str) {
    let dir = std::env::temp_dir().join(format!("grantor-idle-{framework}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let store = format!("sqlite:{}", dir.join("idle.sqlite3").display());
    idle_clients(framework, &store).await;
    let _ = std::fs::remove_dir_all(dir);
}

/// A token request the client authenticates (`private_key_jwt` aside, its secret) but whose
/// grant is wrong: 400 `invalid_grant` while the client lives, 401 `invalid_client` once it
/// is gone.
async fn probe(base: &str, client: (&str, &str)) -> Reply {
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", "no-such-refresh-token"),
    ];
    token(base, Some(client), &pairs).await
}

/// `--registration-idle-ttl 2`: a client left alone for 3 seconds is refused and gone (its
/// registration too); one that asks every second lives on.
async fn idle_clients(framework: &str, store: &str) {
    let server = Server::start_with_args(framework, store, &["--registration-idle-ttl", "2"]);
    let base = &server.base;
    let confidential = || {
        json!({
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic",
        })
    };
    let idle = registered(&register(base, &confidential()).await);
    let busy = registered(&register(base, &confidential()).await);
    let credentials = |client: &Value| {
        (
            string(client, "client_id").to_owned(),
            string(client, "client_secret").to_owned(),
        )
    };
    let (idle_id, idle_secret) = credentials(&idle);
    let (busy_id, busy_secret) = credentials(&busy);
    let lives = probe(base, (&idle_id, &idle_secret)).await;
    assert_eq!(lives.status, 400, "{}", lives.body);
    assert_eq!(lives.json()["error"], "invalid_grant");
    for _ in 0..4 {
        tokio::time::sleep(std::time::Duration::from_millis(900)).await;
        let busy = probe(base, (&busy_id, &busy_secret)).await;
        assert_eq!(busy.status, 400, "a client in use lives on: {}", busy.body);
    }
    let gone = probe(base, (&idle_id, &idle_secret)).await;
    assert_eq!(gone.status, 401, "{}", gone.body);
    assert_eq!(gone.json()["error"], "invalid_client");
    let token = string(&idle, "registration_access_token");
    let read = configuration(reqwest::Method::GET, &idle, Some(token)).await;
    assert_eq!(
        read.status, 401,
        "its registration is gone too: {}",
        read.body
    );
    server.assert_alive_and_calm();
}
