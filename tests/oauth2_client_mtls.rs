//! A real OAuth client, the `oauth2` crate, as a mutual-TLS client (RFC 8705) of `axum_server`
//! and `actix_server` served over HTTPS with a client CA: it registers as `tls_client_auth`
//! (RFC 7591), runs the code flow with PKCE through the sign-in and approval pages, and redeems
//! the code over a connection presenting its certificate, which authenticates it (no secret
//! anywhere) and binds the access token to it (RFC 8705 §3). The token opens `/api/me` with the
//! certificate and is refused without it; a refresh over the same connection gives another
//! bound token.
//!
//! The `oauth2` crate sends `client_id` in the body when it has no secret
//! (`AuthType::RequestBody`), which is what `tls_client_auth` asks; the certificate is its HTTP
//! client's, a reqwest client with the identity, as a deployment would configure it.

mod demo;
#[path = "demo/tls.rs"]
mod tls;

use demo::Server;
use demo::http::*;
use oauth2::basic::{BasicClient, BasicTokenType};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, CsrfToken, HttpRequest, PkceCodeChallenge,
    RedirectUrl, Scope, TokenResponse, TokenUrl,
};
use serde_json::{Value, json};
use tls::TlsFiles;

const FRAMEWORKS: [&str; 2] = ["axum", "actix"];

fn member<'v>(document: &'v Value, name: &str) -> &'v str {
    document[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: {document}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_oauth2_crate_authenticates_with_its_certificate_and_gets_bound_tokens() {
    let files = TlsFiles::new();
    let device = files.client("oauth2-device", "oauth2.example");
    for framework in FRAMEWORKS {
        let args = files.args();
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["--store", "memory"]);
        let server = Server::launch(framework, &demo::Launch::new(&all));
        let base = server.base.as_str();
        // The client's HTTP stack presents its certificate on every connection.
        let http = files.http(Some(&device));
        let metadata = send(http.get(format!("{base}/.well-known/oauth-authorization-server")))
            .await
            .json();
        let token_endpoint = metadata["mtls_endpoint_aliases"]["token_endpoint"]
            .as_str()
            .unwrap_or_else(|| member(&metadata, "token_endpoint"))
            .to_owned();
        let registration = send(
            http.post(member(&metadata, "registration_endpoint"))
                .header("content-type", "application/json")
                .body(
                    json!({
                        "redirect_uris": [CALLBACK],
                        "token_endpoint_auth_method": "tls_client_auth",
                        "tls_client_auth_subject_dn": "CN=oauth2-device,O=grantor tests",
                        "grant_types": ["authorization_code", "refresh_token"],
                        "scope": "profile",
                    })
                    .to_string(),
                ),
        )
        .await;
        assert_eq!(
            registration.status, 201,
            "{framework}: {}",
            registration.body
        );
        let registered = registration.json();
        assert!(registered.get("client_secret").is_none(), "{registered}");
        let client_id = member(&registered, "client_id").to_owned();

        let client = BasicClient::new(ClientId::new(client_id.clone()))
            .set_auth_uri(
                AuthUrl::new(member(&metadata, "authorization_endpoint").to_owned()).unwrap(),
            )
            .set_token_uri(TokenUrl::new(token_endpoint).unwrap())
            .set_auth_type(AuthType::RequestBody)
            .set_redirect_uri(RedirectUrl::new(CALLBACK.to_owned()).unwrap());
        let oauth2_http = |request: HttpRequest| over_reqwest(&http, request);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (authorize_url, _csrf) = client
            .authorize_url(CsrfToken::new_random)
            .add_scope(Scope::new("profile".to_owned()))
            .set_pkce_challenge(challenge)
            .url();
        // Alice's browser has no certificate of its own.
        let browser = files.browser(None);
        let page = get(&browser, authorize_url.as_str()).await;
        assert_eq!(page.status, 200, "{framework}: {}", page.body);
        let approval = sign_in(&browser, base, &sign_in_form(&page), ALICE).await;
        let callback = callback_query(&decide(&browser, base, &approval, "approve").await);
        let code = callback.get("code").expect("a code").to_owned();

        let tokens = client
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .request_async(&oauth2_http)
            .await
            .expect("the code is redeemed over mutual TLS");
        assert_eq!(tokens.token_type(), &BasicTokenType::Bearer);
        let access = tokens.access_token().secret().clone();
        let me = format!("{base}/api/me");
        let served = send(http.get(&me).bearer_auth(&access)).await;
        assert_eq!(served.status, 200, "{framework}: {}", served.body);
        assert_eq!(served.json()["email"], ALICE.0);
        let refused = send(files.http(None).get(&me).bearer_auth(&access)).await;
        assert_eq!(refused.status, 401, "{framework}: bound to the certificate");

        // Without its certificate the client cannot authenticate at all.
        let anonymous = files.http(None);
        let stranger = |request: HttpRequest| over_reqwest(&anonymous, request);
        let refresh_token = tokens.refresh_token().expect("a refresh token").clone();
        assert!(
            client
                .exchange_refresh_token(&refresh_token)
                .request_async(&stranger)
                .await
                .is_err(),
            "{framework}: a refresh without the certificate"
        );
        let refreshed = client
            .exchange_refresh_token(&refresh_token)
            .request_async(&oauth2_http)
            .await
            .expect("the refresh token is redeemed over mutual TLS");
        let access = refreshed.access_token().secret();
        assert_eq!(send(http.get(&me).bearer_auth(access)).await.status, 200);
        assert_eq!(
            send(files.http(None).get(&me).bearer_auth(access))
                .await
                .status,
            401
        );
        server.assert_alive_and_calm();
    }
}
