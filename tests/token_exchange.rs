//! Token exchange (RFC 8693) through the public API: impersonation and delegation, what the
//! issued token says in introspection and to bearer validation, the scope and audience rules,
//! every unacceptable subject or actor token, the host's policy, and bad input.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use grantor::clock::Clock as _;
use grantor::{client::*, exchange::*};

const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS: &str = "urn:ietf:params:oauth:token-type:access_token";
const OTHER: &str = "https://resource.example/";
const OTHER_ENCODED: &str = "https%3A%2F%2Fresource.example%2F";

/// Allows every exchange grantor found valid, or refuses each with `refusal`.
struct Policy(Option<ExchangeRefusal>);

#[async_trait::async_trait]
impl ExchangePolicy for Policy {
    async fn decide(&self, _request: &ExchangeRequest<'_>) -> Result<(), ExchangeRefusal> {
        self.0.map_or(Ok(()), Err)
    }
}

/// A fixture offering token exchange under `policy`, with `https://resource.example/` as a
/// second resource, and `exchanger`: a confidential client agreed client credentials and token
/// exchange.
struct Exchange {
    f: Fixture,
    /// The exchanging client's `Basic` header, and its id.
    exchanger: String,
    exchanger_id: String,
}

fn exchange_fixture(policy: Option<ExchangeRefusal>) -> Exchange {
    let f = fixture_with(|b| {
        b.resources([OTHER])
            .token_exchange(Arc::new(Policy(policy)))
    });
    let (exchanger_id, exchanger) = register_exchanger(&f);
    Exchange {
        f,
        exchanger,
        exchanger_id,
    }
}

/// Registers a confidential client agreed token exchange; answers its id and `Basic` header.
fn register_exchanger(f: &Fixture) -> (String, String) {
    let creds = ClientCredentials::generate().unwrap();
    f.register(
        Client::confidential(creds.client_id.as_str(), creds.verifier)
            .grant_types([GrantType::ClientCredentials, GrantType::TokenExchange])
            .scopes("profile email")
            .build()
            .unwrap(),
    );
    let id = creds.client_id.to_string();
    let header = basic(&id, creds.secret.expose_secret());
    (id, header)
}

/// Alice's access token for `profile email`, from the password grant of the fast client.
async fn alice_token(f: &Fixture) -> String {
    let body = "grant_type=password&username=alice%40example.com&password=alice-password-1\
                &scope=profile+email";
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), body).await);
    tokens["access_token"].as_str().unwrap().to_owned()
}

/// An exchange request's body for `subject` with `extra` parameters.
fn exchange_body(subject: &str, extra: &str) -> String {
    format!("grant_type={GRANT}&subject_token={subject}&subject_token_type={ACCESS}{extra}")
}

impl Exchange {
    async fn exchange(&self, subject: &str, extra: &str) -> http::Response<String> {
        let body = exchange_body(subject, extra);
        self.f.token(Some(&self.exchanger), &body).await
    }

    /// The introspection of `token` as the exchanging client.
    async fn introspect(&self, token: &str) -> serde_json::Value {
        let response = self
            .f
            .introspect(Some(&self.exchanger), &format!("token={token}"))
            .await;
        assert_eq!(response.status(), 200);
        json(&response)
    }

