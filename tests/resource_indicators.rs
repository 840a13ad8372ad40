//! RFC 8707 resource indicators: `resource` at the authorization and token endpoints, the
//! audience every token carries, and resource servers that check it.

mod common;

use common::*;
use grantor::*;
use grantor::{audience::*, client::*};

const API: &str = "http://127.0.0.1:8080/api";
const FILES: &str = "https://files.example/";
const FILES_ENCODED: &str = "https%3A%2F%2Ffiles.example%2F";
const API_ENCODED: &str = "http%3A%2F%2F127.0.0.1%3A8080%2Fapi";

/// The fixture with the API as default audience and a second resource, files.
fn resources_fixture() -> Fixture {
    fixture_with(|b| b.default_audience(API).resources([FILES]))
}

async fn client_credentials(f: &Fixture, extra: &str) -> http::Response<String> {
    f.token(
        Some(&f.fast_basic()),
        &format!("grant_type=client_credentials{extra}"),
    )
    .await
}

async fn introspected(f: &Fixture, token: &str) -> serde_json::Value {
    json(
        &f.introspect(Some(&f.fast_basic()), &format!("token={token}"))
            .await,
    )
}

fn bearer_request(token: &str) -> http::Request<()> {
    http::Request::get("/files/report")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap()
}

#[tokio::test]
async fn a_token_request_without_resource_gets_the_default_audience() {
    let f = resources_fixture();
    let tokens = assert_tokens(&client_credentials(&f, "").await);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(introspected(&f, access).await["aud"], API);
    let grant = f.bearer(Some(&format!("Bearer {access}")), None).await;
    assert_eq!(grant.unwrap().authorization.audience.as_str(), API);
}

#[tokio::test]
async fn a_token_for_another_resource_is_refused_by_the_default_resource_server() {
    let f = resources_fixture();
    let response = client_credentials(&f, &format!("&resource={FILES_ENCODED}")).await;
    let access = assert_tokens(&response)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(introspected(&f, &access).await["aud"], FILES);
    let refusal = f
        .bearer(Some(&format!("Bearer {access}")), None)
        .await
        .unwrap_err();
    assert_eq!(refusal.status(), 401);
    let challenge = refusal.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let request = bearer_request(&access);
    let grant = f.server.bearer_for_audience(&request, FILES, None).await;
    assert_eq!(grant.unwrap().authorization.audience.as_str(), FILES);
}

#[tokio::test]
async fn unknown_malformed_and_too_many_resources_are_invalid_target() {
    let f = resources_fixture();
    let many = format!("&resource={API_ENCODED}").repeat(MAX_RESOURCES + 1);
    for extra in [
        "&resource=https%3A%2F%2Funknown.example%2F".to_owned(),
        "&resource=relative%2Fpath".to_owned(),
        "&resource=https%3A%2F%2Ffiles.example%2F%23fragment".to_owned(),
        many,
    ] {
        let response = client_credentials(&f, &extra).await;
        assert_error(&response, 400, "invalid_target");
    }
    let body = "grant_type=password&username=alice%40example.com&password=alice-password-1\
                &resource=https%3A%2F%2Funknown.example%2F";
    assert_error(
        &f.token(Some(&f.fast_basic()), body).await,
        400,
        "invalid_target",
    );
}

#[tokio::test]
async fn several_resources_give_an_audience_array() {
    let f = resources_fixture();
    let extra = format!("&resource={FILES_ENCODED}&resource={API_ENCODED}&resource={API_ENCODED}");
    let access = assert_tokens(&client_credentials(&f, &extra).await)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        introspected(&f, &access).await["aud"],
        serde_json::json!([API, FILES])
    );
    let request = bearer_request(&access);
    assert!(f.server.bearer(&request, None).await.is_ok());
    assert!(
        f.server
            .bearer_for_audience(&request, FILES, None)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn the_authorization_endpoint_redirects_invalid_target_with_state() {
    let f = resources_fixture();
    let query = format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}&state=s1\
         &resource=https%3A%2F%2Funknown.example%2F",
        f.fast_id
    );
    let Authorize::Redirect(response) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("an unknown resource is an error for the client");
    };
    let redirect = redirect(&response);
    assert_eq!(redirect.base, REDIRECT);
    assert_eq!(redirect.query["error"], "invalid_target");
    assert_eq!(redirect.query["state"], "s1");
}

#[tokio::test]
async fn a_code_carries_its_resources_and_each_exchange_may_narrow_them() {
    let f = resources_fixture();
    let extra = format!("&resource={FILES_ENCODED}&resource={API_ENCODED}");
    let query = format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}{extra}",
        f.fast_id
    );
    let pending = f.pending(&query).await;
    assert_eq!(pending.audience().as_str(), format!("{API} {FILES}"));
    let code = f.code(&f.fast_id.clone(), &extra).await;
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &resource={FILES_ENCODED}"
    );
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), &body).await);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(introspected(&f, access).await["aud"], FILES);
    // The refresh token keeps the whole grant: a refresh without `resource` gets both.
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let tokens = assert_tokens(&f.refresh(refresh).await);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        introspected(&f, access).await["aud"],
        serde_json::json!([API, FILES])
    );
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let body = format!("grant_type=refresh_token&refresh_token={refresh}&resource={API_ENCODED}");
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), &body).await);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(introspected(&f, access).await["aud"], API);
}

