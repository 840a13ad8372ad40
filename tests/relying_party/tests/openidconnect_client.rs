//! A real relying party, the `openidconnect` crate, against `axum_server` and `actix_server`
//! over real HTTP: discovery, the code flow with PKCE and a nonce through the sign-in page, the
//! ID token verified against the published JWKS (signature, `iss`, `aud`, `exp`, nonce, and
//! `at_hash` against the access token), `client_secret_post`, userinfo, a refresh, and the
//! logout URL built from
//! `end_session_endpoint`, whose answer sends the browser back; then `response_mode=form_post`
//! with the `claims` parameter, whose claims the verified ID token carries, and the ID token
//! a refresh answers (OIDC Core §12.2), verified the same way.
//!
//! The crate brings no HTTP client here (`default-features = false`): [`over_reqwest`] hands its
//! requests to reqwest, as the demo tests' own client does.

#[path = "../../demo/mod.rs"]
mod demo;

use demo::Server;
use demo::http::*;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreProviderMetadata, CoreUserInfoClaims,
};
use openidconnect::{
    AccessTokenHash, AuthType, AuthorizationCode, ClientId, ClientSecret, CsrfToken, HttpRequest,
    IssuerUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge, RedirectUrl, Scope, TokenResponse,
};

each_framework! {
    the_openidconnect_crate_discovers_signs_in_verifies_the_id_token_and_logs_out => relying_party;
    the_openidconnect_crate_gets_a_form_post_answer_named_claims_and_a_refreshed_id_token => form_post_and_claims;
}

async fn relying_party(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    let client_http = |request: HttpRequest| over_reqwest(&http, request);

    // Discovery (OIDC Discovery 1.0 §4): the crate checks the issuer matches.
    let issuer = IssuerUrl::new(base.clone()).unwrap();
    let provider = CoreProviderMetadata::discover_async(issuer, &client_http)
        .await
        .expect("the discovery document");
    // `post-client` sends its secret in the body (`client_secret_post`) and gets refresh tokens.
    let client = CoreClient::from_provider_metadata(
        provider,
        ClientId::new("post-client".into()),
        Some(ClientSecret::new("post-secret".into())),
    )
    .set_auth_type(AuthType::RequestBody)
    .set_redirect_uri(RedirectUrl::new(CALLBACK.into()).unwrap());

    // The code flow with PKCE and a nonce; Alice signs in on the demo's page.
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state, nonce) = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .add_scope(Scope::new("email".into()))
        .add_scope(Scope::new("profile".into()))
        .set_pkce_challenge(challenge)
        .url();
    let page = get(&http, url.as_str()).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let signed_in = sign_in(&http, base, &sign_in_form(&page), ALICE).await;
    let query = callback_query(&signed_in);
    assert_eq!(&query["state"], state.secret());
    let tokens = client
        .exchange_code(AuthorizationCode::new(query["code"].clone()))
        .expect("a token endpoint")
        .set_pkce_verifier(verifier)
        .request_async(&client_http)
        .await
        .expect("the token response");

    // The ID token, verified with the JWKS the crate fetched (signature, iss, aud, exp, nonce).
    let id_token = tokens.id_token().expect("an ID token");
    let verifier = client.id_token_verifier();
    let claims = id_token
        .claims(&verifier, &nonce)
        .expect("a valid ID token");
    assert!(claims.auth_time().is_some());
    let expected = claims.access_token_hash().expect("at_hash");
    let actual = AccessTokenHash::from_token(
        tokens.access_token(),
        id_token.signing_alg().unwrap(),
        id_token.signing_key(&verifier).unwrap(),
    )
    .unwrap();
    assert_eq!(&actual, expected, "at_hash is the access token's");
    let sub = claims.subject().as_str().to_owned();

    // Userinfo: the same `sub`, the scope's claims.
    let info: CoreUserInfoClaims = client
        .user_info(tokens.access_token().clone(), None)
        .expect("a userinfo endpoint")
        .request_async(&client_http)
        .await
        .expect("userinfo");
    assert_eq!(info.subject().as_str(), sub);
    assert_eq!(info.email().unwrap().as_str(), ALICE.0);
    assert_eq!(info.email_verified(), Some(true));
    let name = info.name().and_then(|n| n.get(None)).unwrap();
    assert_eq!(name.as_str(), "Alice Example");

    // A refresh: new tokens for the same grant.
    let refreshed = client
        .exchange_refresh_token(tokens.refresh_token().expect("a refresh token"))
        .expect("a token endpoint")
        .request_async(&client_http)
        .await
        .expect("the refreshed tokens");
    assert_ne!(
        refreshed.access_token().secret(),
        tokens.access_token().secret()
    );

    // The end-session endpoint from discovery: a logout with the ID token as hint returns the
    // browser to a registered URI with the state.
    let metadata = get(&http, &format!("{base}/.well-known/openid-configuration"))
        .await
        .json();
    let end_session = metadata["end_session_endpoint"].as_str().unwrap();
    let mut logout = url::Url::parse(end_session).unwrap();
    logout
        .query_pairs_mut()
        .append_pair("id_token_hint", &id_token.to_string())
        .append_pair(
            "post_logout_redirect_uri",
            "http://127.0.0.1:8081/logged-out",
        )
        .append_pair("state", "rp-bye");
    let answer = get(&http, logout.as_str()).await;
    assert!(matches!(answer.status, 302 | 303), "{}", answer.body);
    assert_eq!(
        answer.location(),
        Some("http://127.0.0.1:8081/logged-out?state=rp-bye")
    );
    server.assert_alive_and_calm();
}

