//! What a sender-constrained token is bound to: a DPoP key (RFC 9449) or the client
//! certificate of a mutual-TLS connection (RFC 8705 §3), and how a store keeps it.

use std::fmt;

use crate::id::JwkThumbprint;
use crate::mtls::CertificateThumbprint;

/// What a sender-constrained token is bound to: only a request proving possession of it may
/// use the token. A token without a binding is a plain bearer token.
///
/// A store keeps it as text in one column ([`TokenBinding::to_stored`]): a DPoP key as its
/// bare 43-character thumbprint (as stores kept DPoP bindings before certificates could bind),
/// a certificate as `x5t#S256:` and its thumbprint.
///
/// ```
/// use grantor::mtls::CertificateThumbprint;
/// use grantor::store::{JwkThumbprint, TokenBinding};
///
/// let key = TokenBinding::from(JwkThumbprint::from_bytes([1; 32]));
/// assert_eq!(key.to_stored(), "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE");
/// let certificate = TokenBinding::from(CertificateThumbprint::from_bytes([1; 32]));
/// assert_eq!(certificate.to_stored(), "x5t#S256:AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE");
/// assert_eq!(TokenBinding::from_stored(&certificate.to_stored()), Some(certificate));
/// assert_eq!(TokenBinding::from_stored("x5t#S256:short"), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenBinding {
    /// A DPoP key, by its JWK thumbprint (RFC 9449 `cnf.jkt`).
    Dpop(JwkThumbprint),
    /// A client certificate, by its SHA-256 thumbprint (RFC 8705 §3.1 `cnf.x5t#S256`).
    Certificate(CertificateThumbprint),
}

/// The prefix of a certificate binding as a store keeps it; a DPoP key's text has none, so
/// rows kept before certificates could bind read as they were written.
const CERTIFICATE_PREFIX: &str = "x5t#S256:";

impl TokenBinding {
    /// The DPoP key, when the token is bound to one.
    pub fn jkt(&self) -> Option<JwkThumbprint> {
        match self {
            Self::Dpop(jkt) => Some(*jkt),
            Self::Certificate(_) => None,
        }
    }

    /// The certificate's thumbprint, when the token is bound to one.
    pub fn certificate(&self) -> Option<CertificateThumbprint> {
        match self {
            Self::Dpop(_) => None,
            Self::Certificate(thumbprint) => Some(*thumbprint),
        }
    }

    /// The binding as text, what a store keeps: a DPoP key's thumbprint alone, a
    /// certificate's after `x5t#S256:`.
    pub fn to_stored(&self) -> String {
        match self {
            Self::Dpop(jkt) => jkt.to_string(),
            Self::Certificate(thumbprint) => format!("{CERTIFICATE_PREFIX}{thumbprint}"),
        }
    }

    /// The binding a store kept as [`TokenBinding::to_stored`] gave it; `None` if it is not
    /// one.
    pub fn from_stored(stored: &str) -> Option<Self> {
        match stored.strip_prefix(CERTIFICATE_PREFIX) {
            Some(thumbprint) => CertificateThumbprint::parse(thumbprint).map(Self::Certificate),
            None => JwkThumbprint::parse(stored).map(Self::Dpop),
        }
    }
}

impl From<JwkThumbprint> for TokenBinding {
    fn from(jkt: JwkThumbprint) -> Self {
        Self::Dpop(jkt)
    }
}

impl From<CertificateThumbprint> for TokenBinding {
    fn from(thumbprint: CertificateThumbprint) -> Self {
        Self::Certificate(thumbprint)
    }
}

impl fmt::Debug for TokenBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dpop(jkt) => write!(f, "TokenBinding::Dpop({jkt})"),
            Self::Certificate(thumbprint) => write!(f, "TokenBinding::Certificate({thumbprint})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_binding_reads_back_and_a_bare_thumbprint_is_a_dpop_key() {
        let key = TokenBinding::Dpop(JwkThumbprint::from_bytes([7; 32]));
        let certificate = TokenBinding::Certificate(CertificateThumbprint::from_bytes([7; 32]));
        assert_eq!(TokenBinding::from_stored(&key.to_stored()), Some(key));
        assert_eq!(
            TokenBinding::from_stored(&certificate.to_stored()),
            Some(certificate)
        );
        assert_ne!(key.to_stored(), certificate.to_stored());
        assert_eq!(key.to_stored().len(), 43);
        for corrupt in [
            "",
            "x5t#S256:",
            "x5t#S256",
            "jkt:AAAA",
            "x5t#S256:x5t#S256:",
        ] {
            assert_eq!(TokenBinding::from_stored(corrupt), None, "{corrupt:?}");
        }
    }
}
