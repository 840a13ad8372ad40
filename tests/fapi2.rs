//! The FAPI 2.0 profiles through the public API: what `build()` refuses, each rule of the
//! Security Profile refused when broken, Message Signing's signed request objects, and a full
//! flow (pushed request object, PKCE, `private_key_jwt`, DPoP) passing.

mod common;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::*;
use grantor::dpop::Dpop;
use grantor::*;
use grantor::{client::*, settings::*};
use http::Response;
use jsonwebtoken::Algorithm;
use keys::ProofKey;
use serde_json::{Value, json};

const CLIENT: &str = "fapi-client";
const PAR: &str = "/api/oauth/par";
const TOKEN_URL: &str = "http://127.0.0.1:8080/api/oauth/token";
const PAR_URL: &str = "http://127.0.0.1:8080/api/oauth/par";

fn client_keys() -> Value {
    let mut es = serde_json::to_value(&ProofKey::es256(1).jwk).unwrap();
    es["kid"] = json!("es");
    let mut rs = serde_json::to_value(&ProofKey::rsa(Algorithm::RS256).jwk).unwrap();
    rs["kid"] = json!("rs");
    json!({ "keys": [es, rs] })
}

fn setup(profile: Profile) -> Fixture {
    setup_with(profile, |b| b)
}

/// [`setup`] with more of the builder's settings.
fn setup_with(
    profile: Profile,
    configure: impl FnOnce(AuthorizationServerBuilder) -> AuthorizationServerBuilder,
) -> Fixture {
    let f = fixture_with(|b| {
        configure(
            b.profile(profile)
                .dpop(Dpop::new())
                .openid_connect(OpenIdConnect::default()),
        )
    });
    let client = Client::private_key_jwt(
        CLIENT,
        ClientKeys::jwks(&client_keys().to_string()).unwrap(),
    )
    .redirect_uri(REDIRECT)
    .grant_types([
        GrantType::AuthorizationCode,
        GrantType::RefreshToken,
        GrantType::ClientCredentials,
    ])
    .scopes("profile email")
    .approval(Approval::NotRequired)
    .build()
    .unwrap();
    f.register(client);
    f
}

