//! How a registering client authenticates and signs: its keys or certificate subject for the
//! method it names (RFC 7591 §2, RFC 8705 §2), and the algorithms a FAPI 2.0 profile allows it.

use super::{Registrar, Settled};
use crate::client::{Client, ClientBuilder, ClientKeys, TlsClientAuth};
use crate::error::OAuthError;
use crate::request::AuthMethod;

impl Registrar<'_> {
    /// RFC 7591 §2: `jwks` or `jwks_uri` with `private_key_jwt` (the latter only where the host
    /// resolves it), and only with it.
    pub(super) fn keys(
        &self,
        auth_method: AuthMethod,
        keys: Option<ClientKeys>,
    ) -> Result<Option<ClientKeys>, OAuthError> {
        let refuse = |why: &'static str| Err(OAuthError::invalid_client_metadata(why));
        let by_key = matches!(
            auth_method,
            AuthMethod::PrivateKeyJwt
                | AuthMethod::TlsClientAuth
                | AuthMethod::SelfSignedTlsClientAuth
        );
        if self.profile.is_fapi2() && !by_key {
            return refuse(
                "FAPI 2.0 registers only clients that authenticate with private_key_jwt or \
                 mutual TLS",
            );
        }
        match (auth_method, keys) {
            (AuthMethod::PrivateKeyJwt, _) if !self.assertions => {
                refuse("private_key_jwt is not supported by this server")
            }
            (AuthMethod::PrivateKeyJwt, None) => {
                refuse("private_key_jwt needs the client's public keys as jwks or jwks_uri")
            }
            (AuthMethod::PrivateKeyJwt, Some(ClientKeys::JwksUri(_))) if !self.jwks_uri => {
                refuse("this server does not fetch jwks_uri; register the keys as jwks")
            }
            (AuthMethod::PrivateKeyJwt, keys) => Ok(keys),
            // RFC 8705 §2.2 allows a `jwks_uri` too; grantor reads the certificates from the
            // registration alone, so that authenticating fetches nothing.
            (AuthMethod::SelfSignedTlsClientAuth, Some(keys @ ClientKeys::Jwks(_))) => {
                Ok(Some(keys))
            }
            (AuthMethod::SelfSignedTlsClientAuth, _) => refuse(
                "self_signed_tls_client_auth needs the client's certificates in the x5c of jwks \
                 (jwks_uri is not taken)",
            ),
            // Its keys verify its request objects; it authenticates with its certificate only.
            (AuthMethod::TlsClientAuth, Some(keys @ ClientKeys::Jwks(_))) => Ok(Some(keys)),
            (_, Some(_)) => refuse(
                "jwks and jwks_uri go with private_key_jwt and the TLS client certificate \
                 methods only (jwks alone for those)",
            ),
            (_, None) => Ok(None),
        }
    }

    /// RFC 8705 §2: the certificate methods only where the server takes certificates
    /// (`tls_client_auth` only where it trusts a CA), and `tls_client_auth` with exactly one
    /// subject member, which no other method carries.
    pub(super) fn tls_subject(
        &self,
        auth_method: AuthMethod,
        subject: Option<TlsClientAuth>,
    ) -> Result<Option<TlsClientAuth>, OAuthError> {
        let refuse = |why: &'static str| Err(OAuthError::invalid_client_metadata(why));
        let offer = self.mutual_tls;
        match (auth_method, subject) {
            (AuthMethod::TlsClientAuth, _) if !offer.is_some_and(|o| o.tls_client_auth) => {
                refuse("tls_client_auth is not supported by this server")
            }
            (AuthMethod::TlsClientAuth, None) => refuse(
                "tls_client_auth needs one tls_client_auth subject member (RFC 8705 section 2.1.2)",
            ),
            (AuthMethod::TlsClientAuth, subject) => Ok(subject),
            (AuthMethod::SelfSignedTlsClientAuth, _) if offer.is_none() => {
                refuse("self_signed_tls_client_auth is not supported by this server")
            }
            (_, Some(_)) => {
                refuse("the tls_client_auth subject members go with tls_client_auth only")
            }
            (_, None) => Ok(None),
        }
    }

    /// FAPI 2.0 Security Profile §5.4.1: what the server signs for the client and what the
    /// client signs are PS256, ES256 or EdDSA, never RS256; so a client that names no algorithm
    /// for its ID tokens, authorization responses or introspection answers gets ES256 (and the
    /// registration answer says so).
    pub(super) fn fapi2_algorithms(&self, settled: Settled) -> Result<Settled, OAuthError> {
        use crate::signing::{ClientSigningAlgorithm, SigningAlgorithm};
        if !self.profile.is_fapi2() {
            return Ok(settled);
        }
        let never_rs256 = || {
            OAuthError::invalid_client_metadata(
                "FAPI 2.0 takes PS256, ES256 or EdDSA signatures, never RS256",
            )
        };
        let server = |alg: Option<SigningAlgorithm>| match alg {
            Some(SigningAlgorithm::RS256) => Err(never_rs256()),
            Some(alg) => Ok(alg),
            None => Ok(SigningAlgorithm::ES256),
        };
        if settled.userinfo_alg == Some(SigningAlgorithm::RS256)
            || settled.request_object_alg == Some(ClientSigningAlgorithm::RS256)
        {
            return Err(never_rs256());
        }
        Ok(Settled {
            id_token_alg: Some(server(settled.id_token_alg)?),
            authorization_alg: Some(server(settled.authorization_alg)?),
            introspection_alg: Some(server(settled.introspection_alg)?),
            ..settled
        })
    }
}

/// A client that authenticates without a secret (`private_key_jwt`, `tls_client_auth`,
/// `self_signed_tls_client_auth`) under `id`, with the settled keys or subject (`settle` made
/// sure of them).
pub(super) fn keyed(id: &str, settled: &Settled) -> Result<ClientBuilder, OAuthError> {
    match (settled.auth_method, &settled.keys, &settled.tls_subject) {
        // Its keys, if any, verify its request objects.
        (AuthMethod::TlsClientAuth, keys, Some(subject)) => {
            let builder = Client::tls_client_auth(id, subject.clone());
            Ok(match keys {
                Some(keys) => builder.keys(keys.clone()),
                None => builder,
            })
        }
        (AuthMethod::SelfSignedTlsClientAuth, Some(keys), _) => {
            Ok(Client::self_signed_tls_client_auth(id, keys.clone()))
        }
        (AuthMethod::PrivateKeyJwt, Some(keys), _) => Ok(Client::private_key_jwt(id, keys.clone())),
        _ => Err(OAuthError::invalid_client_metadata(
            "private_key_jwt needs the client's public keys as jwks or jwks_uri",
        )),
    }
}
