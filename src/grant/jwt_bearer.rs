//! The JWT-bearer grant (RFC 7523 §2.1): a confidential client trades an assertion a trusted
//! issuer signed about a user for an access token for that user, without a browser. An
//! assertion typed `oauth-id-jag+jwt` is an Identity Assertion JWT Authorization Grant
//! (draft-ietf-oauth-identity-assertion-authz-grant, "ID-JAG", MCP's enterprise-managed
//! authorization): it names the client it was issued for (`client_id`), which must be the one
//! presenting it, and its `resource` and `scope` bound the token.
//!
//! The assertion's signature, issuer, audience, lifetime and single use are checked by the
//! [`GrantAssertions`] seam (feature `private-key-jwt`); who the user is, by the host's mapping
//! of the assertion's claims (by default: the account named by its `email`, else by its
//! `sub`). The token comes without a refresh token: the client asks the issuer for a new
//! assertion instead.

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::checks;
use super::issue::{Issued, Issuer};
use crate::client::{Client, ClientId, GrantType};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError, StoreError};
use crate::id::UserId;
use crate::request::Assertion;
use crate::scope::Scope;
use crate::store::{Authorization, UserAuthentication, UserStore};

/// What a verified assertion says.
#[derive(Debug)]
#[cfg_attr(
    not(feature = "private-key-jwt"),
    allow(dead_code, reason = "made and read where assertions are verified")
)]
pub(crate) struct GrantAssertion {
    /// Its `iss`: the trusted issuer that signed it.
    pub(crate) issuer: String,
    /// Whether it is an ID-JAG (`typ` `oauth-id-jag+jwt`).
    pub(crate) id_jag: bool,
    /// Its `client_id` claim (an ID-JAG's is required).
    pub(crate) client_id: Option<String>,
    /// Its `resource` claim: one or more absolute URIs.
    pub(crate) resources: Vec<String>,
    /// Its `scope` claim.
    pub(crate) scope: Option<String>,
    /// When the user signed in at the issuer (`auth_time`), else when it was issued (`iat`).
    pub(crate) signed_in_at: Option<UnixTime>,
    /// Every claim, for the mapping to a user (`sub`, `email`…).
    pub(crate) claims: Map<String, Value>,
}

/// The seam the feature implements: trusted issuers' assertions verified and spent, the
/// clients each issuer's assertions may come from, and the user an assertion names.
#[async_trait]
pub(crate) trait GrantAssertions: Send + Sync {
    /// `assertion` verified at `now` (signature by a key of its trusted issuer, `aud`, `exp`,
    /// lifetime, `nbf`) and its `jti` spent once; every refusal is `invalid_grant`.
    async fn verify(
        &self,
        assertion: Assertion<'_>,
        now: UnixTime,
    ) -> Result<GrantAssertion, OAuthError>;

    /// Whether `client` may present assertions of `issuer`.
    fn presentable_by(&self, issuer: &str, client: &ClientId) -> bool;

    /// The user `assertion` is about, in `users`; `None` when there is no such account.
    async fn user(
        &self,
        assertion: &GrantAssertion,
        users: &dyn UserStore,
    ) -> Result<Option<UserId>, StoreError>;
}

/// What the grant needs beside the issuer: the assertion checks and the accounts.
#[derive(Clone, Copy)]
pub(crate) struct Trust<'a> {
    pub(crate) assertions: &'a dyn GrantAssertions,
    pub(crate) users: &'a dyn UserStore,
}

/// The token for `client` presenting `assertion`, with the `scope` and `resources` asked.
pub(crate) async fn exchange(
    issuer: &Issuer<'_>,
    trust: Option<Trust<'_>>,
    client: &Client,
    assertion: Assertion<'_>,
    (scope, resources): (Option<&str>, &[&str]),
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    let Some(trust) = trust else {
        return Err(OAuthError::new(
            ErrorCode::UnsupportedGrantType,
            "this server trusts no assertion issuer (RFC 7523)",
        ));
    };
    // An assertion is a bearer credential for the user: only a client that authenticates may
    // present one, as with token exchange (RFC 8693 §5).
    if client.is_public() {
        return Err(OAuthError::unauthorized_client(
            "a public client cannot present assertions",
        ));
    }
    let verified = trust.assertions.verify(assertion, now).await?;
    if !trust
        .assertions
        .presentable_by(&verified.issuer, client.id())
    {
        return Err(OAuthError::unauthorized_client(
            "this client may not present this issuer's assertions",
        ));
    }
    if verified.id_jag && verified.client_id.as_deref() != Some(client.id().as_str()) {
        return Err(OAuthError::invalid_grant(
            "the identity assertion was issued for another client (its client_id)",
        ));
    }
    let user = match trust.assertions.user(&verified, trust.users).await? {
        Some(id) => trust.users.find_user(&id).await?,
        None => None,
    };
    let user = user
        .ok_or_else(|| OAuthError::invalid_grant("the assertion names no user of this server"))?;
    let asked = checks::resolve_scope(scope, client)?;
    let (scope, audience) = if verified.id_jag {
        // Its `resource` is the token's audience, whatever the request says; its `scope`
        // bounds what was asked.
        let named: Vec<&str> = verified.resources.iter().map(String::as_str).collect();
        let granted = Scope::parse(verified.scope.as_deref().unwrap_or_default())
            .map_err(|_| OAuthError::invalid_grant("the assertion's scope is malformed"))?;
        let scope = Scope::from_tokens(asked.iter().filter(|t| granted.contains(t)))
            .unwrap_or_else(|_| Scope::empty());
        (scope, issuer.resources.resolve(&named, client)?)
    } else {
        (asked, issuer.resources.resolve(resources, client)?)
    };
    let signed_in = UserAuthentication::new(verified.signed_in_at.unwrap_or(now));
    let authorization = Authorization::new(client.id().clone(), Some(user), scope)
        .with_audience(audience)
        .with_authentication(Some(signed_in));
    issuer
        .issue(GrantType::JwtBearer, authorization, None, false, now)
        .await
}
