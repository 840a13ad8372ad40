//! Clients that authenticate with a TLS client certificate (RFC 8705 §2): the subject a
//! `tls_client_auth` client registered, and how a `self_signed_tls_client_auth` client's
//! certificates are read from its JWK Set.

use std::net::IpAddr;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::{ClientError, ClientKeys};

/// The longest registered subject value grantor takes, in bytes.
pub const MAX_TLS_SUBJECT_BYTES: usize = 4096;

/// The most attributes a registered subject distinguished name may have.
const MAX_DN_ATTRIBUTES: usize = 64;

/// What a `tls_client_auth` client's certificate must name (RFC 8705 §2.1.2): exactly one of
/// its subject distinguished name or one subject alternative name entry. The certificate must
/// also chain to a CA the server trusts.
///
/// ```
/// use grantor::client::{Client, TlsClientAuth};
///
/// let client = Client::tls_client_auth(
///     "payments",
///     TlsClientAuth::SubjectDn("CN=payments,O=Example Corp,C=GB".into()),
/// )
/// .scopes("payments")
/// .build()
/// .unwrap();
/// assert!(!client.is_public());
/// assert_eq!(client.tls_subject().unwrap().member(), "tls_client_auth_subject_dn");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TlsClientAuth {
    /// `tls_client_auth_subject_dn`: the subject DN as an RFC 4514 string. It is compared
    /// with the certificate's subject attribute by attribute: the order of the attributes, the
    /// case of their names (`cn` is `CN`, and `2.5.4.3` too), the case of their values and
    /// runs of spaces do not matter.
    SubjectDn(String),
    /// `tls_client_auth_san_dns`: a `dNSName` entry, compared without regard to case.
    SanDns(String),
    /// `tls_client_auth_san_uri`: a `uniformResourceIdentifier` entry, compared exactly.
    SanUri(String),
    /// `tls_client_auth_san_ip`: an `iPAddress` entry, IPv4 or IPv6.
    SanIp(IpAddr),
    /// `tls_client_auth_san_email`: an `rfc822Name` entry; its domain is compared without
    /// regard to case, its local part exactly.
    SanEmail(String),
}

impl TlsClientAuth {
    /// The client metadata member that registers it (RFC 8705 §2.1.2).
    pub fn member(&self) -> &'static str {
        match self {
            Self::SubjectDn(_) => "tls_client_auth_subject_dn",
            Self::SanDns(_) => "tls_client_auth_san_dns",
            Self::SanUri(_) => "tls_client_auth_san_uri",
            Self::SanIp(_) => "tls_client_auth_san_ip",
            Self::SanEmail(_) => "tls_client_auth_san_email",
        }
    }

    /// The registered value as the member's JSON string.
    pub fn value(&self) -> String {
        match self {
            Self::SubjectDn(text) | Self::SanDns(text) | Self::SanUri(text) => text.clone(),
            Self::SanEmail(text) => text.clone(),
            Self::SanIp(ip) => ip.to_string(),
        }
    }

    /// The subject of `member` (one of the [`member`](Self::member) names) with `value`,
    /// checked; `None` for another member.
    pub(crate) fn from_member(member: &str, value: &str) -> Option<Result<Self, ClientError>> {
        let subject = match member {
            "tls_client_auth_subject_dn" => Self::SubjectDn(value.to_owned()),
            "tls_client_auth_san_dns" => Self::SanDns(value.to_owned()),
            "tls_client_auth_san_uri" => Self::SanUri(value.to_owned()),
            "tls_client_auth_san_ip" => match value.parse() {
                Ok(ip) => Self::SanIp(ip),
                Err(_) => return Some(Err(ClientError::InvalidTlsClientAuth)),
            },
            "tls_client_auth_san_email" => Self::SanEmail(value.to_owned()),
            _ => return None,
        };
        Some(subject.check().map(|()| subject))
    }

    /// Whether the value is well formed: a DN that parses, a URI, a DNS name or an e-mail
    /// address in printable ASCII; each at most [`MAX_TLS_SUBJECT_BYTES`].
    pub(crate) fn check(&self) -> Result<(), ClientError> {
        let printable = |text: &str| {
            !text.is_empty()
                && text.len() <= MAX_TLS_SUBJECT_BYTES
                && text.bytes().all(|b| (0x21..=0x7e).contains(&b))
        };
        let sound = match self {
            Self::SubjectDn(dn) => DistinguishedName::parse(dn).is_some(),
            Self::SanDns(name) => printable(name),
            Self::SanUri(uri) => printable(uri) && url::Url::parse(uri).is_ok(),
            Self::SanIp(_) => true,
            Self::SanEmail(address) => {
                printable(address)
                    && address
                        .split_once('@')
                        .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty())
            }
        };
        if sound {
            Ok(())
        } else {
            Err(ClientError::InvalidTlsClientAuth)
        }
    }
}

