//! A full FAPI 2.0 flow against both demos under `--profile fapi2` (Security Profile and Message
//! Signing), over HTTPS with a client CA: a self-registered client pushes a signed request
//! object with PKCE, Alice signs in and approves, and the code is redeemed for a
//! sender-constrained token that the demo API takes. Once with `private_key_jwt` and DPoP, once
//! with `tls_client_auth` and a certificate-bound token; and a token request that is neither
//! sender-constrained is refused.

mod demo;
#[path = "demo/fapi2.rs"]
mod fapi2;
#[path = "dpop_proofs/mod.rs"]
mod keys;
#[path = "demo/tls.rs"]
mod tls;

use demo::http::*;
use fapi2::*;
use keys::ProofKey;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn a_full_flow_with_private_key_jwt_and_dpop() {
    for framework in ["axum", "actix"] {
        let setup = Setup::new(framework, "dpop");
        let client = setup.client().await;
        let flow = client.run(&client.request()).await;
        assert_eq!(
            flow.response["iss"], setup.demo.base,
            "{framework}: iss on the response"
        );
        assert_eq!(flow.tokens["token_type"], "DPoP", "{framework}");
        let served = client.resource(flow.access_token()).await;
        assert_eq!(served.status, 200, "{framework}: {}", served.body);
        assert_eq!(served.json()["email"], ALICE.0, "{framework}");
        setup.demo.server.assert_alive_and_calm();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_flow_with_mutual_tls() {
    for framework in ["axum", "actix"] {
        let setup = Setup::new(framework, "mtls");
        let client = setup.client().await;
        let flow = client.run(&client.request()).await;
        assert_eq!(flow.tokens["token_type"], "bearer", "{framework}");
        let token = flow.access_token();
        let served = client.resource(token).await;
        assert_eq!(served.status, 200, "{framework}: {}", served.body);
        // The token is bound to the client's certificate: without it, refused.
        let refused = send(setup.demo.http().get(setup.demo.url(ME)).bearer_auth(token)).await;
        assert_eq!(refused.status, 401, "{framework}");
        setup.demo.server.assert_alive_and_calm();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_profile_refuses_what_it_forbids() {
    for framework in ["axum", "actix"] {
        let setup = Setup::new(framework, "dpop");
        let demo = setup.demo;
        let document = demo
            .document("/.well-known/oauth-authorization-server")
            .await;
        assert_eq!(
            document["require_pushed_authorization_requests"], true,
            "{framework}"
        );
        assert_eq!(
            document["require_signed_request_object"], true,
            "{framework}"
        );
        assert_eq!(
            document["response_types_supported"],
            json!(["code"]),
            "{framework}"
        );
        // The seeded secret clients cannot take part.
        let http = demo.http();
        let secret = post_form(
            &http,
            &demo.url(TOKEN),
            Some(DEMO),
            &[("grant_type", "client_credentials")],
        )
        .await;
        assert_eq!(secret.status, 401, "{framework}: {}", secret.body);
        // Nor can a secret client register.
        let refused = send(
            http.post(demo.url("/api/oauth/register"))
                .header("content-type", "application/json")
                .body(json!({"redirect_uris": [CALLBACK]}).to_string()),
        )
        .await;
        assert_eq!(refused.status, 400, "{framework}: {}", refused.body);
        // A key client's token request with neither a DPoP proof nor a client certificate.
        let client = setup.client().await;
        let unconstrained = client
            .post(
                TOKEN,
                client.authentication(),
                &[("grant_type", "authorization_code"), ("code", "whatever")],
                None,
            )
            .await;
        assert_eq!(
            unconstrained.status, 400,
            "{framework}: {}",
            unconstrained.body
        );
        assert!(
            unconstrained.body.contains("sender-constrained"),
            "{}",
            unconstrained.body
        );
        demo.server.assert_alive_and_calm();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_rule_of_the_profile_is_refused_when_broken() {
    for framework in ["axum", "actix"] {
        let setup = Setup::new(framework, "dpop");
        let client = setup.client().await;
        let good = || without(client.object_claims(&client.request()), "state");
        let object = |edit: &dyn Fn(&mut Value)| {
            let mut claims = good();
            edit(&mut claims);
            client.sign_object(&claims)
        };
        let remove = |name: &'static str| {
            move |claims: &mut Value| {
                claims.as_object_mut().unwrap().remove(name);
            }
        };
        let cases: [(&str, String, &str); 6] = [
            (
                "response_type token",
                object(&|c| c["response_type"] = json!("token")),
                "unsupported_response_type",
            ),
            (
                "no PKCE",
                object(&|c| {
                    remove("code_challenge")(c);
                    remove("code_challenge_method")(c);
                }),
                "invalid_request",
            ),
            (
                "plain PKCE",
                object(&|c| {
                    c["code_challenge"] = json!(VERIFIER);
                    c["code_challenge_method"] = json!("plain");
                }),
                "invalid_request",
            ),
            (
                "no redirect_uri",
                object(&remove("redirect_uri")),
                "invalid_request",
            ),
            ("no nbf", object(&remove("nbf")), "invalid_request_object"),
            (
                "signed RS256",
                sign(
                    &ProofKey::rsa(jsonwebtoken::Algorithm::RS256),
                    Some("oauth-authz-req+jwt"),
                    &good(),
                ),
                "invalid_request_object",
            ),
        ];
        for (rule, request, error) in cases {
            let refused = client.par(&[("request", &request)]).await;
            assert_eq!(refused.status, 400, "{framework}: {rule}: {}", refused.body);
            assert_eq!(refused.json()["error"], error, "{framework}: {rule}");
        }
        // Unsigned parameters at the PAR endpoint, and a request not pushed at all.
        let params = without(client.request(), "client_id");
        let unsigned = client.par(&form_pairs(&params)).await;
        assert_eq!(unsigned.status, 400, "{framework}: {}", unsigned.body);
        let mut plain = form_pairs(&params);
        plain.push(("client_id", &client.id));
        let not_pushed = get(
            &setup.demo.browser(),
            &authorize_url(&setup.demo.base, &plain),
        )
        .await;
        let refused_at_callback = not_pushed
            .location()
            .is_some_and(|location| location.contains("error=invalid_request"));
        assert!(
            refused_at_callback || not_pushed.status == 400,
            "{framework}: a request that was not pushed: {} {:?}",
            not_pushed.status,
            not_pushed.location()
        );
        // A client assertion for the token endpoint rather than the issuer, and one signed
        // RS256: the client is not authenticated.
        let token_url = setup.demo.url(TOKEN);
        let rs256 = sign(
            &ProofKey::rsa(jsonwebtoken::Algorithm::RS256),
            None,
            &client.assertion_claims(),
        );
        for (rule, authentication) in [
            (
                "aud the token endpoint",
                client.authentication_with(|claims| claims["aud"] = json!(token_url)),
            ),
            (
                "signed RS256",
                vec![
                    ("client_id".to_owned(), client.id.clone()),
                    (
                        "client_assertion_type".to_owned(),
                        ASSERTION_TYPE.to_owned(),
                    ),
                    ("client_assertion".to_owned(), rs256.clone()),
                ],
            ),
        ] {
            let refused = client
                .post(
                    PAR,
                    authentication,
                    &[("request", &good().to_string())],
                    None,
                )
                .await;
            assert_eq!(refused.status, 401, "{framework}: {rule}: {}", refused.body);
            assert_eq!(
                refused.json()["error"],
                "invalid_client",
                "{framework}: {rule}"
            );
        }
        setup.demo.server.assert_alive_and_calm();
    }
}
