//! The tower layer guards a service in one line.
#![cfg(feature = "tower")]

mod common;

use std::convert::Infallible;
use std::time::Duration;

use common::*;
use grantor::layer::RequireBearer;
use grantor::store::AccessGrant;
use grantor::{Scope, StepUp};
use http::{Request, Response};
use tower::{Layer, ServiceExt, service_fn};

/// A protected resource answering with the user's email and the token's scope.
async fn me(request: Request<String>) -> Result<Response<String>, Infallible> {
    let grant = request
        .extensions()
        .get::<AccessGrant>()
        .expect("the layer hands over the grant");
    let email = grant.authorization.user.as_ref().map(|u| u.username());
    let body = serde_json::json!({ "email": email, "scope": grant.authorization.scope.as_str() });
    Ok(Response::new(body.to_string()))
}

fn get(authorization: Option<&str>) -> Request<String> {
    let mut builder = Request::get("/api/me");
    if let Some(authorization) = authorization {
        builder = builder.header("authorization", authorization);
    }
    builder.body(String::new()).unwrap()
}

#[tokio::test]
async fn the_layer_lets_valid_tokens_through_with_their_grant() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let service = RequireBearer::new(f.server.clone()).layer(service_fn(me));
    let bearer = format!("Bearer {}", tokens["access_token"].as_str().unwrap());
    let response = service.oneshot(get(Some(&bearer))).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = json(&response);
    assert_eq!(body["email"], ALICE);
    assert_eq!(body["scope"], "profile");
}

#[tokio::test]
async fn the_layer_answers_refusals_without_calling_the_service() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let guard = RequireBearer::new(f.server.clone());
    let response = guard
        .clone()
        .layer(service_fn(me))
        .oneshot(get(None))
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"http://127.0.0.1:8080\", \
         resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource\""
    );
    let needs_email = guard.scope(Scope::parse("email").unwrap());
    let bearer = format!("Bearer {}", tokens["access_token"].as_str().unwrap());
    let response = needs_email
        .layer(service_fn(me))
        .oneshot(get(Some(&bearer)))
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn the_layer_demands_what_a_step_up_says_of_the_sign_in() {
    let f = fixture();
    // Approved now by the host's own sign-in: recent, of no named class.
    let tokens = f.fast_tokens().await;
    let bearer = format!("Bearer {}", tokens["access_token"].as_str().unwrap());
    let recent = StepUp::new().max_age(Duration::from_secs(300));
    let guard = RequireBearer::new(f.server.clone()).scope(Scope::parse("profile").unwrap());
    let response = guard
        .clone()
        .step_up(recent.clone())
        .layer(service_fn(me))
        .oneshot(get(Some(&bearer)))
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{}", response.body());
    let strong = recent.clone().acr_values(["urn:grantor:acr:mfa"]).unwrap();
    let response = guard
        .clone()
        .step_up(strong)
        .layer(service_fn(me))
        .oneshot(get(Some(&bearer)))
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"http://127.0.0.1:8080\", error=\"insufficient_user_authentication\", \
         error_description=\"a different authentication level is required\", \
         acr_values=\"urn:grantor:acr:mfa\", max_age=300, \
         resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource\""
    );
    assert_eq!(json(&response)["error"], "insufficient_user_authentication");
    f.clock.advance(Duration::from_secs(301));
    let response = guard
        .step_up(recent)
        .layer(service_fn(me))
        .oneshot(get(Some(&bearer)))
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("a more recent authentication is required"),
        "{challenge}"
    );
    assert!(!challenge.contains("acr_values"), "{challenge}");
}

#[tokio::test]
async fn the_layer_honours_a_certificate_bound_token_only_with_its_certificate() {
    let f = fixture_with(|b| b.certificate_bound_tokens(true));
    let certificate =
        |der: &[u8]| grantor::mtls::ClientCertificate::from_der_chain([der.to_vec()]).unwrap();
    let presented = certificate(b"client-a");
    let mut request = token_request(Some(&f.fast_basic()), "grant_type=client_credentials");
    request.extensions_mut().insert(presented.clone());
    let tokens = json(&f.server.token(&request).await);
    let bearer = format!("Bearer {}", tokens["access_token"].as_str().unwrap());
    let service = RequireBearer::new(f.server.clone()).layer(service_fn(me));
    for (over, status) in [
        (Some(presented), 200),
        (Some(certificate(b"client-b")), 401),
        (None, 401),
    ] {
        let mut request = get(Some(&bearer));
        if let Some(over) = over.clone() {
            request.extensions_mut().insert(over);
        }
        let response = service.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), status, "{over:?}");
        if status == 401 {
            let challenge = response.headers()["www-authenticate"].to_str().unwrap();
            assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
        }
    }
}
