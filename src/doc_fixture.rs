//! What the doc examples of the server's methods start from, written once: a server at
//! `https://auth.example` over a [`MemoryStore`], with the confidential client `app` (every
//! grant, scope `profile`, no approval page, redirect URI `https://app.example/cb`) and the
//! user Alice. Hidden from the docs; not for hosts.

use crate::client::{Approval, Client, GrantType, SecretVerifier};
use crate::memory::MemoryStore;
use crate::secret::{ClientSecret, Password};
use crate::server::AuthorizationServer;
use crate::store::{Admin as _, User};

/// `app`'s secret.
pub const SECRET: &str = "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t";

/// `Authorization: Basic` for `app` with [`SECRET`].
pub const BASIC: &str = "Basic YXBwOnMzY3IzdC1zM2NyM3QtczNjcjN0LXMzY3IzdC1zM2NyM3Q=";

/// A store holding the client `app`.
pub async fn store() -> MemoryStore {
    let store = MemoryStore::new();
    let verifier = SecretVerifier::digest(&ClientSecret::new(SECRET)).expect("a long secret");
    let client = Client::confidential("app", verifier)
        .redirect_uri("https://app.example/cb")
        .grant_types(GrantType::ALL)
        .scopes("profile")
        .approval(Approval::NotRequired)
        .build()
        .expect("a coherent client");
    store.register_client(&client).await.expect("a new client");
    store
}

/// A server at `https://auth.example` over [`store`], and Alice (`alice@example.com`,
/// `alice-password-1`).
pub async fn server() -> (AuthorizationServer, User) {
    let server = AuthorizationServer::builder()
        .issuer("https://auth.example")
        .store(store().await)
        .build()
        .expect("a valid configuration");
    let alice = server
        .add_user("alice@example.com", &Password::new("alice-password-1"))
        .await
        .expect("a new user");
    (server, alice)
}
