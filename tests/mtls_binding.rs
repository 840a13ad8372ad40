//! Certificate-bound access tokens (RFC 8705 §3): with the builder's switch on, a token request
//! that came with a client certificate gets tokens bound to it (`cnf.x5t#S256` in introspection
//! and JWT access tokens), honoured only on a request with the same certificate; a DPoP proof
//! wins; a public client's refresh token needs the same certificate (RFC 8705 §4); userinfo
//! demands it too.

mod common;
mod dpop_proofs;

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use dpop_proofs::ProofKey;
use grantor::client::{Approval, Client, GrantType};
use grantor::dpop::Dpop;
use grantor::jwt::{JwtAccessTokens, SigningAlgorithm, SigningKey, StaticKeys};
use grantor::mtls::ClientCertificate;
use grantor::{AuthorizationServerBuilder, BearerRefusalReason};
use http::{Request, Response};
use serde_json::Value;

const CC: &str = "grant_type=client_credentials";
const TOKEN_URL: &str = "http://127.0.0.1:8080/api/oauth/token";

/// A client's certificate: binding hashes the DER bytes and parses nothing, so any will do.
fn certificate(der: &[u8]) -> ClientCertificate {
    ClientCertificate::from_der_chain([der.to_vec()]).unwrap()
}

/// A server that binds tokens to certificates, with a public client that gets refresh tokens.
fn mtls_fixture(
    configure: impl FnOnce(AuthorizationServerBuilder) -> AuthorizationServerBuilder,
) -> Fixture {
    let f = fixture_with(|b| configure(b.certificate_bound_tokens(true)));
    f.register(
        Client::public("spa")
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
            .scopes("profile")
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
    );
    f
}

/// `request` as it arrives over a connection with `presented`, if any.
fn over<B>(mut request: Request<B>, presented: Option<&ClientCertificate>) -> Request<B> {
    if let Some(presented) = presented {
        request.extensions_mut().insert(presented.clone());
    }
    request
}

/// A token request (`body`, authenticated by `authorization` when given) over `presented`.
async fn token(
    f: &Fixture,
    authorization: Option<&str>,
    body: &str,
    presented: Option<&ClientCertificate>,
) -> Response<String> {
    let request = over(token_request(authorization, body), presented);
    f.server.token(&request).await
}

/// What introspection says of `token`.
async fn introspected(f: &Fixture, token: &str) -> Value {
    let response = f
        .introspect(Some(&f.fast_basic()), &format!("token={token}"))
        .await;
    assert_eq!(response.status(), 200, "{}", response.body());
    json(&response)
}

/// Bearer validation of `GET /api/me` with `token`, over `presented`.
async fn bearer(
    f: &Fixture,
    token: &str,
    presented: Option<&ClientCertificate>,
) -> Result<grantor::store::AccessGrant, grantor::BearerRefusal> {
    let request = Request::get("/api/me")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap();
    f.server.bearer(&over(request, presented), None).await
}

/// Asserts a refusal of a certificate-bound token: 401 `invalid_token` saying why.
fn assert_refused_for_the_certificate(refusal: &grantor::BearerRefusal) {
    assert_eq!(refusal.status(), 401);
    assert_eq!(refusal.reason(), BearerRefusalReason::InvalidToken);
    let challenge = refusal.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(challenge.contains("client certificate"), "{challenge}");
}

#[tokio::test]
async fn client_credentials_over_a_certificate_get_a_token_bound_to_it() {
    let f = mtls_fixture(|b| b);
    let presented = certificate(b"client-a");
    let response = token(&f, Some(&f.fast_basic()), CC, Some(&presented)).await;
    let body = assert_tokens(&response);
    assert_eq!(body["token_type"], "bearer", "RFC 8705 keeps the type");
    let access = body["access_token"].as_str().unwrap();
    let introspected = introspected(&f, access).await;
    assert_eq!(introspected["active"], true);
    assert_eq!(introspected["token_type"], "bearer");
    assert_eq!(
        introspected["cnf"]["x5t#S256"],
        presented.thumbprint().to_string(),
        "{introspected}"
    );
    assert!(introspected["cnf"]["jkt"].is_null(), "{introspected}");
}

