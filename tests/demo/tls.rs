//! Certificates for the tests that serve the demos over HTTPS with mutual TLS: a throwaway
//! server CA and server certificate for `127.0.0.1`, a client CA, and client certificates
//! signed by it or by themselves, written to temporary PEM files the demo is given.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use sha2::Digest as _;

/// A certificate and its private key, in PEM.
pub struct Identity {
    pub certificate_pem: String,
    pub key_pem: String,
    pub der: Vec<u8>,
}

impl Identity {
    /// reqwest's client identity: the certificate and its key in one PEM.
    pub fn reqwest(&self) -> reqwest::Identity {
        reqwest::Identity::from_pem(format!("{}{}", self.certificate_pem, self.key_pem).as_bytes())
            .expect("a client identity")
    }

    /// Its `x5t#S256` (RFC 8705 §3.1).
    pub fn thumbprint(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(&self.der))
    }

    /// Its DER in base64 (a JWK's `x5c` member).
    pub fn x5c(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.der)
    }
}

/// The PEM files of one demo over HTTPS, removed when dropped.
pub struct TlsFiles {
    pub server_ca_pem: String,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_ca: PathBuf,
    client_ca_issuer: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
}

impl Drop for TlsFiles {
    fn drop(&mut self) {
        for path in [&self.cert, &self.key, &self.client_ca] {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn ca(name: &str) -> rcgen::CertifiedIssuer<'static, rcgen::KeyPair> {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    rcgen::CertifiedIssuer::self_signed(params, key).unwrap()
}

fn temp_file(name: &str, contents: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "grantor-test-tls-{}-{}-{name}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, contents).unwrap();
    path
}

impl TlsFiles {
    /// A server certificate for `127.0.0.1` and `localhost`, and a client CA.
    pub fn new() -> Self {
        let server_issuer = ca("grantor test server CA (throwaway)");
        let key = rcgen::KeyPair::generate().unwrap();
        let leaf =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap()
                .signed_by(&key, &server_issuer)
                .unwrap();
        let client_ca_issuer = ca("grantor test client CA (throwaway)");
        Self {
            server_ca_pem: server_issuer.pem(),
            cert: temp_file("cert.pem", &leaf.pem()),
            key: temp_file("key.pem", &key.serialize_pem()),
            client_ca: temp_file("client-ca.pem", &client_ca_issuer.pem()),
            client_ca_issuer,
        }
    }

    /// The demo's flags for these files.
    pub fn args(&self) -> Vec<String> {
        vec![
            "--tls-cert".to_owned(),
            self.cert.display().to_string(),
            "--tls-key".to_owned(),
            self.key.display().to_string(),
            "--tls-client-ca".to_owned(),
            self.client_ca.display().to_string(),
        ]
    }

    /// A client certificate signed by the client CA, its subject `CN={common_name},O=grantor
    /// tests`, with `dns` as a DNS subject alternative name.
    pub fn client(&self, common_name: &str, dns: &str) -> Identity {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec![dns.to_owned()]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "grantor tests");
        let certificate = params.signed_by(&key, &self.client_ca_issuer).unwrap();
        Identity {
            certificate_pem: certificate.pem(),
            key_pem: key.serialize_pem(),
            der: certificate.der().to_vec(),
        }
    }

    /// A self-signed client certificate (RFC 8705 §2.2).
    pub fn self_signed(&self, common_name: &str) -> Identity {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        let certificate = params.self_signed(&key).unwrap();
        Identity {
            certificate_pem: certificate.pem(),
            key_pem: key.serialize_pem(),
            der: certificate.der().to_vec(),
        }
    }

    /// The same, keeping cookies: a browser (for the sign-in and approval pages).
    pub fn browser(&self, identity: Option<&Identity>) -> reqwest::Client {
        self.https(identity, true)
    }

    /// An HTTPS client trusting the demo's certificate, presenting `identity` if given.
    pub fn http(&self, identity: Option<&Identity>) -> reqwest::Client {
        self.https(identity, false)
    }

    fn https(&self, identity: Option<&Identity>, cookies: bool) -> reqwest::Client {
        let root = reqwest::Certificate::from_pem(self.server_ca_pem.as_bytes()).unwrap();
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .cookie_store(cookies)
            .tls_certs_only([root]);
        if let Some(identity) = identity {
            builder = builder.identity(identity.reqwest());
        }
        builder.build().expect("an HTTPS client")
    }
}
