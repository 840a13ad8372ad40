//! Mutual TLS (RFC 8705): the client certificate a request arrived with, as the host hands it
//! over.
//!
//! grantor never sees the TLS connection: the host (or the `axum` and `actix` glue, which take
//! it from the rustls connection) puts a [`ClientCertificate`] into the request's extensions,
//! and the endpoints read it from there. A request without one was made without a client
//! certificate. A host behind a TLS terminator builds one from the header its proxy sets, and
//! only from a proxy it trusts: anyone can send that header.
//!
//! With feature `mtls`, [`MutualTls`] (given to
//! [`AuthorizationServerBuilder::mutual_tls`](crate::AuthorizationServerBuilder::mutual_tls))
//! lets clients authenticate with their certificate (RFC 8705 §2): `tls_client_auth` clients
//! with one from a CA the host trusts, `self_signed_tls_client_auth` clients with one of those
//! in their `jwks`.

use std::fmt;
use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use crate::client::TlsClientAuth;
use crate::clock::UnixTime;

#[cfg(feature = "mtls")]
mod pki;
#[cfg(feature = "mtls")]
#[cfg_attr(docsrs, doc(cfg(feature = "mtls")))]
pub use pki::{MAX_CLIENT_CAS, MutualTls};

/// Whether a certificate is that of a `tls_client_auth` client (RFC 8705 §2.1): the seam
/// feature `mtls` implements and the builder wires in when the server accepts mutual TLS.
pub(crate) trait CertificateAuthority: Send + Sync {
    /// `Ok` when `certificate` chains to a CA the host trusts for client authentication,
    /// valid at `now`, and names `subject`; else why not, for the client's `invalid_client`.
    fn verify(
        &self,
        certificate: &ClientCertificate,
        subject: &TlsClientAuth,
        now: UnixTime,
    ) -> Result<(), &'static str>;
}

/// The most certificates a presented chain may hold (the client's own and its intermediates).
pub const MAX_CHAIN_LEN: usize = 8;

/// The largest one certificate of a presented chain may be, in DER bytes.
pub const MAX_CERTIFICATE_BYTES: usize = 16 * 1024;

/// The certificate chain a client presented on the TLS connection a request came over: the
/// client's own certificate first, then any intermediates it sent, each in DER. Its size is
/// bounded ([`MAX_CHAIN_LEN`] certificates of at most [`MAX_CERTIFICATE_BYTES`] each), so a
/// host that builds one from a header cannot be made to keep more. Cheap to clone.
///
/// The TLS layer has checked that the client holds the certificate's private key; whether the
/// certificate is a client's (chained to the CA the host trusts, or the one in the client's
/// keys) is grantor's decision, made when the client authenticates.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    chain: Arc<[Vec<u8>]>,
    thumbprint: CertificateThumbprint,
}

impl ClientCertificate {
    /// The chain as the TLS connection presented it, the client's own certificate first.
    /// `None` when it is empty, longer than [`MAX_CHAIN_LEN`], or holds a certificate larger
    /// than [`MAX_CERTIFICATE_BYTES`] or empty. The bytes are not parsed here.
    pub fn from_der_chain<I, C>(chain: I) -> Option<Self>
    where
        I: IntoIterator<Item = C>,
        C: Into<Vec<u8>>,
    {
        let mut certificates = Vec::new();
        for certificate in chain {
            let der = certificate.into();
            if der.is_empty() || der.len() > MAX_CERTIFICATE_BYTES {
                return None;
            }
            certificates.push(der);
            if certificates.len() > MAX_CHAIN_LEN {
                return None;
            }
        }
        let end_entity = certificates.first()?;
        let thumbprint = CertificateThumbprint(Sha256::digest(end_entity).into());
        Some(Self {
            chain: certificates.into(),
            thumbprint,
        })
    }

    /// The client's own certificate, in DER.
    pub fn end_entity(&self) -> &[u8] {
        &self.chain[0]
    }

    /// The certificates the client sent after its own (intermediates), in DER.
    pub fn intermediates(&self) -> &[Vec<u8>] {
        &self.chain[1..]
    }

    /// The SHA-256 thumbprint of the client's own certificate: what a token bound to it
    /// carries as `cnf.x5t#S256` (RFC 8705 §3.1).
    pub fn thumbprint(&self) -> CertificateThumbprint {
        self.thumbprint
    }
}

impl fmt::Debug for ClientCertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCertificate")
            .field("x5t#S256", &self.thumbprint)
            .field("chain_len", &self.chain.len())
            .finish()
    }
}

/// The SHA-256 thumbprint of a DER certificate (RFC 8705 §3.1, `x5t#S256`). The hash of a
/// public certificate, so not a secret; its text is unpadded base64url (43 characters).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CertificateThumbprint([u8; 32]);

impl CertificateThumbprint {
    /// A thumbprint from its 32 bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A thumbprint from its base64url text (as `cnf.x5t#S256` writes it); `None` unless it is
    /// exactly 32 bytes in unpadded base64url.
    pub fn parse(text: &str) -> Option<Self> {
        crate::id::JwkThumbprint::parse(text).map(|parsed| Self(*parsed.as_bytes()))
    }
}

impl fmt::Display for CertificateThumbprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = [0u8; crate::secret::base64url_len(32)];
        f.write_str(crate::secret::base64url_into(&self.0, &mut text))
    }
}

impl fmt::Debug for CertificateThumbprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CertificateThumbprint({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_is_bounded_in_length_and_in_bytes() {
        assert!(ClientCertificate::from_der_chain(Vec::<Vec<u8>>::new()).is_none());
        assert!(ClientCertificate::from_der_chain([Vec::new()]).is_none());
        assert!(
            ClientCertificate::from_der_chain([vec![1u8; MAX_CERTIFICATE_BYTES + 1]]).is_none()
        );
        assert!(ClientCertificate::from_der_chain(vec![vec![1u8]; MAX_CHAIN_LEN + 1]).is_none());
        let longest = ClientCertificate::from_der_chain(vec![vec![1u8]; MAX_CHAIN_LEN]).unwrap();
        assert_eq!(longest.intermediates().len(), MAX_CHAIN_LEN - 1);
    }

    #[test]
    fn the_thumbprint_is_the_sha256_of_the_clients_own_certificate() {
        let certificate =
            ClientCertificate::from_der_chain([b"leaf".to_vec(), b"ca".to_vec()]).unwrap();
        let expected: [u8; 32] = Sha256::digest(b"leaf").into();
        assert_eq!(certificate.thumbprint().as_bytes(), &expected);
        assert_eq!(certificate.end_entity(), b"leaf");
        let text = certificate.thumbprint().to_string();
        assert_eq!(text.len(), 43);
        assert_eq!(
            CertificateThumbprint::parse(&text),
            Some(certificate.thumbprint())
        );
        assert!(format!("{certificate:?}").contains(&text));
    }
}
