//! Dynamic client registration (RFC 7591) and client management (RFC 7592) through the public
//! API, under the default `RegistrationPolicy`: one test per rule.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use grantor::store::SecretDigest;
use grantor::*;
use grantor::{client::*, settings::*};
use http::{Request, Response};
use serde_json::{Value, json};

const REGISTER: &str = "/api/oauth/register";

/// The fixture with registration open under `policy`; the server supports `profile email
/// admin`, the policy (unless it says otherwise) `profile email`.
fn open_with(policy: RegistrationPolicy) -> Fixture {
    fixture_with(|b| {
        b.scopes_supported(&Scope::parse("profile email admin").unwrap())
            .registration(policy)
    })
}

fn open() -> Fixture {
    open_with(RegistrationPolicy::new().scope(&Scope::parse("profile email").unwrap()))
}

fn json_post(path: &str, authorization: Option<&str>, body: &str) -> Request<String> {
    let mut builder = Request::post(path).header("content-type", "application/json");
    if let Some(authorization) = authorization {
        builder = builder.header("authorization", authorization);
    }
    builder.body(body.to_owned()).unwrap()
}

async fn register(f: &Fixture, metadata: &Value) -> Response<String> {
    let request = json_post(REGISTER, None, &metadata.to_string());
    f.server.register(&request).await
}

/// Registers `metadata`, asserting 201; answers the client information response.
async fn registered(f: &Fixture, metadata: &Value) -> Value {
    let response = register(f, metadata).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    json(&response)
}

fn public_metadata() -> Value {
    json!({
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
        "client_name": "A native app",
    })
}

fn confidential_metadata() -> Value {
    json!({
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "scope": "profile",
    })
}

/// `method` on the client's `registration_client_uri`, with `Bearer token`.
async fn configure(
    f: &Fixture,
    method: &str,
    client: &Value,
    token: Option<&str>,
    body: Option<&Value>,
) -> Response<String> {
    let uri = client["registration_client_uri"].as_str().unwrap();
    let path = uri.strip_prefix(ISSUER).expect("under the issuer");
    let mut builder = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    if body.is_some() {
        builder = builder.header("content-type", "application/json");
    }
    let body = body.map(Value::to_string).unwrap_or_default();
    f.server
        .client_configuration(&builder.body(body).unwrap())
        .await
}

fn token_of(client: &Value) -> &str {
    client["registration_access_token"].as_str().unwrap()
}

fn id_of(client: &Value) -> &str {
    client["client_id"].as_str().unwrap()
}

fn pkce() -> String {
    format!("&code_challenge={CHALLENGE}&code_challenge_method=S256")
}

fn exchange(code: &str) -> String {
    format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}")
}

fn assert_metadata_error(response: &Response<String>, code: &str) {
    assert_error(response, 400, code);
}

