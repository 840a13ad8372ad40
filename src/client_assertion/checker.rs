//! `private_key_jwt` at every endpoint that authenticates clients (RFC 7523 §2.2): the client's
//! keys found (registered, or through the host's resolver), the assertion verified against
//! them and the endpoint, then its `jti` spent once.

use std::sync::Arc;

use async_trait::async_trait;

use super::{
    ASSERTION_WINDOW, ASSERTIONS_PER_CLIENT, ASSERTIONS_SELF_REGISTERED, AssertionContext,
    AssertionError, ClientKeyResolver, verify_assertion,
};
use crate::budget::{Budget, Payer, Spending};
use crate::client::{Client, ClientKeys};
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::grant::client_auth::ClientAssertions;
use crate::request::Assertion;
use crate::store::{AttemptCounter, SingleUseStore, namespace};

/// The server's assertion checks: where spent `jti`s go, the host's `jwks_uri` resolver, and
/// the URLs an assertion's `aud` may name.
pub(crate) struct Checker {
    pub(crate) single_use: Arc<dyn SingleUseStore>,
    /// Where each client's spent assertions are counted.
    pub(crate) attempts: Arc<dyn AttemptCounter>,
    pub(crate) resolver: Option<Arc<dyn ClientKeyResolver>>,
    /// The issuer identifier, always an acceptable `aud`.
    pub(crate) issuer: String,
    /// The token endpoint's URL, acceptable at every endpoint.
    pub(crate) token_url: String,
}

#[async_trait]
impl ClientAssertions for Checker {
    /// Verifies `assertion` for `client` at `now` and spends its `jti`; every refusal is
    /// `invalid_client` (401), a store or resolver failure `server_error`.
    async fn check(
        &self,
        client: &Client,
        assertion: Assertion<'_>,
        endpoint_path: &str,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let resolved;
        let jwks = match client.keys() {
            Some(ClientKeys::Jwks(jwks)) => &**jwks,
            Some(ClientKeys::JwksUri(uri)) => match &self.resolver {
                Some(resolver) => {
                    resolved = resolver.resolve(client.id(), uri).await?;
                    resolved.as_str()
                }
                None => return Err(refused("this client's jwks_uri cannot be resolved here")),
            },
            None => {
                return Err(refused(
                    "this client does not authenticate with a client assertion",
                ));
            }
        };
        let endpoint_url = format!("{}{endpoint_path}", self.issuer.trim_end_matches('/'));
        let audiences = [
            self.issuer.as_str(),
            self.token_url.as_str(),
            endpoint_url.as_str(),
        ];
        let context = AssertionContext {
            client_id: client.id().as_str(),
            audiences: &audiences,
            now,
        };
        let verified = verify_assertion(assertion.0, jwks, &context).map_err(into_error)?;
        let key = namespace::client_assertion(client.tier(), client.id(), &verified.jti);
        // Only now, every check passed: nobody without the client's key adds entries or
        // spends the client's budget.
        self.count(client, now).await?;
        if self
            .single_use
            .insert_once(&key, b"", verified.expires_at, now)
            .await?
        {
            Ok(())
        } else {
            Err(into_error(AssertionError::Replayed))
        }
    }
}

impl Checker {
    /// Counts a spent assertion against the client's budget and its tier's pool
    /// ([`budget`](crate::budget)).
    async fn count(&self, client: &Client, now: UnixTime) -> Result<(), OAuthError> {
        let budget = Budget {
            spending: Spending::Assertions,
            window: ASSERTION_WINDOW,
            per_client: Some(ASSERTIONS_PER_CLIENT),
            per_tier: ASSERTIONS_SELF_REGISTERED,
        };
        // An assertion is signed by the client's key: nobody else spends for it, so no
        // caller network is counted.
        let payer = Payer::new(client, None);
        budget.spend(&payer, &*self.attempts, now).await
    }
}

fn into_error(error: AssertionError) -> OAuthError {
    OAuthError::invalid_client(error.to_string())
}

fn refused(why: &'static str) -> OAuthError {
    OAuthError::invalid_client(why)
}
