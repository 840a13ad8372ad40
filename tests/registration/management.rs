//! Client management (RFC 7592 §2): reading, replacing and deleting a registration with its
//! registration access token.

use super::*;

#[tokio::test]
async fn the_registration_token_reads_the_configuration() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    let response = configure(&f, "GET", &client, Some(token_of(&client)), None).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(response.headers()["cache-control"], "no-store");
    let read = json(&response);
    for member in [
        "client_id",
        "registration_access_token",
        "registration_client_uri",
        "redirect_uris",
        "grant_types",
        "response_types",
        "token_endpoint_auth_method",
        "scope",
        "client_name",
    ] {
        assert_eq!(read[member], client[member], "{member}");
    }
}

#[tokio::test]
async fn a_wrong_or_missing_registration_token_gets_401_with_a_bearer_challenge() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    let other = registered(&f, &public_metadata()).await;
    for method in ["GET", "PUT", "DELETE"] {
        let missing = configure(&f, method, &client, None, None).await;
        assert_error(&missing, 401, "invalid_token");
        assert_eq!(
            missing.headers()["www-authenticate"],
            format!("Bearer realm=\"{ISSUER}\"")
        );
        for token in ["not-its-token", token_of(&other)] {
            let wrong = configure(&f, method, &client, Some(token), None).await;
            assert_error(&wrong, 401, "invalid_token");
            let challenge = wrong.headers()["www-authenticate"].to_str().unwrap();
            assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
        }
    }
    let still = configure(&f, "GET", &client, Some(token_of(&client)), None).await;
    assert_eq!(still.status(), 200);
}

#[tokio::test]
async fn an_unknown_client_looks_like_a_wrong_token() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    let mut unknown = client.clone();
    unknown["registration_client_uri"] = json!(format!("{ISSUER}{REGISTER}/no-such-client"));
    let response = configure(&f, "GET", &unknown, Some(token_of(&client)), None).await;
    assert_error(&response, 401, "invalid_token");
}

#[tokio::test]
async fn an_administrators_client_cannot_be_managed() {
    let f = open();
    let mut admins = json!({});
    admins["registration_client_uri"] = json!(format!("{ISSUER}{REGISTER}/demo-client"));
    for method in ["GET", "DELETE"] {
        let response = configure(&f, method, &admins, Some("any-token"), None).await;
        assert_error(&response, 401, "invalid_token");
    }
    let demo = f
        .token(Some(&f.demo_basic()), "grant_type=client_credentials")
        .await;
    assert_tokens(&demo);
}

#[tokio::test]
async fn put_replaces_the_metadata_and_omitted_members_take_their_defaults() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    let replacement = json!({
        "client_id": id_of(&client),
        "redirect_uris": ["https://app.example/new"],
        "token_endpoint_auth_method": "none",
        "scope": "email",
        "registration_access_token": "ignored",
    });
    let token = token_of(&client);
    let response = configure(&f, "PUT", &client, Some(token), Some(&replacement)).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let replaced = json(&response);
    assert_eq!(
        replaced["redirect_uris"],
        json!(["https://app.example/new"])
    );
    assert_eq!(
        replaced["grant_types"],
        json!(["authorization_code"]),
        "the default"
    );
    assert_eq!(replaced["scope"], "email");
    assert!(replaced.get("client_name").is_none(), "removed: {replaced}");
    assert_eq!(replaced["registration_access_token"], token, "not rotated");
    let read = json(&configure(&f, "GET", &client, Some(token), None).await);
    assert_eq!(read, replaced);
    // The old redirect URI is gone.
    let query = format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}{}",
        id_of(&client),
        pkce()
    );
    assert!(matches!(
        f.server.authorize(&authorize_request(&query)).await,
        Authorize::Reject(_)
    ));
}

