//! The JWT-bearer grant (RFC 7523 §2.1) with trusted issuers, Identity Assertion JWT
//! Authorization Grants (ID-JAG) among them, through the public API: one test per rule.

mod common;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::*;
use grantor::client::*;
use grantor::trust::TrustedIssuer;
use keys::ProofKey;
use serde_json::{Value, json};

const IDP: &str = "https://idp.example";
const OTHER_IDP: &str = "https://other-idp.example";
const GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const AGENT: &str = "agent";
const RESOURCE: &str = "https://resource.example/";

fn idp_key() -> ProofKey {
    ProofKey::es256(21)
}

fn other_key() -> ProofKey {
    ProofKey::eddsa(22)
}

fn jwks(key: &ProofKey, kid: &str) -> String {
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    jwk["kid"] = json!(kid);
    json!({ "keys": [jwk] }).to_string()
}

/// A server trusting two issuers (the second with a budget of 3 assertions a window), with a
/// confidential client agreed the grant.
fn setup() -> (Fixture, String) {
    let f = fixture_with(|b| {
        b.resources([RESOURCE])
            .trust_issuer(TrustedIssuer::jwks(IDP, &jwks(&idp_key(), "idp-1")).unwrap())
            .trust_issuer(
                TrustedIssuer::jwks(OTHER_IDP, &jwks(&other_key(), "other-1"))
                    .unwrap()
                    .assertions_per_window(3),
            )
    });
    let creds = ClientCredentials::generate().unwrap();
    let client = Client::confidential(AGENT, creds.verifier.clone())
        .grant_types([GrantType::JwtBearer])
        .scopes("profile email")
        .default_scope("profile")
        .build()
        .unwrap();
    f.register(client);
    (f, creds.secret.expose_secret().to_owned())
}

/// Claims of a good assertion of `issuer` about Alice, with a fresh `jti`.
fn claims(issuer: &str) -> Value {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let jti = format!("assertion-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    json!({
        "iss": issuer, "sub": "alice-at-idp", "email": ALICE, "aud": ISSUER,
        "iat": START, "exp": START + 300, "jti": jti,
    })
}

fn sign(key: &ProofKey, kid: &str, claims: &Value, typ: Option<&str>) -> String {
    key.sign_with(claims, |header| {
        header.typ = typ.map(str::to_owned);
        header.jwk = None;
        header.kid = Some(kid.to_owned());
    })
}

fn by_idp(claims: &Value) -> String {
    sign(&idp_key(), "idp-1", claims, Some("JWT"))
}

fn id_jag(claims: &Value) -> String {
    sign(&idp_key(), "idp-1", claims, Some("oauth-id-jag+jwt"))
}

async fn present(
    f: &Fixture,
    secret: &str,
    assertion: &str,
    extra: &str,
) -> http::Response<String> {
    let body = format!("grant_type={GRANT}&assertion={assertion}{extra}");
    f.token(Some(&basic(AGENT, secret)), &body).await
}

#[tokio::test]
async fn an_assertion_of_a_trusted_issuer_is_a_token_for_the_user_it_names() {
    let (f, secret) = setup();
    let response = present(&f, &secret, &by_idp(&claims(IDP)), "&scope=profile").await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let body = json(&response);
    assert_eq!(body["scope"], "profile");
    assert!(body.get("refresh_token").is_none(), "{body}");
    let introspected = json(
        &f.introspect(
            Some(&basic(AGENT, &secret)),
            &format!("token={}", body["access_token"].as_str().unwrap()),
        )
        .await,
    );
    assert_eq!(introspected["active"], true);
    assert_eq!(introspected["sub"], f.alice.id().as_str());
    assert_eq!(introspected["client_id"], AGENT);
    // Without email, the account whose username is the sub.
    let mut by_sub = claims(IDP);
    by_sub.as_object_mut().unwrap().remove("email");
    by_sub["sub"] = json!(BOB);
    let response = present(&f, &secret, &by_idp(&by_sub), "").await;
    assert_eq!(response.status(), 200, "{}", response.body());
}

