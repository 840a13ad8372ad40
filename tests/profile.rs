//! The OAuth 2.1 profile (draft-ietf-oauth-v2-1): no implicit, no password, PKCE `S256` from
//! every client, whatever the client was agreed; and what the metadata then offers.

mod common;

use common::*;
use grantor::settings::*;
use grantor::*;

fn oauth21() -> Fixture {
    fixture_with(|b| b.profile(Profile::OAuth21))
}

fn code_query(client: &str, extra: &str) -> String {
    format!("response_type=code&client_id={client}&redirect_uri={REDIRECT_ENCODED}&state=s{extra}")
}

#[tokio::test]
async fn the_password_grant_is_refused_for_every_client() {
    let f = oauth21();
    let body = "grant_type=password&username=alice%40example.com&password=alice-password-1";
    for auth in [f.demo_basic(), f.fast_basic()] {
        assert_error(
            &f.token(Some(&auth), body).await,
            400,
            "unsupported_grant_type",
        );
    }
    // The same client under the default profile still gets its agreed grant.
    let f = fixture();
    assert_tokens(&f.token(Some(&f.demo_basic()), body).await);
}

#[tokio::test]
async fn the_implicit_grant_is_refused_at_the_client_s_redirect_uri() {
    let f = oauth21();
    let query = format!(
        "response_type=token&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&state=s"
    );
    let Authorize::Redirect(response) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("expected an error redirect");
    };
    let r = redirect(&response);
    assert_eq!(r.base, REDIRECT);
    assert_eq!(r.fragment["error"], "unsupported_response_type");
    assert_eq!(r.fragment["state"], "s");
}

#[tokio::test]
async fn every_client_must_send_an_s256_code_challenge() {
    let f = oauth21();
    let Authorize::Redirect(response) = f
        .server
        .authorize(&authorize_request(&code_query("demo-client", "")))
        .await
    else {
        panic!("a confidential client without PKCE is refused");
    };
    let r = redirect(&response);
    assert_eq!(r.query["error"], "invalid_request");
    let plain = format!("&code_challenge={VERIFIER}&code_challenge_method=plain");
    let Authorize::Redirect(response) = f
        .server
        .authorize(&authorize_request(&code_query("demo-client", &plain)))
        .await
    else {
        panic!("plain is refused");
    };
    assert_eq!(redirect(&response).query["error"], "invalid_request");
    let s256 = format!("&code_challenge={CHALLENGE}&code_challenge_method=S256");
    f.pending(&code_query("demo-client", &s256)).await;
}

#[test]
fn the_profile_refuses_a_pkce_policy_it_does_not_allow_instead_of_overriding_it() {
    let built = |policy| {
        AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(MemoryStore::new())
            .profile(Profile::OAuth21)
            .pkce_policy(policy)
            .build()
    };
    assert_eq!(
        built(PkcePolicy::PublicClients).unwrap_err(),
        ConfigError::PkceUnderOAuth21
    );
    assert!(built(PkcePolicy::AllClients).is_ok());
}

#[test]
fn plain_pkce_cannot_be_allowed_under_oauth_2_1() {
    let built = AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(MemoryStore::new())
        .profile(Profile::OAuth21)
        .pkce_policy(PkcePolicy::PlainAllowed)
        .build();
    assert!(matches!(built, Err(ConfigError::PlainPkceInOAuth21)));
}

#[test]
fn the_metadata_offers_only_what_the_profile_allows() {
    let m = json(&oauth21().server.metadata());
    assert_eq!(m["response_types_supported"], serde_json::json!(["code"]));
    assert_eq!(
        m["response_modes_supported"],
        serde_json::json!(["query", "fragment", "form_post"])
    );
    assert_eq!(
        m["grant_types_supported"],
        serde_json::json!(["authorization_code", "refresh_token", "client_credentials"])
    );
    assert_eq!(
        m["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    let m = json(&fixture().server.metadata());
    let authenticated = if cfg!(feature = "private-key-jwt") {
        serde_json::json!([
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt"
        ])
    } else {
        serde_json::json!(["client_secret_basic", "client_secret_post"])
    };
    assert_eq!(
        m["introspection_endpoint_auth_methods_supported"],
        authenticated
    );
    assert!(
        m["grant_types_supported"]
            .as_array()
            .unwrap()
            .contains(&"password".into())
    );
}