#[tokio::test]
async fn put_is_checked_exactly_like_a_registration() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    let token = token_of(&client);
    let id = id_of(&client);
    for (replacement, code) in [
        (
            json!({"client_id": id, "token_endpoint_auth_method": "none"}),
            "invalid_redirect_uri",
        ),
        (
            json!({"client_id": id, "token_endpoint_auth_method": "none",
                   "redirect_uris": ["http://app.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"client_id": id, "token_endpoint_auth_method": "none",
                   "redirect_uris": [REDIRECT], "grant_types": ["implicit"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"client_id": id, "token_endpoint_auth_method": "none",
                   "redirect_uris": [REDIRECT], "scope": "admin"}),
            "invalid_client_metadata",
        ),
        (json!({"client_id": 5}), "invalid_client_metadata"),
    ] {
        let response = configure(&f, "PUT", &client, Some(token), Some(&replacement)).await;
        assert_error(&response, 400, code);
    }
    let unchanged = json(&configure(&f, "GET", &client, Some(token), None).await);
    assert_eq!(unchanged["client_name"], "A native app");
}

#[tokio::test]
async fn put_must_name_the_client_and_may_not_change_its_secret_or_auth_method() {
    let f = open();
    let client = registered(&f, &confidential_metadata()).await;
    let token = token_of(&client);
    let secret = client["client_secret"].as_str().unwrap();
    let base = confidential_metadata();
    let with = |changes: Value| {
        let mut metadata = base.clone();
        for (key, value) in changes.as_object().unwrap() {
            metadata[key] = value.clone();
        }
        metadata
    };
    for refused in [
        with(json!({})),
        with(json!({"client_id": "another-client"})),
        with(json!({"client_id": id_of(&client), "client_secret": "not-its-secret"})),
        with(json!({"client_id": id_of(&client), "token_endpoint_auth_method": "none"})),
    ] {
        let response = configure(&f, "PUT", &client, Some(token), Some(&refused)).await;
        assert_error(&response, 400, "invalid_client_metadata");
    }
    let accepted = with(json!({"client_id": id_of(&client), "client_secret": secret,
                               "client_name": "Renamed"}));
    let response = configure(&f, "PUT", &client, Some(token), Some(&accepted)).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let replaced = json(&response);
    assert!(
        replaced.get("client_secret").is_none(),
        "not re-issued: {replaced}"
    );
    assert_eq!(replaced["client_name"], "Renamed");
    // The secret still authenticates.
    let code = f.code(id_of(&client), "").await;
    let tokens = f
        .token(Some(&basic(id_of(&client), secret)), &exchange(&code))
        .await;
    assert_tokens(&tokens);
}

#[tokio::test]
async fn put_needs_a_json_body() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    let token = token_of(&client);
    let response = configure(&f, "PUT", &client, Some(token), None).await;
    assert_error(&response, 400, "invalid_request");
}

#[tokio::test]
async fn delete_answers_204_and_the_client_can_no_longer_authenticate() {
    let f = open();
    let client = registered(&f, &confidential_metadata()).await;
    let (id, secret) = (id_of(&client), client["client_secret"].as_str().unwrap());
    let code = f.code(id, "").await;
    let tokens = assert_tokens(&f.token(Some(&basic(id, secret)), &exchange(&code)).await);
    let pending_code = f.code(id, "").await;

    let access = tokens["access_token"].as_str().unwrap();
    assert!(f.access_is_active(access).await);

    let token = token_of(&client);
    let response = configure(&f, "DELETE", &client, Some(token), None).await;
    assert_eq!(response.status(), 204);
    assert!(response.body().is_empty());

    // RFC 7592 §2.3: what was issued to it dies with it, at resources and introspection too.
    assert!(!f.access_is_active(access).await);
    let bearer = f.bearer(Some(&format!("Bearer {access}")), None).await;
    assert_eq!(bearer.unwrap_err().status(), 401);

    let refused = f
        .token(Some(&basic(id, secret)), &exchange(&pending_code))
        .await;
    assert_error(&refused, 401, "invalid_client");
    let refresh = format!(
        "grant_type=refresh_token&refresh_token={}",
        tokens["refresh_token"].as_str().unwrap()
    );
    assert_error(
        &f.token(Some(&basic(id, secret)), &refresh).await,
        401,
        "invalid_client",
    );
    let query = format!("response_type=code&client_id={id}&redirect_uri={REDIRECT_ENCODED}");
    assert!(matches!(
        f.server.authorize(&authorize_request(&query)).await,
        Authorize::Reject(_)
    ));
    for method in ["GET", "DELETE"] {
        let gone = configure(&f, method, &client, Some(token), None).await;
        assert_error(&gone, 401, "invalid_token");
    }
}

#[tokio::test]
async fn other_methods_get_405_with_allow() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    for method in ["POST", "PATCH", "HEAD"] {
        let response = configure(&f, method, &client, Some(token_of(&client)), None).await;
        assert_eq!(response.status(), 405, "{method}");
        assert_eq!(response.headers()["allow"], "GET, PUT, DELETE");
    }
}

#[tokio::test]
async fn a_malformed_authorization_header_is_invalid_request() {
    let f = open();
    let client = registered(&f, &public_metadata()).await;
    let response = configure(&f, "GET", &client, Some("a b c"), None).await;
    assert_error(&response, 400, "invalid_request");
}