    /// A token of the exchanging client for itself (client credentials).
    async fn own_token(&self) -> String {
        let response = self
            .f
            .token(Some(&self.exchanger), "grant_type=client_credentials")
            .await;
        assert_tokens(&response)["access_token"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

/// Asserts an RFC 8693 §2.2.1 answer; answers its body.
fn assert_exchanged(response: &http::Response<String>) -> serde_json::Value {
    let body = assert_tokens(response);
    assert_eq!(body["issued_token_type"], ACCESS, "{body}");
    assert!(body.get("refresh_token").is_none(), "{body}");
    body
}

fn access_token(body: &serde_json::Value) -> &str {
    body["access_token"].as_str().unwrap()
}

#[tokio::test]
async fn impersonation_issues_a_token_for_the_subjects_user_aimed_at_the_new_resource() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    let response = x
        .exchange(&subject, &format!("&resource={OTHER_ENCODED}"))
        .await;
    let body = assert_exchanged(&response);
    assert_scope(&body, "profile email");
    assert_eq!(body["expires_in"], 3600);
    let exchanged = access_token(&body);
    let seen = x.introspect(exchanged).await;
    assert_eq!(seen["active"], true, "{seen}");
    assert_eq!(seen["aud"], OTHER);
    assert_eq!(seen["sub"], "alice-id");
    assert_eq!(seen["username"], ALICE);
    assert_eq!(seen["client_id"], x.exchanger_id, "the exchanging client's");
    assert!(
        seen.get("act").is_none(),
        "impersonation names no actor: {seen}"
    );
    // The default audience's resource (the issuer) refuses it; the subject token still works.
    let refused = x.f.bearer(Some(&format!("Bearer {exchanged}")), None).await;
    assert_eq!(refused.unwrap_err().status(), 401);
    let subject_grant = x.f.bearer(Some(&format!("Bearer {subject}")), None).await;
    assert!(subject_grant.unwrap().actor.is_none());
}

#[tokio::test]
async fn the_exchanged_token_carries_its_subject_s_sign_in_and_a_client_s_own_none() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    // Exchanging later is no new sign-in: the token tells the subject's (RFC 9470 §6.2).
    x.f.clock.advance(Duration::from_secs(90));
    let body = assert_exchanged(&x.exchange(&subject, "").await);
    let seen = x.introspect(access_token(&body)).await;
    assert_eq!(seen["iat"], START + 90, "{seen}");
    assert_eq!(seen["auth_time"], START, "{seen}");
    let own = x.own_token().await;
    let body = assert_exchanged(&x.exchange(&own, "").await);
    let seen = x.introspect(access_token(&body)).await;
    assert_eq!(seen["active"], true, "{seen}");
    assert!(seen.get("auth_time").is_none(), "{seen}");
}

#[tokio::test]
async fn without_a_target_the_token_gets_the_clients_default_audience() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    let body = assert_exchanged(&x.exchange(&subject, "").await);
    let grant =
        x.f.bearer(Some(&format!("Bearer {}", access_token(&body))), None)
            .await
            .expect("the server's default audience, the issuer's");
    assert_eq!(grant.authorization.client_id.as_str(), x.exchanger_id);
    assert_eq!(grant.authorization.user.as_ref(), Some(&x.f.alice));
    assert_eq!(grant.authorization.audience.as_str(), ISSUER);
    assert!(grant.actor.is_none());
}

#[tokio::test]
async fn delegation_names_the_actor_in_act_and_chains_nest() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    let actor = x.own_token().await;
    let actor_id = x.exchanger_id.clone();
    let extra = format!("&actor_token={actor}&actor_token_type={ACCESS}");
    let body = assert_exchanged(&x.exchange(&subject, &extra).await);
    let delegated = access_token(&body).to_owned();
    let seen = x.introspect(&delegated).await;
    assert_eq!(seen["sub"], "alice-id");
    assert_eq!(
        seen["act"],
        serde_json::json!({ "sub": actor_id }),
        "{seen}"
    );
    let grant = x.f.bearer(Some(&format!("Bearer {delegated}")), None).await;
    let actor_of = grant.unwrap().actor.expect("the grant exposes its actor");
    assert_eq!(actor_of.subject(), actor_id);

    // Bob's token acts next, for the delegated token: Bob is the current actor, the service
    // the prior one.
    let bob = "grant_type=password&username=bob%40example.com&password=bob-password-2";
    let bob = assert_tokens(&x.f.token(Some(&x.f.fast_basic()), bob).await);
    let extra = format!(
        "&actor_token={}&actor_token_type={ACCESS}&scope=profile",
        access_token(&bob)
    );
    let body = assert_exchanged(&x.exchange(&delegated, &extra).await);
    let seen = x.introspect(access_token(&body)).await;
    let expected = serde_json::json!({ "sub": "bob-id", "act": { "sub": actor_id } });
    assert_eq!(seen["act"], expected, "{seen}");
    assert_eq!(seen["username"], ALICE);
    assert_eq!(seen["scope"], "profile");

    // Impersonating with a delegated token keeps who acted.
    let body = assert_exchanged(&x.exchange(&delegated, "").await);
    let seen = x.introspect(access_token(&body)).await;
    assert_eq!(
        seen["act"],
        serde_json::json!({ "sub": actor_id }),
        "{seen}"
    );
}

#[tokio::test]
async fn the_scope_may_narrow_and_never_widen() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    let narrowed = assert_exchanged(&x.exchange(&subject, "&scope=email").await);
    assert_eq!(narrowed["scope"], "email");
    let narrow_subject = access_token(&narrowed).to_owned();
    // The narrowed token is itself a subject, whose scope bounds the next exchange.
    let wider = x.exchange(&narrow_subject, "&scope=profile+email").await;
    assert_error(&wider, 400, "invalid_scope");
    let admin = x.exchange(&subject, "&scope=profile+admin").await;
    assert_error(&admin, 400, "invalid_scope");
    let malformed = x.exchange(&subject, "&scope=%22").await;
    assert_error(&malformed, 400, "invalid_scope");
}