// ---------------------------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_confidential_registration_answers_201_with_its_credentials_and_metadata() {
    let f = open();
    let response = register(&f, &confidential_metadata()).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["pragma"], "no-cache");
    let client = json(&response);
    let id = id_of(&client);
    assert_eq!(id.len(), 22, "{client}");
    assert_eq!(client["client_secret"].as_str().unwrap().len(), 43);
    assert_eq!(client["client_secret_expires_at"], 0);
    assert_eq!(client["client_id_issued_at"], START);
    assert_eq!(token_of(&client).len(), 43);
    assert_eq!(
        client["registration_client_uri"],
        format!("{ISSUER}{REGISTER}/{id}")
    );
    assert_eq!(client["redirect_uris"], json!([REDIRECT]));
    assert_eq!(
        client["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(client["response_types"], json!(["code"]));
    assert_eq!(client["token_endpoint_auth_method"], "client_secret_basic");
    assert_eq!(client["scope"], "profile");
    assert!(client.get("client_name").is_none(), "{client}");
}

#[tokio::test]
async fn the_secret_shown_once_authenticates_with_http_basic_at_the_token_endpoint() {
    let f = open();
    let client = registered(&f, &confidential_metadata()).await;
    let (id, secret) = (id_of(&client), client["client_secret"].as_str().unwrap());
    let code = f.code(id, "&scope=profile").await;
    let tokens = assert_tokens(&f.token(Some(&basic(id, secret)), &exchange(&code)).await);
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    let wrong = f.code(id, "").await;
    let refused = f
        .token(Some(&basic(id, "not-the-secret")), &exchange(&wrong))
        .await;
    assert_error(&refused, 401, "invalid_client");
    // Never shown again: reading the registration has no secret.
    let read = json(&configure(&f, "GET", &client, Some(token_of(&client)), None).await);
    assert!(read.get("client_secret").is_none(), "{read}");
}

#[tokio::test]
async fn a_self_registered_public_client_completes_the_code_flow_with_pkce() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    assert_eq!(client["token_endpoint_auth_method"], "none");
    assert!(client.get("client_secret").is_none(), "{client}");
    assert!(client.get("client_secret_expires_at").is_none(), "{client}");
    assert_eq!(client["client_name"], "A native app");
    assert_eq!(client["scope"], "email profile");
    let id = id_of(&client);
    // Without PKCE the authorization request is refused at the redirect URI.
    let query = format!("response_type=code&client_id={id}&redirect_uri={REDIRECT_ENCODED}");
    let refused = match f.server.authorize(&authorize_request(&query)).await {
        Authorize::Redirect(response) => redirect(&response),
        other => panic!("expected a redirect, got {other:?}"),
    };
    assert_eq!(refused.query["error"], "invalid_request");

    let code = f.code(id, &pkce()).await;
    let body = format!(
        "{}&client_id={id}&code_verifier={VERIFIER}",
        exchange(&code)
    );
    let tokens = assert_tokens(&f.token(None, &body).await);
    assert_scope(&tokens, "profile email");
    let access = tokens["access_token"].as_str().unwrap();
    assert!(f.access_is_active(access).await);
}

#[tokio::test]
async fn self_registered_clients_need_the_users_approval() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    let query = format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}{}",
        id_of(&client),
        pkce()
    );
    let pending = f.pending(&query).await;
    assert!(pending.needs_approval());
    assert_eq!(pending.client().name(), "A native app");
}

#[tokio::test]
async fn implicit_grant_is_refused_as_invalid_client_metadata() {
    let f = open();
    let metadata = json!({
        "redirect_uris": [REDIRECT],
        "grant_types": ["implicit"],
        "response_types": ["token"],
        "token_endpoint_auth_method": "none",
    });
    assert_metadata_error(&register(&f, &metadata).await, "invalid_client_metadata");
}

#[tokio::test]
async fn password_client_credentials_and_unknown_grants_are_refused_as_invalid_client_metadata() {
    let f = open();
    for grant in [
        "password",
        "client_credentials",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
    ] {
        let metadata = json!({"redirect_uris": [REDIRECT], "grant_types": [grant]});
        let response = register(&f, &metadata).await;
        assert_metadata_error(&response, "invalid_client_metadata");
    }
}

#[tokio::test]
async fn auth_methods_grantor_does_not_take_are_invalid_client_metadata() {
    let f = open();
    for method in ["private_key_jwt", "client_secret_jwt", "x"] {
        let mut metadata = confidential_metadata();
        metadata["token_endpoint_auth_method"] = json!(method);
        let response = register(&f, &metadata).await;
        assert_metadata_error(&response, "invalid_client_metadata");
    }
}

#[tokio::test]
async fn a_client_registered_for_client_secret_post_sends_its_secret_in_the_body() {
    let f = open();
    let mut metadata = confidential_metadata();
    metadata["token_endpoint_auth_method"] = json!("client_secret_post");
    let response = register(&f, &metadata).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let client = json(&response);
    assert_eq!(client["token_endpoint_auth_method"], "client_secret_post");
    let id = client["client_id"].as_str().unwrap();
    let secret = client["client_secret"].as_str().unwrap();
    let code = f.code(id, "").await;
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &client_id={id}&client_secret={secret}"
    );
    assert_tokens(&f.token(None, &body).await);
}

