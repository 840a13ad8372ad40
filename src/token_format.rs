//! The access-token format seam: what a feature implements to issue self-contained access
//! tokens instead of grantor's random ones (JWT access tokens, RFC 9068, feature `jwt`).
//!
//! The grants, bearer validation, introspection, revocation and token exchange speak to a
//! format only through [`AccessTokenFormat`]; the builder wires the feature's implementation
//! in, so no layer below it names the feature.

use async_trait::async_trait;

use crate::audience::Audience;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::scope::Scope;
use crate::store::{Actor, Authorization, Jti, TokenBinding, UserAuthentication, UserId};

/// What an access token says, for a format to encode.
#[allow(
    dead_code,
    reason = "read by the formats features implement; none without them"
)]
pub(crate) struct AccessClaims<'a> {
    /// The issuer identifier.
    pub(crate) issuer: &'a str,
    pub(crate) authorization: &'a Authorization,
    pub(crate) jti: &'a Jti,
    /// The DPoP key or client certificate the token is bound to.
    pub(crate) binding: Option<TokenBinding>,
    /// Who acts for the user (RFC 8693 §4.1).
    pub(crate) actor: Option<&'a Actor>,
    pub(crate) issued_at: UnixTime,
    pub(crate) expires_at: UnixTime,
}

/// What a self-contained token says once its format verified it.
pub(crate) struct SelfContained {
    /// The user, `None` for a token a client got for itself.
    pub(crate) user: Option<UserId>,
    pub(crate) client_id: ClientId,
    pub(crate) scope: Scope,
    pub(crate) audience: Audience,
    pub(crate) jti: Jti,
    pub(crate) issued_at: UnixTime,
    pub(crate) expires_at: UnixTime,
    /// What `cnf` binds the token to.
    pub(crate) binding: Option<TokenBinding>,
    pub(crate) actor: Option<Actor>,
    /// How the user signed in, when the token says.
    pub(crate) authentication: Option<UserAuthentication>,
}

/// Why a token of the format does not verify.
#[allow(
    dead_code,
    reason = "made by the formats features implement; none without them"
)]
pub(crate) enum Unverified {
    /// It verifies but is meant for another resource.
    WrongAudience,
    /// Anything else: forged, expired, another issuer's, malformed.
    Invalid,
}

/// An access-token format beside grantor's random tokens.
#[async_trait]
pub(crate) trait AccessTokenFormat: Send + Sync {
    /// The token text for `claims` (the store keeps its digest as for any token).
    async fn encode(&self, claims: &AccessClaims<'_>) -> Result<String, StoreError>;

    /// Whether `token` has this format's shape (then it is verified, not looked up).
    fn recognizes(&self, token: &str) -> bool;

    /// The `jti` of a token of this format the store found by digest (so not verified again).
    fn jti(&self, token: &str) -> Option<Jti>;

    /// Verifies `token` as `issuer`'s and meant for `audience`.
    async fn verify(
        &self,
        token: &str,
        issuer: &str,
        audience: &str,
        now: UnixTime,
    ) -> Result<Result<SelfContained, Unverified>, StoreError>;

    /// Whether bearer validation also asks the store, so a revoked token stops at once.
    fn checks_revocation(&self) -> bool;

    /// The public keys a resource server verifies with, as JWKs (RFC 7517 §4).
    async fn published(&self, now: UnixTime) -> Result<Vec<serde_json::Value>, StoreError>;
}