fn next_jti(what: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{what}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

fn sign(key: &ProofKey, kid: &str, typ: Option<&str>, claims: &Value) -> String {
    key.sign_with(claims, |header| {
        header.typ = typ.map(str::to_owned);
        header.jwk = None;
        header.kid = Some(kid.to_owned());
    })
}

/// A client assertion of `CLIENT` for `aud`, signed by its ES256 key.
fn assertion_for(aud: &str) -> String {
    let claims = json!({
        "iss": CLIENT, "sub": CLIENT, "aud": aud, "exp": START + 60, "jti": next_jti("assertion"),
    });
    sign(&ProofKey::es256(1), "es", None, &claims)
}

fn assertion_form(assertion: &str) -> String {
    format!(
        "client_id={CLIENT}&client_assertion_type={}&client_assertion={assertion}",
        grantor::client_assertion::ASSERTION_TYPE
    )
}

/// A good request object of `CLIENT`: a code request with S256 PKCE.
fn object_claims() -> Value {
    json!({
        "iss": CLIENT, "aud": ISSUER, "exp": START + 300, "nbf": START, "iat": START,
        "jti": next_jti("object"), "client_id": CLIENT, "response_type": "code",
        "redirect_uri": REDIRECT, "scope": "profile", "state": "fapi-state",
        "code_challenge": CHALLENGE, "code_challenge_method": "S256",
    })
}

fn object(claims: &Value) -> String {
    sign(
        &ProofKey::es256(1),
        "es",
        Some("oauth-authz-req+jwt"),
        claims,
    )
}

/// The DPoP key every request of a flow proves.
fn dpop_key() -> ProofKey {
    ProofKey::es256(7)
}

impl Fixture {
    async fn push(&self, body: &str, dpop: bool) -> Response<String> {
        let form = format!("{}&{body}", assertion_form(&assertion_for(ISSUER)));
        let mut request = post(PAR, None, &form);
        if dpop {
            let proof = dpop_key().proof("POST", PAR_URL, START);
            request.headers_mut().insert("dpop", proof.parse().unwrap());
        }
        self.server.par(&request).await
    }

    async fn fapi_token(&self, body: &str, assertion: &str, dpop: bool) -> Response<String> {
        let form = format!("{}&{body}", assertion_form(assertion));
        let mut request = token_request(None, &form);
        if dpop {
            let proof = dpop_key().proof("POST", TOKEN_URL, START);
            request.headers_mut().insert("dpop", proof.parse().unwrap());
        }
        self.server.token(&request).await
    }

    /// A code for `CLIENT` through a pushed request object, Alice approving.
    async fn fapi_code(&self) -> String {
        let object = format!("request={}", object(&object_claims()));
        self.code_pushed(&object).await
    }

    /// A code for `CLIENT` through a pushed request of `body`, Alice approving; the response
    /// names the issuer (RFC 9207).
    async fn code_pushed(&self, body: &str) -> String {
        let target = self.answer_pushed(body).await;
        assert_eq!(
            target.query["iss"], ISSUER,
            "iss on the authorization response"
        );
        target.query["code"].clone()
    }

    /// The authorization response to a pushed request of `body` of `CLIENT`, Alice approving.
    async fn answer_pushed(&self, body: &str) -> common::Redirect {
        let pushed = self.push(body, true).await;
        assert_eq!(pushed.status(), 201, "{}", pushed.body());
        let request_uri = json(&pushed)["request_uri"].as_str().unwrap().to_owned();
        let query = format!(
            "client_id={CLIENT}&request_uri={}",
            url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
        );
        let Authorize::SignIn(pending) = self.server.authorize(&authorize_request(&query)).await
        else {
            panic!("the pushed request was refused");
        };
        let answer = self
            .server
            .decide(pending, self.alice.id(), Decision::Approve)
            .await;
        common::redirect(&answer)
    }
}

fn code_exchange(code: &str) -> String {
    format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}&code_verifier={VERIFIER}"
    )
}

#[test]
fn build_refuses_what_contradicts_the_profile() {
    for profile in [Profile::Fapi2, Profile::Fapi2MessageSigning] {
        let long_codes = AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(MemoryStore::new())
            .profile(profile)
            .dpop(Dpop::new())
            .code_lifetime(Duration::from_secs(61))
            .build();
        assert_eq!(long_codes.unwrap_err(), ConfigError::Fapi2CodeLifetime);
        let unconstrained = AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(MemoryStore::new())
            .profile(profile)
            .build();
        assert!(matches!(
            unconstrained.unwrap_err(),
            ConfigError::Fapi2Unsupported(_)
        ));
        let plain = AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(MemoryStore::new())
            .profile(profile)
            .dpop(Dpop::new())
            .pkce_policy(PkcePolicy::PlainAllowed)
            .build();
        assert_eq!(plain.unwrap_err(), ConfigError::PlainPkceInOAuth21);
    }
}

#[tokio::test]
async fn a_full_flow_with_a_pushed_request_object_private_key_jwt_and_dpop_passes() {
    let f = setup(Profile::Fapi2MessageSigning);
    let code = f.fapi_code().await;
    let response = f
        .fapi_token(&code_exchange(&code), &assertion_for(ISSUER), true)
        .await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let body = json(&response);
    assert_eq!(body["token_type"], "DPoP");
    let token = body["access_token"].as_str().unwrap();
    // Introspected by the client itself, authenticated as it is everywhere.
    let form = format!("{}&token={token}", assertion_form(&assertion_for(ISSUER)));
    let introspected = f
        .server
        .introspect(&post("/api/oauth/introspect", None, &form))
        .await;
    let introspected = json(&introspected);
    assert_eq!(introspected["active"], true, "{introspected}");
    assert_eq!(
        introspected["cnf"]["jkt"],
        dpop_key().jkt(),
        "{introspected}"
    );
}

