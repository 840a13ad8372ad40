//! A client's registration members beyond the columns stores keep for every client: OpenID
//! Connect's (OIDC Dynamic Client Registration 1.0 §2, RP-Initiated and Back-Channel Logout)
//! and `client_secret_post`, kept together and stored as one JSON document.

use serde::{Deserialize, Serialize};

use crate::signing::SigningAlgorithm;

/// The OpenID Connect members of a client's registration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OpenIdClient {
    /// `id_token_signed_response_alg`: how its ID tokens are signed; `None` is the server's
    /// default (RS256, OIDC Registration §2; ES256 under FAPI 2.0).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "algorithm_name"
    )]
    pub(crate) id_token_alg: Option<SigningAlgorithm>,
    /// `userinfo_signed_response_alg`: its userinfo answers are JWTs signed so (OIDC Core
    /// §5.3.2); `None`: JSON.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "algorithm_name"
    )]
    pub(crate) userinfo_alg: Option<SigningAlgorithm>,
    /// `authorization_signed_response_alg` (JARM §3): how its JWT-secured authorization
    /// responses are signed; `None` is the default, RS256 (ES256 under FAPI 2.0).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "algorithm_name"
    )]
    pub(crate) authorization_alg: Option<SigningAlgorithm>,
    /// `introspection_signed_response_alg` (RFC 9701 §6): how the introspection answers it
    /// asks for as JWTs are signed; `None` is the default, RS256 (ES256 under FAPI 2.0).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "algorithm_name"
    )]
    pub(crate) introspection_alg: Option<SigningAlgorithm>,
    /// `post_logout_redirect_uris` (RP-Initiated Logout 1.0 §3.1): where a logout may send the
    /// browser back, matched exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) post_logout_redirect_uris: Vec<String>,
    /// `backchannel_logout_uri` (Back-Channel Logout 1.0 §2.2): where a logout token is posted
    /// when a session the client was issued tokens in ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) backchannel_logout_uri: Option<String>,
    /// `token_endpoint_auth_method: client_secret_post` (RFC 6749 §2.3.1, OIDC Core §9): the
    /// client sends its secret in the form body, and HTTP Basic is refused to it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) secret_in_body: bool,
    /// `application_type: native` (OIDC Registration §2): an app on a device, redirected to
    /// loopback `http`; else `web`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) native: bool,
    /// `default_max_age` (OIDC Registration §2): the `max_age` of its requests that send none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) default_max_age: Option<u64>,
    /// `require_auth_time` (OIDC Registration §2): its ID tokens must carry `auth_time`, as
    /// grantor's always do; kept to be answered back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) require_auth_time: bool,
    /// `subject_type: pairwise` (OIDC Core §8.1): the sector its users' `sub` is computed
    /// for; `None`: public subjects, the user id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sector: Option<String>,
    /// `sector_identifier_uri` (OIDC Registration §2, §5), when the sector was read from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sector_identifier_uri: Option<String>,
    /// `request_object_signing_alg` (RFC 9101 §10.2, OIDC Registration §2): the only
    /// algorithm its request objects may be signed with; `None`: any the server verifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) request_object_alg: Option<crate::signing::ClientSigningAlgorithm>,
    /// `tls_client_auth` with its subject, or `self_signed_tls_client_auth` (RFC 8705 §2):
    /// the client authenticates with its TLS client certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) certificate: Option<super::tls::CertificateAuth>,
}

#[cfg_attr(
    not(any(feature = "sqlite", feature = "postgres")),
    allow(dead_code, reason = "read and written by the SQL stores")
)]
impl OpenIdClient {
    /// The members as a store keeps them: a JSON object, `None` when nothing is set.
    pub(crate) fn to_stored(&self) -> Option<String> {
        (*self != Self::default()).then(|| serde_json::to_string(self).unwrap_or_default())
    }

    /// Members as [`to_stored`](Self::to_stored) wrote them.
    pub(crate) fn from_stored(stored: &str) -> Option<Self> {
        serde_json::from_str(stored).ok()
    }
}

/// An algorithm as its `alg` name.
mod algorithm_name {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::signing::SigningAlgorithm;

    pub(super) fn serialize<S: Serializer>(
        alg: &Option<SigningAlgorithm>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match alg {
            Some(alg) => serializer.serialize_str(alg.as_str()),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SigningAlgorithm>, D::Error> {
        let name: Option<String> = Option::deserialize(deserializer)?;
        name.map(|name| {
            SigningAlgorithm::from_name(&name)
                .ok_or_else(|| serde::de::Error::custom("an unknown signing algorithm"))
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_round_trip_and_nothing_set_stores_nothing() {
        assert_eq!(OpenIdClient::default().to_stored(), None);
        let es256 = OpenIdClient {
            id_token_alg: Some(SigningAlgorithm::ES256),
            ..OpenIdClient::default()
        };
        let stored = es256.to_stored().unwrap();
        assert_eq!(stored, r#"{"id_token_alg":"ES256"}"#);
        assert_eq!(OpenIdClient::from_stored(&stored), Some(es256));
        let logout = OpenIdClient {
            post_logout_redirect_uris: vec!["https://app.example/bye".into()],
            backchannel_logout_uri: Some("https://app.example/backchannel".into()),
            ..OpenIdClient::default()
        };
        assert_eq!(
            OpenIdClient::from_stored(&logout.to_stored().unwrap()),
            Some(logout)
        );
        assert_eq!(
            OpenIdClient::from_stored(r#"{"id_token_alg":"HS256"}"#),
            None
        );
        let pairwise = OpenIdClient {
            sector: Some("app.example".into()),
            sector_identifier_uri: Some("https://app.example/sector.json".into()),
            ..OpenIdClient::default()
        };
        assert_eq!(
            OpenIdClient::from_stored(&pairwise.to_stored().unwrap()),
            Some(pairwise)
        );
        let signed = OpenIdClient {
            request_object_alg: Some(crate::signing::ClientSigningAlgorithm::PS256),
            ..OpenIdClient::default()
        };
        let stored = signed.to_stored().unwrap();
        assert_eq!(stored, r#"{"request_object_alg":"PS256"}"#);
        assert_eq!(OpenIdClient::from_stored(&stored), Some(signed));
        let answers = OpenIdClient {
            authorization_alg: Some(SigningAlgorithm::EdDSA),
            introspection_alg: Some(SigningAlgorithm::ES256),
            ..OpenIdClient::default()
        };
        let stored = answers.to_stored().unwrap();
        assert_eq!(
            stored,
            r#"{"authorization_alg":"EdDSA","introspection_alg":"ES256"}"#
        );
        assert_eq!(OpenIdClient::from_stored(&stored), Some(answers));
        let tls = OpenIdClient {
            certificate: Some(super::super::tls::CertificateAuth::Tls(
                super::super::TlsClientAuth::SanIp("192.0.2.7".parse().unwrap()),
            )),
            ..OpenIdClient::default()
        };
        let stored = tls.to_stored().unwrap();
        assert_eq!(stored, r#"{"certificate":{"tls":{"san_ip":"192.0.2.7"}}}"#);
        assert_eq!(OpenIdClient::from_stored(&stored), Some(tls));
        let self_signed = OpenIdClient {
            certificate: Some(super::super::tls::CertificateAuth::SelfSigned),
            ..OpenIdClient::default()
        };
        let stored = self_signed.to_stored().unwrap();
        assert_eq!(stored, r#"{"certificate":"self_signed"}"#);
        assert_eq!(OpenIdClient::from_stored(&stored), Some(self_signed));
    }
}
