//! A full FAPI 2.0 flow against both demos under `--profile fapi2` (Security Profile and Message
//! Signing), over HTTPS with a client CA: a self-registered client pushes a signed request
//! object with PKCE, Alice signs in and approves, and the code is redeemed for a
//! sender-constrained token that the demo API takes. Once with `private_key_jwt` and DPoP, once
//! with `tls_client_auth` and a certificate-bound token; and a token request that is neither
//! sender-constrained is refused.

mod demo;
#[path = "dpop_proofs/mod.rs"]
mod keys;
#[path = "demo/tls.rs"]
mod tls;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use demo::Server;
use demo::http::*;
use keys::ProofKey;
use serde_json::{Value, json};
use tls::TlsFiles;

const FRAMEWORKS: [&str; 2] = ["axum", "actix"];

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn jti(what: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{what}-{}-{}", now(), NEXT.fetch_add(1, Ordering::Relaxed))
}

fn sign(key: &ProofKey, typ: Option<&str>, claims: &Value) -> String {
    key.sign_with(claims, |header| {
        header.typ = typ.map(str::to_owned);
        header.jwk = None;
        header.kid = Some("signing".to_owned());
    })
}

fn jwks(key: &ProofKey) -> Value {
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    jwk["kid"] = json!("signing");
    json!({ "keys": [jwk] })
}

/// How the client authenticates and constrains its tokens.
enum Client {
    /// `private_key_jwt` and DPoP.
    KeyAndDpop { dpop: Box<ProofKey> },
    /// `tls_client_auth` with the certificate its connection presents, its tokens bound to it.
    Certificate,
}

struct Flow<'a> {
    base: &'a str,
    http: reqwest::Client,
    client_id: String,
    /// The client's signing key: request objects (and assertions for `private_key_jwt`).
    key: ProofKey,
    client: Client,
}

impl Flow<'_> {
    fn authentication(&self) -> Vec<(String, String)> {
        let mut pairs = vec![("client_id".to_owned(), self.client_id.clone())];
        if let Client::KeyAndDpop { .. } = self.client {
            let claims = json!({
                "iss": self.client_id, "sub": self.client_id, "aud": self.base,
                "iat": now(), "exp": now() + 60, "jti": jti("assertion"),
            });
            pairs.push((
                "client_assertion_type".to_owned(),
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            ));
            pairs.push((
                "client_assertion".to_owned(),
                sign(&self.key, None, &claims),
            ));
        }
        pairs
    }

    /// POSTs `pairs` and the client's authentication to `path`, with a DPoP proof for a DPoP
    /// client.
    async fn post(&self, path: &str, pairs: &[(&str, &str)]) -> Reply {
        let url = format!("{}{path}", self.base);
        let mut all = self.authentication();
        all.extend(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&all)
            .finish();
        let mut request = self
            .http
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        if let Client::KeyAndDpop { dpop } = &self.client {
            request = request.header("dpop", dpop.proof("POST", &url, now()));
        }
        send(request).await
    }

    fn request_object(&self) -> String {
        let claims = json!({
            "iss": self.client_id, "aud": self.base, "iat": now(), "nbf": now(),
            "exp": now() + 300, "jti": jti("object"), "client_id": self.client_id,
            "response_type": "code", "redirect_uri": CALLBACK, "scope": "profile",
            "state": "fapi", "code_challenge": CHALLENGE, "code_challenge_method": "S256",
        });
        sign(&self.key, Some("oauth-authz-req+jwt"), &claims)
    }

    /// The whole flow: answers the access token and its `token_type`.
    async fn run(&self, framework: &str) -> (String, String) {
        let pushed = self
            .post("/api/oauth/par", &[("request", &self.request_object())])
            .await;
        assert_eq!(pushed.status, 201, "{framework}: {}", pushed.body);
        let request_uri = pushed.json()["request_uri"].as_str().unwrap().to_owned();
        let params = [
            ("client_id", self.client_id.as_str()),
            ("request_uri", &request_uri),
        ];
        let approval = sign_in_via_authorize(&self.http, self.base, &params, ALICE).await;
        let callback = callback_query(&decide(&self.http, self.base, &approval, "approve").await);
        assert_eq!(
            callback["iss"], self.base,
            "{framework}: iss on the response"
        );
        assert_eq!(callback["state"], "fapi", "{framework}");
        let issued = self
            .post(
                "/api/oauth/token",
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &callback["code"]),
                    ("redirect_uri", CALLBACK),
                    ("code_verifier", VERIFIER),
                ],
            )
            .await;
        assert_eq!(issued.status, 200, "{framework}: {}", issued.body);
        assert_eq!(issued.header("cache-control"), Some("no-store"));
        let tokens = issued.json();
        (
            tokens["access_token"].as_str().unwrap().to_owned(),
            tokens["token_type"].as_str().unwrap().to_owned(),
        )
    }
}

