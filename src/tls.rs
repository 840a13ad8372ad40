//! HTTPS on rustls, with client certificates for mutual TLS (RFC 8705), feature `tls`.
//!
//! [`server_config`] makes the rustls configuration from PEM: the server's certificate chain,
//! its private key and, for mutual TLS, the CA certificates a client's certificate may chain to.
//! With those CAs the server asks every client for a certificate, optionally: a client without
//! one still connects, and one with any certificate (self-signed too, as RFC 8705 §2.2's
//! `self_signed_tls_client_auth` needs) completes the handshake once it proves it holds the
//! certificate's private key. Whether that certificate is a client's is grantor's decision, when
//! the client authenticates or presents a certificate-bound token; the CAs' names are only the
//! hint the server sends in its certificate request.
//!
//! The glue serves it: with feature `axum`, `grantor::axum::TlsListener`; with feature `actix`,
//! `HttpServer::bind_rustls_0_23` and `grantor::actix::client_certificate_on_connect`. Each hands
//! grantor the request's [`ClientCertificate`].

use std::fmt;
use std::sync::Arc;

use rustls::DigitallySignedStruct;
use rustls::DistinguishedName;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};

use crate::mtls::ClientCertificate;

/// Why the TLS configuration could not be made: the PEM it was given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The server's certificate PEM holds no certificate, or one that cannot be read.
    #[error("the server certificate PEM holds no readable certificate")]
    Certificate,
    /// The private key PEM holds no PKCS#8, PKCS#1 or SEC1 key that can be read.
    #[error("the private key PEM holds no readable private key")]
    PrivateKey,
    /// The client CA PEM holds no certificate, or one that is not a usable CA certificate.
    #[error("the client CA PEM holds no usable CA certificate")]
    ClientCa,
    /// rustls refused the certificate and key together (the key is not the certificate's, or
    /// its algorithm is not supported).
    #[error("the certificate and key were refused: {0}")]
    Refused(String),
}

/// The rustls configuration for HTTPS with `certificate_chain_pem` (the server's certificate
/// first, then its intermediates) and `private_key_pem`. With `client_ca_pem`, clients are
/// asked for a certificate (optionally), those CAs named as the hint; see the module's docs.
/// HTTP/1.1 is offered by ALPN (actix-web adds HTTP/2 to it).
pub fn server_config(
    certificate_chain_pem: &[u8],
    private_key_pem: &[u8],
    client_ca_pem: Option<&[u8]>,
) -> Result<rustls::ServerConfig, TlsError> {
    let chain = CertificateDer::pem_slice_iter(certificate_chain_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| TlsError::Certificate)?;
    if chain.is_empty() {
        return Err(TlsError::Certificate);
    }
    let key = PrivateKeyDer::from_pem_slice(private_key_pem).map_err(|_| TlsError::PrivateKey)?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|error| TlsError::Refused(error.to_string()))?;
    let builder = match client_ca_pem {
        Some(pem) => {
            builder.with_client_cert_verifier(Arc::new(AnyClientCertificate::new(pem, &provider)?))
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|error| TlsError::Refused(error.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The client certificate of a TLS connection, as rustls presents it: `None` without one (or
/// with a chain over [`ClientCertificate`]'s bounds, which no client of grantor's can use).
pub fn client_certificate(connection: &rustls::ServerConnection) -> Option<ClientCertificate> {
    let chain = connection.peer_certificates()?;
    ClientCertificate::from_der_chain(chain.iter().map(|der| der.as_ref().to_vec()))
}

/// Asks every client for a certificate and takes any it holds the key of: RFC 8705 leaves the
/// decision to the authorization server, which makes it per client (a CA for
/// `tls_client_auth`, the registered certificate for `self_signed_tls_client_auth`). The
/// handshake's signature is still checked, with rustls' own verification.
struct AnyClientCertificate {
    hints: Vec<DistinguishedName>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl AnyClientCertificate {
    fn new(client_ca_pem: &[u8], provider: &CryptoProvider) -> Result<Self, TlsError> {
        let mut roots = rustls::RootCertStore::empty();
        for certificate in CertificateDer::pem_slice_iter(client_ca_pem) {
            let certificate = certificate.map_err(|_| TlsError::ClientCa)?;
            roots.add(certificate).map_err(|_| TlsError::ClientCa)?;
        }
        if roots.is_empty() {
            return Err(TlsError::ClientCa);
        }
        Ok(Self {
            hints: roots.subjects(),
            algorithms: provider.signature_verification_algorithms,
        })
    }
}

impl fmt::Debug for AnyClientCertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyClientCertificate")
            .field("hints", &self.hints.len())
            .finish()
    }
}

impl ClientCertVerifier for AnyClientCertificate {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