#[tokio::test]
async fn authorization_requests_must_be_pushed() {
    let f = setup(Profile::Fapi2);
    let query = format!(
        "client_id={CLIENT}&response_type=code&redirect_uri={REDIRECT_ENCODED}&scope=profile\
         &code_challenge={CHALLENGE}&code_challenge_method=S256&state=s"
    );
    match f.server.authorize(&authorize_request(&query)).await {
        Authorize::Redirect(redirect) => {
            assert_eq!(
                common::redirect(&redirect).query["error"],
                "invalid_request"
            );
        }
        Authorize::Reject(error) => assert_eq!(error.code().as_str(), "invalid_request"),
        other => panic!("a request that was not pushed was taken: {other:?}"),
    }
}

#[tokio::test]
async fn message_signing_takes_only_signed_request_objects() {
    let f = setup(Profile::Fapi2MessageSigning);
    let plain = format!(
        "response_type=code&redirect_uri={REDIRECT_ENCODED}&scope=profile\
         &code_challenge={CHALLENGE}&code_challenge_method=S256"
    );
    let refused = f.push(&plain, true).await;
    assert_error(&refused, 400, "invalid_request");
    assert!(
        refused.body().contains("request object"),
        "{}",
        refused.body()
    );
    // The Security Profile alone takes the same parameters.
    let f = setup(Profile::Fapi2);
    assert_eq!(f.push(&plain, true).await.status(), 201);
}

#[tokio::test]
async fn each_rule_of_the_security_profile_is_refused_when_broken() {
    let f = setup(Profile::Fapi2);
    let with = |extra: &str, method: &str| {
        format!("response_type=code&redirect_uri={REDIRECT_ENCODED}&scope=profile{method}{extra}")
    };
    let s256 = format!("&code_challenge={CHALLENGE}&code_challenge_method=S256");
    // response_type=code only.
    let token = f
        .push(
            &with("", &s256).replace("response_type=code", "response_type=token"),
            true,
        )
        .await;
    assert_error(&token, 400, "unsupported_response_type");
    // redirect_uri, even the client's only one.
    let without = with("", &s256).replace(&format!("&redirect_uri={REDIRECT_ENCODED}"), "");
    let refused = f.push(&without, true).await;
    assert_error(&refused, 400, "invalid_request");
    assert!(
        refused.body().contains("redirect_uri"),
        "{}",
        refused.body()
    );
    // PKCE, and S256 only.
    assert_error(&f.push(&with("", ""), true).await, 400, "invalid_request");
    let plain = format!("&code_challenge={VERIFIER}&code_challenge_method=plain");
    assert_error(
        &f.push(&with("", &plain), true).await,
        400,
        "invalid_request",
    );
    // Shared secrets are refused: the fixture's secret clients cannot push or get tokens.
    let secret_push = f
        .server
        .par(&post(PAR, Some(&f.demo_basic()), &with("", &s256)))
        .await;
    assert_error(&secret_push, 401, "invalid_client");
    let secret_token = f
        .token(Some(&f.demo_basic()), "grant_type=client_credentials")
        .await;
    assert_error(&secret_token, 401, "invalid_client");
    // A client assertion whose aud is the token endpoint rather than the issuer.
    let code = f.fapi_code_plain().await;
    let wrong_aud = f
        .fapi_token(&code_exchange(&code), &assertion_for(TOKEN_URL), true)
        .await;
    assert_error(&wrong_aud, 401, "invalid_client");
    // One signed RS256.
    let claims = json!({
        "iss": CLIENT, "sub": CLIENT, "aud": ISSUER, "exp": START + 60, "jti": next_jti("rs"),
    });
    let rs256 = sign(&ProofKey::rsa(Algorithm::RS256), "rs", None, &claims);
    let refused = f
        .fapi_token("grant_type=client_credentials", &rs256, true)
        .await;
    assert_error(&refused, 401, "invalid_client");
    // A token request with no DPoP proof (and no client certificate).
    let unconstrained = f
        .fapi_token(
            "grant_type=client_credentials",
            &assertion_for(ISSUER),
            false,
        )
        .await;
    assert_error(&unconstrained, 400, "invalid_dpop_proof");
    // The same request, sender-constrained, passes.
    let constrained = f
        .fapi_token(
            "grant_type=client_credentials",
            &assertion_for(ISSUER),
            true,
        )
        .await;
    assert_eq!(constrained.status(), 200, "{}", constrained.body());
}

