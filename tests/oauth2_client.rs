//! A real OAuth client, the `oauth2` crate, against `axum_server` and `actix_server` over real
//! HTTP: a public client registers itself (RFC 7591), finds the endpoints in the metadata
//! document (RFC 8414), runs the code flow with PKCE and a resource indicator (RFC 7636, RFC
//! 8707) through the sign-in and approval pages (the answer naming its issuer, RFC 9207), calls
//! `/api/me`, refreshes, and has its replayed refresh token refused with `invalid_grant`, which
//! also ends the access token the rotation gave.
//!
//! The `oauth2` crate has no dynamic client registration, so the registration is a plain
//! `POST` with reqwest. The crate brings no HTTP client here either (`default-features =
//! false`): [`over_reqwest`] hands its requests to the same reqwest the other demo tests use.

mod demo;

use std::collections::BTreeSet;

use demo::Server;
use demo::http::*;
use oauth2::basic::{BasicClient, BasicErrorResponseType, BasicTokenType};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, CsrfToken, HttpRequest, PkceCodeChallenge,
    RedirectUrl, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use serde_json::{Value, json};

each_framework! {
    the_oauth2_crate_registers_signs_alice_in_with_pkce_and_refreshes => oauth2_client;
}

/// The scopes of a token response, as a set.
fn scopes(scopes: Option<&Vec<Scope>>) -> BTreeSet<&str> {
    scopes
        .expect("the token response names its scope")
        .iter()
        .map(|scope| scope.as_str())
        .collect()
}

/// A string member of a JSON document.
fn member<'v>(document: &'v Value, name: &str) -> &'v str {
    document[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: {document}"))
}

async fn oauth2_client(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let api = format!("{base}/api");
    let http = browser();

    // RFC 8414: where everything is.
    let metadata = get(
        &http,
        &format!("{base}/.well-known/oauth-authorization-server"),
    )
    .await;
    assert_eq!(metadata.status, 200, "{}", metadata.body);
    let metadata = metadata.json();
    assert_eq!(metadata["issuer"], base.as_str());
    let registration_endpoint = member(&metadata, "registration_endpoint");
    assert_eq!(registration_endpoint, format!("{base}/api/oauth/register"));

    // RFC 7591: a public client registers itself (over reqwest: the oauth2 crate cannot).
    let registration = send(http.post(registration_endpoint).json(&json!({
        "redirect_uris": [CALLBACK],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": "profile email",
    })))
    .await;
    assert_eq!(registration.status, 201, "{}", registration.body);
    let registered = registration.json();
    assert_eq!(registered["token_endpoint_auth_method"], "none");
    assert!(registered.get("client_secret").is_none(), "{registered}");
    let client_id = member(&registered, "client_id");

    let authorization_endpoint = member(&metadata, "authorization_endpoint").to_owned();
    let token_endpoint = member(&metadata, "token_endpoint").to_owned();
    let client = BasicClient::new(ClientId::new(client_id.to_owned()))
        .set_auth_uri(AuthUrl::new(authorization_endpoint).expect("a URL"))
        .set_token_uri(TokenUrl::new(token_endpoint).expect("a URL"))
        .set_auth_type(AuthType::RequestBody)
        .set_redirect_uri(RedirectUrl::new(CALLBACK.to_owned()).expect("a URL"));
    let oauth2_http = |request: HttpRequest| over_reqwest(&http, request);

    // The authorization request as the oauth2 crate writes it, then a browser: alice signs in
    // and approves (self-registered clients need her approval).
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (authorize_url, csrf) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("profile".to_owned()))
        .add_scope(Scope::new("email".to_owned()))
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", api.as_str())
        .url();
    let browser = browser();
    let page = get(&browser, authorize_url.as_str()).await;
    assert_eq!(page.status, 200, "the sign-in page: {}", page.body);
    let approval = sign_in(&browser, base, &sign_in_form(&page), ALICE).await;
    assert_eq!(approval.status, 200, "the approval page: {}", approval.body);
    let callback = callback_query(&decide(&browser, base, &approval, "approve").await);
    assert_eq!(
        callback.get("state").map(String::as_str),
        Some(csrf.secret().as_str()),
        "{callback:?}"
    );
    // RFC 9207, as the metadata promises: the answer names its issuer.
    assert_eq!(
        metadata["authorization_response_iss_parameter_supported"],
        true
    );
    assert_eq!(
        callback.get("iss").map(String::as_str),
        Some(base.as_str()),
        "{callback:?}"
    );
    let code = callback.get("code").expect("a code").to_owned();

    // The code, redeemed with the PKCE verifier for the demo API.
    let tokens = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .add_extra_param("resource", api.as_str())
        .request_async(&oauth2_http)
        .await
        .expect("the code is redeemed");
    assert_eq!(tokens.token_type(), &BasicTokenType::Bearer);
    assert!(
        tokens.expires_in().is_some_and(|ttl| !ttl.is_zero()),
        "{tokens:?}"
    );
    assert_eq!(
        scopes(tokens.scopes()),
        BTreeSet::from(["email", "profile"])
    );
    let refresh_token = tokens.refresh_token().expect("a refresh token").clone();

    let profile = me(base, Some(tokens.access_token().secret())).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    let profile = profile.json();
    assert_eq!(profile["email"], ALICE.0);
    assert_eq!(profile["client_id"], client_id);
    assert_scope(&profile["scope"], "profile email");

    // The refresh token, rotated: the new access token opens the API.
    let refreshed = client
        .exchange_refresh_token(&refresh_token)
        .request_async(&oauth2_http)
        .await
        .expect("the refresh token is redeemed");
    assert_eq!(refreshed.token_type(), &BasicTokenType::Bearer);
    assert_eq!(
        scopes(refreshed.scopes()),
        BTreeSet::from(["email", "profile"])
    );
    assert_ne!(
        refreshed.access_token().secret(),
        tokens.access_token().secret()
    );
    let rotated = refreshed.refresh_token().expect("a new refresh token");
    assert_ne!(rotated.secret(), refresh_token.secret());
    let profile = me(base, Some(refreshed.access_token().secret())).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    assert_eq!(profile.json()["email"], ALICE.0);

    // The old refresh token again: `invalid_grant`, and the replay revokes what it led to.
    match client
        .exchange_refresh_token(&refresh_token)
        .request_async(&oauth2_http)
        .await
    {
        Err(RequestTokenError::ServerResponse(error)) => {
            assert_eq!(error.error(), &BasicErrorResponseType::InvalidGrant);
        }
        other => panic!("the old refresh token is refused with invalid_grant: {other:?}"),
    }
    let revoked = me(base, Some(refreshed.access_token().secret())).await;
    assert_eq!(revoked.status, 401, "{}", revoked.body);
    server.assert_alive_and_calm();
}
