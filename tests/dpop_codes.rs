//! DPoP-bound authorization codes (RFC 9449 §10, §10.1) through the public API: `dpop_jkt` on
//! the authorization request, or a `DPoP` proof on the pushed request, binds the code to that
//! key, and only a token request with a proof of the same key redeems it.

mod common;
mod dpop_proofs;

use common::*;
use dpop_proofs::ProofKey;
use grantor::dpop::Dpop;
use grantor::settings::PushedRequests;
use grantor::{Authorize, Decision};
use http::{Request, Response};
use serde_json::Value;

const TOKEN_URL: &str = "http://127.0.0.1:8080/api/oauth/token";
const PAR_URL: &str = "http://127.0.0.1:8080/api/oauth/par";
const PAR: &str = "/api/oauth/par";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

fn dpop_fixture() -> Fixture {
    fixture_with(|b| b.dpop(Dpop::new()).pushed_requests(PushedRequests::new()))
}

fn pkce() -> String {
    format!("&code_challenge={CHALLENGE}&code_challenge_method=S256")
}

/// The code exchange for the fast client, with `proof` as its `DPoP` header when given.
async fn exchange(f: &Fixture, code: &str, proof: Option<&str>) -> Response<String> {
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &code_verifier={VERIFIER}"
    );
    let mut request = token_request(Some(&f.fast_basic()), &body);
    if let Some(proof) = proof {
        request.headers_mut().insert("dpop", proof.parse().unwrap());
    }
    f.server.token(&request).await
}

/// A 200 answer whose access token is bound to `key` (`cnf.jkt` in introspection).
async fn bound_to(f: &Fixture, response: &Response<String>, key: &ProofKey) -> Value {
    assert_eq!(response.status(), 200, "{}", response.body());
    let tokens = json(response);
    assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    let introspected = json(
        &f.introspect(Some(&f.fast_basic()), &format!("token={access}"))
            .await,
    );
    assert_eq!(introspected["cnf"]["jkt"], key.jkt(), "{introspected}");
    tokens
}

/// A code approved by Alice for the fast client, with `extra` query parameters.
async fn approved_code(f: &Fixture, extra: &str) -> String {
    f.code(&f.fast_id, &format!("{}{extra}", pkce())).await
}

/// Pushes the fast client's request `body` with `proof` as its `DPoP` header when given.
async fn push(f: &Fixture, body: &str, proof: Option<&str>) -> Response<String> {
    let mut request: Request<String> = post(PAR, Some(&f.fast_basic()), body);
    if let Some(proof) = proof {
        request.headers_mut().insert("dpop", proof.parse().unwrap());
    }
    f.server.par(&request).await
}

/// The code of the pushed request `request_uri`, approved by Alice.
async fn code_of_pushed(f: &Fixture, request_uri: &str) -> String {
    let query = format!(
        "client_id={}&request_uri={}",
        f.fast_id,
        url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
    );
    let Authorize::SignIn(pending) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("the pushed request is found");
    };
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    redirect(&response).query["code"].clone()
}

fn pushed_body() -> String {
    format!(
        "response_type=code&redirect_uri={REDIRECT_ENCODED}&scope=email{}",
        pkce()
    )
}

#[tokio::test]
async fn dpop_jkt_binds_the_code_to_that_key() {
    let f = dpop_fixture();
    let key = ProofKey::es256(21);
    let other = ProofKey::eddsa(22);
    // Another key's proof, or none: refused, and the code is spent.
    for proof in [Some(other.proof("POST", TOKEN_URL, START)), None] {
        let code = approved_code(&f, &format!("&dpop_jkt={}", key.jkt())).await;
        let refused = exchange(&f, &code, proof.as_deref()).await;
        assert_error(&refused, 400, "invalid_grant");
        assert!(refused.body().contains("RFC 9449"), "{}", refused.body());
        let proof = key.proof("POST", TOKEN_URL, START);
        assert_error(
            &exchange(&f, &code, Some(&proof)).await,
            400,
            "invalid_grant",
        );
    }
    // The key's own proof redeems it, and the tokens are bound to it.
    let code = approved_code(&f, &format!("&dpop_jkt={}", key.jkt())).await;
    let proof = key.proof("POST", TOKEN_URL, START);
    bound_to(&f, &exchange(&f, &code, Some(&proof)).await, &key).await;
    // An unbound code is redeemed with any proof, or none.
    let code = approved_code(&f, "").await;
    let proof = other.proof("POST", TOKEN_URL, START);
    bound_to(&f, &exchange(&f, &code, Some(&proof)).await, &other).await;
}