#[tokio::test]
async fn a_scope_outside_the_policy_is_invalid_client_metadata() {
    let f = open();
    let mut metadata = confidential_metadata();
    metadata["scope"] = json!("profile admin");
    assert_metadata_error(&register(&f, &metadata).await, "invalid_client_metadata");
}

#[tokio::test]
async fn an_openid_provider_lets_a_registration_name_openid_beside_its_policys_scope() {
    // Every client may ask an OpenID Connect provider for `openid`: a client that registers
    // the scopes it read from discovery is not refused for it.
    let f = fixture_with(|b| {
        b.scopes_supported(&Scope::parse("profile email admin").unwrap())
            .registration(RegistrationPolicy::new().scope(&Scope::parse("profile email").unwrap()))
            .openid_connect(OpenIdConnect::default())
    });
    let mut metadata = public_metadata();
    metadata["scope"] = json!("openid profile email");
    let client = registered(&f, &metadata).await;
    let mut scope: Vec<&str> = client["scope"].as_str().unwrap().split(' ').collect();
    scope.sort_unstable();
    assert_eq!(scope, ["email", "openid", "profile"], "{client}");
    // `admin` stays the administrator's.
    metadata["scope"] = json!("openid admin");
    assert_metadata_error(&register(&f, &metadata).await, "invalid_client_metadata");
    // A server that is no OpenID Connect provider treats `openid` as any other scope.
    let plain = open();
    metadata["scope"] = json!("openid profile");
    assert_metadata_error(
        &register(&plain, &metadata).await,
        "invalid_client_metadata",
    );
}

#[tokio::test]
async fn the_default_policy_grants_no_scope_whatever_the_server_lists() {
    // The server lists `profile email admin` for its metadata; a client anyone can register
    // gets none of it until the policy names what it may have.
    let f = open_with(RegistrationPolicy::new());
    let client = registered(&f, &public_metadata()).await;
    assert!(
        client["scope"].as_str().unwrap_or("").is_empty(),
        "{client}"
    );
    let mut metadata = public_metadata();
    metadata["scope"] = json!("admin");
    assert_metadata_error(&register(&f, &metadata).await, "invalid_client_metadata");
}

#[tokio::test]
async fn redirect_uris_are_required_for_the_authorization_code_grant() {
    let f = open();
    for metadata in [json!({}), json!({"redirect_uris": []})] {
        let response = register(&f, &metadata).await;
        assert_metadata_error(&response, "invalid_redirect_uri");
    }
}

#[tokio::test]
async fn redirect_uris_must_be_https_or_loopback_http_without_a_fragment() {
    let f = open();
    for uri in [
        "http://app.example/cb",
        "https://app.example/cb#fragment",
        "com.example.app:/cb",
        "javascript:alert(1)",
        "https://user@app.example/cb",
        "/cb",
    ] {
        let metadata = json!({"redirect_uris": [uri]});
        let response = register(&f, &metadata).await;
        assert_metadata_error(&response, "invalid_redirect_uri");
    }
    for uri in [
        "https://app.example/cb",
        "http://127.0.0.1:9000/cb",
        "http://[::1]/cb",
        "http://localhost:3000/cb",
    ] {
        registered(&f, &json!({"redirect_uris": [uri]})).await;
    }
}

#[tokio::test]
async fn a_huge_redirect_uris_list_is_refused() {
    let f = open();
    let uris: Vec<String> = (0..11)
        .map(|i| format!("https://app.example/{i}"))
        .collect();
    let response = register(&f, &json!({ "redirect_uris": uris })).await;
    assert_metadata_error(&response, "invalid_redirect_uri");
    let ten = &uris[..MAX_REDIRECT_URIS];
    let client = registered(&f, &json!({ "redirect_uris": ten })).await;
    assert_eq!(client["redirect_uris"].as_array().unwrap().len(), 10);
    let long = format!("https://app.example/{}", "a".repeat(5000));
    let response = register(&f, &json!({ "redirect_uris": [long] })).await;
    assert_metadata_error(&response, "invalid_redirect_uri");
}

