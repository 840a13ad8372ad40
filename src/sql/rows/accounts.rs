//! The rows of clients and user accounts, and the clients rebuilt from them through the same
//! checks as at registration.

use super::corrupt;
use crate::client::{Approval, Client, ClientKeys, GrantType, OpenIdClient, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::{User, UserId};

/// A registered client.
pub(in crate::sql) struct ClientRow {
    client_id: String,
    name: String,
    secret_verifier: Option<String>,
    redirect_uris: String,
    grant_types: String,
    scopes: String,
    default_scope: String,
    approval_required: bool,
    audiences: String,
    resources: String,
    registration_token: Option<Vec<u8>>,
    dpop_bound: bool,
    par_required: bool,
    previous_secret_verifier: Option<String>,
    previous_secret_expires_at: Option<i64>,
    jwks: Option<String>,
    jwks_uri: Option<String>,
    openid: Option<String>,
}

by_column_name!(ClientRow {
    client_id,
    name,
    secret_verifier,
    redirect_uris,
    grant_types,
    scopes,
    default_scope,
    approval_required,
    audiences,
    resources,
    registration_token,
    dpop_bound,
    par_required,
    previous_secret_verifier,
    previous_secret_expires_at,
    jwks,
    jwks_uri,
    openid
});

impl ClientRow {
    /// The client, through the same checks as at registration.
    pub(in crate::sql) fn into_client(self) -> Result<Client, StoreError> {
        let builder = match self.secret_verifier {
            Some(stored) => Client::confidential(
                &self.client_id,
                SecretVerifier::from_stored(&stored).map_err(|_| corrupt("secret verifier"))?,
            ),
            None => match (self.jwks, self.jwks_uri) {
                (Some(jwks), _) => Client::private_key_jwt(
                    &self.client_id,
                    ClientKeys::jwks(&jwks).map_err(|_| corrupt("jwks"))?,
                ),
                (None, Some(uri)) => Client::private_key_jwt(
                    &self.client_id,
                    ClientKeys::jwks_uri(&uri).map_err(|_| corrupt("jwks_uri"))?,
                ),
                (None, None) => Client::public(&self.client_id),
            },
        };
        let uris: Vec<String> =
            serde_json::from_str(&self.redirect_uris).map_err(|_| corrupt("redirect URI list"))?;
        let grants = self
            .grant_types
            .split_whitespace()
            .map(|name| {
                GrantType::ALL
                    .into_iter()
                    .find(|g| g.as_str() == name)
                    .ok_or_else(|| corrupt("grant type"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let audiences: Vec<String> =
            serde_json::from_str(&self.audiences).map_err(|_| corrupt("audience list"))?;
        let resources: Vec<String> =
            serde_json::from_str(&self.resources).map_err(|_| corrupt("resource list"))?;
        let approval = if self.approval_required {
            Approval::Required
        } else {
            Approval::NotRequired
        };
        let builder = audiences
            .into_iter()
            .fold(builder, |b, audience| b.resource_server(audience));
        let builder = resources
            .into_iter()
            .fold(builder, |b, resource| b.resource(resource));
        let builder = match (
            self.previous_secret_verifier,
            self.previous_secret_expires_at,
        ) {
            (Some(stored), Some(until)) => builder.retiring_secret(
                SecretVerifier::from_stored(&stored)
                    .map_err(|_| corrupt("previous secret verifier"))?,
                UnixTime::from_secs(u64::try_from(until).unwrap_or(0)),
            ),
            _ => builder,
        };
        let builder = match self.registration_token {
            Some(bytes) => {
                let bytes = <[u8; 32]>::try_from(bytes)
                    .map_err(|_| corrupt("registration access token digest"))?;
                builder.registration_access_token(SecretDigest::from_bytes(bytes))
            }
            None => builder,
        };
        // Checked when the client was registered (an administrator may have allowed insecure
        // redirect URIs); a stored client loads as it was kept.
        uris.into_iter()
            .fold(builder, |b, uri| b.redirect_uri(uri))
            .allow_insecure_redirect_uris()
            .name(self.name)
            .grant_types(grants)
            .scopes(self.scopes)
            .default_scope(self.default_scope)
            .approval(approval)
            .require_dpop(self.dpop_bound)
            .require_pushed_requests(self.par_required)
            .openid(match self.openid {
                Some(stored) => {
                    OpenIdClient::from_stored(&stored).ok_or_else(|| corrupt("OpenID members"))?
                }
                None => OpenIdClient::default(),
            })
            .build()
            .map_err(|e| StoreError::failed(format!("a stored client is invalid: {e}")))
    }
}

/// When a self-registered client was last used (NULL: not recorded).
pub(in crate::sql) struct LastUsedRow {
    pub(in crate::sql) last_used: Option<i64>,
}

by_column_name!(LastUsedRow { last_used });

/// A client's id alone.
pub(in crate::sql) struct ClientIdRow {
    pub(in crate::sql) client_id: String,
}

by_column_name!(ClientIdRow { client_id });

/// A user account's claims, as one JSON object (NULL: none kept).
pub(in crate::sql) struct ClaimsRow {
    pub(in crate::sql) claims: Option<String>,
}

by_column_name!(ClaimsRow { claims });

/// A user account without its password hash.
pub(in crate::sql) struct UserRow {
    id: String,
    username: String,
}

by_column_name!(UserRow { id, username });

impl UserRow {
    pub(in crate::sql) fn into_user(self) -> User {
        User::new(UserId::new(self.id), self.username)
    }
}

/// A user account with its password hash, for authentication.
pub(in crate::sql) struct AccountRow {
    pub(in crate::sql) user: UserRow,
    pub(in crate::sql) password_hash: String,
}

by_column_name!(AccountRow { password_hash; user });
