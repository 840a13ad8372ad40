//! Identity Assertion JWT Authorization Grants (draft-ietf-oauth-identity-assertion-authz-grant,
//! "ID-JAG"): grantor as an enterprise's identity provider, issuing by token exchange
//! (RFC 8693) a short-lived signed assertion that another authorization server redeems with the
//! JWT-bearer grant (RFC 7523) for an access token of its own.
//!
//! A confidential client sends `requested_token_type=urn:ietf:params:oauth:token-type:id-jag`,
//! an ID token grantor issued to it as `subject_token` (`subject_token_type`
//! `urn:ietf:params:oauth:token-type:id_token`), the other authorization server's issuer as
//! `audience`, and optionally one `resource` (at that server) and a `scope` (that server's).
//! grantor checks the ID token (its signature, `iss`, `exp`, that it names the client, that its
//! user still exists) and the shape of the request; the trust between this provider and the
//! other server is the host's [`IdJagPolicy`]: which audiences a client may reach, which
//! `client_id` the audience knows it by, and what scope it is granted. Without a policy (the
//! default) no ID-JAG is issued.

use std::time::Duration;

use crate::client::Client;
use crate::error::{ErrorCode, OAuthError};
use crate::id::UserId;
use crate::scope::Scope;

/// The token type identifier of an ID-JAG (the draft's "OAuth URI" registration): the
/// `requested_token_type` that asks for one and the `issued_token_type` of the answer.
pub const ID_JAG_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The JOSE `typ` of an ID-JAG (RFC 8725 §3.11: a typed JWT, so it cannot be taken for an ID
/// token or an access token signed by the same keys).
pub const ID_JAG_TYP: &str = "oauth-id-jag+jwt";

/// The longest an ID-JAG lives: 5 minutes, its `exp` at most this after its `iat`. It is a
/// bearer grant for another domain, redeemed at once; it is also never longer than the rotation
/// period of the ID-token keys that sign it, so it stays verifiable at `jwks_uri` while it
/// lives.
pub const ID_JAG_LIFETIME: Duration = Duration::from_secs(300);

/// An ID-JAG request grantor found valid, for the host's [`IdJagPolicy`] to grant or refuse.
#[derive(Debug)]
#[non_exhaustive]
pub struct IdJagRequest<'a> {
    /// The authenticated, confidential client asking.
    pub client: &'a Client,
    /// The client the ID token was issued to: `client` itself, or another client whose ID
    /// tokens the policy lets it exchange ([`IdJagPolicy::accepts_id_tokens_of`]).
    pub issued_to: &'a Client,
    /// The user the ID token names; the ID-JAG's `sub`.
    pub user: &'a UserId,
    /// The `audience` parameter as sent: the other authorization server's issuer identifier
    /// (RFC 8414), the ID-JAG's `aud`. An absolute URI.
    pub audience: &'a str,
    /// The `resource` parameter (RFC 8707), an absolute `https` or `http` URL without a
    /// fragment, when one was sent: the other server judges it.
    pub resource: Option<&'a str>,
    /// The `scope` parameter, when one was sent: scopes at the other server, not this one's.
    pub scope: Option<&'a Scope>,
}

/// What the host's policy grants: the identifier the audience knows the client by (the
/// ID-JAG's `client_id`) and the scope the ID-JAG carries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IdJagGrant {
    /// The ID-JAG's `client_id`: the client's identifier at the audience, which may differ
    /// from its identifier here (the draft's "Cross-Domain Client ID Handling").
    pub client_id: String,
    /// The ID-JAG's `scope`: the requested one or a part of it; `None` (or empty) leaves the
    /// claim out.
    pub scope: Option<Scope>,
}

impl IdJagGrant {
    /// A grant naming the client `client_id` at the audience, with `scope`.
    pub fn new(client_id: impl Into<String>, scope: Option<Scope>) -> Self {
        Self {
            client_id: client_id.into(),
            scope,
        }
    }
}

/// Why the host's policy refuses an ID-JAG; each is the RFC error a client can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdJagRefusal {
    /// The client may not obtain ID-JAGs at all (RFC 6749 §5.2 `unauthorized_client`).
    #[error("this client may not obtain identity assertion grants")]
    Client,
    /// This user's ID token is not one the client may exchange (RFC 6749 §5.2
    /// `invalid_grant`).
    #[error("the subject_token may not be exchanged for an identity assertion grant")]
    Subject,
    /// No ID-JAG is issued for this audience or resource (RFC 8693 §2.2.2 `invalid_target`).
    #[error("no identity assertion grant is issued for the requested audience or resource")]
    Target,
    /// No ID-JAG is issued with this scope (RFC 6749 §5.2 `invalid_scope`).
    #[error("no identity assertion grant is issued with the requested scope")]
    Scope,
}

impl From<IdJagRefusal> for OAuthError {
    fn from(refusal: IdJagRefusal) -> Self {
        let code = match refusal {
            IdJagRefusal::Client => ErrorCode::UnauthorizedClient,
            IdJagRefusal::Subject => ErrorCode::InvalidGrant,
            IdJagRefusal::Target => ErrorCode::InvalidTarget,
            IdJagRefusal::Scope => ErrorCode::InvalidScope,
        };
        OAuthError::new(code, refusal.to_string())
    }
}

/// Decides which ID-JAGs are issued: for which audiences a client may get one, which
/// `client_id` each audience knows it by, and with which scope (the draft's "administrator-
/// defined policy"). Set it with
/// [`AuthorizationServerBuilder::id_jag_issuance`](crate::AuthorizationServerBuilder::id_jag_issuance).
///
/// ```
/// use grantor::id_jag::{IdJagGrant, IdJagPolicy, IdJagRefusal, IdJagRequest};
///
/// /// `wiki` may reach the chat service, which knows it as `f53f191f9311af35`.
/// struct Enterprise;
///
/// #[async_trait::async_trait]
/// impl IdJagPolicy for Enterprise {
///     async fn decide(&self, request: &IdJagRequest<'_>) -> Result<IdJagGrant, IdJagRefusal> {
///         if request.client.id().as_str() != "wiki" {
///             return Err(IdJagRefusal::Client);
///         }
///         if request.audience != "https://acme.chat.example/" {
///             return Err(IdJagRefusal::Target);
///         }
///         Ok(IdJagGrant::new("f53f191f9311af35", request.scope.cloned()))
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait IdJagPolicy: Send + Sync {
    /// Whether `client` may exchange the ID tokens grantor issued to `issued_to`, another
    /// client. The draft requires the ID token to be the exchanging client's own (its `aud`);
    /// the default, `false`, keeps that. Answer `true` only for a client trusted with the
    /// users of `issued_to` (a deployment's own backend for its own applications, say): an ID
    /// token is shown to the browser and to its client, so whoever may exchange it may speak
    /// for its user to other domains.
    fn accepts_id_tokens_of(&self, client: &Client, issued_to: &Client) -> bool {
        let _ = (client, issued_to);
        false
    }

    /// Grants `request`, or refuses it with the reason the client is told.
    async fn decide(&self, request: &IdJagRequest<'_>) -> Result<IdJagGrant, IdJagRefusal>;
}
