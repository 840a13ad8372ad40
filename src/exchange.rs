//! Token exchange (RFC 8693): the host's policy of who may exchange which token for what.
//!
//! grantor checks everything the RFC and its own rules decide: the client is confidential and
//! agreed the grant type, the subject token (and actor token) is an active access token
//! grantor issued, the audience names resources the server knows, the scope stays within the
//! subject token's and the client's. What is left is a question of trust only the host can
//! answer, asked of its [`ExchangePolicy`]; without one (the default) the server offers no
//! token exchange at all.

use crate::audience::Audience;
use crate::client::Client;
use crate::error::{ErrorCode, OAuthError};
use crate::scope::Scope;
use crate::store::AccessGrant;

/// An exchange grantor found valid, for the host's [`ExchangePolicy`] to allow or refuse
/// (RFC 8693 §2.1, §5).
#[derive(Debug)]
#[non_exhaustive]
pub struct ExchangeRequest<'a> {
    /// The authenticated, confidential client asking.
    pub client: &'a Client,
    /// What the subject token grants: an active access token grantor issued, of any client.
    /// The new token carries its user.
    pub subject: &'a AccessGrant,
    /// What the actor token grants, when the client asks for delegation (RFC 8693 §1.1);
    /// `None` for impersonation.
    pub actor: Option<&'a AccessGrant>,
    /// The audience the new token would get: the `resource` and `audience` parameters, each a
    /// resource the server knows, or the client's default audience when it named none.
    pub audience: &'a Audience,
    /// The scope the new token would get: the requested one, within the subject token's.
    pub scope: &'a Scope,
}

/// Why the host's policy refuses an exchange; each is the RFC error a client can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExchangeRefusal {
    /// The client may not exchange tokens at all (RFC 6749 §5.2 `unauthorized_client`).
    #[error("this client may not exchange tokens")]
    Client,
    /// The subject token is not one this client may exchange (RFC 8693 §2.2.2
    /// `invalid_request`).
    #[error("the subject_token is not acceptable for this exchange")]
    Subject,
    /// The actor token is not acceptable, or delegation is not allowed (RFC 8693 §2.2.2
    /// `invalid_request`).
    #[error("the actor_token is not acceptable for this exchange")]
    Actor,
    /// No token is issued for this audience (RFC 8693 §2.2.2 `invalid_target`).
    #[error("no token is issued for the requested audience")]
    Target,
    /// No token is issued with this scope (RFC 6749 §5.2 `invalid_scope`).
    #[error("no token is issued with the requested scope")]
    Scope,
}

impl From<ExchangeRefusal> for OAuthError {
    fn from(refusal: ExchangeRefusal) -> Self {
        let code = match refusal {
            ExchangeRefusal::Client => ErrorCode::UnauthorizedClient,
            ExchangeRefusal::Subject | ExchangeRefusal::Actor => ErrorCode::InvalidRequest,
            ExchangeRefusal::Target => ErrorCode::InvalidTarget,
            ExchangeRefusal::Scope => ErrorCode::InvalidScope,
        };
        OAuthError::new(code, refusal.to_string())
    }
}

/// Decides which valid exchanges are allowed (RFC 8693 §5: the authorization server decides,
/// by policy, who may exchange what for which audience). Set it with
/// [`AuthorizationServerBuilder::token_exchange`](crate::AuthorizationServerBuilder::token_exchange);
/// without one every exchange is refused with `unsupported_grant_type`.
///
/// ```
/// use grantor::exchange::{ExchangePolicy, ExchangeRefusal, ExchangeRequest};
///
/// /// `gateway` may exchange any user's token for one aimed at the billing API.
/// struct Gateway;
///
/// #[async_trait::async_trait]
/// impl ExchangePolicy for Gateway {
///     async fn decide(&self, request: &ExchangeRequest<'_>) -> Result<(), ExchangeRefusal> {
///         if request.client.id().as_str() != "gateway" {
///             return Err(ExchangeRefusal::Client);
///         }
///         if request.subject.authorization.user.is_none() {
///             return Err(ExchangeRefusal::Subject);
///         }
///         if request.audience.as_str() != "https://billing.example/" {
///             return Err(ExchangeRefusal::Target);
///         }
///         Ok(())
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait ExchangePolicy: Send + Sync {
    /// Allows `request`, or refuses it with the reason the client is told.
    async fn decide(&self, request: &ExchangeRequest<'_>) -> Result<(), ExchangeRefusal>;
}
