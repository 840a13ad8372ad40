//! Signed introspection answers (RFC 9701) through the public API: a caller asking with
//! `Accept: application/token-introspection+jwt` gets the RFC 7662 answer inside a JWT signed
//! by the keys at the server's JWKS, for itself, with the algorithm it registered; every other
//! caller gets the JSON answer as before.

mod common;

use common::*;
use grantor::client::{Approval, Client, ClientCredentials, GrantType};
use grantor::jwt::SigningAlgorithm;
use grantor::settings::OpenIdConnect;
use http::Response;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};

const SIGNED: &str = "application/token-introspection+jwt";

fn openid() -> Fixture {
    fixture_with(|b| b.openid_connect(OpenIdConnect::default()))
}

impl Fixture {
    /// Introspects `token` as the client of `authorization`, sending `accept`.
    async fn introspect_accepting(
        &self,
        authorization: &str,
        token: &str,
        accept: &str,
    ) -> Response<String> {
        let mut request = post(
            "/api/oauth/introspect",
            Some(authorization),
            &format!("token={token}"),
        );
        let accept = http::HeaderValue::from_str(accept).unwrap();
        request.headers_mut().insert(http::header::ACCEPT, accept);
        self.server.introspect(&request).await
    }
}

/// Asserts a signed answer; answers its header and claims after verifying its signature with
/// the server's published keys alone, its `iss` (the issuer) and its `aud` (`caller`).
async fn verified(
    f: &Fixture,
    response: &Response<String>,
    caller: &str,
) -> (jsonwebtoken::Header, Value) {
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(response.headers()["content-type"], SIGNED);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let jwks: JwkSet = serde_json::from_str(f.server.jwks().await.body()).unwrap();
    let jwt = response.body();
    let header = jsonwebtoken::decode_header(jwt).unwrap();
    let jwk = jwks
        .find(header.kid.as_deref().expect("a kid"))
        .expect("published");
    let key = DecodingKey::from_jwk(jwk).unwrap();
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[caller]);
    validation.set_required_spec_claims(&["iss", "aud", "iat"]);
    validation.validate_exp = false;
    let data = jsonwebtoken::decode::<Value>(jwt, &key, &validation).expect("it verifies");
    assert_eq!(data.header.typ.as_deref(), Some("token-introspection+jwt"));
    assert_eq!(data.claims["iat"], START);
    (data.header, data.claims)
}

#[tokio::test]
async fn an_active_token_is_answered_as_a_signed_jwt_holding_the_json_answer() {
    let f = openid();
    let tokens = f.fast_tokens().await;
    let access_token = tokens["access_token"].as_str().unwrap();
    let plain = f
        .introspect(Some(&f.fast_basic()), &format!("token={access_token}"))
        .await;
    let signed = f
        .introspect_accepting(&f.fast_basic(), access_token, SIGNED)
        .await;
    let (header, claims) = verified(&f, &signed, &f.fast_id).await;
    assert_eq!(header.alg, Algorithm::RS256);
    assert_eq!(claims["token_introspection"]["active"], true);
    // The signed answer holds exactly what the JSON answer says.
    assert_eq!(claims["token_introspection"], json(&plain));
}

#[tokio::test]
async fn an_inactive_token_is_signed_as_active_false() {
    let f = openid();
    let signed = f
        .introspect_accepting(&f.fast_basic(), "not-a-token", SIGNED)
        .await;
    let (_, claims) = verified(&f, &signed, &f.fast_id).await;
    assert_eq!(claims["token_introspection"], json!({"active": false}));
}

#[tokio::test]
async fn any_other_accept_gets_the_json_answer() {
    let f = openid();
    let tokens = f.fast_tokens().await;
    let access_token = tokens["access_token"].as_str().unwrap();
    for accept in ["application/json", "*/*", &format!("{SIGNED};q=0")] {
        let response = f
            .introspect_accepting(&f.fast_basic(), access_token, accept)
            .await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(json(&response)["active"], true, "{accept}");
    }
    let none = f
        .introspect(Some(&f.fast_basic()), &format!("token={access_token}"))
        .await;
    assert_eq!(none.headers()["content-type"], "application/json");
}

#[tokio::test]
async fn the_callers_registered_algorithm_signs_its_answers() {
    let f = openid();
    let creds = ClientCredentials::generate().unwrap();
    let id = creds.client_id.to_string();
    f.register(
        Client::confidential(id.as_str(), creds.verifier)
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::ClientCredentials])
            .scopes("profile")
            .approval(Approval::NotRequired)
            .introspection_signing_algorithm(SigningAlgorithm::ES256)
            .build()
            .unwrap(),
    );
    let caller = basic(&id, creds.secret.expose_secret());
    let tokens = assert_tokens(
        &f.token(Some(&caller), "grant_type=client_credentials")
            .await,
    );
    let access_token = tokens["access_token"].as_str().unwrap();
    let signed = f.introspect_accepting(&caller, access_token, SIGNED).await;
    let (header, claims) = verified(&f, &signed, &id).await;
    assert_eq!(header.alg, Algorithm::ES256);
    assert_eq!(claims["token_introspection"]["client_id"], id.as_str());
}

#[tokio::test]
async fn a_caller_that_fails_authentication_gets_the_json_error() {
    let f = openid();
    let response = f
        .introspect_accepting(&basic(&f.fast_id, "wrong"), "any", SIGNED)
        .await;
    assert_error(&response, 401, "invalid_client");
}

#[tokio::test]
async fn discovery_lists_the_introspection_signing_algorithms_only_with_signing_keys() {
    let f = openid();
    let metadata = json(&f.server.metadata());
    assert_eq!(
        metadata["introspection_signing_alg_values_supported"],
        json!(["RS256", "ES256", "EdDSA"])
    );
    let plain = fixture();
    let metadata = json(&plain.server.metadata());
    assert!(
        metadata
            .get("introspection_signing_alg_values_supported")
            .is_none()
    );
    // Without keys, a caller asking for a signed answer gets the JSON one.
    let response = plain
        .introspect_accepting(&plain.fast_basic(), "not-a-token", SIGNED)
        .await;
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.body(), r#"{"active":false}"#);
}