impl Fixture {
    /// A code through a pushed request of plain parameters (the Security Profile alone).
    async fn fapi_code_plain(&self) -> String {
        let body = format!(
            "response_type=code&redirect_uri={REDIRECT_ENCODED}&scope=profile\
             &code_challenge={CHALLENGE}&code_challenge_method=S256&state=s"
        );
        self.code_pushed(&body).await
    }
}

#[tokio::test]
async fn discovery_says_what_the_profile_takes() {
    let f = setup(Profile::Fapi2MessageSigning);
    let metadata = json(&f.server.metadata());
    assert_eq!(metadata["require_pushed_authorization_requests"], true);
    assert_eq!(metadata["response_types_supported"], json!(["code"]));
    assert_eq!(
        metadata["code_challenge_methods_supported"],
        json!(["S256"])
    );
    assert_eq!(
        metadata["token_endpoint_auth_methods_supported"],
        json!(["private_key_jwt"])
    );
    let algs = metadata["token_endpoint_auth_signing_alg_values_supported"]
        .as_array()
        .unwrap();
    assert!(!algs.contains(&json!("RS256")), "{algs:?}");
    assert_eq!(metadata["require_signed_request_object"], true);
    assert_eq!(
        metadata["id_token_signing_alg_values_supported"],
        json!(["ES256", "EdDSA"])
    );
    for (name, value) in metadata.as_object().unwrap() {
        if name.ends_with("_alg_values_supported") {
            assert!(
                !value.as_array().unwrap().contains(&json!("RS256")),
                "{name}: {value}"
            );
        }
    }
    assert_eq!(
        metadata["authorization_response_iss_parameter_supported"],
        true
    );
    let grants = metadata["grant_types_supported"].as_array().unwrap();
    assert!(!grants.contains(&json!("implicit")) && !grants.contains(&json!("password")));
    let plain = setup(Profile::Fapi2);
    assert!(
        json(&plain.server.metadata())
            .get("require_signed_request_object")
            .is_none()
    );
}

#[tokio::test]
async fn request_objects_keep_the_message_signing_rules() {
    let f = setup(Profile::Fapi2MessageSigning);
    let mut without_nbf = object_claims();
    without_nbf.as_object_mut().unwrap().remove("nbf");
    let mut stale = object_claims();
    stale["nbf"] = json!(START - 3_700);
    stale["exp"] = json!(START + 60);
    let mut long = object_claims();
    long["nbf"] = json!(START - 600);
    long["exp"] = json!(START + 3_100);
    for (claims, why) in [
        (without_nbf, "nbf"),
        (stale, "nbf is more than 60 minutes in the past"),
        (long, "more than 60 minutes after its nbf"),
    ] {
        let refused = f.push(&format!("request={}", object(&claims)), true).await;
        assert_error(&refused, 400, "invalid_request_object");
        assert!(refused.body().contains(why), "{why}: {}", refused.body());
    }
    let rs256 = sign(
        &ProofKey::rsa(Algorithm::RS256),
        "rs",
        Some("oauth-authz-req+jwt"),
        &object_claims(),
    );
    let refused = f.push(&format!("request={rs256}"), true).await;
    assert_error(&refused, 400, "invalid_request_object");
    assert!(refused.body().contains("never RS256"), "{}", refused.body());
    // nbf a few seconds ahead (clock skew) is taken.
    let mut ahead = object_claims();
    ahead["nbf"] = json!(START + 8);
    let taken = f.push(&format!("request={}", object(&ahead)), true).await;
    assert_eq!(taken.status(), 201, "{}", taken.body());
}