#[tokio::test]
async fn grant_types_and_response_types_must_agree() {
    let f = open();
    let metadata = json!({
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code"],
        "response_types": ["token"],
    });
    assert_metadata_error(&register(&f, &metadata).await, "invalid_client_metadata");
    let metadata = json!({"redirect_uris": [REDIRECT], "grant_types": ["refresh_token"]});
    assert_metadata_error(&register(&f, &metadata).await, "invalid_client_metadata");
    // One omitted follows from the other.
    let metadata = json!({"redirect_uris": [REDIRECT], "response_types": ["code"]});
    let client = registered(&f, &metadata).await;
    assert_eq!(client["grant_types"], json!(["authorization_code"]));
}

#[tokio::test]
async fn malformed_json_and_wrong_types_are_400_never_5xx() {
    let f = open();
    for body in [
        "",
        "not json",
        "{",
        "[]",
        "null",
        "{\"redirect_uris\":\"http://127.0.0.1:8081/callback\"}",
        "{\"redirect_uris\":[1,2]}",
        "{\"grant_types\":{\"a\":1}}",
        "{\"scope\":7}",
        "{\"client_name\":[\"x\"]}",
        "{\"token_endpoint_auth_method\":true}",
        "{\"scope\":\"a\",\"scope\":\"b\"}",
        "{\"client_name\":\"\\ud800\"}",
    ] {
        let response = f.server.register(&json_post(REGISTER, None, body)).await;
        assert_error(&response, 400, "invalid_client_metadata");
    }
    let bytes = Request::post(REGISTER)
        .header("content-type", "application/json")
        .body(vec![0xff, 0xfe, b'{'])
        .unwrap();
    assert_error(
        &f.server.register(&bytes).await,
        400,
        "invalid_client_metadata",
    );
}

#[tokio::test]
async fn unknown_members_are_ignored() {
    let f = open();
    let mut metadata = public_metadata();
    metadata["logo_uri"] = json!("https://app.example/logo.png");
    metadata["tos_uri"] = json!({"keys": [{"kty": "EC"}]});
    metadata["software_statement"] = json!("eyJ...");
    metadata["client_id_issued_at"] = json!("not even a number");
    let client = registered(&f, &metadata).await;
    assert!(client.get("logo_uri").is_none(), "{client}");
}

#[tokio::test]
async fn a_content_type_other_than_json_is_invalid_request() {
    let f = open();
    for content_type in [
        Some("application/x-www-form-urlencoded"),
        Some("text/plain"),
        None,
    ] {
        let mut builder = Request::post(REGISTER);
        if let Some(content_type) = content_type {
            builder = builder.header("content-type", content_type);
        }
        let request = builder.body(public_metadata().to_string()).unwrap();
        assert_error(&f.server.register(&request).await, 400, "invalid_request");
    }
    let charset = Request::post(REGISTER)
        .header("content-type", "application/json; charset=utf-8")
        .body(public_metadata().to_string())
        .unwrap();
    assert_eq!(f.server.register(&charset).await.status(), 201);
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let f = open();
    let body = format!("{{\"client_name\":\"{}\"}}", "a".repeat(20 * 1024));
    let response = f.server.register(&json_post(REGISTER, None, &body)).await;
    assert_error(&response, 413, "invalid_request");
}

#[tokio::test]
async fn a_long_or_control_character_client_name_is_invalid_client_metadata() {
    let f = open();
    for name in ["a".repeat(MAX_CLIENT_NAME_BYTES + 1), "a\nb".to_owned()] {
        let mut metadata = public_metadata();
        metadata["client_name"] = json!(name);
        let response = register(&f, &metadata).await;
        assert_metadata_error(&response, "invalid_client_metadata");
    }
}