#[tokio::test]
async fn no_exchange_widens_the_granted_audience() {
    let f = resources_fixture();
    let code = f.code(&f.fast_id.clone(), "").await;
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &resource={FILES_ENCODED}"
    );
    let response = f.token(Some(&f.fast_basic()), &body).await;
    assert_error(&response, 400, "invalid_target");
    let tokens = f.fast_tokens().await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let body = format!("grant_type=refresh_token&refresh_token={refresh}&resource={FILES_ENCODED}");
    let response = f.token(Some(&f.fast_basic()), &body).await;
    assert_error(&response, 400, "invalid_target");
    // The refusal spent nothing: the refresh token still works.
    assert_tokens(&f.refresh(refresh).await);
}

#[tokio::test]
async fn a_client_limited_to_resources_gets_only_those_and_the_first_by_default() {
    let f = resources_fixture();
    let secret = ClientSecret::new("files-only-secret-files-only-secret");
    f.register(
        Client::confidential("files-only", SecretVerifier::digest(&secret).unwrap())
            .grant_types([GrantType::ClientCredentials])
            .scopes("profile")
            .resource(FILES)
            .build()
            .unwrap(),
    );
    let basic = basic("files-only", secret.expose_secret());
    let response = f.token(Some(&basic), "grant_type=client_credentials").await;
    let access = assert_tokens(&response)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = format!("token={access}");
    let described = json(&f.introspect(Some(&basic), &body).await);
    assert_eq!(described["aud"], FILES);
    let body = format!("grant_type=client_credentials&resource={API_ENCODED}");
    assert_error(&f.token(Some(&basic), &body).await, 400, "invalid_target");
}

#[tokio::test]
async fn a_resource_server_introspects_the_tokens_of_its_audience_only() {
    let f = resources_fixture();
    let secret = ClientSecret::new("files-server-secret-files-server-secret");
    f.register(
        Client::confidential("files-server", SecretVerifier::digest(&secret).unwrap())
            .resource_server(FILES)
            .build()
            .unwrap(),
    );
    let files_server = basic("files-server", secret.expose_secret());
    let for_files = client_credentials(&f, &format!("&resource={FILES_ENCODED}")).await;
    let for_api = client_credentials(&f, "").await;
    for (response, active) in [(for_files, true), (for_api, false)] {
        let access = assert_tokens(&response)["access_token"]
            .as_str()
            .unwrap()
            .to_owned();
        let body = format!("token={access}");
        let described = json(&f.introspect(Some(&files_server), &body).await);
        assert_eq!(described["active"], active, "{described}");
    }
}

#[tokio::test]
async fn the_implicit_grant_token_carries_the_requested_resource() {
    let f = resources_fixture();
    let query = format!(
        "response_type=token&client_id={}&redirect_uri={REDIRECT_ENCODED}&resource={FILES_ENCODED}",
        f.fast_id
    );
    let pending = f.pending(&query).await;
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    let access = redirect(&response).fragment["access_token"].clone();
    assert_eq!(introspected(&f, &access).await["aud"], FILES);
}

#[test]
fn the_builder_refuses_resources_that_are_not_absolute_uris_without_fragment() {
    for resource in [
        "relative/path",
        "https://files.example/#part",
        "https://a b/",
    ] {
        let built = AuthorizationServer::builder()
            .issuer(ISSUER)
            .resources([resource])
            .store(MemoryStore::new())
            .build();
        assert!(
            matches!(built, Err(ConfigError::Audience)),
            "{resource} was accepted"
        );
    }
    let client = Client::public("c")
        .redirect_uri(REDIRECT)
        .grant_types([GrantType::AuthorizationCode])
        .resource("not absolute")
        .build();
    assert_eq!(client.unwrap_err(), ClientError::InvalidAudience);
}

#[tokio::test]
async fn approving_checks_the_clients_resources_as_they_are_now() {
    let f = resources_fixture();
    let client = |resource: &str| {
        Client::public("narrowing-app")
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode])
            .scopes("profile")
            .approval(Approval::NotRequired)
            .resource(resource)
            .build()
            .unwrap()
    };
    f.register(client(FILES));
    let query = format!(
        "response_type=code&client_id=narrowing-app&redirect_uri={REDIRECT_ENCODED}\
         &state=s1&resource={FILES_ENCODED}\
         &code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
    );
    let pending = f.pending(&query).await;
    assert_eq!(pending.audience().as_str(), FILES);
    // While the user signs in, an administrator takes the files resource away from the client.
    f.register(client(API));
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    let redirect = redirect(&response);
    assert_eq!(redirect.base, REDIRECT);
    assert_eq!(
        redirect.query["error"], "invalid_target",
        "{:?}",
        redirect.query
    );
    assert_eq!(redirect.query["state"], "s1");
    assert!(!redirect.query.contains_key("code"));
}