#[tokio::test]
async fn a_replayed_assertion_is_invalid_grant() {
    let (f, secret) = setup();
    let assertion = by_idp(&claims(IDP));
    assert_eq!(present(&f, &secret, &assertion, "").await.status(), 200);
    let replay = present(&f, &secret, &assertion, "").await;
    assert_error(&replay, 400, "invalid_grant");
    assert!(
        replay.body().contains("presented before"),
        "{}",
        replay.body()
    );
}

#[tokio::test]
async fn each_broken_rule_is_invalid_grant() {
    let (f, secret) = setup();
    let edited = |edit: fn(&mut Value)| {
        let mut claims = claims(IDP);
        edit(&mut claims);
        claims
    };
    let cases: Vec<(&str, String)> = vec![
        (
            "untrusted issuer",
            by_idp(&edited(|c| c["iss"] = json!("https://evil.example"))),
        ),
        (
            "wrong audience",
            by_idp(&edited(|c| c["aud"] = json!("https://else.example"))),
        ),
        ("expired", by_idp(&edited(|c| c["exp"] = json!(START - 60)))),
        (
            "too long",
            by_idp(&edited(|c| c["exp"] = json!(START + 3_600))),
        ),
        (
            "no jti",
            by_idp(&edited(|c| drop(c.as_object_mut().unwrap().remove("jti")))),
        ),
        (
            "no sub",
            by_idp(&edited(|c| drop(c.as_object_mut().unwrap().remove("sub")))),
        ),
        (
            "not yet",
            by_idp(&edited(|c| c["nbf"] = json!(START + 120))),
        ),
        (
            "no such user",
            by_idp(&edited(|c| {
                c["email"] = json!("carol@example.com");
                c["sub"] = json!("carol");
            })),
        ),
        // Signed by the other issuer's key, claiming to be this issuer.
        (
            "bad signature",
            sign(&other_key(), "idp-1", &claims(IDP), None),
        ),
        ("not a JWS", "not.a.jws".to_owned()),
    ];
    for (why, assertion) in cases {
        let response = present(&f, &secret, &assertion, "").await;
        assert_error(&response, 400, "invalid_grant");
        assert!(!response.body().contains(&assertion), "{why}: echoed");
    }
    // The token endpoint's audience is taken as well as the issuer's.
    let token_url = format!("{ISSUER}/api/oauth/token");
    let mut claims = claims(IDP);
    claims["aud"] = json!([token_url]);
    assert_eq!(
        present(&f, &secret, &by_idp(&claims), "").await.status(),
        200
    );
}

#[tokio::test]
async fn a_client_not_agreed_the_grant_or_not_allowed_by_the_issuer_is_refused() {
    let (f, secret) = setup();
    let fast = basic(&f.fast_id, &f.fast_secret);
    let body = format!("grant_type={GRANT}&assertion={}", by_idp(&claims(IDP)));
    assert_error(
        &f.token(Some(&fast), &body).await,
        400,
        "unauthorized_client",
    );
    let limited = fixture_with(|b| {
        b.trust_issuer(
            TrustedIssuer::jwks(IDP, &jwks(&idp_key(), "idp-1"))
                .unwrap()
                .clients(["someone-else"]),
        )
    });
    let creds = ClientCredentials::generate().unwrap();
    limited.register(
        Client::confidential(AGENT, creds.verifier.clone())
            .grant_types([GrantType::JwtBearer])
            .build()
            .unwrap(),
    );
    let response = present(
        &limited,
        creds.secret.expose_secret(),
        &by_idp(&claims(IDP)),
        "",
    )
    .await;
    assert_error(&response, 400, "unauthorized_client");
    let _ = secret;
}