#[tokio::test]
async fn revoked_expired_unknown_and_refresh_tokens_are_no_subject_and_no_actor() {
    let x = exchange_fixture(None);
    let tokens = x.f.fast_tokens().await;
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    let revoked = alice_token(&x.f).await;
    let revocation =
        x.f.revoke(Some(&x.f.fast_basic()), &format!("token={revoked}"))
            .await;
    assert_eq!(revocation.status(), 200);
    let live = alice_token(&x.f).await;
    for bad in [revoked.as_str(), "unknown-token", refresh.as_str(), "%20"] {
        let response = x.exchange(bad, "").await;
        assert_error(&response, 400, "invalid_request");
        let description = json(&response)["error_description"].to_string();
        assert!(description.contains("subject_token"), "{description}");
        let extra = format!("&actor_token={bad}&actor_token_type={ACCESS}");
        let response = x.exchange(&live, &extra).await;
        assert_error(&response, 400, "invalid_request");
        let description = json(&response)["error_description"].to_string();
        assert!(description.contains("actor_token"), "{description}");
    }
    // An hour later the live token has expired too.
    x.f.clock.advance(Duration::from_secs(3600));
    assert_error(&x.exchange(&live, "").await, 400, "invalid_request");
}

#[tokio::test]
async fn the_exchanged_token_never_outlives_its_subject() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    x.f.clock.advance(Duration::from_secs(3000));
    let body = assert_exchanged(&x.exchange(&subject, "").await);
    assert_eq!(body["expires_in"], 600);
    x.f.clock.advance(Duration::from_secs(600));
    assert!(!x.f.access_is_active(access_token(&body)).await);
}

#[tokio::test]
async fn a_delegated_token_never_outlives_its_actor_token_either() {
    let x = exchange_fixture(None);
    let actor = x.own_token().await;
    x.f.clock.advance(Duration::from_secs(3300));
    let subject = alice_token(&x.f).await;
    let extra = format!("&actor_token={actor}&actor_token_type={ACCESS}");
    let body = assert_exchanged(&x.exchange(&subject, &extra).await);
    assert_eq!(body["expires_in"], 300, "the actor token had 300 s left");
}

#[tokio::test]
async fn a_chain_of_actors_longer_than_eight_is_refused() {
    let x = exchange_fixture(None);
    let mut subject = alice_token(&x.f).await;
    for depth in 1..=8 {
        let actor = x.own_token().await;
        let extra = format!("&actor_token={actor}&actor_token_type={ACCESS}");
        let body = assert_exchanged(&x.exchange(&subject, &extra).await);
        subject = access_token(&body).to_owned();
        let mut act = &x.introspect(&subject).await["act"];
        for _ in 1..depth {
            act = &act["act"];
        }
        assert!(act["sub"].is_string(), "{depth} actors kept");
    }
    let actor = x.own_token().await;
    let extra = format!("&actor_token={actor}&actor_token_type={ACCESS}");
    assert_error(&x.exchange(&subject, &extra).await, 400, "invalid_request");
}

#[tokio::test]
async fn token_types_other_than_access_tokens_are_invalid_requests() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    let types = [
        "urn:ietf:params:oauth:token-type:refresh_token",
        "urn:ietf:params:oauth:token-type:id_token",
        "urn:ietf:params:oauth:token-type:saml2",
        "access_token",
    ];
    for kind in types {
        let body = format!("grant_type={GRANT}&subject_token={subject}&subject_token_type={kind}");
        let response = x.f.token(Some(&x.exchanger), &body).await;
        assert_error(&response, 400, "invalid_request");
    }
    // Without JWT access tokens no token of this server is a JWT.
    let body = format!(
        "grant_type={GRANT}&subject_token={subject}\
         &subject_token_type=urn:ietf:params:oauth:token-type:jwt"
    );
    assert_error(
        &x.f.token(Some(&x.exchanger), &body).await,
        400,
        "invalid_request",
    );
    // Only access tokens are issued (RFC 8693 §2.2.2: the request is not valid otherwise).
    let jwt = "&requested_token_type=urn:ietf:params:oauth:token-type:jwt";
    assert_error(&x.exchange(&subject, jwt).await, 400, "invalid_request");
    let refresh = "&requested_token_type=urn:ietf:params:oauth:token-type:refresh_token";
    assert_error(&x.exchange(&subject, refresh).await, 400, "invalid_request");
    let access = format!("&requested_token_type={ACCESS}");
    assert_exchanged(&x.exchange(&subject, &access).await);
}

