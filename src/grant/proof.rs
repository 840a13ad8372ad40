//! Proof of possession (DPoP, RFC 9449): the seam feature `dpop` implements and the builder
//! wires in. The token endpoint and bearer validation speak to it only through
//! [`ProofOfPossession`], so no layer below the builder names the feature.

use async_trait::async_trait;
use http::{HeaderMap, Method, Uri};

use super::bearer::Refusal;
use crate::client::ClientTier;
use crate::clock::UnixTime;
use crate::error::{OAuthError, StoreError};
use crate::store::JwkThumbprint;

/// A token request's proof of possession of a key (RFC 9449), checked but not yet spent: the
/// grants bind what they issue to its key, and spend it just before.
#[async_trait]
pub(crate) trait Possession: Send + Sync {
    /// The key's thumbprint.
    fn jkt(&self) -> JwkThumbprint;

    /// Spends the proof for a client of `tier` (its budget, [`budget`](crate::budget)): a
    /// second use, on any node, is refused.
    async fn spend(&self, tier: ClientTier, now: UnixTime) -> Result<(), OAuthError>;
}

/// A protected resource's request presenting a token bound to a key.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(
    not(feature = "dpop"),
    allow(dead_code, reason = "read by feature dpop")
)]
pub(crate) struct AtResource<'a> {
    /// The request's method and URI, which the proof is checked for; `None` when the host
    /// passed headers alone.
    pub(crate) target: Option<(&'a Method, &'a Uri)>,
    /// The resource served, whose origin the proof's `htu` names.
    pub(crate) resource: &'a str,
    /// The token presented, whose hash the proof's `ath` is.
    pub(crate) token: &'a str,
    /// The key the token is bound to.
    pub(crate) bound: JwkThumbprint,
    /// Who spends the proof: the token's user, or its client for a token without one; every
    /// key of one account together has a budget.
    pub(crate) account: &'a str,
}

/// The `DPoP-Nonce` response header (RFC 9449 §8.1).
pub(crate) const NONCE_HEADER: &str = "dpop-nonce";

/// The `DPoP` request header (RFC 9449 §4.1). A request without it presents no proof, which
/// the endpoints tell without a call to the checker (and without the allocation each call of
/// an `async_trait` method makes).
pub(crate) const PROOF_HEADER: &str = "dpop";

/// The server's proof-of-possession checks.
#[async_trait]
pub(crate) trait ProofOfPossession: Send + Sync {
    /// Whether every client must send a proof with every token request.
    fn required(&self) -> bool;

    /// The token request's proof, if it sent one: checked for `POST` at the token endpoint,
    /// not spent yet (the grant spends it just before it issues).
    async fn at_token_endpoint<'a>(
        &'a self,
        headers: &HeaderMap,
        now: UnixTime,
    ) -> Result<Option<Box<dyn Possession + 'a>>, OAuthError>;

    /// A pushed authorization request's proof, if it sent one (RFC 9449 §10.1): checked for
    /// `POST` at the PAR endpoint, not spent yet (the push spends it before it keeps the
    /// request).
    async fn at_pushed_endpoint<'a>(
        &'a self,
        headers: &HeaderMap,
        now: UnixTime,
    ) -> Result<Option<Box<dyn Possession + 'a>>, OAuthError>;

    /// A protected resource's request presenting a bound token (`call`): its proof checked
    /// and spent.
    async fn at_resource(
        &self,
        headers: &HeaderMap,
        call: AtResource<'_>,
        now: UnixTime,
    ) -> Result<(), Refusal>;

    /// Whether server nonces are on: when not, [`current_nonce`](Self::current_nonce) answers
    /// `None` and need not be asked.
    fn offers_nonces(&self) -> bool;

    /// The nonce to offer now, when server nonces are on.
    async fn current_nonce(&self, now: UnixTime) -> Result<Option<String>, StoreError>;
}
