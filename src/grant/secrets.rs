//! Client secret rotation: a confidential client gets a new generated secret while the
//! previous one keeps working until a deadline, so its deployments can move over one by one.
//! Only verifiers are kept; the new secret is handed out once.

use std::time::Duration;

use crate::client::{ClientError, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::mint;
use crate::secret::ClientSecret;
use crate::store::{Admin, ClientStore};

/// Why a client's secret was not rotated
/// ([`AuthorizationServer::rotate_client_secret`](crate::AuthorizationServer::rotate_client_secret)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretRotationError {
    /// No client is registered under this id.
    #[error("no client is registered under this id")]
    UnknownClient,
    /// The client has no secret to rotate: a public client (RFC 6749 §2.1), or one that
    /// authenticates with `private_key_jwt`.
    #[error("a public client has no secret to rotate")]
    PublicClient,
    /// The server was built without a [client registry](crate::AuthorizationServerBuilder::client_registry).
    #[error("the server has no client registry to keep the new secret in")]
    NoRegistry,
    /// The store failed, or the OS gave no randomness.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Mints a 256-bit secret for the confidential client `client_id`, keeps its SHA-256 verifier
/// as current through `registry` in one atomic step, the previous verifier retiring at
/// `now + overlap`, and answers the secret (to show once).
pub(crate) async fn rotate(
    clients: &dyn ClientStore,
    registry: &dyn Admin,
    client_id: &str,
    overlap: Duration,
    now: UnixTime,
) -> Result<ClientSecret, SecretRotationError> {
    let client = clients
        .find_client(client_id)
        .await?
        .ok_or(SecretRotationError::UnknownClient)?;
    if client.secret().is_none() {
        return Err(SecretRotationError::PublicClient);
    }
    let (secret, verifier) = new_secret()?;
    if registry
        .rotate_client_secret(client_id, &verifier, now.plus(overlap))
        .await?
    {
        Ok(secret)
    } else {
        // Removed (or made public) since it was read.
        Err(SecretRotationError::UnknownClient)
    }
}

/// A new 256-bit secret from the one CSPRNG function, and its SHA-256 verifier.
pub(crate) fn new_secret() -> Result<(ClientSecret, SecretVerifier), StoreError> {
    let secret = mint::client_secret()?;
    // 43 characters: always long enough for a digest verifier.
    let verifier = SecretVerifier::digest(&secret)
        .map_err(|e: ClientError| StoreError::failed(e.to_string()))?;
    Ok((secret, verifier))
}