/// How a client authenticates with a certificate, as its record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CertificateAuth {
    /// `tls_client_auth` (RFC 8705 §2.1): a certificate from a CA the server trusts, naming
    /// this subject.
    Tls(TlsClientAuth),
    /// `self_signed_tls_client_auth` (RFC 8705 §2.2): one of the certificates in the `x5c`
    /// of the client's `jwks`.
    SelfSigned,
}

/// A distinguished name as a sorted list of (attribute type as a dotted OID, value folded):
/// what two spellings of one subject have in common (RFC 8705 §2.1.2 leaves the comparison to
/// the server; RFC 4517 §4.2.15 compares attribute values caseless, with runs of spaces as
/// one). Attribute order is not compared: clients write RFC 4514 strings in either order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DistinguishedName(Vec<(String, String)>);

impl DistinguishedName {
    /// The name of attributes as a certificate holds them: (dotted OID, value).
    pub(crate) fn of_attributes<'v>(
        attributes: impl IntoIterator<Item = (String, &'v str)>,
    ) -> Self {
        let mut folded: Vec<_> = attributes
            .into_iter()
            .map(|(oid, value)| (oid, fold(value)))
            .collect();
        folded.sort_unstable();
        Self(folded)
    }

    /// An RFC 4514 string (RFC 4514 §3): `type=value` pairs separated by `,` (or `+` within
    /// one RDN), types by short name or dotted OID, values with `\` escapes. `None` for
    /// anything else, a `#` hex value (grantor compares strings only), an unknown type name,
    /// more than 64 attributes or more than [`MAX_TLS_SUBJECT_BYTES`].
    pub(crate) fn parse(text: &str) -> Option<Self> {
        if text.len() > MAX_TLS_SUBJECT_BYTES {
            return None;
        }
        let mut attributes = Vec::new();
        for pair in split_unescaped(text)? {
            let (name, value) = pair.split_once('=')?;
            let oid = attribute_oid(name.trim())?;
            let value = unescape(value.trim_start())?;
            attributes.push((oid, value));
            if attributes.len() > MAX_DN_ATTRIBUTES {
                return None;
            }
        }
        if attributes.is_empty() {
            return None;
        }
        Some(Self::of_attributes(
            attributes
                .iter()
                .map(|(oid, value)| (oid.clone(), value.as_str())),
        ))
    }
}

/// The pieces of `text` between unescaped `,` or `+` (RFC 4514 §3); `None` when it ends in a
/// lone `\`.
fn split_unescaped(text: &str) -> Option<Vec<&str>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' | '+' => {
                pieces.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if escaped {
        return None;
    }
    pieces.push(&text[start..]);
    Some(pieces)
}

/// An attribute value with its escapes undone (RFC 4514 §2.4: `\` and a special character,
/// or `\` and two hex digits of a UTF-8 byte); `None` for a `#` hex value or a bad escape.
fn unescape(value: &str) -> Option<String> {
    if value.starts_with('#') {
        return None;
    }
    let mut bytes = Vec::with_capacity(value.len());
    let mut rest = value.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        rest = tail;
        if byte != b'\\' {
            bytes.push(byte);
            continue;
        }
        match rest {
            [high, low, tail @ ..] if high.is_ascii_hexdigit() && low.is_ascii_hexdigit() => {
                let hex = [*high, *low];
                bytes.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
                rest = tail;
            }
            [special, tail @ ..] if b" \"#+,;<=>\\".contains(special) => {
                bytes.push(*special);
                rest = tail;
            }
            _ => return None,
        }
    }
    String::from_utf8(bytes).ok()
}