/// A host-only resource registered without its trailing slash.
const HOST_ONLY: &str = "https://resource.example";
/// `https://RESOURCE.example:443`: the host-only resource in another case, with the default port.
const HOST_ONLY_SPELLED_OTHERWISE: &str = "https%3A%2F%2FRESOURCE.example%3A443";

fn host_only_fixture() -> Fixture {
    fixture_with(|b| b.default_audience(API).resources([HOST_ONLY]))
}

#[tokio::test]
async fn another_spelling_of_a_known_resource_gets_the_registered_form_as_aud() {
    let f = host_only_fixture();
    let response =
        client_credentials(&f, &format!("&resource={HOST_ONLY_SPELLED_OTHERWISE}")).await;
    let access = assert_tokens(&response)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(introspected(&f, &access).await["aud"], HOST_ONLY);
    // The resource server of the registered form takes it.
    let request = bearer_request(&access);
    let grant = f
        .server
        .bearer_for_audience(&request, HOST_ONLY, None)
        .await;
    assert_eq!(grant.unwrap().authorization.audience.as_str(), HOST_ONLY);
    // With a trailing slash, or the API's other spelling beside it: the registered forms.
    let extra = "&resource=https%3A%2F%2Fresource.example%2F\
                 &resource=HTTP%3A%2F%2F127.0.0.1%3A8080%2F%61pi";
    let access = assert_tokens(&client_credentials(&f, extra).await)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        introspected(&f, &access).await["aud"],
        serde_json::json!([API, HOST_ONLY])
    );
}

#[tokio::test]
async fn code_exchange_and_refresh_narrow_by_another_spelling_to_the_registered_form() {
    let f = host_only_fixture();
    let extra = format!("&resource={HOST_ONLY_SPELLED_OTHERWISE}&resource={API_ENCODED}");
    let query = format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}{extra}",
        f.fast_id
    );
    assert_eq!(
        f.pending(&query).await.audience().as_str(),
        format!("{API} {HOST_ONLY}")
    );
    let code = f.code(&f.fast_id.clone(), &extra).await;
    // `https://Resource.Example:443/`
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &resource=https%3A%2F%2FResource.Example%3A443%2F"
    );
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), &body).await);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(introspected(&f, access).await["aud"], HOST_ONLY);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let body = format!(
        "grant_type=refresh_token&refresh_token={refresh}&resource={HOST_ONLY_SPELLED_OTHERWISE}"
    );
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), &body).await);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(introspected(&f, access).await["aud"], HOST_ONLY);
    // `HTTP://127.0.0.1:8080/x/../api`: the API, as registered.
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let body = format!(
        "grant_type=refresh_token&refresh_token={refresh}\
         &resource=HTTP%3A%2F%2F127.0.0.1%3A8080%2Fx%2F..%2Fapi"
    );
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), &body).await);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(introspected(&f, access).await["aud"], API);
}

#[tokio::test]
async fn a_path_with_a_trailing_slash_is_another_resource() {
    let f = host_only_fixture();
    let api_with_slash = format!("{ISSUER}/api/")
        .replace(':', "%3A")
        .replace('/', "%2F");
    let response = client_credentials(&f, &format!("&resource={api_with_slash}")).await;
    assert_error(&response, 400, "invalid_target");
    // Nor does it narrow a grant of the API.
    let tokens = f.fast_tokens().await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let body =
        format!("grant_type=refresh_token&refresh_token={refresh}&resource={api_with_slash}");
    let response = f.token(Some(&f.fast_basic()), &body).await;
    assert_error(&response, 400, "invalid_target");
}

#[tokio::test]
async fn a_client_allowed_another_spelling_gets_the_registered_form() {
    let f = host_only_fixture();
    let secret = ClientSecret::new("spelled-client-secret-spelled-client-secret");
    f.register(
        Client::confidential("spelled", SecretVerifier::digest(&secret).unwrap())
            .grant_types([GrantType::ClientCredentials])
            .scopes("profile")
            .resource("HTTPS://Resource.Example:443/")
            .build()
            .unwrap(),
    );
    let basic = basic("spelled", secret.expose_secret());
    for body in [
        "grant_type=client_credentials".to_owned(),
        format!("grant_type=client_credentials&resource={HOST_ONLY_SPELLED_OTHERWISE}"),
    ] {
        let response = f.token(Some(&basic), &body).await;
        let access = assert_tokens(&response)["access_token"]
            .as_str()
            .unwrap()
            .to_owned();
        let described = json(&f.introspect(Some(&basic), &format!("token={access}")).await);
        assert_eq!(described["aud"], HOST_ONLY, "{body}");
    }
    let body = format!("grant_type=client_credentials&resource={API_ENCODED}");
    assert_error(&f.token(Some(&basic), &body).await, 400, "invalid_target");
}
