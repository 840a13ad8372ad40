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
