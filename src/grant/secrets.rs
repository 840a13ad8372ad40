//! Client secret rotation: a confidential client gets a new generated secret while the
//! previous one keeps working until a deadline, so its deployments can move over one by one.
//! Only verifiers are kept; the new secret is handed out once.

use std::time::Duration;

use crate::client::{ClientError, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::{SecretRotationError, StoreError};
use crate::mint;
use crate::secret::ClientSecret;
use crate::store::Admin;
use crate::store::seam::ClientSeam;

/// Mints a 256-bit secret for the confidential client `client_id`, keeps its SHA-256 verifier
/// as current through `registry` in one atomic step, the previous verifier retiring at
/// `now + overlap`, and answers the secret (to show once).
pub(crate) async fn rotate(
    clients: ClientSeam<'_>,
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
