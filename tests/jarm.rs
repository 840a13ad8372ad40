//! JWT-secured authorization responses (JARM) through the public API: `response_mode` `jwt`,
//! `query.jwt`, `fragment.jwt` and `form_post.jwt` answer with one `response` parameter, a JWT
//! signed by the keys at the server's JWKS for the client, holding the response's parameters
//! (an error's too) with `iss`, `aud` and a short `exp`; the client's registered algorithm is
//! honoured, encryption is refused at registration, a pushed request keeps the mode, and a
//! server without signing keys neither offers nor takes the modes.

mod common;

use std::collections::HashMap;

use common::*;
use grantor::client::{Approval, Client, GrantType};
use grantor::jwt::SigningAlgorithm;
use grantor::settings::{OpenIdConnect, PushedRequests, RegistrationPolicy};
use grantor::{Authorize, Decision, Scope};
use http::Response;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};

/// The lifetime of a response JWT: `exp` is this far past the fixture's clock.
const RESPONSE_LIFETIME: u64 = 300;

fn openid() -> Fixture {
    fixture_with(|b| {
        b.openid_connect(OpenIdConnect::default())
            .pushed_requests(PushedRequests::new())
            .registration(RegistrationPolicy::new().scope(&Scope::parse("profile email").unwrap()))
    })
}

/// A public code client whose responses are signed with `alg`.
fn signing_client(id: &str, alg: SigningAlgorithm) -> Client {
    Client::public(id)
        .redirect_uri(REDIRECT)
        .grant_types([GrantType::AuthorizationCode])
        .scopes("profile email")
        .approval(Approval::NotRequired)
        .authorization_signing_algorithm(alg)
        .build()
        .unwrap()
}

fn code_query(client_id: &str, mode: &str) -> String {
    format!(
        "response_type=code&client_id={client_id}&redirect_uri={REDIRECT_ENCODED}\
         &state=st-1&code_challenge={CHALLENGE}&code_challenge_method=S256\
         &response_mode={mode}"
    )
}

/// Runs `query` through the authorization endpoint and Alice's approval.
async fn approved(f: &Fixture, query: &str) -> Response<String> {
    let pending = f.pending(query).await;
    f.server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await
}

/// The header and claims of `jwt` after verifying its signature with the server's published
/// keys alone, its `iss` (the issuer) and its `aud` (`client_id`).
async fn verified(f: &Fixture, jwt: &str, client_id: &str) -> (jsonwebtoken::Header, Value) {
    let jwks: JwkSet = serde_json::from_str(f.server.jwks().await.body()).unwrap();
    let header = jsonwebtoken::decode_header(jwt).unwrap();
    let jwk = jwks
        .find(header.kid.as_deref().expect("a kid"))
        .expect("published");
    let key = DecodingKey::from_jwk(jwk).unwrap();
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[client_id]);
    // The fixture's clock is not the system's: `exp` is checked against it by the caller.
    validation.validate_exp = false;
    validation.set_required_spec_claims(&["iss", "aud", "exp"]);
    let data = jsonwebtoken::decode::<Value>(jwt, &key, &validation).expect("it verifies");
    (data.header, data.claims)
}

/// Asserts `params` hold `response` alone (no `state`, no `iss` beside it); answers it.
fn only_response(params: &HashMap<String, String>) -> &str {
    let names: Vec<&str> = params.keys().map(String::as_str).collect();
    assert_eq!(names, ["response"], "{params:?}");
    &params["response"]
}

/// The hidden inputs of a form_post page, by name.
fn form_inputs(page: &str) -> HashMap<String, String> {
    page.split("<input type=\"hidden\" ")
        .skip(1)
        .map(|input| {
            let attribute = |name: &str| {
                let start = input.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                let end = start + input[start..].find('"').unwrap();
                input[start..end].to_owned()
            };
            (attribute("name"), attribute("value"))
        })
        .collect()
}

#[tokio::test]
async fn response_mode_jwt_for_code_redirects_with_a_signed_response_in_the_query() {
    let f = openid();
    let response = approved(&f, &code_query("public-client", "jwt")).await;
    let redirect = redirect(&response);
    assert_eq!(redirect.base, REDIRECT);
    assert!(redirect.fragment.is_empty());
    let jwt = only_response(&redirect.query);
    let (header, claims) = verified(&f, jwt, "public-client").await;
    assert_eq!(header.alg, Algorithm::RS256);
    assert_eq!(claims["exp"], START + RESPONSE_LIFETIME);
    assert_eq!(claims["state"], "st-1");
    let code = claims["code"].as_str().expect("the code");
    // The code in the JWT is the one the token endpoint takes.
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &code_verifier={VERIFIER}&client_id=public-client"
    );
    assert_tokens(&f.token(None, &body).await);
}

