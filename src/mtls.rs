//! Mutual TLS (RFC 8705): the client certificate a request arrived with, as the host hands it
//! over.
//!
//! grantor never sees the TLS connection: the host (or the `axum` and `actix` glue, which take
//! it from the rustls connection) puts a [`ClientCertificate`] into the request's extensions,
//! and the endpoints read it from there. A request without one was made without a client
//! certificate. A host behind a TLS terminator builds one from the header its proxy sets, and
//! only from a proxy it trusts: anyone can send that header.
//!
//! With feature `mtls`, `MutualTls` (given to `AuthorizationServerBuilder::mutual_tls`)
//! lets clients authenticate with their certificate (RFC 8705 §2): `tls_client_auth` clients
//! with one from a CA the host trusts, `self_signed_tls_client_auth` clients with one of those
//! in their `jwks`.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use base64::Engine as _;

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

/// The most bytes a forwarded certificate header may hold: a full chain of the largest
/// certificates, in base64 and percent-encoded. Longer values are ignored without decoding.
pub const MAX_FORWARDED_BYTES: usize = MAX_CHAIN_LEN * MAX_CERTIFICATE_BYTES * 2;

impl ClientCertificate {
    /// The chain a TLS-terminating proxy forwarded as URL-encoded PEM (nginx's
    /// `$ssl_client_escaped_cert`, the AWS load balancers' `X-Amzn-Mtls-Clientcert`), or plain
    /// PEM: one or more `CERTIFICATE` blocks, the client's own first. `None` when it holds none,
    /// cannot be decoded, or is over [`MAX_FORWARDED_BYTES`] or the chain's bounds.
    ///
    /// Only a value set by a proxy the host trusts means anything: see [`ForwardedCertificate`].
    pub fn from_forwarded_pem(value: &[u8]) -> Option<Self> {
        if value.len() > MAX_FORWARDED_BYTES {
            return None;
        }
        let decoded = percent_encoding::percent_decode(value).collect::<Vec<u8>>();
        let text = std::str::from_utf8(&decoded).ok()?;
        let mut chain = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find(PEM_BEGIN) {
            let body = &rest[start + PEM_BEGIN.len()..];
            let end = body.find(PEM_END)?;
            let base64: Vec<u8> = body[..end]
                .bytes()
                .filter(|byte| !byte.is_ascii_whitespace())
                .collect();
            chain.push(
                base64::engine::general_purpose::STANDARD
                    .decode(base64)
                    .ok()?,
            );
            if chain.len() > MAX_CHAIN_LEN {
                return None;
            }
            rest = &body[end + PEM_END.len()..];
        }
        Self::from_der_chain(chain)
    }
}

const PEM_BEGIN: &str = "-----BEGIN CERTIFICATE-----";
const PEM_END: &str = "-----END CERTIFICATE-----";

/// Where a host behind a TLS terminator finds the client certificate: the header its proxy
/// sets, believed only on a request whose TCP peer is one of the proxies named here. Anyone can
/// send the header; a request from anywhere else has no client certificate, whatever it says.
///
/// ```
/// use std::net::{IpAddr, Ipv4Addr};
/// use grantor::mtls::{ClientCertificate, ForwardedCertificate};
///
/// let forwarded = ForwardedCertificate::new(http::HeaderName::from_static("x-ssl-client-cert"))
///     .trust(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 5)));
/// let mut request = http::Request::new(());
/// request.headers_mut().insert("x-ssl-client-cert", "garbage".parse().unwrap());
/// // A host's middleware: the peer is the connection's, never a header's.
/// let peer = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
/// if let Some(certificate) = forwarded.certificate(peer, request.headers()) {
///     request.extensions_mut().insert(certificate);
/// }
/// assert!(request.extensions().get::<ClientCertificate>().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct ForwardedCertificate {
    header: http::HeaderName,
    proxies: Vec<IpAddr>,
}