async fn form_post_and_claims(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    let client_http = |request: HttpRequest| over_reqwest(&http, request);
    let issuer = IssuerUrl::new(base.clone()).unwrap();
    let provider = CoreProviderMetadata::discover_async(issuer, &client_http)
        .await
        .expect("the discovery document");
    let client = CoreClient::from_provider_metadata(
        provider,
        ClientId::new("post-client".into()),
        Some(ClientSecret::new("post-secret".into())),
    )
    .set_auth_type(AuthType::RequestBody)
    .set_redirect_uri(RedirectUrl::new(CALLBACK.into()).unwrap());
    // Only `openid` in the scope: the claims parameter names the email for the ID token.
    let claims = r#"{"id_token":{"email":{"essential":true}}}"#;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state, nonce) = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .add_extra_param("response_mode", "form_post")
        .add_extra_param("claims", claims)
        .set_pkce_challenge(challenge)
        .url();
    let page = get(&http, url.as_str()).await;
    let answer = sign_in(&http, base, &sign_in_form(&page), ALICE).await;
    let posted = posted_to_callback(&answer);
    assert_eq!(&posted["state"], state.secret());
    let tokens = client
        .exchange_code(AuthorizationCode::new(posted["code"].clone()))
        .expect("a token endpoint")
        .set_pkce_verifier(verifier)
        .request_async(&client_http)
        .await
        .expect("the token response");
    let id_token = tokens.id_token().expect("an ID token");
    let id_verifier = client.id_token_verifier();
    let first = id_token
        .claims(&id_verifier, &nonce)
        .expect("a valid ID token");
    assert_eq!(first.email().unwrap().as_str(), ALICE.0);
    assert!(first.name().is_none(), "the scope released no profile");

    // A refresh answers an ID token of the same sign-in, without the nonce (Core 12.2).
    let refreshed = client
        .exchange_refresh_token(tokens.refresh_token().expect("a refresh token"))
        .expect("a token endpoint")
        .request_async(&client_http)
        .await
        .expect("the refreshed tokens");
    let again = refreshed.id_token().expect("an ID token on refresh");
    let no_nonce = |nonce: Option<&Nonce>| match nonce {
        None => Ok(()),
        Some(_) => Err("a refreshed ID token carries no nonce".to_owned()),
    };
    let second = again
        .claims(&id_verifier, no_nonce)
        .expect("a valid refreshed ID token");
    assert_eq!(second.subject(), first.subject());
    assert_eq!(second.auth_time(), first.auth_time());
    server.assert_alive_and_calm();
}
