//! From records to column values, as both databases write them.

use crate::client::{Approval, Client, ClientKeys, GrantType, SecretVerifier};
use crate::clock::UnixTime;
use crate::store::{Authorization, UserAuthentication};

/// Unix seconds as a column value (saturating: far-future times stay far in the future).
pub(crate) fn secs(time: UnixTime) -> i64 {
    i64::try_from(time.as_secs()).unwrap_or(i64::MAX)
}

/// The columns of an authorization: client id, user id, username, scope, audience, and how
/// the user signed in (as JSON).
pub(crate) struct AuthorizationColumns<'a> {
    pub(crate) client_id: &'a str,
    pub(crate) user_id: Option<&'a str>,
    pub(crate) username: Option<&'a str>,
    pub(crate) scope: &'a str,
    pub(crate) audience: &'a str,
    pub(crate) authentication: Option<String>,
}

impl<'a> AuthorizationColumns<'a> {
    pub(crate) fn of(authorization: &'a Authorization) -> Self {
        let user = authorization.user.as_ref();
        Self {
            client_id: authorization.client_id.as_str(),
            user_id: user.map(|u| u.id().as_str()),
            username: user.map(|u| u.username()),
            scope: authorization.scope.as_str(),
            audience: authorization.audience.as_str(),
            authentication: authorization
                .authentication
                .as_ref()
                .map(UserAuthentication::to_stored),
        }
    }
}

/// A client's columns besides its id, name and scopes, which are text already.
pub(crate) struct ClientColumns {
    pub(crate) secret_verifier: Option<String>,
    pub(crate) redirect_uris: String,
    pub(crate) grant_types: String,
    pub(crate) approval_required: bool,
    pub(crate) audiences: String,
    pub(crate) resources: String,
    /// The digest of a self-registered client's registration access token (RFC 7592).
    pub(crate) registration_token: Option<[u8; 32]>,
    /// After a rotation: the previous secret's verifier and its deadline (Unix seconds).
    pub(crate) previous_secret_verifier: Option<String>,
    pub(crate) previous_secret_expires_at: Option<i64>,
    /// A `private_key_jwt` client's JWK Set (JSON) or its URL.
    pub(crate) jwks: Option<String>,
    pub(crate) jwks_uri: Option<String>,
}

impl ClientColumns {
    pub(crate) fn of(client: &Client) -> Self {
        let grant_types: Vec<&str> = GrantType::ALL
            .iter()
            .filter(|g| client.allows(**g))
            .map(|g| g.as_str())
            .collect();
        Self {
            secret_verifier: client.secret().map(SecretVerifier::to_stored),
            // A JSON array of strings cannot fail to serialize.
            redirect_uris: serde_json::to_string(client.redirect_uris()).unwrap_or_default(),
            grant_types: grant_types.join(" "),
            approval_required: client.approval() == Approval::Required,
            audiences: serde_json::to_string(client.audiences()).unwrap_or_default(),
            resources: serde_json::to_string(client.resources()).unwrap_or_default(),
            registration_token: client.registration_access_token().map(|d| *d.as_bytes()),
            previous_secret_verifier: client.retiring_secret().map(|(v, _)| v.to_stored()),
            previous_secret_expires_at: client.retiring_secret().map(|(_, until)| secs(until)),
            jwks: match client.keys() {
                Some(ClientKeys::Jwks(json)) => Some(json.to_string()),
                _ => None,
            },
            jwks_uri: match client.keys() {
                Some(ClientKeys::JwksUri(uri)) => Some(uri.clone()),
                _ => None,
            },
        }
    }
}
