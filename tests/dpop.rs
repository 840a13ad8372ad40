//! DPoP (RFC 9449, feature `dpop`) through the public API: bound tokens at the token endpoint,
//! bound refresh tokens of public clients, `Authorization: DPoP` at a resource, every bad proof
//! refused with `invalid_dpop_proof`, server nonces, and clients that must use DPoP.

mod common;
mod dpop_proofs;

use std::time::Duration;

use common::*;
use dpop_proofs::{ProofKey, claims, unsigned};
use grantor::dpop::{Dpop, ProofContext, ProofError, verify_proof};
use grantor::{BearerRefusal, BearerRefusalReason};
use grantor::{client::*, clock::*, exchange::*, settings::*};
use http::{Request, Response};
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

const TOKEN_URL: &str = "http://127.0.0.1:8080/api/oauth/token";
const ME_URL: &str = "http://127.0.0.1:8080/api/me";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

fn dpop_fixture(dpop: Dpop) -> Fixture {
    let f = fixture_with(|b| b.dpop(dpop));
    // A public client with refresh tokens: RFC 9449 §5 binds its refresh tokens.
    f.register(
        Client::public("spa")
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
            .scopes("profile email")
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
    );
    f
}

/// A token request with `DPoP: proof` (when given).
fn with_proof(authorization: Option<&str>, body: &str, proofs: &[&str]) -> Request<String> {
    let mut request = token_request(authorization, body);
    for proof in proofs {
        request.headers_mut().append("dpop", proof.parse().unwrap());
    }
    request
}

/// Client credentials for the generated client, with `proofs` as `DPoP` headers.
async fn client_credentials(f: &Fixture, proofs: &[&str]) -> Response<String> {
    let request = with_proof(
        Some(&f.fast_basic()),
        "grant_type=client_credentials",
        proofs,
    );
    f.server.token(&request).await
}

/// A 200 token response with `token_type: DPoP`.
fn assert_bound_tokens(response: &Response<String>) -> Value {
    assert_eq!(response.status(), 200, "{}", response.body());
    let body = json(response);
    assert_eq!(body["token_type"], "DPoP", "{body}");
    body
}

/// A resource request: `GET /api/me` with `authorization` and optional proof.
fn resource_request(authorization: &str, proof: Option<&str>) -> Request<()> {
    let mut builder = Request::get("/api/me").header("authorization", authorization);
    if let Some(proof) = proof {
        builder = builder.header("dpop", proof);
    }
    builder.body(()).unwrap()
}

/// The error and description of a DPoP challenge.
fn dpop_challenge(response: &Response<String>) -> String {
    let challenges: Vec<&str> = response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    let dpop = challenges
        .iter()
        .find(|c| c.starts_with("DPoP "))
        .unwrap_or_else(|| panic!("no DPoP challenge in {challenges:?}"));
    assert!(
        dpop.contains("algs=\"ES256 EdDSA Ed25519 RS256 PS256\""),
        "{dpop}"
    );
    (*dpop).to_owned()
}

#[tokio::test]
async fn the_metadata_lists_the_proof_algorithms_only_with_dpop_on() {
    let f = dpop_fixture(Dpop::new());
    let metadata = json(&f.server.metadata());
    assert_eq!(
        metadata["dpop_signing_alg_values_supported"],
        json!(["ES256", "EdDSA", "Ed25519", "RS256", "PS256"])
    );
    let plain = fixture();
    assert!(json(&plain.server.metadata())["dpop_signing_alg_values_supported"].is_null());
}

#[tokio::test]
async fn a_proof_binds_the_access_token_to_its_key_for_each_algorithm() {
    let f = dpop_fixture(Dpop::new());
    for key in [
        ProofKey::es256(7),
        ProofKey::eddsa(7),
        ProofKey::rsa(Algorithm::RS256),
        ProofKey::rsa(Algorithm::PS256),
    ] {
        let proof = key.proof("POST", TOKEN_URL, START);
        let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
        let token = body["access_token"].as_str().unwrap();
        let introspected = json(
            &f.introspect(Some(&f.fast_basic()), &format!("token={token}"))
                .await,
        );
        assert_eq!(introspected["active"], true);
        assert_eq!(introspected["token_type"], "DPoP", "{introspected}");
        assert_eq!(introspected["cnf"]["jkt"], key.jkt(), "{:?}", key.algorithm);
    }
}

