//! [`AuthorizationServerBuilder::cache_clients`] and [`AuthorizationServerBuilder::events`]:
//! what sits beside the stores.

use std::sync::Arc;
use std::time::Duration;

use super::AuthorizationServerBuilder;
use crate::events::Events;

impl AuthorizationServerBuilder {
    /// Remembers each client the client store found for `ttl`, so that a request does not look
    /// its client up again (over a database, a round trip saved on nearly every request). Off
    /// by default. Only found clients are kept, at most
    /// [`CLIENT_CACHE_CAPACITY`](crate::store::CLIENT_CACHE_CAPACITY), the least recently used going
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

    /// Hands every [event](crate::events) (tokens issued, refreshed and revoked, replays and
    /// reuse detected, sign-ins, throttled accounts, refused client credentials, registered
    /// clients) to `events`. The default, [`TracingEvents`](crate::events::TracingEvents),
    /// emits them through `tracing` (target `grantor::events`).
    pub fn events(mut self, events: Arc<dyn Events>) -> Self {
        self.events = Some(events);
        self
    }
}

#[cfg(feature = "private-key-jwt")]
impl AuthorizationServerBuilder {
    /// Resolves `jwks_uri`s of `private_key_jwt` clients (default: none, so such clients must
    /// register their `jwks` itself).
    pub fn client_key_resolver(
        mut self,
        resolver: Arc<dyn crate::client_assertion::ClientKeyResolver>,
    ) -> Self {
        self.client_keys = Some(resolver);
        self
    }
}
