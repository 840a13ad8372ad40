//! [`AuthorizationServerBuilder::token_exchange`]: turning token exchange (RFC 8693) on; and
//! [`AuthorizationServerBuilder::cache_clients`].

use std::sync::Arc;
use std::time::Duration;

use super::AuthorizationServerBuilder;
use crate::exchange::ExchangePolicy;

impl AuthorizationServerBuilder {
    /// Offers token exchange (RFC 8693) at the token endpoint under `policy`, and lists
    /// `urn:ietf:params:oauth:grant-type:token-exchange` in the metadata's
    /// `grant_types_supported`. A confidential client agreed the grant type
    /// ([`GrantType::TokenExchange`](crate::GrantType::TokenExchange)) may then trade an active
    /// access token grantor issued for another one, for a resource the server knows, with at
    /// most the subject token's scope, when `policy` allows it. Without a policy (the default)
    /// every exchange is answered `unsupported_grant_type`.
    pub fn token_exchange(mut self, policy: Arc<dyn ExchangePolicy>) -> Self {
        self.exchange = Some(policy);
        self
    }

    /// Remembers each client the client store found for `ttl`, so that a request does not look
    /// its client up again (over a database, a round trip saved on nearly every request). Off
    /// by default. Only found clients are kept, at most
    /// [`CLIENT_CACHE_CAPACITY`](crate::CLIENT_CACHE_CAPACITY), the least recently used going
    /// first; an unknown `client_id` always asks the store. Changes through the server
    /// (registration management, [secret
    /// rotation](crate::AuthorizationServer::rotate_client_secret)) forget the client at once;
    /// a change made past the server (in the database, by another node or process) is seen
    /// within `ttl`, so a removed client may be served for up to `ttl` more: keep it short (a
    /// second or two). A `ttl` of zero turns the cache off.
    pub fn cache_clients(mut self, ttl: Duration) -> Self {
        self.client_cache = (!ttl.is_zero()).then_some(ttl);
        self
    }
}