#[tokio::test]
async fn a_client_name_with_bidi_overrides_or_invisible_characters_is_invalid_client_metadata() {
    let f = open();
    for name in [
        "Demo\u{202E}tneilC",
        "Demo\u{200B}Client",
        "\u{2067}Pay\u{2069}",
    ] {
        let mut metadata = public_metadata();
        metadata["client_name"] = json!(name);
        let response = register(&f, &metadata).await;
        assert_metadata_error(&response, "invalid_client_metadata");
    }
}

/// RFC 7591 §5: a self-registered client may not pass for one of the administrator's by a name
/// a person would take for its name.
#[tokio::test]
async fn a_name_that_looks_like_a_reserved_one_is_invalid_client_metadata() {
    let policy = RegistrationPolicy::new()
        .scope(&Scope::parse("profile email").unwrap())
        .reserved_client_names(["Demo Client"]);
    let f = open_with(policy);
    for name in [
        "Demo Client",
        "demo  client",
        "Dеmо Сlіеnt",
        "Ｄｅｍｏ Ｃｌｉｅｎｔ",
        "Dem0-C1ient",
    ] {
        let mut metadata = public_metadata();
        metadata["client_name"] = json!(name);
        let response = register(&f, &metadata).await;
        assert_metadata_error(&response, "invalid_client_metadata");
        assert!(
            response.body().contains("looks like"),
            "{}",
            response.body()
        );
    }
    let mut metadata = public_metadata();
    metadata["client_name"] = json!("Demo Client Pro");
    registered(&f, &metadata).await;
}

/// RP-Initiated Logout 1.0 §3.1: the browser is sent to a post-logout URI as to a redirect URI,
/// so a self-registered client is held to the same rules.
#[tokio::test]
async fn post_logout_redirect_uris_follow_the_redirect_uri_rules() {
    let f = open();
    for uri in [
        "file:///etc/passwd",
        "com.example.app:/logged-out",
        "javascript:alert(1)",
        "http://app.example/logged-out",
        "https://app.example/logged-out#x",
        "https://user@app.example/logged-out",
    ] {
        let mut metadata = public_metadata();
        metadata["post_logout_redirect_uris"] = json!([uri]);
        let response = register(&f, &metadata).await;
        assert_metadata_error(&response, "invalid_client_metadata");
    }
    let mut metadata = public_metadata();
    metadata["post_logout_redirect_uris"] = json!(["https://app.example/bye", REDIRECT]);
    let client = registered(&f, &metadata).await;
    assert_eq!(
        client["post_logout_redirect_uris"],
        json!(["https://app.example/bye", REDIRECT])
    );
}

#[tokio::test]
async fn registration_is_only_post() {
    let f = open();
    let request = Request::get(REGISTER).body(String::new()).unwrap();
    let response = f.server.register(&request).await;
    assert_error(&response, 405, "invalid_request");
    assert_eq!(response.headers()["allow"], "POST");
}

#[tokio::test]
async fn without_a_policy_registration_and_configuration_answer_404() {
    let f = fixture();
    let response = register(&f, &public_metadata()).await;
    assert_eq!(response.status(), 404);
    let request = Request::get(format!("{REGISTER}/x"))
        .header("authorization", "Bearer abc")
        .body(String::new())
        .unwrap();
    assert_eq!(f.server.client_configuration(&request).await.status(), 404);
    let metadata = json(&f.server.metadata());
    assert!(
        metadata.get("registration_endpoint").is_none(),
        "{metadata}"
    );
}

#[tokio::test]
async fn the_metadata_lists_the_registration_endpoint_with_a_policy() {
    let f = open();
    let metadata = json(&f.server.metadata());
    assert_eq!(
        metadata["registration_endpoint"],
        format!("{ISSUER}{REGISTER}")
    );
}

#[tokio::test]
async fn the_rate_limit_answers_429_with_retry_after_until_the_window_ends() {
    let policy = RegistrationPolicy::new().rate_limit(2, Duration::from_secs(60));
    let f = open_with(policy);
    registered(&f, &public_metadata()).await;
    f.clock.advance(Duration::from_secs(20));
    registered(&f, &public_metadata()).await;
    // Refused requests are not counted: they keep nothing.
    assert_eq!(register(&f, &json!({})).await.status(), 400);
    let refused = register(&f, &public_metadata()).await;
    assert_error(&refused, 429, "temporarily_unavailable");
    assert_eq!(refused.headers()["retry-after"], "40");
    f.clock.advance(Duration::from_secs(40));
    registered(&f, &public_metadata()).await;
}