async fn register(http: &reqwest::Client, base: &str, metadata: Value) -> String {
    let reply = send(
        http.post(format!("{base}/api/oauth/register"))
            .header("content-type", "application/json")
            .body(metadata.to_string()),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.json()["client_id"].as_str().unwrap().to_owned()
}

fn start(framework: &str, files: &TlsFiles) -> Server {
    let args = files.args();
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend(["--store", "memory", "--profile", "fapi2"]);
    Server::launch(framework, &demo::Launch::new(&all))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_flow_with_private_key_jwt_and_dpop() {
    let files = TlsFiles::new();
    for framework in FRAMEWORKS {
        let server = start(framework, &files);
        let base = server.base.as_str();
        let key = ProofKey::es256(11);
        let metadata = json!({
            "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "private_key_jwt",
            "jwks": jwks(&key), "grant_types": ["authorization_code"],
        });
        let client_id = register(&files.http(None), base, metadata).await;
        let dpop = ProofKey::es256(12);
        let flow = Flow {
            base,
            http: files.browser(None),
            client_id,
            key,
            client: Client::KeyAndDpop {
                dpop: Box::new(dpop),
            },
        };
        let (token, token_type) = flow.run(framework).await;
        assert_eq!(token_type, "DPoP", "{framework}");
        let Client::KeyAndDpop { dpop } = &flow.client else {
            unreachable!()
        };
        let me = format!("{base}/api/me");
        let served = send(
            flow.http
                .get(&me)
                .header("authorization", format!("DPoP {token}"))
                .header("dpop", dpop.proof_for_token("GET", &me, now(), &token)),
        )
        .await;
        assert_eq!(served.status, 200, "{framework}: {}", served.body);
        assert_eq!(served.json()["email"], ALICE.0, "{framework}");
        server.assert_alive_and_calm();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_flow_with_mutual_tls() {
    let files = TlsFiles::new();
    let device = files.client("fapi-device", "fapi.example");
    for framework in FRAMEWORKS {
        let server = start(framework, &files);
        let base = server.base.as_str();
        let key = ProofKey::es256(21);
        let metadata = json!({
            "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "tls_client_auth",
            "tls_client_auth_subject_dn": "CN=fapi-device,O=grantor tests",
            "jwks": jwks(&key), "grant_types": ["authorization_code"],
        });
        let client_id = register(&files.http(None), base, metadata).await;
        let flow = Flow {
            base,
            http: files.browser(Some(&device)),
            client_id,
            key,
            client: Client::Certificate,
        };
        let (token, token_type) = flow.run(framework).await;
        assert_eq!(token_type, "bearer", "{framework}");
        let me = format!("{base}/api/me");
        let served = send(flow.http.get(&me).bearer_auth(&token)).await;
        assert_eq!(served.status, 200, "{framework}: {}", served.body);
        // The token is bound to the device's certificate: without it, refused.
        let refused = send(files.http(None).get(&me).bearer_auth(&token)).await;
        assert_eq!(refused.status, 401, "{framework}");
        server.assert_alive_and_calm();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_profile_refuses_what_it_forbids() {
    let files = TlsFiles::new();
    for framework in FRAMEWORKS {
        let server = start(framework, &files);
        let base = server.base.as_str();
        let http = files.http(None);
        let document =
            send(http.get(format!("{base}/.well-known/oauth-authorization-server"))).await;
        let document = document.json();
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
        let secret = post_form(
            &http,
            &format!("{base}/api/oauth/token"),
            Some(DEMO),
            &[("grant_type", "client_credentials")],
        )
        .await;
        assert_eq!(secret.status, 401, "{framework}: {}", secret.body);
        // Nor can a secret client register.
        let refused = send(
            http.post(format!("{base}/api/oauth/register"))
                .header("content-type", "application/json")
                .body(json!({"redirect_uris": [CALLBACK]}).to_string()),
        )
        .await;
        assert_eq!(refused.status, 400, "{framework}: {}", refused.body);
        // A key client's token request with neither a DPoP proof nor a client certificate.
        let key = ProofKey::es256(31);
        let metadata = json!({
            "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "private_key_jwt",
            "jwks": jwks(&key), "grant_types": ["authorization_code"],
        });
        let client_id = register(&http, base, metadata).await;
        let claims = json!({
            "iss": client_id, "sub": client_id, "aud": base,
            "iat": now(), "exp": now() + 60, "jti": jti("assertion"),
        });
        let unconstrained = post_form(
            &http,
            &format!("{base}/api/oauth/token"),
            None,
            &[
                ("grant_type", "authorization_code"),
                ("code", "whatever"),
                ("client_id", &client_id),
                (
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                ),
                ("client_assertion", &sign(&key, None, &claims)),
            ],
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
        server.assert_alive_and_calm();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_rule_of_the_profile_is_refused_when_broken() {
    let files = TlsFiles::new();
    for framework in FRAMEWORKS {
        let server = start(framework, &files);
        let base = server.base.as_str();
        let key = ProofKey::es256(41);
        let metadata = json!({
            "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "private_key_jwt",
            "jwks": jwks(&key), "grant_types": ["authorization_code"],
        });
        let client_id = register(&files.http(None), base, metadata).await;
        let flow = Flow {
            base,
            http: files.http(None),
            client_id: client_id.clone(),
            key: ProofKey::es256(41),
            client: Client::KeyAndDpop {
                dpop: Box::new(ProofKey::es256(42)),
            },
        };
        let good = || {
            json!({
                "iss": client_id, "aud": base, "iat": now(), "nbf": now(),
                "exp": now() + 300, "jti": jti("object"), "client_id": client_id,
                "response_type": "code", "redirect_uri": CALLBACK, "scope": "profile",
                "code_challenge": CHALLENGE, "code_challenge_method": "S256",
            })
        };
        let object = |edit: &dyn Fn(&mut Value)| {
            let mut claims = good();
            edit(&mut claims);
            sign(&flow.key, Some("oauth-authz-req+jwt"), &claims)
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
                    c.as_object_mut().unwrap().remove("code_challenge");
                    c.as_object_mut().unwrap().remove("code_challenge_method");
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
                object(&|c| {
                    c.as_object_mut().unwrap().remove("redirect_uri");
                }),
                "invalid_request",
            ),
            (
                "no nbf",
                object(&|c| {
                    c.as_object_mut().unwrap().remove("nbf");
                }),
                "invalid_request_object",
            ),
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
            let refused = flow.post("/api/oauth/par", &[("request", &request)]).await;
            assert_eq!(refused.status, 400, "{framework}: {rule}: {}", refused.body);
            assert_eq!(refused.json()["error"], error, "{framework}: {rule}");
        }
        // Unsigned parameters at the PAR endpoint, and a request not pushed at all.
        let unsigned = flow
            .post(
                "/api/oauth/par",
                &[
                    ("response_type", "code"),
                    ("redirect_uri", CALLBACK),
                    ("code_challenge", CHALLENGE),
                    ("code_challenge_method", "S256"),
                ],
            )
            .await;
        assert_eq!(unsigned.status, 400, "{framework}: {}", unsigned.body);
        let not_pushed = get(
            &files.browser(None),
            &authorize_url(
                base,
                &[
                    ("client_id", client_id.as_str()),
                    ("response_type", "code"),
                    ("redirect_uri", CALLBACK),
                    ("code_challenge", CHALLENGE),
                    ("code_challenge_method", "S256"),
                ],
            ),
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
        for (rule, assertion) in [
            (
                "aud the token endpoint",
                sign(
                    &flow.key,
                    None,
                    &json!({
                        "iss": client_id, "sub": client_id, "aud": format!("{base}/api/oauth/token"),
                        "iat": now(), "exp": now() + 60, "jti": jti("assertion"),
                    }),
                ),
            ),
            (
                "signed RS256",
                sign(
                    &ProofKey::rsa(jsonwebtoken::Algorithm::RS256),
                    None,
                    &json!({
                        "iss": client_id, "sub": client_id, "aud": base,
                        "iat": now(), "exp": now() + 60, "jti": jti("assertion"),
                    }),
                ),
            ),
        ] {
            let refused = post_form(
                &flow.http,
                &format!("{base}/api/oauth/par"),
                None,
                &[
                    ("client_id", client_id.as_str()),
                    (
                        "client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                    ),
                    ("client_assertion", assertion.as_str()),
                    ("request", good().to_string().as_str()),
                ],
            )
            .await;
            assert_eq!(refused.status, 401, "{framework}: {rule}: {}", refused.body);
            assert_eq!(
                refused.json()["error"],
                "invalid_client",
                "{framework}: {rule}"
            );
        }
        server.assert_alive_and_calm();
    }
}
