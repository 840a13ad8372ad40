//! Feature `mtls`: the host's settings for mutual TLS client authentication, and the check of
//! a `tls_client_auth` client's certificate (RFC 8705 §2.1): its chain by rustls-webpki, its
//! subject and alternative names read by x509-parser.

use std::net::IpAddr;
use std::time::Duration;

use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, TrustAnchor};
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::X509Certificate;

use super::{CertificateAuthority, ClientCertificate};
use crate::client::TlsClientAuth;
use crate::client::tls::DistinguishedName;
use crate::clock::UnixTime;

/// The most client CA certificates a server trusts.
pub const MAX_CLIENT_CAS: usize = 64;

/// Mutual TLS for client authentication (RFC 8705 §2), given to
/// [`AuthorizationServerBuilder::mutual_tls`](crate::AuthorizationServerBuilder::mutual_tls):
/// the CAs whose certificates `tls_client_auth` clients present, and where the host serves the
/// endpoints that ask for a client certificate, if not at their usual URLs.
///
/// With it, `self_signed_tls_client_auth` clients authenticate (their certificate is in their
/// `jwks`, no CA involved), and `tls_client_auth` clients too once a CA is trusted. The host
/// hands each request's certificate over as a [`ClientCertificate`].
///
/// ```no_run
/// use grantor::mtls::MutualTls;
/// use grantor::{AuthorizationServer, MemoryStore};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mtls = MutualTls::new()
///     .client_ca_pem(std::fs::read("client-ca.pem")?)
///     .endpoint_aliases("https://mtls.auth.example");
/// let server = AuthorizationServer::builder()
///     .issuer("https://auth.example")
///     .store(MemoryStore::new())
///     .mutual_tls(mtls)
///     .build()?;
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct MutualTls {
    client_cas: Vec<Vec<u8>>,
    aliases: Option<String>,
}

impl MutualTls {
    /// Mutual TLS with no CA trusted yet: only `self_signed_tls_client_auth` clients can
    /// authenticate with a certificate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Trusts the CA certificates in `pem` (one or more `CERTIFICATE` blocks) for
    /// `tls_client_auth` clients: a client's certificate must chain to one of them, for client
    /// authentication (an extended key usage, if it has one, that includes `clientAuth`).
    /// Checked when the server is built: at most [`MAX_CLIENT_CAS`] in all, each a
    /// certificate.
    pub fn client_ca_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.client_cas.push(pem.as_ref().to_vec());
        self
    }

    /// Serves the endpoints that take client certificates also under `base_url` (an
    /// absolute `https` URL, the paths appended): the metadata's `mtls_endpoint_aliases`
    /// (RFC 8705 §5), for a host that asks for client certificates only on another name or
    /// port.
    pub fn endpoint_aliases(mut self, base_url: impl Into<String>) -> Self {
        self.aliases = Some(base_url.into());
        self
    }

    /// The alias base URL, checked.
    pub(crate) fn aliases(&self) -> Result<Option<&str>, &'static str> {
        let Some(base) = self.aliases.as_deref() else {
            return Ok(None);
        };
        match url::Url::parse(base) {
            Ok(url)
                if url.scheme() == "https"
                    && url.host().is_some()
                    && url.query().is_none()
                    && url.fragment().is_none() =>
            {
                Ok(Some(base.trim_end_matches('/')))
            }
            _ => Err("the endpoint alias base URL must be https, without query or fragment"),
        }
    }

    /// The trusted CAs, each certificate a trust anchor.
    pub(crate) fn authority(&self) -> Result<ClientCas, &'static str> {
        let mut anchors = Vec::new();
        for pem in &self.client_cas {
            let mut found = 0;
            for certificate in CertificateDer::pem_slice_iter(pem) {
                let certificate = certificate.map_err(|_| "a client CA is not valid PEM")?;
                let anchor = webpki::anchor_from_trusted_cert(&certificate)
                    .map_err(|_| "a client CA is not an X.509 certificate")?;
                anchors.push(anchor.to_owned());
                found += 1;
            }
            if found == 0 {
                return Err("a client CA PEM holds no CERTIFICATE");
            }
        }
        if anchors.len() > MAX_CLIENT_CAS {
            return Err("more than 64 client CAs");
        }
        Ok(ClientCas { anchors })
    }
}

/// The CAs a server trusts for `tls_client_auth` clients (possibly none).
#[derive(Debug)]
pub(crate) struct ClientCas {
    anchors: Vec<TrustAnchor<'static>>,
}