#[tokio::test]
async fn an_ed25519_key_may_name_its_algorithm_ed25519_or_eddsa() {
    let f = dpop_fixture(Dpop::new());
    let key = ProofKey::eddsa(8);
    let proof = key.proof_named("Ed25519", "POST", TOKEN_URL, START);
    let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    let token = body["access_token"].as_str().unwrap().to_owned();
    // At the resource too, with either name.
    for alg in ["Ed25519", "EdDSA"] {
        let mut claims = dpop_proofs::claims("GET", ME_URL, START);
        claims["ath"] = json!(dpop_proofs::ath(&token));
        let proof = key.sign_named(alg, &claims);
        let request = resource_request(&format!("DPoP {token}"), Some(&proof));
        let grant = f.server.bearer(&request, None).await;
        assert!(grant.is_ok(), "{alg}");
    }
    // The name must fit the key: an Ed25519 key under ES256, or a P-256 key under Ed25519.
    let mismatched = key.proof_named("ES256", "POST", TOKEN_URL, START);
    refused_at_token_endpoint("jwk")(client_credentials(&f, &[&mismatched]).await);
    let p256 = ProofKey::es256(8).proof_named("Ed25519", "POST", TOKEN_URL, START);
    refused_at_token_endpoint("jwk")(client_credentials(&f, &[&p256]).await);
    // A forged signature under the new name is still a bad signature.
    let mut forged = key.proof_named("Ed25519", "POST", TOKEN_URL, START);
    forged.truncate(forged.len() - 4);
    forged.push_str("AAAA");
    refused_at_token_endpoint("signature")(client_credentials(&f, &[&forged]).await);
}

#[tokio::test]
async fn without_a_proof_or_without_dpop_on_the_token_is_a_bearer_token() {
    let f = dpop_fixture(Dpop::new());
    let body = assert_tokens(&client_credentials(&f, &[]).await);
    let token = body["access_token"].as_str().unwrap();
    let introspected = json(
        &f.introspect(Some(&f.fast_basic()), &format!("token={token}"))
            .await,
    );
    assert_eq!(introspected["token_type"], "bearer");
    assert!(introspected["cnf"].is_null(), "{introspected}");
    // A server without DPoP ignores the header (RFC 9449 §5).
    let plain = fixture();
    let proof = ProofKey::es256(7).proof("POST", TOKEN_URL, START);
    assert_tokens(&client_credentials(&plain, &[&proof]).await);
}