#[tokio::test]
async fn registration_takes_only_key_clients_and_never_rs256() {
    let f = fixture_with(|b| {
        b.profile(Profile::Fapi2MessageSigning)
            .dpop(Dpop::new())
            .openid_connect(OpenIdConnect::default())
            .registration(RegistrationPolicy::new().scope(&Scope::parse("profile email").unwrap()))
    });
    let register = |metadata: Value| {
        let request = http::Request::post("/api/oauth/register")
            .header("content-type", "application/json")
            .body(metadata.to_string())
            .unwrap();
        let server = f.server.clone();
        async move { server.register(&request).await }
    };
    let keys = json!({ "keys": [client_keys()["keys"][0]] });
    let good = json!({
        "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt",
        "jwks": keys, "grant_types": ["authorization_code"],
    });
    let registered = register(good.clone()).await;
    assert_eq!(registered.status(), 201, "{}", registered.body());
    let registered = json(&registered);
    // Nothing named: the server signs ES256 for it, and says so.
    assert_eq!(registered["id_token_signed_response_alg"], "ES256");
    assert_eq!(registered["authorization_signed_response_alg"], "ES256");
    for (member, value) in [
        ("token_endpoint_auth_method", json!("client_secret_basic")),
        ("token_endpoint_auth_method", json!("none")),
        ("id_token_signed_response_alg", json!("RS256")),
        ("request_object_signing_alg", json!("RS256")),
    ] {
        let mut metadata = good.clone();
        metadata[member] = value.clone();
        if value == "client_secret_basic" || value == "none" {
            metadata.as_object_mut().unwrap().remove("jwks");
        }
        let refused = register(metadata).await;
        assert_error(&refused, 400, "invalid_client_metadata");
        assert!(
            refused.body().contains("FAPI 2.0"),
            "{member}: {}",
            refused.body()
        );
    }
}

impl Fixture {
    /// A token request of `body` at `at`: an assertion and a DPoP proof made then.
    async fn fapi_token_at(&self, body: &str, at: u64) -> Response<String> {
        let claims = json!({
            "iss": CLIENT, "sub": CLIENT, "aud": ISSUER, "exp": at + 60,
            "jti": next_jti("assertion"),
        });
        let assertion = sign(&ProofKey::es256(1), "es", None, &claims);
        let form = format!("{}&{body}", assertion_form(&assertion));
        let mut request = token_request(None, &form);
        let proof = dpop_key().proof("POST", TOKEN_URL, at);
        request.headers_mut().insert("dpop", proof.parse().unwrap());
        self.server.token(&request).await
    }
}

/// A pushed code request without a request object, asking for `scope`.
fn plain_push(scope: &str) -> String {
    format!(
        "response_type=code&redirect_uri={REDIRECT_ENCODED}&scope={scope}\
         &code_challenge={CHALLENGE}&code_challenge_method=S256"
    )
}

fn refresh(token: &str) -> String {
    format!("grant_type=refresh_token&refresh_token={token}")
}

impl Fixture {
    /// The refresh token of a code flow of a plain pushed request.
    async fn first_refresh_token(&self) -> String {
        let code = self.code_pushed(&plain_push("profile")).await;
        refresh_token_of(&self.fapi_token_at(&code_exchange(&code), START).await)
    }
}

fn refresh_token_of(response: &Response<String>) -> String {
    assert_eq!(response.status(), 200, "{}", response.body());
    json(response)["refresh_token"]
        .as_str()
        .expect("a refresh token")
        .to_owned()
}