/// The dotted OID of an attribute type: a short name of RFC 4514 §3 or those certificates of
/// organisations commonly carry (caseless), or a dotted OID (with or without `OID.`).
fn attribute_oid(name: &str) -> Option<String> {
    let known = [
        ("CN", "2.5.4.3"),
        ("SN", "2.5.4.4"),
        ("SERIALNUMBER", "2.5.4.5"),
        ("C", "2.5.4.6"),
        ("L", "2.5.4.7"),
        ("ST", "2.5.4.8"),
        ("STREET", "2.5.4.9"),
        ("O", "2.5.4.10"),
        ("OU", "2.5.4.11"),
        ("TITLE", "2.5.4.12"),
        ("GIVENNAME", "2.5.4.42"),
        ("ORGANIZATIONIDENTIFIER", "2.5.4.97"),
        ("DC", "0.9.2342.19200300.100.1.25"),
        ("UID", "0.9.2342.19200300.100.1.1"),
        ("EMAILADDRESS", "1.2.840.113549.1.9.1"),
    ];
    if let Some((_, oid)) = known
        .iter()
        .find(|(short, _)| short.eq_ignore_ascii_case(name))
    {
        return Some((*oid).to_owned());
    }
    let dotted = name
        .strip_prefix("OID.")
        .or_else(|| name.strip_prefix("oid."))
        .unwrap_or(name);
    let numeric = dotted
        .split('.')
        .all(|arc| !arc.is_empty() && arc.bytes().all(|b| b.is_ascii_digit()));
    (numeric && dotted.contains('.')).then(|| dotted.to_owned())
}

/// A value as RFC 4517 §4.2.15 (caseIgnoreMatch) compares it: leading and trailing spaces
/// dropped, inner runs of white space as one space, letters in lower case.
fn fold(value: &str) -> String {
    value
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The SHA-256 thumbprints of the certificates in the `x5c` members of the keys of a JWK Set
/// (RFC 7517 §4.7: standard base64 DER, the key's own certificate first): what a
/// `self_signed_tls_client_auth` client may present. Empty for a `jwks_uri`.
pub(crate) fn certificate_thumbprints(keys: &ClientKeys) -> Vec<[u8; 32]> {
    let ClientKeys::Jwks(json) = keys else {
        return Vec::new();
    };
    let Ok(set) = serde_json::from_str::<Value>(json) else {
        return Vec::new();
    };
    let chains = set
        .get("keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|key| key.get("x5c")?.as_array());
    chains
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|text| base64::engine::general_purpose::STANDARD.decode(text).ok())
        .map(|der| Sha256::digest(der).into())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_dn_compares_without_regard_to_order_case_or_spaces() {
        let registered = DistinguishedName::parse("CN=Payments  App, O=Example Corp,C=GB").unwrap();
        for same in [
            "C=GB,O=Example Corp,CN=Payments App",
            "cn=payments app,o=EXAMPLE CORP,c=gb",
            "2.5.4.3=Payments App+OID.2.5.4.10=Example Corp,C=GB",
        ] {
            assert_eq!(
                DistinguishedName::parse(same).unwrap(),
                registered,
                "{same}"
            );
        }
        let other = DistinguishedName::parse("CN=Payments App,O=Example Corp,C=US").unwrap();
        assert_ne!(other, registered);
        let from_certificate = DistinguishedName::of_attributes([
            ("2.5.4.6".to_owned(), "GB"),
            ("2.5.4.10".to_owned(), "Example Corp"),
            ("2.5.4.3".to_owned(), "Payments App"),
        ]);
        assert_eq!(from_certificate, registered);
    }

    #[test]
    fn escapes_are_undone_and_malformed_names_refused() {
        let escaped = DistinguishedName::parse(r"CN=Smith\, John,O=A\2B B").unwrap();
        let plain = DistinguishedName::of_attributes([
            ("2.5.4.3".to_owned(), "Smith, John"),
            ("2.5.4.10".to_owned(), "A+ B"),
        ]);
        assert_eq!(escaped, plain);
        for bad in [
            "",
            "CN",
            "XX=a",
            "CN=#0403616263",
            r"CN=a\",
            r"CN=\zz",
            "CN=a,,O=b",
        ] {
            assert!(DistinguishedName::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn subjects_are_checked_by_their_member() {
        let ip = TlsClientAuth::from_member("tls_client_auth_san_ip", "2001:db8::1");
        assert_eq!(
            ip.unwrap().unwrap(),
            TlsClientAuth::SanIp("2001:db8::1".parse().unwrap())
        );
        for (member, bad) in [
            ("tls_client_auth_san_ip", "10.0.0"),
            ("tls_client_auth_san_uri", "not a uri"),
            ("tls_client_auth_san_email", "nobody"),
            ("tls_client_auth_san_dns", ""),
            ("tls_client_auth_subject_dn", "CN"),
        ] {
            assert_eq!(
                TlsClientAuth::from_member(member, bad).unwrap(),
                Err(ClientError::InvalidTlsClientAuth),
                "{member}"
            );
        }
        assert!(TlsClientAuth::from_member("jwks", "x").is_none());
    }
}
