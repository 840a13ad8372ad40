//! The host's API for client secrets, beside the endpoints.

use std::time::Duration;

use super::AuthorizationServer;
use crate::error::SecretRotationError;
use crate::grant::secrets;
use crate::secret::ClientSecret;

impl AuthorizationServer {
    /// Gives the confidential client `client_id` a new generated secret (256 bits from the OS
    /// CSPRNG) and answers it once; only its SHA-256 verifier is kept, through the
    /// [client registry](crate::AuthorizationServerBuilder::client_registry)'s
    /// [`Admin::rotate_client_secret`](crate::store::Admin::rotate_client_secret), in one
    /// atomic step. The previous secret keeps authenticating for `overlap` on the server's
    /// clock (strictly before its deadline), so a client's deployments can switch one by one;
    /// a later rotation ends an earlier overlap (only one previous secret is kept).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use std::time::Duration;
    /// use grantor::client::{Client, ClientCredentials, GrantType};
    /// use grantor::store::Admin as _;
    /// use grantor::*;
    ///
    /// let store = MemoryStore::new();
    /// let creds = ClientCredentials::generate().unwrap();
    /// let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
    ///     .grant_types([GrantType::ClientCredentials])
    ///     .build()
    ///     .unwrap();
    /// store.register_client(&client).await.unwrap();
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(store)
    ///     .build()
    ///     .unwrap();
    /// let id = creds.client_id.as_str();
    /// let secret = server.rotate_client_secret(id, Duration::from_secs(3600)).await.unwrap();
    /// assert_eq!(secret.expose_secret().len(), 43);
    /// assert!(!format!("{secret:?}").contains(secret.expose_secret()));
    /// # }
    /// ```
    pub async fn rotate_client_secret(
        &self,
        client_id: &str,
        overlap: Duration,
    ) -> Result<ClientSecret, SecretRotationError> {
        let inner = &*self.inner;
        let registry = inner
            .registry
            .as_deref()
            .ok_or(SecretRotationError::NoRegistry)?;
        let now = inner.clock.now();
        secrets::rotate(inner.client_seam(), registry, client_id, overlap, now).await
    }
}