#[tokio::test]
async fn missing_or_half_sent_parameters_are_invalid_requests() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    let bodies = [
        format!("grant_type={GRANT}&subject_token_type={ACCESS}"),
        format!("grant_type={GRANT}&subject_token={subject}"),
        exchange_body(&subject, "&actor_token=abc"),
        exchange_body(&subject, &format!("&actor_token_type={ACCESS}")),
        exchange_body(&subject, &format!("&subject_token={subject}")),
    ];
    for body in bodies {
        let response = x.f.token(Some(&x.exchanger), &body).await;
        assert_error(&response, 400, "invalid_request");
    }
}

#[tokio::test]
async fn targets_must_be_resources_the_server_knows() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    let by_audience = assert_exchanged(
        &x.exchange(&subject, &format!("&audience={OTHER_ENCODED}"))
            .await,
    );
    assert_eq!(x.introspect(access_token(&by_audience)).await["aud"], OTHER);
    let both = format!("&audience={OTHER_ENCODED}&resource=http%3A%2F%2F127.0.0.1%3A8080");
    let both = assert_exchanged(&x.exchange(&subject, &both).await);
    let aud = &x.introspect(access_token(&both)).await["aud"];
    assert_eq!(aud, &serde_json::json!([ISSUER, OTHER]));
    for unknown in [
        "&resource=https%3A%2F%2Funknown.example%2F",
        "&audience=https%3A%2F%2Funknown.example%2F",
        "&audience=billing-service",
    ] {
        let response = x.exchange(&subject, unknown).await;
        assert_error(&response, 400, "invalid_target");
    }
}

#[tokio::test]
async fn targets_in_another_spelling_get_the_registered_forms() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    // `HTTPS://Resource.Example:443`, and `HTTP://127.0.0.1:8080/`: the issuer (host-only,
    // registered without a path) with its scheme in capitals and its empty path spelled `/`.
    let spelled = "&audience=HTTPS%3A%2F%2FResource.Example%3A443\
                   &resource=HTTP%3A%2F%2F127.0.0.1%3A8080%2F";
    let exchanged = assert_exchanged(&x.exchange(&subject, spelled).await);
    let aud = &x.introspect(access_token(&exchanged)).await["aud"];
    assert_eq!(aud, &serde_json::json!([ISSUER, OTHER]));
}

#[tokio::test]
async fn without_a_policy_token_exchange_is_not_offered() {
    let f = fixture();
    let (_, exchanger) = register_exchanger(&f);
    let subject = alice_token(&f).await;
    let response = f
        .token(Some(&exchanger), &exchange_body(&subject, ""))
        .await;
    assert_error(&response, 400, "unsupported_grant_type");
    let listed = |f: &Fixture| {
        let metadata = json(&f.server.metadata());
        metadata["grant_types_supported"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == GRANT)
    };
    assert!(!listed(&f));
    assert!(listed(&exchange_fixture(None).f));
}

#[tokio::test]
async fn a_client_not_agreed_the_grant_or_public_is_unauthorized() {
    let x = exchange_fixture(None);
    let subject = alice_token(&x.f).await;
    let body = exchange_body(&subject, "");
    let response = x.f.token(Some(&x.f.fast_basic()), &body).await;
    assert_error(&response, 400, "unauthorized_client");
    // Even before a parameter is read.
    let response =
        x.f.token(Some(&x.f.fast_basic()), &format!("grant_type={GRANT}"))
            .await;
    assert_error(&response, 400, "unauthorized_client");
    x.f.register(
        Client::public("public-exchanger")
            .grant_types([GrantType::TokenExchange])
            .scopes("profile email")
            .build()
            .unwrap(),
    );
    let body = format!("{body}&client_id=public-exchanger");
    let response = x.f.token(None, &body).await;
    assert_error(&response, 400, "unauthorized_client");
}

