//! The demos over HTTPS with mutual TLS (RFC 8705): `--tls-cert`, `--tls-key` and
//! `--tls-client-ca`, against both frameworks.

mod demo;
#[path = "demo/tls.rs"]
mod tls;

use demo::Server;
use serde_json::Value;
use tls::TlsFiles;

const FRAMEWORKS: [&str; 2] = ["axum", "actix"];

fn start(framework: &str, files: &TlsFiles) -> Server {
    let args = files.args();
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend(["--store", "memory"]);
    Server::launch(framework, &demo::Launch::new(&all))
}

async fn metadata(http: &reqwest::Client, base: &str) -> Value {
    let url = format!("{base}/.well-known/oauth-authorization-server");
    let reply = http.get(url).send().await.expect("metadata over HTTPS");
    assert_eq!(reply.status(), 200);
    reply.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demos_serve_https_with_or_without_a_client_certificate() {
    let files = TlsFiles::new();
    let alice = files.client("alice-device", "alice.example");
    let stranger = files.self_signed("stranger");
    for framework in FRAMEWORKS {
        let server = start(framework, &files);
        assert!(server.base.starts_with("https://"), "{}", server.base);
        for identity in [None, Some(&alice), Some(&stranger)] {
            let document = metadata(&files.http(identity), &server.base).await;
            assert_eq!(
                document["issuer"], server.base,
                "{framework}: the issuer is https"
            );
            assert!(
                document["token_endpoint"]
                    .as_str()
                    .unwrap()
                    .starts_with("https://"),
                "{framework}"
            );
        }
        // Plain HTTP on the same port is not served.
        let plain = reqwest::Client::builder().no_proxy().build().unwrap();
        let http_url = server.base.replacen("https://", "http://", 1);
        let answered = plain
            .get(format!("{http_url}/.well-known/oauth-authorization-server"))
            .send()
            .await;
        assert!(
            answered.map_or(true, |reply| reply.status() != 200),
            "{framework}: plain HTTP answered"
        );
        server.assert_alive_and_calm();
    }
}

#[test]
fn a_half_configured_tls_is_refused_at_start() {
    let files = TlsFiles::new();
    let cert = files.cert.display().to_string();
    let ca = files.client_ca.display().to_string();
    for (args, why) in [
        (
            vec!["--tls-cert", cert.as_str()],
            "--tls-cert and --tls-key go together",
        ),
        (
            vec!["--tls-client-ca", ca.as_str()],
            "--tls-client-ca needs --tls-cert and --tls-key",
        ),
        (
            vec!["--tls-cert", cert.as_str(), "--tls-key", ca.as_str()],
            "the private key PEM holds no readable private key",
        ),
    ] {
        let output = std::process::Command::new(demo::examples_dir().join("axum_server"))
            .args(["--addr", "127.0.0.1:0", "--store", "memory"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}

/// A client-credentials token for `demo-client` over `http`.
async fn token(http: &reqwest::Client, base: &str) -> Value {
    let reply = http
        .post(format!("{base}/api/oauth/token"))
        .basic_auth("demo-client", Some("demo-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=client_credentials&scope=profile")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    reply.json().await.unwrap()
}

async fn me(http: &reqwest::Client, base: &str, token: &str) -> (u16, String) {
    let reply = http
        .get(format!("{base}/api/me"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let challenge = reply
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, challenge)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_requested_with_a_certificate_is_bound_to_it() {
    let files = TlsFiles::new();
    let alice = files.client("alice-device", "alice.example");
    let other = files.client("other-device", "other.example");
    for framework in FRAMEWORKS {
        let server = start(framework, &files);
        let base = server.base.as_str();
        let with_alice = files.http(Some(&alice));
        let document = metadata(&with_alice, base).await;
        assert_eq!(
            document["tls_client_certificate_bound_access_tokens"], true,
            "{framework}"
        );
        let issued = token(&with_alice, base).await;
        assert_eq!(issued["token_type"], "bearer", "{framework}");
        let access = issued["access_token"].as_str().unwrap();
        let introspection = with_alice
            .post(format!("{base}/api/oauth/introspect"))
            .basic_auth("demo-client", Some("demo-secret"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("token={access}"))
            .send()
            .await
            .unwrap();
        let introspection: Value = introspection.json().await.unwrap();
        assert_eq!(introspection["active"], true, "{framework}");
        assert_eq!(
            introspection["cnf"]["x5t#S256"],
            alice.thumbprint(),
            "{framework}"
        );
        // The same certificate: served.
        assert_eq!(me(&with_alice, base, access).await.0, 200, "{framework}");
        // No certificate, or another: refused as RFC 8705 section 3 says.
        for http in [files.http(None), files.http(Some(&other))] {
            let (status, challenge) = me(&http, base, access).await;
            assert_eq!(status, 401, "{framework}");
            assert!(
                challenge.contains("invalid_token"),
                "{framework}: {challenge}"
            );
        }
        // Without a certificate, the token is a plain bearer token.
        let plain = token(&files.http(None), base).await;
        let plain = plain["access_token"].as_str().unwrap();
        assert_eq!(
            me(&files.http(Some(&other)), base, plain).await.0,
            200,
            "{framework}"
        );
        server.assert_alive_and_calm();
    }
}

/// Registers `metadata` over `http`; answers the client information.
async fn register(http: &reqwest::Client, base: &str, metadata: Value) -> Value {
    let reply = http
        .post(format!("{base}/api/oauth/register"))
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .send()
        .await
        .unwrap();
    let status = reply.status();
    let body: Value = reply.json().await.unwrap();
    assert_eq!(status, 201, "{body}");
    body
}

/// A pushed authorization request of `client_id` over `http`: its status.
async fn push(http: &reqwest::Client, base: &str, client_id: &str) -> u16 {
    let body = format!(
        "client_id={client_id}&response_type=code&scope=profile&code_challenge_method=S256\
         &code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM\
         &redirect_uri=http%3A%2F%2F127.0.0.1%3A8081%2Fcallback"
    );
    let reply = http
        .post(format!("{base}/api/oauth/par"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    reply.status().as_u16()
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_authenticate_with_their_certificates() {
    let files = TlsFiles::new();
    let alice = files.client("alice-device", "alice.example");
    let other = files.client("other-device", "other.example");
    let own = files.self_signed("self-signed-device");
    for framework in FRAMEWORKS {
        let server = start(framework, &files);
        let base = server.base.as_str();
        let anonymous = files.http(None);
        let document = metadata(&anonymous, base).await;
        let methods = document["token_endpoint_auth_methods_supported"]
            .as_array()
            .unwrap();
        for method in ["tls_client_auth", "self_signed_tls_client_auth"] {
            assert!(
                methods.contains(&Value::from(method)),
                "{framework}: {methods:?}"
            );
        }
        assert_eq!(
            document["mtls_endpoint_aliases"]["token_endpoint"],
            format!("{base}/api/oauth/token"),
            "{framework}"
        );
        let callback = "http://127.0.0.1:8081/callback";
        let by_ca = register(
            &anonymous,
            base,
            serde_json::json!({
                "redirect_uris": [callback],
                "token_endpoint_auth_method": "tls_client_auth",
                "tls_client_auth_subject_dn": "CN=alice-device,O=grantor tests",
            }),
        )
        .await;
        let by_ca = by_ca["client_id"].as_str().unwrap().to_owned();
        assert_eq!(
            push(&files.http(Some(&alice)), base, &by_ca).await,
            201,
            "{framework}"
        );
        for refused in [None, Some(&other), Some(&own)] {
            assert_eq!(
                push(&files.http(refused), base, &by_ca).await,
                401,
                "{framework}"
            );
        }
        let self_signed = register(
            &anonymous,
            base,
            serde_json::json!({
                "redirect_uris": [callback],
                "token_endpoint_auth_method": "self_signed_tls_client_auth",
                "jwks": {"keys": [{"kty": "EC", "crv": "P-256", "x5c": [own.x5c()]}]},
            }),
        )
        .await;
        let self_signed = self_signed["client_id"].as_str().unwrap().to_owned();
        assert_eq!(
            push(&files.http(Some(&own)), base, &self_signed).await,
            201,
            "{framework}"
        );
        for refused in [None, Some(&alice)] {
            assert_eq!(
                push(&files.http(refused), base, &self_signed).await,
                401,
                "{framework}"
            );
        }
        server.assert_alive_and_calm();
    }
}