#[tokio::test]
async fn a_jwt_access_token_carries_cnf_x5t_s256() {
    let keys = StaticKeys::new(SigningKey::generate(SigningAlgorithm::EdDSA).unwrap(), []);
    let f = mtls_fixture(|b| b.jwt_access_tokens(JwtAccessTokens::new(Arc::new(keys))));
    let presented = certificate(b"client-a");
    let response = token(&f, Some(&f.fast_basic()), CC, Some(&presented)).await;
    let access = assert_tokens(&response)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let payload = access.split('.').nth(1).unwrap();
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    assert_eq!(
        claims["cnf"],
        serde_json::json!({ "x5t#S256": presented.thumbprint().to_string() })
    );
    assert!(bearer(&f, &access, Some(&presented)).await.is_ok());
    assert_refused_for_the_certificate(&bearer(&f, &access, None).await.unwrap_err());
}

#[tokio::test]
async fn the_bearer_check_takes_the_same_certificate_and_refuses_none_or_another() {
    let f = mtls_fixture(|b| b);
    let presented = certificate(b"client-a");
    let response = token(&f, Some(&f.fast_basic()), CC, Some(&presented)).await;
    let access = assert_tokens(&response)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let grant = bearer(&f, &access, Some(&presented)).await.unwrap();
    assert_eq!(grant.authorization.client_id.as_str(), f.fast_id);
    assert_refused_for_the_certificate(&bearer(&f, &access, None).await.unwrap_err());
    let other = certificate(b"client-b");
    let refusal = bearer(&f, &access, Some(&other)).await.unwrap_err();
    assert_refused_for_the_certificate(&refusal);
    let body: Value = serde_json::from_str(refusal.body()).unwrap();
    assert_eq!(body["error"], "invalid_token");
}

#[tokio::test]
async fn a_dpop_proof_on_the_same_request_wins() {
    let f = mtls_fixture(|b| b.dpop(Dpop::new()));
    let presented = certificate(b"client-a");
    let key = ProofKey::es256(7);
    let mut request = over(token_request(Some(&f.fast_basic()), CC), Some(&presented));
    let proof = key.proof("POST", TOKEN_URL, START);
    request.headers_mut().insert("dpop", proof.parse().unwrap());
    let response = f.server.token(&request).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let body = json(&response);
    assert_eq!(body["token_type"], "DPoP");
    let introspected = introspected(&f, body["access_token"].as_str().unwrap()).await;
    assert_eq!(introspected["cnf"]["jkt"], key.jkt(), "{introspected}");
    assert!(introspected["cnf"]["x5t#S256"].is_null(), "{introspected}");
}

/// Tokens of the public client `spa` from a code flow over `presented`.
async fn public_tokens(f: &Fixture, presented: &ClientCertificate) -> Value {
    let pkce = format!("&code_challenge={CHALLENGE}&code_challenge_method=S256");
    let code = f.code("spa", &pkce).await;
    let body = format!(
        "grant_type=authorization_code&client_id=spa&code={code}\
         &redirect_uri={REDIRECT_ENCODED}&code_verifier={VERIFIER}"
    );
    assert_tokens(&token(f, None, &body, Some(presented)).await)
}