#[tokio::test]
async fn each_refusal_of_the_policy_is_its_rfc_error() {
    let refusals = [
        (ExchangeRefusal::Client, "unauthorized_client"),
        (ExchangeRefusal::Subject, "invalid_request"),
        (ExchangeRefusal::Actor, "invalid_request"),
        (ExchangeRefusal::Target, "invalid_target"),
        (ExchangeRefusal::Scope, "invalid_scope"),
    ];
    for (refusal, code) in refusals {
        let x = exchange_fixture(Some(refusal));
        let subject = alice_token(&x.f).await;
        assert_error(&x.exchange(&subject, "").await, 400, code);
        // A refusal spends nothing: the subject token stays usable.
        assert!(x.f.access_is_active(&subject).await);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Whatever the exchange parameters hold, the answer is a 400 RFC error, never a panic or a
    /// 500.
    #[test]
    fn arbitrary_exchange_parameters_are_refused_cleanly(
        values in proptest::collection::vec("\\PC{0,24}", 7),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let x = exchange_fixture(None);
        let names = [
            "subject_token", "subject_token_type", "actor_token", "actor_token_type",
            "requested_token_type", "audience", "resource",
        ];
        let mut body = url::form_urlencoded::Serializer::new(String::new());
        body.append_pair("grant_type", GRANT);
        for (name, value) in names.iter().zip(&values) {
            body.append_pair(name, value);
        }
        let response = runtime.block_on(x.f.token(Some(&x.exchanger), &body.finish()));
        proptest::prop_assert_eq!(response.status(), 400, "{}", response.body());
        let error = json(&response)["error"].as_str().unwrap().to_owned();
        proptest::prop_assert!(
            ["invalid_request", "invalid_target"].contains(&error.as_str()),
            "{}", error
        );
    }
}

/// With JWT access tokens (RFC 9068): a JWT subject token may be called a JWT (RFC 8693 §3),
/// and the exchanged token carries `act` among its signed claims.
#[cfg(feature = "jwt")]
mod jwt {
    use super::*;
    use base64::Engine as _;
    use grantor::jwt::*;

    const JWT: &str = "urn:ietf:params:oauth:token-type:jwt";

    fn claims(token: &str) -> serde_json::Value {
        let payload = token.split('.').nth(1).unwrap();
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn a_delegated_jwt_access_token_carries_act_and_verifies_with_the_jwks() {
        let key = SigningKey::generate(SigningAlgorithm::EdDSA).unwrap();
        let keys: Arc<dyn SigningKeys> = Arc::new(StaticKeys::new(key, []));
        let f = fixture_with(|b| {
            b.resources([OTHER])
                .token_exchange(Arc::new(Policy(None)))
                .jwt_access_tokens(JwtAccessTokens::new(keys))
        });
        let (exchanger_id, exchanger) = register_exchanger(&f);
        let x = Exchange {
            f,
            exchanger,
            exchanger_id,
        };
        let subject = alice_token(&x.f).await;
        let actor = x.own_token().await;
        let body = format!(
            "grant_type={GRANT}&subject_token={subject}&subject_token_type={JWT}\
             &actor_token={actor}&actor_token_type={JWT}&resource={OTHER_ENCODED}"
        );
        let response = x.f.token(Some(&x.exchanger), &body).await;
        let body = assert_exchanged(&response);
        let exchanged = access_token(&body);
        let signed = claims(exchanged);
        assert_eq!(signed["act"], serde_json::json!({ "sub": x.exchanger_id }));
        assert_eq!(signed["sub"], "alice-id");
        assert_eq!(signed["aud"], OTHER);
        assert_eq!(signed["client_id"], x.exchanger_id.as_str());
        assert!(claims(&subject).get("act").is_none());
        let jwks = x.f.server.jwks().await.into_body();
        let verifier = JwtVerifier::from_jwks(ISSUER, OTHER, &jwks).unwrap();
        let verified = verifier.verify(exchanged, x.f.clock.now()).unwrap();
        let actor = verified.actor.expect("the verified token names its actor");
        assert_eq!(actor.subject(), x.exchanger_id);
        assert_eq!(x.introspect(exchanged).await["act"]["sub"], x.exchanger_id);
        // Bearer validation from the JWT alone (no store) hands the host the actor too.
        let extra = format!(
            "&actor_token={}&actor_token_type={ACCESS}",
            x.own_token().await
        );
        let for_the_issuer = assert_exchanged(&x.exchange(&subject, &extra).await);
        let bearer = format!("Bearer {}", access_token(&for_the_issuer));
        let grant = x.f.bearer(Some(&bearer), None).await.unwrap();
        assert_eq!(grant.actor.unwrap().subject(), x.exchanger_id);
        // A token that is no JWT may not be called one.
        let refused = format!("grant_type={GRANT}&subject_token=opaque&subject_token_type={JWT}");
        let response = x.f.token(Some(&x.exchanger), &refused).await;
        assert_error(&response, 400, "invalid_request");
    }
}