#[tokio::test]
async fn a_malformed_dpop_jkt_is_invalid_request_at_the_redirect_uri() {
    let f = dpop_fixture();
    let too_long = format!("{}A", ProofKey::es256(21).jkt());
    for jkt in [
        "short",
        "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
        &too_long,
    ] {
        let query = format!(
            "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}&state=s{}&dpop_jkt={jkt}",
            f.fast_id,
            pkce()
        );
        let Authorize::Redirect(response) = f.server.authorize(&authorize_request(&query)).await
        else {
            panic!("an error redirect for dpop_jkt={jkt:?}");
        };
        let answer = redirect(&response);
        assert_eq!(answer.query["error"], "invalid_request", "{jkt:?}");
        assert!(answer.query["error_description"].contains("dpop_jkt"));
        assert_eq!(answer.query["state"], "s");
    }
}

#[tokio::test]
async fn without_dpop_the_parameter_is_ignored() {
    let f = fixture_with(|b| b);
    let jkt = ProofKey::es256(21).jkt();
    let code = f
        .code(&f.fast_id, &format!("{}&dpop_jkt={jkt}", pkce()))
        .await;
    let tokens = assert_tokens(&exchange(&f, &code, None).await);
    assert_eq!(tokens["token_type"], "bearer");
}

#[tokio::test]
async fn a_proof_on_the_pushed_request_binds_the_code_to_its_key() {
    let f = dpop_fixture();
    let key = ProofKey::es256(23);
    let other = ProofKey::es256(24);
    let pushed = push(&f, &pushed_body(), Some(&key.proof("POST", PAR_URL, START))).await;
    assert_eq!(pushed.status(), 201, "{}", pushed.body());
    let request_uri = json(&pushed)["request_uri"].as_str().unwrap().to_owned();
    let code = code_of_pushed(&f, &request_uri).await;
    let stolen = exchange(&f, &code, Some(&other.proof("POST", TOKEN_URL, START))).await;
    assert_error(&stolen, 400, "invalid_grant");

    let pushed = push(&f, &pushed_body(), Some(&key.proof("POST", PAR_URL, START))).await;
    let request_uri = json(&pushed)["request_uri"].as_str().unwrap().to_owned();
    let code = code_of_pushed(&f, &request_uri).await;
    let proof = key.proof("POST", TOKEN_URL, START);
    bound_to(&f, &exchange(&f, &code, Some(&proof)).await, &key).await;
}

#[tokio::test]
async fn a_pushed_request_with_dpop_jkt_and_a_proof_needs_them_to_agree() {
    let f = dpop_fixture();
    let key = ProofKey::es256(25);
    let other = ProofKey::eddsa(26);
    let body = format!("{}&dpop_jkt={}", pushed_body(), other.jkt());
    let refused = push(&f, &body, Some(&key.proof("POST", PAR_URL, START))).await;
    assert_error(&refused, 400, "invalid_dpop_proof");
    assert!(refused.body().contains("dpop_jkt"), "{}", refused.body());
    // Agreeing, it is taken; dpop_jkt alone binds too.
    let body = format!("{}&dpop_jkt={}", pushed_body(), key.jkt());
    let pushed = push(&f, &body, Some(&key.proof("POST", PAR_URL, START))).await;
    assert_eq!(pushed.status(), 201, "{}", pushed.body());
    let body = format!("{}&dpop_jkt={}", pushed_body(), other.jkt());
    let pushed = push(&f, &body, None).await;
    let request_uri = json(&pushed)["request_uri"].as_str().unwrap().to_owned();
    let code = code_of_pushed(&f, &request_uri).await;
    let wrong = exchange(&f, &code, Some(&key.proof("POST", TOKEN_URL, START))).await;
    assert_error(&wrong, 400, "invalid_grant");
}

#[tokio::test]
async fn a_pushed_requests_proof_is_checked_and_spent() {
    let f = dpop_fixture();
    let key = ProofKey::es256(27);
    // A proof for the token endpoint is not one for the PAR endpoint.
    let misdirected = push(
        &f,
        &pushed_body(),
        Some(&key.proof("POST", TOKEN_URL, START)),
    )
    .await;
    assert_error(&misdirected, 400, "invalid_dpop_proof");
    let proof = key.proof("POST", PAR_URL, START);
    assert_eq!(push(&f, &pushed_body(), Some(&proof)).await.status(), 201);
    let replayed = push(&f, &pushed_body(), Some(&proof)).await;
    assert_error(&replayed, 400, "invalid_dpop_proof");
    assert!(
        replayed.body().contains("used before"),
        "{}",
        replayed.body()
    );
}