#[tokio::test]
async fn a_bound_token_needs_a_fresh_proof_of_its_key_at_the_resource() {
    let f = dpop_fixture(Dpop::new());
    let key = ProofKey::es256(7);
    let proof = key.proof("POST", TOKEN_URL, START);
    let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    let token = body["access_token"].as_str().unwrap().to_owned();
    let scheme = format!("DPoP {token}");

    let proof = key.proof_for_token("GET", ME_URL, START, &token);
    let request = resource_request(&scheme, Some(&proof));
    let grant = f.server.bearer(&request, None).await.unwrap();
    assert_eq!(
        grant.binding.and_then(|b| b.jkt()).map(|k| k.to_string()),
        Some(key.jkt())
    );
    assert_eq!(grant.authorization.client_id.as_str(), f.fast_id);

    let refused = |refusal: BearerRefusal, error: &str| {
        let response = refusal.into_response();
        assert_eq!(response.status(), 401, "{}", response.body());
        let challenge = dpop_challenge(&response);
        assert!(
            challenge.contains(&format!("error=\"{error}\"")),
            "{challenge}"
        );
        assert_eq!(json(&response)["error"], error);
        json(&response)["error_description"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // The same proof again: replayed.
    let again = f.server.bearer(&request, None).await.unwrap_err();
    assert!(refused(again, "invalid_dpop_proof").contains("used before"));
    // As a bearer token (RFC 9449 §7.2).
    let bearer = resource_request(&format!("Bearer {token}"), None);
    let response = f.server.bearer(&bearer, None).await.unwrap_err();
    assert!(refused(response, "invalid_token").contains("bound to a DPoP key"));
    // Without a proof.
    let response = f
        .server
        .bearer(&resource_request(&scheme, None), None)
        .await;
    assert!(refused(response.unwrap_err(), "invalid_dpop_proof").contains("required"));
    // `ath` of another token, or none.
    let wrong_ath = key.proof_for_token("GET", ME_URL, START, "another token");
    let response = f
        .server
        .bearer(&resource_request(&scheme, Some(&wrong_ath)), None)
        .await;
    assert!(refused(response.unwrap_err(), "invalid_dpop_proof").contains("ath"));
    let no_ath = key.proof("GET", ME_URL, START);
    let response = f
        .server
        .bearer(&resource_request(&scheme, Some(&no_ath)), None)
        .await;
    assert!(refused(response.unwrap_err(), "invalid_dpop_proof").contains("ath"));
    // Another key's proof.
    let other = ProofKey::eddsa(9).proof_for_token("GET", ME_URL, START, &token);
    let response = f
        .server
        .bearer(&resource_request(&scheme, Some(&other)), None)
        .await;
    assert!(refused(response.unwrap_err(), "invalid_dpop_proof").contains("key"));
    // A proof for another method or URI.
    let post = key.proof_for_token("POST", ME_URL, START, &token);
    let response = f
        .server
        .bearer(&resource_request(&scheme, Some(&post)), None)
        .await;
    assert!(refused(response.unwrap_err(), "invalid_dpop_proof").contains("htm"));
    let elsewhere = key.proof_for_token("GET", "http://127.0.0.1:8080/api/other", START, &token);
    let response = f
        .server
        .bearer(&resource_request(&scheme, Some(&elsewhere)), None)
        .await;
    assert!(refused(response.unwrap_err(), "invalid_dpop_proof").contains("htu"));
    // A fresh proof with a query string on the request still names the same URI.
    let fresh = key.proof_for_token("GET", ME_URL, START + 5, &token);
    let request = Request::get("/api/me?fields=email")
        .header("authorization", &scheme)
        .header("dpop", &fresh)
        .body(())
        .unwrap();
    assert!(f.server.bearer(&request, None).await.is_ok());
    // Headers alone cannot be checked against a method and URI.
    let fresh = key.proof_for_token("GET", ME_URL, START + 6, &token);
    let request = resource_request(&scheme, Some(&fresh));
    let response = f.server.bearer_headers(request.headers(), None).await;
    assert!(refused(response.unwrap_err(), "invalid_dpop_proof").contains("cannot check"));
}

/// RFC 9449 §4.3 with an absolute-form request target (RFC 9112 §3.2.2): the `htu` a proof must
/// name is built from the served resource's configured origin, never from the target as sent, so a
/// proof made for another server's URL is refused however the request names it.
#[tokio::test]
async fn a_proof_for_another_origin_is_refused_even_with_that_origin_as_the_target() {
    let f = dpop_fixture(Dpop::new());
    let key = ProofKey::es256(11);
    let proof = key.proof("POST", TOKEN_URL, START);
    let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    let token = body["access_token"].as_str().unwrap().to_owned();
    let scheme = format!("DPoP {token}");
    let absolute = |target: &str, proof: &str| {
        Request::get(target)
            .header("authorization", &scheme)
            .header("dpop", proof)
            .body(())
            .unwrap()
    };
    let elsewhere = "https://other.example/api/me";
    let foreign = key.proof_for_token("GET", elsewhere, START, &token);
    let refusal = f
        .server
        .bearer(&absolute(elsewhere, &foreign), None)
        .await
        .unwrap_err();
    assert_eq!(refusal.reason(), BearerRefusalReason::InvalidDpopProof);
    let response = refusal.into_response();
    let description = json(&response)["error_description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(description.contains("htu"), "{description}");
    // The server's own origin as an absolute-form target is read as it is.
    let own = key.proof_for_token("GET", ME_URL, START + 1, &token);
    let grant = f.server.bearer(&absolute(ME_URL, &own), None).await;
    assert!(
        grant.is_ok(),
        "{:?}",
        grant.err().map(|r| r.into_response())
    );
}

#[tokio::test]
async fn a_bearer_token_presented_with_the_dpop_scheme_is_refused() {
    let f = dpop_fixture(Dpop::new());
    let body = assert_tokens(&client_credentials(&f, &[]).await);
    let token = body["access_token"].as_str().unwrap();
    let proof = ProofKey::es256(7).proof_for_token("GET", ME_URL, START, token);
    let request = resource_request(&format!("DPoP {token}"), Some(&proof));
    let response = f.server.bearer(&request, None).await.unwrap_err();
    let response = response.into_response();
    assert_eq!(response.status(), 401);
    assert!(dpop_challenge(&response).contains("error=\"invalid_token\""));
    // Without credentials, both schemes are offered.
    let bare = Request::get("/api/me").body(()).unwrap();
    let response = f.server.bearer(&bare, None).await.unwrap_err();
    assert_eq!(response.reason(), BearerRefusalReason::NoCredentials);
    let challenges: Vec<_> = response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .collect();
    assert_eq!(challenges.len(), 2, "{challenges:?}");
    let metadata = format!("resource_metadata=\"{ISSUER}/.well-known/oauth-protected-resource\"");
    assert_eq!(
        challenges[0],
        &format!("Bearer realm=\"{ISSUER}\", {metadata}")
    );
    assert!(
        challenges[1].to_str().unwrap().ends_with(&metadata),
        "{challenges:?}"
    );
}

#[tokio::test]
async fn a_bound_token_short_of_a_step_up_is_refused_in_the_dpop_scheme() {
    let f = dpop_fixture(Dpop::new());
    let key = ProofKey::es256(7);
    let proof = key.proof("POST", TOKEN_URL, START);
    let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    let token = body["access_token"].as_str().unwrap();
    let proof = key.proof_for_token("GET", ME_URL, START, token);
    let request = resource_request(&format!("DPoP {token}"), Some(&proof));
    let strong = grantor::StepUp::new()
        .acr_values(["urn:grantor:acr:mfa"])
        .unwrap()
        .max_age(Duration::from_secs(300));
    let refusal = f
        .server
        .bearer_step_up(&request, None, &strong)
        .await
        .unwrap_err();
    assert_eq!(
        refusal.reason(),
        BearerRefusalReason::InsufficientUserAuthentication
    );
    let response = refusal.into_response();
    assert_eq!(response.status(), 401);
    // RFC 9470 §3 in the scheme the token was presented in (RFC 9449 §7.1).
    assert_eq!(
        dpop_challenge(&response),
        format!(
            "DPoP realm=\"{ISSUER}\", error=\"insufficient_user_authentication\", \
             error_description=\"the access token was not issued for a user's sign-in\", \
             acr_values=\"urn:grantor:acr:mfa\", max_age=300, \
             algs=\"ES256 EdDSA Ed25519 RS256 PS256\", \
             resource_metadata=\"{ISSUER}/.well-known/oauth-protected-resource\""
        )
    );
}

/// Asserts a 400 `invalid_dpop_proof` whose description says `description_part`.
fn refused_at_token_endpoint(description_part: &str) -> impl Fn(Response<String>) {
    let part = description_part.to_owned();
    move |response| {
        assert_error(&response, 400, "invalid_dpop_proof");
        let description = json(&response)["error_description"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(description.contains(&part), "{description} lacks {part}");
    }
}

#[tokio::test]
async fn every_bad_proof_is_invalid_dpop_proof_with_its_reason() {
    let f = dpop_fixture(Dpop::new());
    let key = ProofKey::es256(7);
    let good = claims("POST", TOKEN_URL, START);
    let jwk = serde_json::to_value(&key.jwk).unwrap();
    let mut private = jwk.clone();
    private["d"] = json!("c2VjcmV0LWtleS1tYXRlcmlhbC1vZi0zMi1ieXRlcw");
    let mut huge = json!({ "kty": "RSA", "e": "AQAB" });
    huge["n"] = json!("q".repeat(1400));
    let cases: Vec<(String, &str)> = vec![
        ("not a jwt".to_owned(), "well-formed"),
        ("a.b.c".to_owned(), "well-formed"),
        ("x".repeat(9000), "well-formed"),
        (
            unsigned(&json!({"typ":"dpop+jwt","alg":"none","jwk":jwk}), &good),
            "alg",
        ),
        (
            unsigned(&json!({"typ":"dpop+jwt","alg":"HS256","jwk":jwk}), &good),
            "alg",
        ),
        (
            unsigned(&json!({"typ":"JWT","alg":"ES256","jwk":jwk}), &good),
            "typ",
        ),
        (
            unsigned(&json!({"typ":"dpop+jwt","alg":"ES256"}), &good),
            "jwk",
        ),
        (
            unsigned(
                &json!({"typ":"dpop+jwt","alg":"ES256","jwk":private}),
                &good,
            ),
            "private",
        ),
        (
            unsigned(&json!({"typ":"dpop+jwt","alg":"RS256","jwk":huge}), &good),
            "jwk",
        ),
        (
            unsigned(&json!({"typ":"dpop+jwt","alg":"EdDSA","jwk":jwk}), &good),
            "jwk",
        ),
        (
            unsigned(&json!({"typ":"dpop+jwt","alg":"ES256","jwk":jwk}), &good),
            "signature",
        ),
        (key.proof("GET", TOKEN_URL, START), "htm"),
        (
            key.proof("POST", "https://elsewhere.example/api/oauth/token", START),
            "htu",
        ),
        (key.proof("POST", TOKEN_URL, START - 120), "iat"),
        (key.proof("POST", TOKEN_URL, START + 120), "iat"),
        (
            key.sign(&json!({"htm":"POST","htu":TOKEN_URL,"iat":START})),
            "jti",
        ),
        (
            key.sign(&json!({"jti":"j","htm":"POST","htu":TOKEN_URL})),
            "iat",
        ),
        (
            key.sign(&json!({"jti":"j".repeat(257),"htm":"POST","htu":TOKEN_URL,"iat":START})),
            "jti",
        ),
    ];
    for (proof, reason) in &cases {
        let response = client_credentials(&f, &[proof]).await;
        refused_at_token_endpoint(reason)(response);
    }
    // Two headers, and a replay.
    let proof = key.proof("POST", TOKEN_URL, START);
    refused_at_token_endpoint("more than one")(client_credentials(&f, &[&proof, &proof]).await);
    assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    refused_at_token_endpoint("used before")(client_credentials(&f, &[&proof]).await);
}

#[tokio::test]
async fn a_public_clients_refresh_token_is_bound_and_a_confidential_ones_is_not() {
    let f = dpop_fixture(Dpop::new());
    let key = ProofKey::es256(7);
    let code = f
        .code(
            "spa",
            &format!("&code_challenge={CHALLENGE}&code_challenge_method=S256"),
        )
        .await;
    let body = format!(
        "grant_type=authorization_code&client_id=spa&code={code}\
         &redirect_uri={REDIRECT_ENCODED}&code_verifier={VERIFIER}"
    );
    let proof = key.proof("POST", TOKEN_URL, START);
    let tokens = assert_bound_tokens(&f.server.token(&with_proof(None, &body, &[&proof])).await);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let refresh_body = format!("grant_type=refresh_token&client_id=spa&refresh_token={refresh}");
    // No proof, or another key's: refused, and the token is not spent.
    let response = f.server.token(&with_proof(None, &refresh_body, &[])).await;
    assert_error(&response, 400, "invalid_dpop_proof");
    let other = ProofKey::eddsa(3).proof("POST", TOKEN_URL, START);
    let response = f
        .server
        .token(&with_proof(None, &refresh_body, &[&other]))
        .await;
    assert_error(&response, 400, "invalid_grant");
    let proof = key.proof("POST", TOKEN_URL, START + 1);
    let refreshed = assert_bound_tokens(
        &f.server
            .token(&with_proof(None, &refresh_body, &[&proof]))
            .await,
    );
    assert_ne!(refreshed["refresh_token"], tokens["refresh_token"]);

    // A confidential client's refresh token stays usable without the key (RFC 9449 §5).
    let code = f.code(&f.fast_id.clone(), "").await;
    let body = format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
    let proof = key.proof("POST", TOKEN_URL, START + 2);
    let basic = f.fast_basic();
    let tokens = assert_bound_tokens(
        &f.server
            .token(&with_proof(Some(&basic), &body, &[&proof]))
            .await,
    );
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let response = f.refresh(refresh).await;
    assert_tokens(&response);
}

#[tokio::test]
async fn a_client_or_a_server_may_require_proofs() {
    let f = dpop_fixture(Dpop::new());
    let creds = ClientCredentials::generate().unwrap();
    f.register(
        Client::confidential(creds.client_id.as_str(), creds.verifier)
            .grant_types([GrantType::ClientCredentials])
            .scopes("profile")
            .require_dpop(true)
            .build()
            .unwrap(),
    );
    let basic = basic(creds.client_id.as_str(), creds.secret.expose_secret());
    let body = "grant_type=client_credentials";
    let response = f.server.token(&with_proof(Some(&basic), body, &[])).await;
    refused_at_token_endpoint("must send a DPoP proof")(response);
    let proof = ProofKey::es256(7).proof("POST", TOKEN_URL, START);
    assert_bound_tokens(
        &f.server
            .token(&with_proof(Some(&basic), body, &[&proof]))
            .await,
    );

    let strict = dpop_fixture(Dpop::new().required(true));
    refused_at_token_endpoint("must send a DPoP proof")(client_credentials(&strict, &[]).await);
}

#[tokio::test]
async fn with_nonces_a_proof_must_carry_the_current_one() {
    let f = dpop_fixture(Dpop::new().nonces(true));
    let key = ProofKey::es256(7);
    let response = client_credentials(&f, &[&key.proof("POST", TOKEN_URL, START)]).await;
    assert_error(&response, 400, "use_dpop_nonce");
    let nonce = response.headers()["dpop-nonce"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(nonce.len() >= 22, "{nonce}");
    let mut with_nonce = claims("POST", TOKEN_URL, START);
    with_nonce["nonce"] = json!(nonce);
    let response = client_credentials(&f, &[&key.sign(&with_nonce)]).await;
    let body = assert_bound_tokens(&response);
    assert_eq!(response.headers()["dpop-nonce"], nonce.as_str());
    let mut stale = claims("POST", TOKEN_URL, START);
    stale["nonce"] = json!("not-the-servers-nonce");
    assert_error(
        &client_credentials(&f, &[&key.sign(&stale)]).await,
        400,
        "use_dpop_nonce",
    );

    // At the resource: 401 with the nonce and the challenge.
    let token = body["access_token"].as_str().unwrap();
    let proof = key.proof_for_token("GET", ME_URL, START, token);
    let request = resource_request(&format!("DPoP {token}"), Some(&proof));
    let response = f.server.bearer(&request, None).await.unwrap_err();
    assert_eq!(response.reason(), BearerRefusalReason::UseDpopNonce);
    let response = response.into_response();
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["dpop-nonce"], nonce.as_str());
    assert!(dpop_challenge(&response).contains("error=\"use_dpop_nonce\""));
    let mut claims = claims("GET", ME_URL, START);
    claims["ath"] = json!(dpop_proofs::ath(token));
    claims["nonce"] = json!(nonce);
    let request = resource_request(&format!("DPoP {token}"), Some(&key.sign(&claims)));
    assert!(f.server.bearer(&request, None).await.is_ok());

    // The nonce changes with its period; the previous one stays good one period more.
    f.clock.advance(Duration::from_secs(300));
    let mut previous = dpop_proofs::claims("POST", TOKEN_URL, START + 300);
    previous["nonce"] = json!(nonce);
    let response = client_credentials(&f, &[&key.sign(&previous)]).await;
    assert_bound_tokens(&response);
    assert_ne!(response.headers()["dpop-nonce"], nonce.as_str());
}

#[tokio::test]
async fn the_proof_window_is_a_setting() {
    let f = dpop_fixture(Dpop::new().proof_window(Duration::from_secs(5)));
    let key = ProofKey::es256(7);
    let old = key.proof("POST", TOKEN_URL, START - 10);
    refused_at_token_endpoint("iat")(client_credentials(&f, &[&old]).await);
    let recent = key.proof("POST", TOKEN_URL, START - 4);
    assert_bound_tokens(&client_credentials(&f, &[&recent]).await);
}

#[cfg(feature = "jwt")]
#[tokio::test]
async fn a_jwt_access_token_carries_cnf_jkt_and_is_checked_like_an_opaque_one() {
    use grantor::jwt::*;
    use std::sync::Arc;
    let key_set = StaticKeys::new(SigningKey::generate(SigningAlgorithm::EdDSA).unwrap(), []);
    let f = fixture_with(|b| {
        b.dpop(Dpop::new())
            .jwt_access_tokens(JwtAccessTokens::new(Arc::new(key_set)))
    });
    let key = ProofKey::es256(7);
    let proof = key.proof("POST", TOKEN_URL, START);
    let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    let token = body["access_token"].as_str().unwrap();
    let jwks = f.server.jwks().await.into_body();
    let verified = JwtVerifier::from_jwks(ISSUER, ISSUER, &jwks)
        .unwrap()
        .verify(token, UnixTime::from_secs(START))
        .unwrap();
    assert_eq!(
        verified
            .binding
            .and_then(|b| b.jkt())
            .map(|k| k.to_string()),
        Some(key.jkt())
    );
    let bearer = resource_request(&format!("Bearer {token}"), None);
    assert_eq!(
        f.server.bearer(&bearer, None).await.unwrap_err().status(),
        401
    );
    let proof = key.proof_for_token("GET", ME_URL, START, token);
    let request = resource_request(&format!("DPoP {token}"), Some(&proof));
    assert!(f.server.bearer(&request, None).await.is_ok());
}

#[test]
fn a_verified_proof_names_its_key_and_keeps_its_window() {
    let key = ProofKey::eddsa(5);
    let context = ProofContext {
        method: "POST",
        uri: TOKEN_URL,
        access_token: None,
        now: UnixTime::from_secs(START),
        window: Duration::from_secs(60),
    };
    let verified = verify_proof(&key.proof("POST", TOKEN_URL, START + 30), &context).unwrap();
    assert_eq!(verified.jkt.to_string(), key.jkt());
    assert_eq!(verified.issued_at, UnixTime::from_secs(START + 30));
    assert_eq!(
        verify_proof(&key.proof("POST", TOKEN_URL, START + 61), &context),
        Err(ProofError::Stale)
    );
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn context() -> ProofContext<'static> {
        ProofContext {
            method: "POST",
            uri: TOKEN_URL,
            access_token: Some("a token"),
            now: UnixTime::from_secs(START),
            window: Duration::from_secs(60),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Arbitrary text, and arbitrary three-part tokens, are refused, never a panic.
        #[test]
        fn arbitrary_proofs_are_refused_without_panicking(
            text in ".{0,300}",
            header in proptest::collection::vec(any::<u8>(), 0..200),
            body in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            prop_assert!(verify_proof(&text, &context()).is_err());
            use base64::Engine as _;
            let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
            let token = format!("{}.{}.{}", engine.encode(&header), engine.encode(&body), "c2ln");
            prop_assert!(verify_proof(&token, &context()).is_err());
        }

        /// Headers of proof shape with arbitrary members are refused, never a panic.
        #[test]
        fn arbitrary_proof_headers_are_refused_without_panicking(
            typ in prop_oneof![Just("dpop+jwt".to_owned()), ".{0,12}"],
            alg in prop_oneof![Just("ES256".to_owned()), Just("EdDSA".to_owned()), Just("RS256".to_owned()), ".{0,8}"],
            kty in prop_oneof![Just("EC".to_owned()), Just("OKP".to_owned()), Just("RSA".to_owned()), Just("oct".to_owned())],
            x in "[A-Za-z0-9_-]{0,90}",
            n in "[A-Za-z0-9_-]{0,700}",
        ) {
            let jwk = json!({"kty": kty, "crv": "P-256", "x": x, "y": x, "n": n, "e": "AQAB"});
            let header = json!({"typ": typ, "alg": alg, "jwk": jwk});
            let proof = unsigned(&header, &claims("POST", TOKEN_URL, START));
            prop_assert!(verify_proof(&proof, &context()).is_err());
        }
    }
}

#[tokio::test]
async fn a_self_registered_client_may_ask_to_be_dpop_bound() {
    let f = fixture_with(|b| {
        b.dpop(Dpop::new()).registration(
            RegistrationPolicy::new()
                .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken]),
        )
    });
    let metadata = json!({
        "redirect_uris": ["https://app.example/cb"],
        "token_endpoint_auth_method": "none",
        "dpop_bound_access_tokens": true,
    });
    let request = Request::post("/api/oauth/register")
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .unwrap();
    let response = f.server.register(&request).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let client = json(&response);
    assert_eq!(client["dpop_bound_access_tokens"], true, "{client}");
    let id = client["client_id"].as_str().unwrap();
    let registered = grantor::store::ClientStore::find_client(&f.store, id).await;
    assert!(registered.unwrap().unwrap().requires_dpop());
}

#[test]
fn a_proof_context_never_shows_the_access_token() {
    let context = ProofContext {
        method: "GET",
        uri: ME_URL,
        access_token: Some("a-secret-access-token"),
        now: UnixTime::from_secs(START),
        window: Duration::from_secs(60),
    };
    let shown = format!("{context:?}");
    assert!(!shown.contains("a-secret-access-token"), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
}

/// Allows every token exchange grantor found valid.
struct AllowExchanges;

#[async_trait::async_trait]
impl ExchangePolicy for AllowExchanges {
    async fn decide(&self, _request: &ExchangeRequest<'_>) -> Result<(), ExchangeRefusal> {
        Ok(())
    }
}

#[tokio::test]
async fn a_bound_subject_token_is_exchanged_only_with_a_proof_of_its_key() {
    let f = fixture_with(|b| {
        b.dpop(Dpop::new())
            .token_exchange(std::sync::Arc::new(AllowExchanges))
    });
    let creds = ClientCredentials::generate().unwrap();
    f.register(
        Client::confidential(creds.client_id.as_str(), creds.verifier)
            .grant_types([GrantType::TokenExchange])
            .scopes("profile email")
            .build()
            .unwrap(),
    );
    let exchanger = basic(creds.client_id.as_str(), creds.secret.expose_secret());
    let key = ProofKey::es256(11);
    let bound =
        assert_bound_tokens(&client_credentials(&f, &[&key.proof("POST", TOKEN_URL, START)]).await);
    let subject = bound["access_token"].as_str().unwrap();
    let body = format!(
        "grant_type=urn:ietf:params:oauth:grant-type:token-exchange&subject_token={subject}\
         &subject_token_type=urn:ietf:params:oauth:token-type:access_token"
    );
    let without = f
        .server
        .token(&with_proof(Some(&exchanger), &body, &[]))
        .await;
    assert_error(&without, 400, "invalid_request");
    let other = ProofKey::eddsa(12).proof("POST", TOKEN_URL, START);
    let wrong = f
        .server
        .token(&with_proof(Some(&exchanger), &body, &[&other]))
        .await;
    assert_error(&wrong, 400, "invalid_request");
    let proof = key.proof("POST", TOKEN_URL, START);
    let exchanged = f
        .server
        .token(&with_proof(Some(&exchanger), &body, &[&proof]))
        .await;
    let exchanged = assert_bound_tokens(&exchanged);
    let token = exchanged["access_token"].as_str().unwrap();
    let seen = json(
        &f.introspect(Some(&exchanger), &format!("token={token}"))
            .await,
    );
    assert_eq!(
        seen["cnf"]["jkt"],
        key.jkt(),
        "bound to the same key: {seen}"
    );
}

#[tokio::test]
async fn each_key_spends_at_most_its_budget_of_proofs_per_window() {
    use grantor::dpop::PROOFS_PER_KEY_PER_SECOND;
    // A two-second window: the key may spend 200 proofs in it.
    let window = Duration::from_secs(2);
    let f = dpop_fixture(Dpop::new().proof_window(window));
    let key = ProofKey::eddsa(7);
    let proof = key.proof("POST", TOKEN_URL, START);
    let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    let token = body["access_token"].as_str().unwrap().to_owned();
    let scheme = format!("DPoP {token}");
    let call = |key: &ProofKey, token: &str, scheme: &str| {
        let proof = key.proof_for_token("GET", ME_URL, START, token);
        resource_request(scheme, Some(&proof))
    };
    // The token request's proof was the first of the window's budget.
    let budget = PROOFS_PER_KEY_PER_SECOND * 2;
    for _ in 1..budget {
        assert!(
            f.server
                .bearer(&call(&key, &token, &scheme), None)
                .await
                .is_ok()
        );
    }
    let refused = f
        .server
        .bearer(&call(&key, &token, &scheme), None)
        .await
        .unwrap_err()
        .into_response();
    assert_eq!(refused.status(), 429, "{}", refused.body());
    assert!(
        refused.body().contains("too many proofs"),
        "{}",
        refused.body()
    );
    // Another holder's key has its own budget.
    let other = ProofKey::eddsa(8);
    let proof = other.proof("POST", TOKEN_URL, START);
    let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    let token = body["access_token"].as_str().unwrap().to_owned();
    let other_scheme = format!("DPoP {token}");
    let request = call(&other, &token, &other_scheme);
    assert!(f.server.bearer(&request, None).await.is_ok());
}

#[tokio::test]
async fn one_accounts_keys_together_spend_at_most_two_keys_worth_of_proofs() {
    use grantor::dpop::{PROOFS_PER_ACCOUNT_PER_KEY_LIMIT, PROOFS_PER_KEY_PER_SECOND};
    // A two-second window: each key may spend 200 proofs in it, one account's keys 400.
    let window = Duration::from_secs(2);
    let f = dpop_fixture(Dpop::new().proof_window(window));
    let per_key = PROOFS_PER_KEY_PER_SECOND * 2;
    let per_account = per_key * PROOFS_PER_ACCOUNT_PER_KEY_LIMIT;
    // Keys are free to make: the same account's tokens, each bound to a fresh key.
    let mut spent = 0;
    let mut refused = None;
    for seed in 20..30 {
        let key = ProofKey::eddsa(seed);
        let proof = key.proof("POST", TOKEN_URL, START);
        let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
        let token = body["access_token"].as_str().unwrap().to_owned();
        let scheme = format!("DPoP {token}");
        // Each key spends all but one of its own budget (the token request had the first).
        for _ in 1..per_key {
            let proof = key.proof_for_token("GET", ME_URL, START, &token);
            match f
                .server
                .bearer(&resource_request(&scheme, Some(&proof)), None)
                .await
            {
                Ok(_) => spent += 1,
                Err(refusal) => {
                    refused = Some(refusal.into_response());
                    break;
                }
            }
        }
        if refused.is_some() {
            break;
        }
    }
    let refused = refused.expect("the account's budget refused a key");
    assert_eq!(spent, per_account, "every key of the account together");
    assert_eq!(refused.status(), 429, "{}", refused.body());
    assert!(
        refused
            .body()
            .contains("this account's DPoP keys signed too many proofs"),
        "{}",
        refused.body()
    );
}

#[tokio::test]
async fn the_per_key_budget_is_a_setting() {
    // One proof a second of a two-second window: the token request's proof and one more.
    let dpop = Dpop::new()
        .proof_window(Duration::from_secs(2))
        .proofs_per_key_per_second(1);
    let f = dpop_fixture(dpop);
    let key = ProofKey::es256(9);
    let proof = key.proof("POST", TOKEN_URL, START);
    let body = assert_bound_tokens(&client_credentials(&f, &[&proof]).await);
    let token = body["access_token"].as_str().unwrap().to_owned();
    let scheme = format!("DPoP {token}");
    let call = || {
        let proof = key.proof_for_token("GET", ME_URL, START, &token);
        resource_request(&scheme, Some(&proof))
    };
    assert!(f.server.bearer(&call(), None).await.is_ok());
    let refused = f.server.bearer(&call(), None).await.unwrap_err();
    assert_eq!(refused.into_response().status(), 429);
}