#[tokio::test]
async fn a_public_clients_refresh_needs_the_same_certificate() {
    let f = mtls_fixture(|b| b);
    let presented = certificate(b"spa-device");
    let tokens = public_tokens(&f, &presented).await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let body = format!("grant_type=refresh_token&client_id=spa&refresh_token={refresh}");
    assert_error(&token(&f, None, &body, None).await, 400, "invalid_grant");
    let other = certificate(b"another-device");
    let response = token(&f, None, &body, Some(&other)).await;
    assert_error(&response, 400, "invalid_grant");
    // Neither refusal spent the token.
    let refreshed = assert_tokens(&token(&f, None, &body, Some(&presented)).await);
    let access = refreshed["access_token"].as_str().unwrap();
    assert!(bearer(&f, access, Some(&presented)).await.is_ok());
    assert_refused_for_the_certificate(&bearer(&f, access, Some(&other)).await.unwrap_err());
}

#[tokio::test]
async fn a_confidential_clients_refresh_token_is_unbound_and_its_refresh_binds_the_new_certificate()
{
    let f = mtls_fixture(|b| b);
    let first = certificate(b"client-a");
    let code = f.code(&f.fast_id.clone(), "").await;
    let body = format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
    let tokens = assert_tokens(&token(&f, Some(&f.fast_basic()), &body, Some(&first)).await);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    assert!(introspected(&f, refresh).await["cnf"].is_null());
    let second = certificate(b"client-a-renewed");
    let body = format!("grant_type=refresh_token&refresh_token={refresh}");
    let refreshed = assert_tokens(&token(&f, Some(&f.fast_basic()), &body, Some(&second)).await);
    let access = refreshed["access_token"].as_str().unwrap();
    assert_eq!(
        introspected(&f, access).await["cnf"]["x5t#S256"],
        second.thumbprint().to_string()
    );
}

#[tokio::test]
async fn with_the_switch_off_a_certificate_binds_nothing() {
    let f = fixture();
    assert!(json(&f.server.metadata())["tls_client_certificate_bound_access_tokens"].is_null());
    let presented = certificate(b"client-a");
    let response = token(&f, Some(&f.fast_basic()), CC, Some(&presented)).await;
    let access = assert_tokens(&response)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(introspected(&f, &access).await["cnf"].is_null());
    assert!(bearer(&f, &access, None).await.is_ok());

    let on = mtls_fixture(|b| b);
    let metadata = json(&on.server.metadata());
    assert_eq!(metadata["tls_client_certificate_bound_access_tokens"], true);
}

#[tokio::test]
async fn without_a_certificate_the_switch_binds_nothing() {
    let f = mtls_fixture(|b| b);
    let response = token(&f, Some(&f.fast_basic()), CC, None).await;
    let access = assert_tokens(&response)["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(introspected(&f, &access).await["cnf"].is_null());
    assert!(bearer(&f, &access, None).await.is_ok());
}

#[tokio::test]
async fn userinfo_demands_the_certificate_of_a_bound_token() {
    let f = mtls_fixture(|b| b.openid_connect(grantor::settings::OpenIdConnect::default()));
    f.register(
        Client::public("rp")
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode])
            .scopes("openid profile")
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
    );
    let presented = certificate(b"rp-device");
    let pkce = format!("&scope=openid&code_challenge={CHALLENGE}&code_challenge_method=S256");
    let code = f.code("rp", &pkce).await;
    let body = format!(
        "grant_type=authorization_code&client_id=rp&code={code}\
         &redirect_uri={REDIRECT_ENCODED}&code_verifier={VERIFIER}"
    );
    let tokens = assert_tokens(&token(&f, None, &body, Some(&presented)).await);
    let access = tokens["access_token"].as_str().unwrap();
    let server = &f.server;
    let userinfo = |presented: Option<&ClientCertificate>| {
        let request = Request::get("/api/oauth/userinfo")
            .header("authorization", format!("Bearer {access}"))
            .body(Vec::new())
            .unwrap();
        let request = over(request, presented);
        async move { server.userinfo(&request).await }
    };
    let response = userinfo(Some(&presented)).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(json(&response)["sub"], f.alice.id().as_str());
    for presented in [None, Some(&certificate(b"another-device"))] {
        let response = userinfo(presented).await;
        assert_eq!(response.status(), 401, "{}", response.body());
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    }
}
