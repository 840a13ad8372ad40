//! [`AuthorizationServerBuilder::token_exchange`]: turning token exchange (RFC 8693) on.

use std::sync::Arc;

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
}