#[tokio::test]
async fn query_jwt_fragment_jwt_and_form_post_jwt_carry_the_response_their_own_way() {
    let f = openid();
    let query = approved(&f, &code_query("public-client", "query.jwt")).await;
    let query = redirect(&query);
    let (_, claims) = verified(&f, only_response(&query.query), "public-client").await;
    assert!(claims["code"].is_string(), "{claims}");

    let fragment = approved(&f, &code_query("public-client", "fragment.jwt")).await;
    let fragment = redirect(&fragment);
    assert!(fragment.query.is_empty(), "nothing in the query");
    let (_, claims) = verified(&f, only_response(&fragment.fragment), "public-client").await;
    assert!(claims["code"].is_string(), "{claims}");
    assert_eq!(claims["state"], "st-1");

    let page = approved(&f, &code_query("public-client", "form_post.jwt")).await;
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(page.headers()["cache-control"], "no-store");
    assert!(page.headers().get("location").is_none());
    let action = format!("<form method=\"post\" action=\"{REDIRECT}\">");
    assert!(page.body().contains(&action), "{}", page.body());
    let inputs = form_inputs(page.body());
    let (_, claims) = verified(&f, only_response(&inputs), "public-client").await;
    assert!(claims["code"].is_string(), "{claims}");
    assert_eq!(claims["iss"], ISSUER);
}

#[tokio::test]
async fn an_implicit_response_in_jwt_mode_goes_in_the_fragment_with_the_tokens_as_claims() {
    let f = openid();
    let query = format!(
        "response_type=token&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}\
         &scope=profile&state=st-2&response_mode=jwt"
    );
    let response = approved(&f, &query).await;
    let redirect = redirect(&response);
    assert!(redirect.query.is_empty(), "tokens never in the query");
    let (_, claims) = verified(&f, only_response(&redirect.fragment), "demo-client").await;
    let access_token = claims["access_token"].as_str().expect("the token");
    assert!(f.access_is_active(access_token).await);
    assert_eq!(claims["token_type"], "bearer");
    assert_eq!(claims["expires_in"], "3600");
    assert_eq!(claims["scope"], "profile");
    assert_eq!(claims["state"], "st-2");
}

#[tokio::test]
async fn query_jwt_is_refused_for_a_response_carrying_tokens() {
    let f = openid();
    let query = format!(
        "response_type=token&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}\
         &scope=profile&state=st-3&response_mode=query.jwt"
    );
    let Authorize::Redirect(refused) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("refused at the redirect URI");
    };
    assert_eq!(refused.error().code().as_str(), "invalid_request");
    // The mode is refused, so the error goes the response type's own way: the fragment.
    let redirect = redirect(&refused);
    assert_eq!(redirect.fragment["error"], "invalid_request");
    assert_eq!(redirect.fragment["state"], "st-3");
}

#[tokio::test]
async fn an_error_in_jwt_mode_is_a_signed_response_with_error_and_state() {
    let f = openid();
    let query = format!("{}&scope=admin", code_query("public-client", "jwt"));
    let Authorize::Redirect(refused) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("refused at the redirect URI");
    };
    assert_eq!(refused.error().code().as_str(), "invalid_scope");
    let refused = redirect(&refused);
    let (_, claims) = verified(&f, only_response(&refused.query), "public-client").await;
    assert_eq!(claims["error"], "invalid_scope");
    assert!(claims["error_description"].is_string(), "{claims}");
    assert_eq!(claims["state"], "st-1");
    assert!(claims.get("code").is_none());

    let pending = f
        .pending(&code_query("public-client", "fragment.jwt"))
        .await;
    let denied = f.server.decide(pending, f.alice.id(), Decision::Deny).await;
    let denied = redirect(&denied);
    let (_, claims) = verified(&f, only_response(&denied.fragment), "public-client").await;
    assert_eq!(claims["error"], "access_denied");
}