#[tokio::test]
async fn the_default_rate_limit_is_60_registrations_a_minute() {
    let f = open_with(RegistrationPolicy::new());
    for _ in 0..60 {
        registered(&f, &public_metadata()).await;
    }
    let refused = register(&f, &public_metadata()).await;
    assert_error(&refused, 429, "temporarily_unavailable");
    f.clock.advance(Duration::from_secs(60));
    registered(&f, &public_metadata()).await;
}

#[tokio::test]
async fn an_initial_access_token_is_required_when_the_policy_sets_one() {
    let initial = "an-initial-access-token-of-many-random-characters";
    let policy = RegistrationPolicy::new().initial_access_token(SecretDigest::of(initial));
    let f = open_with(policy);
    let body = public_metadata().to_string();
    let missing = f.server.register(&json_post(REGISTER, None, &body)).await;
    assert_error(&missing, 401, "invalid_token");
    assert_eq!(
        missing.headers()["www-authenticate"],
        format!("Bearer realm=\"{ISSUER}\"")
    );
    let wrong = json_post(REGISTER, Some("Bearer not-the-initial-token"), &body);
    let wrong = f.server.register(&wrong).await;
    assert_error(&wrong, 401, "invalid_token");
    let challenge = wrong.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Bearer realm="), "{challenge}");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let right = json_post(REGISTER, Some(&format!("Bearer {initial}")), &body);
    assert_eq!(f.server.register(&right).await.status(), 201);
}

#[tokio::test]
async fn the_policy_may_widen_the_grants_but_client_credentials_stay_confidential() {
    let policy = RegistrationPolicy::new()
        .grant_types([GrantType::AuthorizationCode, GrantType::ClientCredentials])
        .scope(&Scope::parse("profile").unwrap());
    let f = open_with(policy);
    let metadata = json!({"grant_types": ["client_credentials"], "response_types": []});
    let client = registered(&f, &metadata).await;
    let id = id_of(&client);
    let secret = client["client_secret"].as_str().unwrap();
    let body = "grant_type=client_credentials&scope=profile";
    assert_tokens(&f.token(Some(&basic(id, secret)), body).await);
    let mut public = metadata.clone();
    public["token_endpoint_auth_method"] = json!("none");
    let response = register(&f, &public).await;
    assert_metadata_error(&response, "invalid_client_metadata");
}

#[tokio::test]
async fn the_oauth_2_1_profile_refuses_implicit_whatever_the_policy_says() {
    let policy =
        RegistrationPolicy::new().grant_types([GrantType::AuthorizationCode, GrantType::Implicit]);
    let f = fixture_with(|b| b.profile(Profile::OAuth21).registration(policy));
    let metadata = json!({"redirect_uris": [REDIRECT], "response_types": ["token"]});
    assert_metadata_error(&register(&f, &metadata).await, "invalid_client_metadata");
}

#[tokio::test]
async fn public_clients_can_be_refused_by_the_policy() {
    let f = open_with(RegistrationPolicy::new().public_clients(false));
    let response = register(&f, &public_metadata()).await;
    assert_metadata_error(&response, "invalid_client_metadata");
}

#[tokio::test]
async fn a_custom_registration_path_serves_registration_and_configuration() {
    let paths = EndpointPaths {
        registration: "/connect/register".to_owned(),
        ..EndpointPaths::default()
    };
    let f = fixture_with(|b| b.endpoints(paths).registration(RegistrationPolicy::new()));
    let request = json_post("/connect/register", None, &public_metadata().to_string());
    let response = f.server.register(&request).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let client = json(&response);
    let uri = client["registration_client_uri"].as_str().unwrap();
    assert_eq!(uri, format!("{ISSUER}/connect/register/{}", id_of(&client)));
    let read = configure(&f, "GET", &client, Some(token_of(&client)), None).await;
    assert_eq!(read.status(), 200, "{}", read.body());
}

