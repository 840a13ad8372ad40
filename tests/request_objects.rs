//! Request objects (RFC 9101, OIDC Core §6.1) through the public API: signed by a key of the
//! client's, at the authorization endpoint and in pushed requests; one test per rule.

mod common;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::*;
use grantor::store::ClientStore;
use grantor::*;
use grantor::{client::*, settings::*};
use http::{Request, Response};
use jsonwebtoken::Algorithm;
use keys::{ProofKey, unsigned};
use serde_json::{Value, json};

const CLIENT: &str = "signing-client";
const PAR: &str = "/api/oauth/par";

/// The client's keys: one per algorithm, each with a `kid`.
fn client_keys() -> Vec<(&'static str, ProofKey)> {
    vec![
        ("rs", ProofKey::rsa(Algorithm::RS256)),
        ("ps", ProofKey::rsa(Algorithm::PS256)),
        ("es", ProofKey::es256(1)),
        ("ed", ProofKey::eddsa(2)),
    ]
}

fn jwks(keys: &[(&str, ProofKey)]) -> String {
    let keys: Vec<Value> = keys
        .iter()
        .map(|(kid, key)| {
            let mut jwk = serde_json::to_value(&key.jwk).unwrap();
            jwk["kid"] = json!(kid);
            jwk
        })
        .collect();
    json!({ "keys": keys }).to_string()
}

/// A client that signs request objects with `keys`, as `build` leaves it.
fn signing_client(id: &str, build: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Client {
    let builder = Client::private_key_jwt(id, ClientKeys::jwks(&jwks(&client_keys())).unwrap())
        .redirect_uri(REDIRECT)
        .redirect_uri(OTHER_REDIRECT)
        .grant_types([GrantType::AuthorizationCode])
        .scopes("profile email")
        .approval(Approval::NotRequired);
    build(builder).build().unwrap()
}

/// The demo-like server: pushed requests, OpenID Connect, self-registration.
fn setup() -> Fixture {
    let f = fixture_with(|b| {
        b.pushed_requests(PushedRequests::new())
            .openid_connect(OpenIdConnect::default())
            .registration(RegistrationPolicy::new().scope(&Scope::parse("profile email").unwrap()))
    });
    f.register(signing_client(CLIENT, |b| b));
    f
}

/// The claims of a good object of `CLIENT`: a code request for `profile`, with a fresh `jti`.
fn claims() -> Value {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let jti = format!("object-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    json!({
        "iss": CLIENT, "aud": ISSUER, "exp": START + 300, "iat": START, "jti": jti,
        "client_id": CLIENT, "response_type": "code", "redirect_uri": REDIRECT,
        "scope": "profile", "state": "signed-state",
    })
}

/// `claims` signed by `key`, named by `kid`, as RFC 9101 §10.8 types it.
fn sign(key: &ProofKey, kid: &str, claims: &Value) -> String {
    key.sign_with(claims, |header| {
        header.typ = Some("oauth-authz-req+jwt".to_owned());
        header.jwk = None;
        header.kid = Some(kid.to_owned());
    })
}

fn es256() -> ProofKey {
    ProofKey::es256(1)
}

/// A query with `request` and the parameters `beside` it.
fn query(object: &str, beside: &str) -> String {
    format!("request={object}{beside}")
}

/// The parameters OIDC Core §6.1 asks to send beside an object, with another redirect URI,
/// scope and state than the object's: they must be ignored.
fn beside() -> String {
    format!(
        "&client_id={CLIENT}&response_type=code&redirect_uri={}&scope=email&state=outside",
        url::form_urlencoded::byte_serialize(OTHER_REDIRECT.as_bytes()).collect::<String>()
    )
}

impl Fixture {
    async fn authorize(&self, query: &str) -> Authorize {
        self.server.authorize(&authorize_request(query)).await
    }

    async fn push(&self, body: &str) -> Response<String> {
        let form = format!(
            "client_assertion_type={}&client_assertion={}&{body}",
            grantor::client_assertion::ASSERTION_TYPE,
            self.assertion(),
        );
        self.server.par(&post(PAR, None, &form)).await
    }

    /// A client assertion of `CLIENT` for the PAR endpoint.
    fn assertion(&self) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let jti = format!("assertion-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let claims = json!({
            "iss": CLIENT, "sub": CLIENT, "aud": ISSUER, "exp": START + 60, "jti": jti,
        });
        sign(&es256(), "es", &claims)
    }
}

