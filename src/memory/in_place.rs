//! The memory store's token and client seams. It never waits, so it answers them in place:
//! the server calls it through [`TokensInPlace`] and [`ClientsInPlace`] when it is the seam,
//! without the boxed future of each `async_trait` call, and its [`TokenIssuer`] and
//! [`ClientStore`] hand back the same answers, for a host that calls them.

use std::sync::Arc;

use async_trait::async_trait;

use super::MemoryStore;
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::seam::{ClientsInPlace, TokensInPlace};
use crate::store::{
    AccessGrant, ClientStore, CodeGrant, CodeRedemption, FamilyId, NewTokens, RefreshGrant,
    Rotation, TokenIssuer,
};

impl ClientsInPlace for MemoryStore {
    fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        Ok(self.parts.clients.find(client_id))
    }
}

impl TokensInPlace for MemoryStore {
    fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError> {
        self.parts.tokens.insert_code(code, family, grant)
    }

    fn redeem_code(
        &self,
        code: &SecretDigest,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError> {
        self.parts.tokens.redeem_code(code, now)
    }

    fn insert_tokens(&self, tokens: &NewTokens) -> Result<(), StoreError> {
        self.parts.tokens.insert_tokens(tokens)
    }

    fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError> {
        self.parts.tokens.find_refresh_token(token, now)
    }

    fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: &NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError> {
        self.parts
            .tokens
            .rotate_refresh_token(token, successor, retry_since)
    }

    fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        self.parts.tokens.find_access_token(token, now)
    }

    fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError> {
        self.parts.tokens.revoke_access_token(token)
    }

    fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
        self.parts.tokens.revoke_family(family)
    }

    fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError> {
        Ok(self.parts.tokens.revoke_client(client_id))
    }
}

#[async_trait]
impl ClientStore for MemoryStore {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        ClientsInPlace::find_client(self, client_id)
    }
}

#[async_trait]
impl TokenIssuer for MemoryStore {
    async fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError> {
        TokensInPlace::insert_code(self, code, family, grant)
    }

    async fn redeem_code(
        &self,
        code: &SecretDigest,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError> {
        TokensInPlace::redeem_code(self, code, now)
    }

    async fn insert_tokens(&self, tokens: NewTokens) -> Result<(), StoreError> {
        TokensInPlace::insert_tokens(self, &tokens)
    }

    async fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError> {
        TokensInPlace::find_refresh_token(self, token, now)
    }

    async fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError> {
        TokensInPlace::rotate_refresh_token(self, token, &successor, retry_since)
    }

    async fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        TokensInPlace::find_access_token(self, token, now)
    }

    async fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError> {
        TokensInPlace::revoke_access_token(self, token)
    }

    async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
        TokensInPlace::revoke_family(self, family)
    }

    async fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError> {
        TokensInPlace::revoke_client(self, client_id)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::{AuthorizationServer, MemoryStore};

    fn builder() -> crate::AuthorizationServerBuilder {
        AuthorizationServer::builder().issuer("https://auth.example")
    }

    #[test]
    fn the_memory_store_given_as_every_seam_is_called_in_place() {
        let server = builder().store(MemoryStore::new()).build().unwrap();
        assert_eq!(server.calls_memory_in_place(), (true, true));
    }

    #[test]
    fn a_seam_set_apart_from_the_memory_store_is_called_through_its_trait() {
        let tokens = Arc::new(MemoryStore::new());
        let server = builder()
            .tokens(tokens)
            .store(MemoryStore::new())
            .build()
            .unwrap();
        assert_eq!(server.calls_memory_in_place(), (false, true));
    }

    #[test]
    fn cached_clients_are_asked_through_the_cache() {
        let server = builder()
            .store(MemoryStore::new())
            .cache_clients(Duration::from_secs(1))
            .build()
            .unwrap();
        assert_eq!(server.calls_memory_in_place(), (true, false));
    }
}