#[test]
fn a_registration_policy_needs_a_client_registry() {
    let store = Arc::new(MemoryStore::new());
    let built = AuthorizationServer::builder()
        .issuer(ISSUER)
        .clients(store.clone())
        .users(store.clone())
        .tokens(store)
        .single_node()
        .registration(RegistrationPolicy::new())
        .build();
    assert_eq!(built.unwrap_err(), ConfigError::NoClientRegistry);
}

#[test]
fn clients_set_after_a_store_leave_its_registry_behind_whatever_the_order() {
    // The registry of `store` keeps `store`'s clients, not `others`': registering through it
    // would answer 201 for a client the server never finds.
    for clients_last in [true, false] {
        let store = MemoryStore::new();
        let others = Arc::new(MemoryStore::new());
        let builder = AuthorizationServer::builder().issuer(ISSUER);
        let builder = if clients_last {
            builder.store(store).clients(others)
        } else {
            builder.clients(others).store(store)
        };
        let built = builder.registration(RegistrationPolicy::new()).build();
        assert_eq!(
            built.unwrap_err(),
            ConfigError::NoClientRegistry,
            "clients last: {clients_last}"
        );
    }
}

#[test]
fn the_policy_debug_hides_the_initial_access_token() {
    let policy = RegistrationPolicy::new().initial_access_token(SecretDigest::of("secret"));
    let debug = format!("{policy:?}");
    assert!(debug.contains("<redacted>"), "{debug}");
    let digest = SecretDigest::of("secret");
    let hex: String = digest.as_bytes()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(!debug.contains(&hex), "{debug}");
}

#[path = "registration/management.rs"]
mod management;

#[path = "registration/fuzz.rs"]
mod fuzz;

#[tokio::test]
async fn a_native_application_registers_loopback_redirect_uris_only() {
    let f = open();
    let mut native = confidential_metadata();
    native["application_type"] = json!("native");
    native["redirect_uris"] = json!(["http://127.0.0.1/callback"]);
    let response = register(&f, &native).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    assert_eq!(json(&response)["application_type"], "native");
    native["redirect_uris"] = json!(["https://app.example/cb"]);
    let refused = register(&f, &native).await;
    assert_metadata_error(&refused, "invalid_redirect_uri");
    native["application_type"] = json!("desktop");
    let refused = register(&f, &native).await;
    assert_metadata_error(&refused, "invalid_client_metadata");
    // Without it, a web application.
    let web = register(&f, &confidential_metadata()).await;
    assert_eq!(json(&web)["application_type"], "web");
}

#[tokio::test]
async fn a_web_application_using_implicit_registers_https_redirect_uris_only() {
    let policy =
        RegistrationPolicy::new().grant_types([GrantType::AuthorizationCode, GrantType::Implicit]);
    let f = fixture_with(|b| b.registration(policy));
    let mut web = json!({
        "application_type": "web",
        "redirect_uris": ["http://127.0.0.1/callback"],
        "grant_types": ["implicit"],
        "response_types": ["token"],
        "token_endpoint_auth_method": "none",
    });
    let refused = register(&f, &web).await;
    assert_metadata_error(&refused, "invalid_redirect_uri");
    web["redirect_uris"] = json!(["https://localhost/callback"]);
    let refused = register(&f, &web).await;
    assert_metadata_error(&refused, "invalid_redirect_uri");
    web["redirect_uris"] = json!(["https://app.example/callback"]);
    let registered = register(&f, &web).await;
    assert_eq!(registered.status(), 201, "{}", registered.body());
    // A client that names no type keeps the rules of RFC 7591: loopback http is taken.
    web.as_object_mut().unwrap().remove("application_type");
    web["redirect_uris"] = json!(["http://127.0.0.1/callback"]);
    let registered = register(&f, &web).await;
    assert_eq!(registered.status(), 201, "{}", registered.body());
}
