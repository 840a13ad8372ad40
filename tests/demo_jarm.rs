//! FAPI 2.0 Message Signing over real HTTP, against `axum_server` and `actix_server`:
//! JWT-secured authorization responses (JARM, `response_mode=jwt` and `form_post.jwt`) and
//! signed introspection answers (RFC 9701), each verified with nothing but the published JWKS.

mod demo;
#[path = "demo/openid.rs"]
mod openid;

use demo::Server;
use demo::http::*;
use openid::{code_request, discovery, redeem, through_pages, verified_jwt};
use serde_json::Value;

each_framework! {
    response_mode_jwt_answers_one_signed_response_that_verifies_with_the_jwks => jwt_mode;
    form_post_jwt_posts_the_signed_response_alone => form_post_jwt;
    introspection_asked_for_a_jwt_answers_one_signed_for_the_caller => signed_introspection;
}

const SIGNED_INTROSPECTION: &str = "application/token-introspection+jwt";

/// The claims of the `response` JWT, the one parameter of `params`, verified for `client_id`.
async fn response_claims(
    base: &str,
    params: &std::collections::HashMap<String, String>,
    client_id: &str,
) -> Value {
    let names: Vec<&String> = params.keys().collect();
    assert_eq!(names, ["response"], "nothing beside the response JWT");
    let required = ["iss", "aud", "exp"];
    verified_jwt(base, base, &params["response"], client_id, &required)
        .await
        .1
}

async fn jwt_mode(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = discovery(base).await;
    let modes = strings(&metadata["response_modes_supported"]);
    for mode in ["jwt", "query.jwt", "fragment.jwt", "form_post.jwt"] {
        assert!(modes.contains(&mode.to_owned()), "{mode}: {metadata}");
    }
    let algs = strings(&metadata["authorization_signing_alg_values_supported"]);
    assert!(algs.contains(&"RS256".to_owned()), "{metadata}");

    let http = browser();
    let mut params = code_request(DEMO.0, "openid profile");
    params.push(("response_mode", "jwt"));
    let first = get(&http, &authorize_url(base, &params)).await;
    let answer = through_pages(&http, base, first, ALICE).await;
    let claims = response_claims(base, &callback_query(&answer), DEMO.0).await;
    assert_eq!(claims["state"], "oidf-state");
    let code = claims["code"].as_str().expect("the code");
    let tokens = redeem(base, DEMO, code).await;
    assert!(tokens["id_token"].is_string(), "{tokens}");

    // An error once the redirect URI is known good is signed the same way.
    let mut refused = code_request(DEMO.0, "admin");
    refused.push(("response_mode", "jwt"));
    let error = get(&http, &authorize_url(base, &refused)).await;
    let claims = response_claims(base, &callback_query(&error), DEMO.0).await;
    assert_eq!(claims["error"], "invalid_scope");
    assert_eq!(claims["state"], "oidf-state");
    server.assert_alive_and_calm();
}

async fn form_post_jwt(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    let mut params = code_request(DEMO.0, "openid");
    params.push(("response_mode", "form_post.jwt"));
    let first = get(&http, &authorize_url(base, &params)).await;
    let page = through_pages(&http, base, first, ALICE).await;
    let claims = response_claims(base, &posted_to_callback(&page), DEMO.0).await;
    assert!(claims["code"].is_string(), "{claims}");
    assert_eq!(claims["iss"], base.as_str());
    server.assert_alive_and_calm();
}

async fn signed_introspection(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = discovery(base).await;
    let algs = strings(&metadata["introspection_signing_alg_values_supported"]);
    assert!(algs.contains(&"RS256".to_owned()), "{metadata}");
    let pairs = [("grant_type", "client_credentials")];
    let tokens = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    let access_token = access_token(&tokens);
    let reply = send(
        browser()
            .post(format!("{base}/api/oauth/introspect"))
            .basic_auth(DEMO.0, Some(DEMO.1))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", SIGNED_INTROSPECTION)
            .body(form(&[("token", access_token)])),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_content_type(&reply, SIGNED_INTROSPECTION);
    let required = ["iss", "aud", "iat"];
    let (header, claims) = verified_jwt(base, base, &reply.body, DEMO.0, &required).await;
    assert_eq!(header["typ"], "token-introspection+jwt");
    let answer = &claims["token_introspection"];
    assert_eq!(answer["active"], true, "{claims}");
    // The same answer as JSON, without the Accept.
    assert_eq!(*answer, introspect(base, access_token).await);
    server.assert_alive_and_calm();
}