/// FAPI 2.0 asks that a client which lost a refresh's answer keep its grant: under the profile
/// the refresh token a rotation replaced is taken back as a retry for a minute (the suite
/// presents it 30 s later), and the retry's pair works; past the minute,
/// reuse revokes the family as in every profile.
#[tokio::test]
async fn a_replaced_refresh_token_is_a_retry_for_a_minute_under_the_profile() {
    let f = setup(Profile::Fapi2);
    let first = f.first_refresh_token().await;
    let lost = refresh_token_of(&f.fapi_token_at(&refresh(&first), START).await);

    f.clock.advance(Duration::from_secs(30));
    let retried = f.fapi_token_at(&refresh(&first), START + 30).await;
    let kept = refresh_token_of(&retried);
    assert_ne!(kept, lost, "the retry gets a pair of its own");
    let current = refresh_token_of(&f.fapi_token_at(&refresh(&kept), START + 30).await);

    // A minute after the last rotation the replaced token is reuse: the family is revoked.
    f.clock.advance(Duration::from_secs(61));
    let reused = f.fapi_token_at(&refresh(&kept), START + 91).await;
    assert_error(&reused, 400, "invalid_grant");
    let revoked = f.fapi_token_at(&refresh(&current), START + 91).await;
    assert_error(&revoked, 400, "invalid_grant");
}

/// Outside FAPI 2.0 the retry window stays what the host set, zero by default: presenting a
/// replaced refresh token at once revokes the family.
#[tokio::test]
async fn outside_the_profile_a_replaced_refresh_token_is_reuse_at_once() {
    let f = setup_with(Profile::OAuth21, |b| {
        b.pushed_requests(PushedRequests::new())
    });
    let first = f.first_refresh_token().await;
    let next = refresh_token_of(&f.fapi_token_at(&refresh(&first), START).await);
    let reused = f.fapi_token_at(&refresh(&first), START).await;
    assert_error(&reused, 400, "invalid_grant");
    let revoked = f.fapi_token_at(&refresh(&next), START).await;
    assert_error(&revoked, 400, "invalid_grant");
}

/// FAPI 2.0 never signs RS256, and that holds for a client an administrator built without
/// naming algorithms too: its ID tokens, JWT-secured authorization responses and signed
/// introspection answers are ES256. Outside the profile the same client gets RS256.
#[tokio::test]
async fn a_client_that_named_no_algorithm_gets_es256_under_the_profile_and_rs256_outside() {
    for (profile, expected) in [
        (Profile::Fapi2, Algorithm::ES256),
        (Profile::OAuth21, Algorithm::RS256),
    ] {
        let f = setup_with(profile, |b| b.pushed_requests(PushedRequests::new()));
        let pushed = format!("{}&nonce=n-1", plain_push("openid%20profile"));
        let code = f.code_pushed(&pushed).await;
        let issued = f.fapi_token_at(&code_exchange(&code), START).await;
        assert_eq!(issued.status(), 200, "{}", issued.body());
        let id_token = json(&issued)["id_token"].as_str().unwrap().to_owned();
        let header = jsonwebtoken::decode_header(&id_token).unwrap();
        assert_eq!(header.alg, expected, "{profile:?}: ID token");

        // A JWT-secured authorization response.
        let target = f
            .answer_pushed(&format!("{pushed}&response_mode=jwt"))
            .await;
        let header = jsonwebtoken::decode_header(&target.query["response"]).unwrap();
        assert_eq!(header.alg, expected, "{profile:?}: authorization response");

        // A signed introspection answer.
        let token = json(&issued)["access_token"].as_str().unwrap().to_owned();
        let form = format!("{}&token={token}", assertion_form(&assertion_for(ISSUER)));
        let mut request = post("/api/oauth/introspect", None, &form);
        request.headers_mut().insert(
            "accept",
            "application/token-introspection+jwt".parse().unwrap(),
        );
        let introspected = f.server.introspect(&request).await;
        assert_eq!(introspected.status(), 200, "{}", introspected.body());
        let header = jsonwebtoken::decode_header(introspected.body()).unwrap();
        assert_eq!(header.alg, expected, "{profile:?}: introspection answer");
    }
}