impl ForwardedCertificate {
    /// The header the proxy sets (URL-encoded or plain PEM, see
    /// [`ClientCertificate::from_forwarded_pem`]), trusted from no proxy yet.
    pub fn new(header: http::HeaderName) -> Self {
        Self {
            header,
            proxies: Vec::new(),
        }
    }

    /// Believes the header on requests whose TCP peer is `proxy`.
    pub fn trust(mut self, proxy: IpAddr) -> Self {
        self.proxies.push(proxy);
        self
    }

    /// The certificate the header carries when `peer` (the TCP connection's address) is a
    /// trusted proxy and the header holds one; else `None`.
    pub fn certificate(
        &self,
        peer: IpAddr,
        headers: &http::HeaderMap,
    ) -> Option<ClientCertificate> {
        let peer = peer.to_canonical();
        if !self
            .proxies
            .iter()
            .any(|proxy| proxy.to_canonical() == peer)
        {
            return None;
        }
        let mut values = headers.get_all(&self.header).iter();
        let value = values.next()?;
        // Two values: not what one proxy sets; believe neither.
        if values.next().is_some() {
            return None;
        }
        ClientCertificate::from_forwarded_pem(value.as_bytes())
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

    /// Whether `certificate` is the one this is the thumbprint of, compared in constant time:
    /// a token bound to a certificate is used only over a connection presenting it (RFC 8705
    /// §3).
    pub fn matches(&self, certificate: &ClientCertificate) -> bool {
        use subtle::ConstantTimeEq as _;
        self.0.ct_eq(&certificate.thumbprint.0).into()
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

    fn pem(blocks: &[&[u8]]) -> String {
        blocks
            .iter()
            .map(|der| {
                let body = base64::engine::general_purpose::STANDARD.encode(der);
                format!("{PEM_BEGIN}\n{body}\n{PEM_END}\n")
            })
            .collect()
    }

    #[test]
    fn a_forwarded_chain_is_read_from_url_encoded_or_plain_pem() {
        let text = pem(&[b"leaf-certificate-bytes", b"intermediate"]);
        let escaped: String =
            percent_encoding::utf8_percent_encode(&text, percent_encoding::NON_ALPHANUMERIC)
                .collect();
        for value in [text.as_bytes(), escaped.as_bytes()] {
            let certificate = ClientCertificate::from_forwarded_pem(value).unwrap();
            assert_eq!(certificate.end_entity(), b"leaf-certificate-bytes");
            assert_eq!(certificate.intermediates(), [b"intermediate".to_vec()]);
        }
        assert!(ClientCertificate::from_forwarded_pem(b"").is_none());
        assert!(
            ClientCertificate::from_forwarded_pem(
                b"-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----"
            )
            .is_none()
        );
        assert!(
            ClientCertificate::from_forwarded_pem(&vec![b'a'; MAX_FORWARDED_BYTES + 1]).is_none()
        );
    }

    #[test]
    fn a_forwarded_certificate_counts_only_from_a_trusted_proxy() {
        let proxy: IpAddr = "10.0.0.5".parse().unwrap();
        let forwarded =
            ForwardedCertificate::new(http::HeaderName::from_static("x-client-cert")).trust(proxy);
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "x-client-cert",
            pem(&[b"leaf"]).replace('\n', " ").parse().unwrap(),
        );
        assert!(forwarded.certificate(proxy, &headers).is_some());
        // The same address as an IPv4-mapped IPv6 peer.
        assert!(
            forwarded
                .certificate("::ffff:10.0.0.5".parse().unwrap(), &headers)
                .is_some()
        );
        assert!(
            forwarded
                .certificate("10.0.0.6".parse().unwrap(), &headers)
                .is_none()
        );
        headers.append(
            "x-client-cert",
            pem(&[b"other"]).replace('\n', " ").parse().unwrap(),
        );
        assert!(forwarded.certificate(proxy, &headers).is_none());
    }
}