#[tokio::test]
async fn the_clients_registered_algorithm_signs_its_responses() {
    let f = openid();
    for (id, alg, expected) in [
        ("es256-app", SigningAlgorithm::ES256, Algorithm::ES256),
        ("eddsa-app", SigningAlgorithm::EdDSA, Algorithm::EdDSA),
    ] {
        f.register(signing_client(id, alg));
        let response = approved(&f, &code_query(id, "jwt")).await;
        let redirect = redirect(&response);
        let (header, claims) = verified(&f, only_response(&redirect.query), id).await;
        assert_eq!(header.alg, expected);
        assert_eq!(claims["aud"], id);
    }
}

#[tokio::test]
async fn a_pushed_request_keeps_its_jwt_mode() {
    let f = openid();
    let body = format!(
        "response_type=code&redirect_uri={REDIRECT_ENCODED}&scope=email&state=st-4\
         &response_mode=jwt"
    );
    let push = post("/api/oauth/par", Some(&f.fast_basic()), &body);
    let pushed = f.server.par(&push).await;
    assert_eq!(pushed.status(), 201, "{}", pushed.body());
    let request_uri = json(&pushed)["request_uri"].as_str().unwrap().to_owned();
    let query = format!(
        "client_id={}&request_uri={}",
        f.fast_id,
        url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
    );
    let response = approved(&f, &query).await;
    let redirect = redirect(&response);
    let (_, claims) = verified(&f, only_response(&redirect.query), &f.fast_id).await;
    assert!(claims["code"].is_string(), "{claims}");
    assert_eq!(claims["state"], "st-4");
}

#[tokio::test]
async fn registration_takes_the_signing_algorithm_and_refuses_encryption() {
    let f = openid();
    let metadata = json!({
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "authorization_signed_response_alg": "ES256",
        "introspection_signed_response_alg": "EdDSA",
    });
    let request = http::Request::post("/api/oauth/register")
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .unwrap();
    let response = f.server.register(&request).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let registered = json(&response);
    assert_eq!(registered["authorization_signed_response_alg"], "ES256");
    assert_eq!(registered["introspection_signed_response_alg"], "EdDSA");
    for (member, value) in [
        ("authorization_encrypted_response_alg", "RSA-OAEP-256"),
        ("authorization_encrypted_response_enc", "A128CBC-HS256"),
        ("introspection_encrypted_response_alg", "RSA-OAEP-256"),
        ("authorization_signed_response_alg", "none"),
        ("authorization_signed_response_alg", "HS256"),
    ] {
        let mut metadata = json!({
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
        });
        metadata[member] = json!(value);
        let request = http::Request::post("/api/oauth/register")
            .header("content-type", "application/json")
            .body(metadata.to_string())
            .unwrap();
        let refused = f.server.register(&request).await;
        assert_error(&refused, 400, "invalid_client_metadata");
    }
}

#[tokio::test]
async fn discovery_lists_the_jwt_modes_and_algorithms_only_with_signing_keys() {
    let f = openid();
    let metadata = json(&f.server.metadata());
    let modes = metadata["response_modes_supported"].as_array().unwrap();
    for mode in [
        "jwt",
        "query.jwt",
        "fragment.jwt",
        "form_post.jwt",
        "form_post",
    ] {
        assert!(modes.contains(&json!(mode)), "{mode}: {modes:?}");
    }
    let algs = json!(["RS256", "ES256", "EdDSA"]);
    assert_eq!(metadata["authorization_signing_alg_values_supported"], algs);

    let plain = fixture();
    let metadata = json(&plain.server.metadata());
    assert_eq!(
        metadata["response_modes_supported"],
        json!(["query", "fragment", "form_post"])
    );
    assert!(
        metadata
            .get("authorization_signing_alg_values_supported")
            .is_none()
    );
}

#[tokio::test]
async fn without_signing_keys_a_jwt_mode_is_an_unsupported_response_mode() {
    let f = fixture();
    let query = code_query("public-client", "jwt");
    let Authorize::Redirect(refused) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("refused at the redirect URI");
    };
    assert_eq!(refused.error().code().as_str(), "invalid_request");
    assert!(refused.error().description().contains("response_mode"));
    let redirect = redirect(&refused);
    assert_eq!(redirect.query["error"], "invalid_request");
    assert_eq!(redirect.query["iss"], ISSUER);
}