impl ClientCas {
    /// Whether any CA is trusted, so `tls_client_auth` clients can authenticate.
    pub(crate) fn any(&self) -> bool {
        !self.anchors.is_empty()
    }

    /// RFC 8705 §2.1: the chain the client sent, from its certificate to a trusted CA, valid
    /// at `now` for client authentication. No revocation check: the host's CA decides how
    /// long its certificates live.
    fn chains(&self, certificate: &ClientCertificate, now: UnixTime) -> Result<(), &'static str> {
        let end_entity = CertificateDer::from(certificate.end_entity());
        let parsed = webpki::EndEntityCert::try_from(&end_entity)
            .map_err(|_| "the client certificate is not a valid X.509 certificate")?;
        let intermediates: Vec<CertificateDer<'_>> = certificate
            .intermediates()
            .iter()
            .map(|der| CertificateDer::from(der.as_slice()))
            .collect();
        let time = rustls_pki_types::UnixTime::since_unix_epoch(Duration::from_secs(now.as_secs()));
        parsed
            .verify_for_usage(
                webpki::ALL_VERIFICATION_ALGS,
                &self.anchors,
                &intermediates,
                time,
                webpki::KeyUsage::client_auth(),
                None,
                None,
            )
            .map(|_| ())
            .map_err(|_| {
                "the client certificate does not chain to a CA this server trusts, or has expired"
            })
    }
}

impl CertificateAuthority for ClientCas {
    fn verify(
        &self,
        certificate: &ClientCertificate,
        subject: &TlsClientAuth,
        now: UnixTime,
    ) -> Result<(), &'static str> {
        if !self.any() {
            return Err("this server trusts no CA for tls_client_auth");
        }
        self.chains(certificate, now)?;
        let (_, parsed) = x509_parser::parse_x509_certificate(certificate.end_entity())
            .map_err(|_| "the client certificate is not a valid X.509 certificate")?;
        if names(&parsed, subject) {
            Ok(())
        } else {
            Err(match subject {
                TlsClientAuth::SubjectDn(_) => {
                    "the client certificate's subject is not the registered tls_client_auth_subject_dn"
                }
                _ => "the client certificate has no subject alternative name the client registered",
            })
        }
    }
}

/// Whether `certificate` names `subject` (RFC 8705 §2.1.2): its subject DN, or one entry of
/// its subject alternative names of the registered kind.
fn names(certificate: &X509Certificate<'_>, subject: &TlsClientAuth) -> bool {
    if let TlsClientAuth::SubjectDn(registered) = subject {
        let attributes: Option<Vec<_>> = certificate
            .subject()
            .iter_attributes()
            .map(|attribute| {
                let value = attribute.as_str().ok()?;
                Some((attribute.attr_type().to_id_string(), value))
            })
            .collect();
        return match (attributes, DistinguishedName::parse(registered)) {
            (Some(attributes), Some(registered)) => {
                DistinguishedName::of_attributes(attributes) == registered
            }
            _ => false,
        };
    }
    let Ok(Some(alternative)) = certificate.subject_alternative_name() else {
        return false;
    };
    alternative
        .value
        .general_names
        .iter()
        .any(|name| alternative_name_is(name, subject))
}

fn alternative_name_is(name: &GeneralName<'_>, subject: &TlsClientAuth) -> bool {
    match (name, subject) {
        (GeneralName::DNSName(name), TlsClientAuth::SanDns(registered)) => {
            name.eq_ignore_ascii_case(registered)
        }
        (GeneralName::URI(uri), TlsClientAuth::SanUri(registered)) => uri == registered,
        (GeneralName::IPAddress(bytes), TlsClientAuth::SanIp(registered)) => {
            ip_address(bytes) == Some(*registered)
        }
        (GeneralName::RFC822Name(address), TlsClientAuth::SanEmail(registered)) => {
            same_address(address, registered)
        }
        _ => false,
    }
}

/// An `iPAddress` entry's 4 or 16 bytes (RFC 5280 §4.2.1.6).
fn ip_address(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
        _ => None,
    }
}

/// E-mail addresses compared as RFC 5280 §7.5 does: the local part exactly, the domain
/// without regard to case.
fn same_address(presented: &str, registered: &str) -> bool {
    match (presented.rsplit_once('@'), registered.rsplit_once('@')) {
        (Some((local, domain)), Some((want_local, want_domain))) => {
            local == want_local && domain.eq_ignore_ascii_case(want_domain)
        }
        _ => false,
    }
}