#[tokio::test]
async fn an_id_jag_binds_the_client_the_resource_and_the_scope() {
    let (f, secret) = setup();
    let grant = |client_id: &str, resource: &str, scope: &str| {
        let mut claims = claims(IDP);
        claims["client_id"] = json!(client_id);
        claims["resource"] = json!(resource);
        claims["scope"] = json!(scope);
        id_jag(&claims)
    };
    let response = present(
        &f,
        &secret,
        &grant(AGENT, RESOURCE, "profile"),
        "&scope=profile%20email",
    )
    .await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let body = json(&response);
    assert_eq!(
        body["scope"], "profile",
        "what was asked, within the grant's scope"
    );
    assert!(body.get("refresh_token").is_none());
    let introspected = json(
        &f.introspect(
            Some(&basic(AGENT, &secret)),
            &format!("token={}", body["access_token"].as_str().unwrap()),
        )
        .await,
    );
    assert_eq!(introspected["aud"], RESOURCE, "{introspected}");
    // Issued for another client.
    let other = present(
        &f,
        &secret,
        &grant("another-client", RESOURCE, "profile"),
        "",
    )
    .await;
    assert_error(&other, 400, "invalid_grant");
    // For a resource this server does not serve.
    let unknown = present(
        &f,
        &secret,
        &grant(AGENT, "https://unknown.example/", "profile"),
        "",
    )
    .await;
    assert_error(&unknown, 400, "invalid_target");
}

#[tokio::test]
async fn one_issuer_flooding_denies_no_other_issuer() {
    let (f, secret) = setup();
    let other = |n: u64| {
        let mut claims = claims(OTHER_IDP);
        claims["jti"] = json!(format!("flood-{n}"));
        sign(&other_key(), "other-1", &claims, None)
    };
    for n in 0..3 {
        assert_eq!(present(&f, &secret, &other(n), "").await.status(), 200);
    }
    let refused = present(&f, &secret, &other(3), "").await;
    assert_error(&refused, 429, "temporarily_unavailable");
    // The first issuer's assertions still pass, and the budget comes back with the window.
    assert_eq!(
        present(&f, &secret, &by_idp(&claims(IDP)), "")
            .await
            .status(),
        200
    );
    f.clock.advance(Duration::from_secs(361));
    let mut later = claims(OTHER_IDP);
    later["iat"] = json!(START + 361);
    later["exp"] = json!(START + 600);
    let later = sign(&other_key(), "other-1", &later, None);
    assert_eq!(present(&f, &secret, &later, "").await.status(), 200);
}

#[tokio::test]
async fn the_metadata_lists_the_grant_and_the_id_jag_profile() {
    let (f, _) = setup();
    let metadata = json(&f.server.metadata());
    let grants = metadata["grant_types_supported"].as_array().unwrap();
    assert!(grants.iter().any(|g| g == GRANT), "{metadata}");
    assert_eq!(
        metadata["authorization_grant_profiles_supported"],
        json!(["urn:ietf:params:oauth:grant-profile:id-jag"])
    );
    let plain = json(&fixture().server.metadata());
    assert!(
        plain
            .get("authorization_grant_profiles_supported")
            .is_none()
    );
}

#[test]
fn an_issuer_fetching_its_keys_needs_the_outbound_seam_and_each_issuer_is_trusted_once() {
    let build = |b: grantor::AuthorizationServerBuilder| {
        b.issuer(ISSUER).store(grantor::MemoryStore::new()).build()
    };
    let fetched = TrustedIssuer::jwks_uri(IDP, "https://idp.example/jwks");
    assert!(matches!(
        build(grantor::AuthorizationServer::builder().trust_issuer(fetched)),
        Err(grantor::ConfigError::Missing("outbound"))
    ));
    let twice = || TrustedIssuer::jwks(IDP, &jwks(&idp_key(), "k")).unwrap();
    assert!(matches!(
        build(
            grantor::AuthorizationServer::builder()
                .trust_issuer(twice())
                .trust_issuer(twice())
        ),
        Err(grantor::ConfigError::TrustedIssuers)
    ));
    assert!(TrustedIssuer::jwks(IDP, r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#).is_err());
}
