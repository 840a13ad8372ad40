//! An https server on loopback serving client ID metadata documents, for the tests that drive
//! the demos with them (`demo_client_documents`, `demo_attack_4_fetch`): its certificate is
//! signed by a CA made here, whose file the demo is given through `--fetch-ca-file`.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::demo::Server;
use crate::demo::http::CALLBACK;

/// An https server on loopback answering each path from `answers`, after `delay`, counting
/// requests by path; and, on other loopback addresses, slow hosts under the same certificate.
pub struct DocumentServer {
    host: String,
    pub port: u16,
    pub ca_file: std::path::PathBuf,
    acceptor: tokio_rustls::TlsAcceptor,
    answers: Arc<Mutex<HashMap<String, (u16, String)>>>,
    requests: Arc<Mutex<HashMap<String, usize>>>,
    pub delay: Arc<Mutex<Duration>>,
    pub served: Arc<AtomicUsize>,
}

/// The loopback addresses the certificate names besides `localhost` and the server's own: room
/// for slow hosts ([`DocumentServer::slow_host`]).
const SLOW_HOSTS: std::ops::RangeInclusive<u8> = 2..=31;

impl DocumentServer {
    /// A server on `127.0.0.1`, named `localhost` in its URLs.
    pub async fn start(name: &str) -> Self {
        Self::start_on(name, "127.0.0.1").await
    }

    /// A server on the loopback `address`, named by it in its URLs (`localhost` for
    /// `127.0.0.1`); its certificate names both, `127.0.0.1` and `127.0.0.2`–`127.0.0.31`.
    pub async fn start_on(name: &str, address: &str) -> Self {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "grantor test CA (throwaway)");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        names.extend(SLOW_HOSTS.map(|n| format!("127.0.0.{n}")));
        if !names.iter().any(|n| n == address) {
            names.push(address.to_owned());
        }
        let leaf = rcgen::CertificateParams::new(names)
            .unwrap()
            .signed_by(&leaf_key, &ca)
            .unwrap();
        // A file of its own even when two servers of one test binary share a name: each
        // removes its file when dropped.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let ca_file = std::env::temp_dir().join(format!(
            "grantor-test-ca-{name}-{}-{}.pem",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
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
        let listener = tokio::net::TcpListener::bind((address, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let host = match address {
            "127.0.0.1" => "localhost".to_owned(),
            other => other.to_owned(),
        };
        let server = Self {
            host,
            port,
            ca_file,
            acceptor: acceptor.clone(),
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
                    let Some(path) = read_path(&mut tls).await else {
                        return;
                    };
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

    /// A slow host on the loopback `address` (one of `127.0.0.1`–`127.0.0.31`), under this
    /// server's certificate: it completes TLS, reads the request, and never answers. Its
    /// port, and how many requests reached it.
    pub async fn slow_host(&self, address: &str) -> (u16, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind((address, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let reached = Arc::new(AtomicUsize::new(0));
        let (counted, acceptor) = (Arc::clone(&reached), self.acceptor.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (counted, acceptor) = (Arc::clone(&counted), acceptor.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    if read_path(&mut tls).await.is_some() {
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                    // Held until the client gives up.
                    let mut rest = [0u8; 64];
                    while matches!(tls.read(&mut rest).await, Ok(n) if n > 0) {}
                });
            }
        });
        (port, reached)
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://{}:{}{path}", self.host, self.port)
    }

    /// Serves a valid document for a public client at `path`; answers its URL.
    pub fn document(&self, path: &str, name: &str) -> String {
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

    pub fn serve(&self, path: &str, status: u16, body: &str) {
        let answer = (status, body.to_owned());
        self.answers.lock().unwrap().insert(path.to_owned(), answer);
    }

    pub fn requests(&self, path: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    /// The demo, trusting this server's CA and allowed to reach loopback.
    pub fn demo(&self, framework: &str) -> Server {
        self.demo_with(framework, &["--fetch-allow-loopback", "1"])
    }

    /// The demo, trusting this server's CA, with `extra` arguments.
    pub fn demo_with(&self, framework: &str, extra: &[&str]) -> Server {
        let ca = self.ca_file.to_str().unwrap();
        let mut args = vec!["--fetch-ca-file", ca];
        args.extend_from_slice(extra);
        Server::start_with_args(framework, "memory", &args)
    }
}

impl Drop for DocumentServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

/// The path of the request read from `tls` (its head), if one came.
async fn read_path<S: tokio::io::AsyncRead + Unpin>(tls: &mut S) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match tls.read(&mut buffer).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    Some(head.split(' ').nth(1).unwrap_or("/").to_owned())
}