/// The error an object is refused with, redirected to `redirect_uri`.
fn redirected_error(answer: &Authorize, redirect_uri: &str) -> (String, Option<String>) {
    let Authorize::Redirect(redirect) = answer else {
        panic!("expected an error redirect, got {answer:?}");
    };
    let target = common::redirect(redirect);
    assert_eq!(target.base, redirect_uri);
    (
        target.query["error"].clone(),
        target.query.get("state").cloned(),
    )
}

fn assert_reject(answer: &Authorize, code: &str) {
    match answer {
        Authorize::Reject(error) => assert_eq!(error.code().as_str(), code, "{error}"),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[tokio::test]
async fn a_signed_object_is_taken_with_every_algorithm_and_only_its_parameters_count() {
    let f = setup();
    for (kid, key) in client_keys() {
        let object = sign(&key, kid, &claims());
        let Authorize::SignIn(pending) = f.authorize(&query(&object, &beside())).await else {
            panic!("{kid}: the object was refused");
        };
        assert_eq!(pending.redirect_uri(), REDIRECT, "{kid}");
        assert_eq!(pending.scope().as_str(), "profile", "{kid}");
        let answer = f
            .server
            .decide(pending, f.alice.id(), Decision::Approve)
            .await;
        let target = common::redirect(&answer);
        assert_eq!(target.query["state"], "signed-state", "{kid}");
        assert!(target.query.contains_key("code"), "{kid}");
    }
}

#[tokio::test]
async fn client_id_alone_beside_the_object_is_enough() {
    let f = setup();
    let object = sign(&es256(), "es", &claims());
    let answer = f
        .authorize(&query(&object, &format!("&client_id={CLIENT}")))
        .await;
    assert!(matches!(answer, Authorize::SignIn(_)), "{answer:?}");
    // Without client_id beside it, whose keys verify it is unknown: shown, never redirected.
    let object = sign(&es256(), "es", &claims());
    assert_reject(&f.authorize(&query(&object, "")).await, "invalid_request");
}

#[tokio::test]
async fn an_object_that_does_not_verify_is_invalid_request_object_at_the_redirect_uri_beside_it() {
    let f = setup();
    let mut expired = claims();
    expired["exp"] = json!(START - 60);
    let mut long_lived = claims();
    long_lived["exp"] = json!(START + 3_700);
    let mut wrong_aud = claims();
    wrong_aud["aud"] = json!("https://other.example");
    let mut wrong_iss = claims();
    wrong_iss["iss"] = json!("someone-else");
    let mut future = claims();
    future["iat"] = json!(START + 600);
    let objects = [
        unsigned(&json!({"alg": "none"}), &claims()),
        format!(
            "{}.",
            unsigned(&json!({"alg": "none"}), &claims())
                .rsplit_once('.')
                .unwrap()
                .0
        ),
        // Signed by a key that is not the client's.
        sign(&ProofKey::es256(9), "es", &claims()),
        sign(&es256(), "es", &expired),
        sign(&es256(), "es", &long_lived),
        sign(&es256(), "es", &wrong_aud),
        sign(&es256(), "es", &wrong_iss),
        sign(&es256(), "es", &future),
        "not-a-jwt".to_owned(),
        unsigned(&json!({"alg": "HS256"}), &claims()),
    ];
    for object in objects {
        let answer = f.authorize(&query(&object, &beside())).await;
        let (error, state) = redirected_error(&answer, OTHER_REDIRECT);
        assert_eq!(error, "invalid_request_object", "{object}");
        assert_eq!(state.as_deref(), Some("outside"));
        if let Authorize::Redirect(redirect) = answer {
            assert!(!format!("{:?}", redirect.headers()).contains(&object));
        }
    }
    // Without a registered redirect URI beside it, the refusal is shown.
    let unregistered = format!("&client_id={CLIENT}&redirect_uri=https%3A%2F%2Fevil.example%2F");
    let object = sign(&ProofKey::es256(9), "es", &claims());
    assert_reject(
        &f.authorize(&query(&object, &unregistered)).await,
        "invalid_request_object",
    );
}

#[tokio::test]
async fn a_client_without_keys_cannot_send_objects() {
    let f = setup();
    let mut public = claims();
    public["iss"] = json!("public-client");
    public["client_id"] = json!("public-client");
    let object = sign(&es256(), "es", &public);
    let beside = format!("&client_id=public-client&redirect_uri={REDIRECT_ENCODED}");
    let answer = f.authorize(&query(&object, &beside)).await;
    let (error, _) = redirected_error(&answer, REDIRECT);
    assert_eq!(error, "invalid_request_object");
}

#[tokio::test]
async fn client_id_or_response_type_beside_the_object_must_be_its_own() {
    let f = setup();
    f.register(signing_client("other-client", |b| b));
    let mut signed_by_other = claims();
    signed_by_other["iss"] = json!("other-client");
    let object = sign(&es256(), "es", &signed_by_other);
    // Verified with the keys of the client named beside it, but naming another client_id:
    // refused at the object's own redirect URI.
    let answer = f
        .authorize(&query(&object, "&client_id=other-client"))
        .await;
    let (error, state) = redirected_error(&answer, REDIRECT);
    assert_eq!(error, "invalid_request_object");
    assert_eq!(state.as_deref(), Some("signed-state"));
    let object = sign(&es256(), "es", &claims());
    let beside = format!("&client_id={CLIENT}&response_type=token");
    let answer = f.authorize(&query(&object, &beside)).await;
    assert_eq!(
        redirected_error(&answer, REDIRECT).0,
        "invalid_request_object"
    );
}

#[tokio::test]
async fn a_repeated_request_is_refused() {
    let f = setup();
    let object = sign(&es256(), "es", &claims());
    let twice = format!("{}&request={object}", query(&object, &beside()));
    let answer = f.authorize(&twice).await;
    assert_eq!(
        redirected_error(&answer, OTHER_REDIRECT).0,
        "invalid_request"
    );
    let response = f.push(&format!("request={object}&request={object}")).await;
    assert_error(&response, 400, "invalid_request");
}

#[tokio::test]
async fn a_jti_serves_once() {
    let f = setup();
    let object = sign(&es256(), "es", &claims());
    let first = f.authorize(&query(&object, &beside())).await;
    assert!(matches!(first, Authorize::SignIn(_)), "{first:?}");
    let again = f.authorize(&query(&object, &beside())).await;
    let (error, _) = redirected_error(&again, REDIRECT);
    assert_eq!(error, "invalid_request_object");
    // An object without jti is bounded by its lifetime alone.
    let mut no_jti = claims();
    no_jti.as_object_mut().unwrap().remove("jti");
    let object = sign(&es256(), "es", &no_jti);
    for _ in 0..2 {
        let answer = f.authorize(&query(&object, &beside())).await;
        assert!(matches!(answer, Authorize::SignIn(_)), "{answer:?}");
    }
}

#[tokio::test]
async fn a_registered_request_object_signing_alg_is_the_only_one_taken() {
    let f = setup();
    f.register(signing_client(CLIENT, |b| {
        b.request_object_signing_algorithm(ClientSigningAlgorithm::PS256)
    }));
    let object = sign(&es256(), "es", &claims());
    let answer = f.authorize(&query(&object, &beside())).await;
    assert_eq!(
        redirected_error(&answer, OTHER_REDIRECT).0,
        "invalid_request_object"
    );
    let object = sign(&ProofKey::rsa(Algorithm::PS256), "ps", &claims());
    let answer = f.authorize(&query(&object, &beside())).await;
    assert!(matches!(answer, Authorize::SignIn(_)), "{answer:?}");
}

#[tokio::test]
async fn an_object_is_refused_once_past_its_exp() {
    let f = setup();
    let object = sign(&es256(), "es", &claims());
    f.clock.advance(Duration::from_secs(300 + 31));
    let answer = f.authorize(&query(&object, &beside())).await;
    assert_eq!(
        redirected_error(&answer, OTHER_REDIRECT).0,
        "invalid_request_object"
    );
}

#[tokio::test]
async fn a_pushed_request_may_carry_an_object_whose_parameters_are_kept() {
    let f = setup();
    let object = sign(&es256(), "es", &claims());
    let response = f.push(&format!("request={object}&scope=email")).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let request_uri = json(&response)["request_uri"].as_str().unwrap().to_owned();
    let by_reference = format!(
        "client_id={CLIENT}&request_uri={}",
        url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
    );
    let Authorize::SignIn(pending) = f.authorize(&by_reference).await else {
        panic!("the pushed request was refused");
    };
    assert_eq!(pending.scope().as_str(), "profile");
    assert_eq!(pending.redirect_uri(), REDIRECT);
    // Refusals at the PAR endpoint are answered there, in JSON.
    let forged = sign(&ProofKey::es256(9), "es", &claims());
    let response = f.push(&format!("request={forged}")).await;
    assert_error(&response, 400, "invalid_request_object");
    let response = f.push(&format!("request={object}")).await;
    assert_error(&response, 400, "invalid_request_object");
}

#[tokio::test]
async fn a_request_uri_that_is_no_pushed_request_is_not_supported() {
    let f = setup();
    let query = format!("client_id={CLIENT}&request_uri=https%3A%2F%2Fapp.example%2Fobject.jwt");
    assert_reject(&f.authorize(&query).await, "request_uri_not_supported");
}

#[tokio::test]
async fn both_metadata_documents_list_request_objects() {
    let f = setup();
    for document in [f.server.metadata(), f.server.openid_configuration()] {
        let document = json(&document);
        assert_eq!(document["request_parameter_supported"], true);
        assert_eq!(document["request_uri_parameter_supported"], false);
        assert_eq!(
            document["request_object_signing_alg_values_supported"],
            json!(["RS256", "PS256", "ES256", "EdDSA"])
        );
    }
}

#[tokio::test]
async fn registration_keeps_request_object_signing_alg_and_refuses_others() {
    let f = setup();
    let metadata = |alg: Value| {
        json!({
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "private_key_jwt",
            "jwks": serde_json::from_str::<Value>(&jwks(&client_keys())).unwrap(),
            "request_object_signing_alg": alg,
        })
        .to_string()
    };
    let register = |body: String| {
        Request::post("/api/oauth/register")
            .header("content-type", "application/json")
            .body(body)
            .unwrap()
    };
    let response = f.server.register(&register(metadata(json!("ES256")))).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let registered = json(&response);
    assert_eq!(registered["request_object_signing_alg"], "ES256");
    let client_id = registered["client_id"].as_str().unwrap();
    let client = at_once(f.store.find_client(client_id)).unwrap().unwrap();
    assert_eq!(
        client.request_object_signing_algorithm(),
        Some(ClientSigningAlgorithm::ES256)
    );
    for refused in [json!("none"), json!("HS256"), json!(["ES256"])] {
        let response = f.server.register(&register(metadata(refused))).await;
        assert_error(&response, 400, "invalid_client_metadata");
    }
}

/// Serves the client's key set to every `GET`, counting them.
struct ServesKeys(AtomicU64);

impl grantor::outbound::Outbound for ServesKeys {
    fn post(
        &self,
        _post: grantor::outbound::OutboundPost,
        _done: Box<dyn FnOnce(grantor::outbound::Delivery) + Send>,
    ) {
    }

    fn get(&self, _get: grantor::outbound::OutboundGet) -> grantor::outbound::FetchFuture<'_> {
        self.0.fetch_add(1, Ordering::Relaxed);
        let set = grantor::outbound::Fetched::new(jwks(&client_keys()));
        Box::pin(std::future::ready(Ok(set)))
    }
}

#[tokio::test]
async fn a_jwks_uri_is_fetched_through_the_outbound_seam_and_kept() {
    let outbound = std::sync::Arc::new(ServesKeys(AtomicU64::new(0)));
    let seam = std::sync::Arc::clone(&outbound);
    let f = fixture_with(|b| b.outbound(seam));
    let keys = ClientKeys::jwks_uri("https://app.example/jwks.json").unwrap();
    f.register(
        Client::private_key_jwt(CLIENT, keys)
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode])
            .scopes("profile email")
            .build()
            .unwrap(),
    );
    for (kid, key) in client_keys() {
        let object = sign(&key, kid, &claims());
        let answer = f.authorize(&query(&object, &beside())).await;
        assert!(matches!(answer, Authorize::SignIn(_)), "{kid}: {answer:?}");
    }
    assert_eq!(outbound.0.load(Ordering::Relaxed), 1);
}
