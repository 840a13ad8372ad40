//! Client ID metadata documents against `axum_server` and `actix_server` (CONTRACT.md part 3),
//! served over https from a loopback server whose certificate a CA made here signs (the demo
//! trusts it through `--fetch-ca-file`, and reaches loopback through
//! `--fetch-allow-loopback 1`): a document client signs in through the approval page, which
//! names its host as unverified, and redeems its code; 20 concurrent authorizations for a new
//! document fetch it once; a failed fetch is answered on an error page and retried on the next
//! request; a document breaking a rule is refused on an error page saying why.

mod demo;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use demo::Server;
use demo::http::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

each_framework! {
    a_document_client_is_fetched_once_approved_as_unverified_and_redeems_its_code => flow;
    failed_fetches_and_broken_documents_get_error_pages_and_are_not_kept => refusals;
}

/// An https server on loopback answering each path from `answers`, after `delay`, counting
/// requests by path.
struct DocumentServer {
    port: u16,
    ca_file: std::path::PathBuf,
    answers: Arc<Mutex<HashMap<String, (u16, String)>>>,
    requests: Arc<Mutex<HashMap<String, usize>>>,
    delay: Arc<Mutex<Duration>>,
    served: Arc<AtomicUsize>,
}

impl DocumentServer {
    async fn start(name: &str) -> Self {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "grantor test CA (throwaway)");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .signed_by(&leaf_key, &ca)
            .unwrap();
        let ca_file =
            std::env::temp_dir().join(format!("grantor-test-ca-{name}-{}.pem", std::process::id()));
        std::fs::write(&ca_file, ca.pem()).unwrap();
        let key =
            tokio_rustls::rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der())
                .unwrap();
        let provider = tokio_rustls::rustls::crypto::aws_lc_rs::default_provider();
        let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(Arc::new(provider))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = Self {
            port,
            ca_file,
            answers: Arc::default(),
            requests: Arc::default(),
            delay: Arc::default(),
            served: Arc::default(),
        };
        let (answers, requests, delay) = (
            server.answers.clone(),
            server.requests.clone(),
            server.delay.clone(),
        );
        let served = server.served.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, answers, requests) =
                    (acceptor.clone(), answers.clone(), requests.clone());
                let (delay, served) = (delay.clone(), served.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let mut head = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match tls.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head);
                    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                    *requests.lock().unwrap().entry(path.clone()).or_default() += 1;
                    let wait = *delay.lock().unwrap();
                    tokio::time::sleep(wait).await;
                    let (status, body) = answers
                        .lock()
                        .unwrap()
                        .get(&path)
                        .cloned()
                        .unwrap_or((404, String::new()));
                    let answer = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n\
                         cache-control: max-age=3600\r\ncontent-length: {}\r\n\
                         connection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = tls.write_all(answer.as_bytes()).await;
                    let _ = tls.shutdown().await;
                    served.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        server
    }

    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    /// Serves a valid document for a public client at `path`; answers its URL.
    fn document(&self, path: &str, name: &str) -> String {
        let url = self.url(path);
        let body = json!({
            "client_id": url,
            "client_name": name,
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        });
        self.serve(path, 200, &body.to_string());
        url
    }

    fn serve(&self, path: &str, status: u16, body: &str) {
        let answer = (status, body.to_owned());
        self.answers.lock().unwrap().insert(path.to_owned(), answer);
    }

    fn requests(&self, path: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    /// The demo, trusting this server's CA and allowed to reach loopback.
    fn demo(&self, framework: &str) -> Server {
        let ca = self.ca_file.to_str().unwrap();
        Server::start_with_args(
            framework,
            "memory",
            &["--fetch-allow-loopback", "1", "--fetch-ca-file", ca],
        )
    }
}

impl Drop for DocumentServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

fn authorization(client_id: &str) -> Vec<(&str, &str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "profile"),
        ("state", "s-doc"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
}

async fn flow(framework: &str) {
    let documents = DocumentServer::start(framework).await;
    let server = documents.demo(framework);
    let base = &server.base;
    let metadata = metadata_document(base).await;
    assert_eq!(metadata["client_id_metadata_document_supported"], true);

    let url = documents.document("/tools/client.json", "Tool Runner");
    let http = browser();
    let approval = sign_in_via_authorize(&http, base, &authorization(&url), ALICE).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    assert!(approval.body.contains("Tool Runner"), "{}", approval.body);
    assert!(approval.body.contains("Unverified"), "{}", approval.body);
    assert!(approval.body.contains("localhost"), "{}", approval.body);
    let code = callback_query(&decide(&http, base, &approval, "approve").await)
        .remove("code")
        .expect("a code");
    let tokens = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("client_id", &url),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    let tokens = assert_tokens(&tokens);
    assert_scope(&tokens["scope"], "profile");
    assert_eq!(
        documents.requests("/tools/client.json"),
        1,
        "kept after one fetch"
    );

    // Twenty browsers at once for a document nobody asked for yet: one fetch.
    *documents.delay.lock().unwrap() = Duration::from_millis(300);
    let fresh = documents.document("/tools/fresh.json", "Fresh Tool");
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let url = authorize_url(base, &authorization(&fresh));
            tokio::spawn(async move { get(&browser(), &url).await })
        })
        .collect();
    for task in tasks {
        let page = task.await.unwrap();
        assert_eq!(page.status, 200, "{}", page.body);
    }
    assert_eq!(documents.requests("/tools/fresh.json"), 1);
    server.assert_alive_and_calm();
}

async fn refusals(framework: &str) {
    let documents = DocumentServer::start(framework).await;
    let server = documents.demo(framework);
    let base = &server.base;
    // A fetch that fails (500) is an error page, never a redirect, and is not kept: the next
    // request fetches again, and then succeeds.
    let url = documents.url("/flaky.json");
    documents.serve("/flaky.json", 500, "");
    let page = get(&browser(), &authorize_url(base, &authorization(&url))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.location().is_none());
    assert!(page.body.contains("could not be fetched"), "{}", page.body);
    documents.document("/flaky.json", "Flaky Tool");
    let page = get(&browser(), &authorize_url(base, &authorization(&url))).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(documents.requests("/flaky.json"), 2);

    // A document with a secret, or naming another client_id: refused, saying why.
    let secret = documents.url("/secret.json");
    let body = json!({"client_id": secret, "redirect_uris": [CALLBACK], "client_secret": "x"});
    documents.serve("/secret.json", 200, &body.to_string());
    let page = get(&browser(), &authorize_url(base, &authorization(&secret))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("secret"), "{}", page.body);
    let other = documents.url("/other.json");
    let body = json!({"client_id": documents.url("/else.json"), "redirect_uris": [CALLBACK]});
    documents.serve("/other.json", 200, &body.to_string());
    let page = get(&browser(), &authorize_url(base, &authorization(&other))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("client_id"), "{}", page.body);
    // A URL with a query is refused before any fetch.
    let query = format!("{}?v=2", documents.url("/tools/client.json"));
    let page = get(&browser(), &authorize_url(base, &authorization(&query))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert_eq!(documents.requests("/tools/client.json?v=2"), 0);
    assert!(documents.served.load(Ordering::SeqCst) >= 4);
    server.assert_alive_and_calm();
}
