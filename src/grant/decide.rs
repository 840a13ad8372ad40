//! The signed-in user's decision on a pending authorization (RFC 6749 §4.1.2, §4.2.2; RFC 8628
//! §3.3 for a device flow): the client checked again as registered now, then what approval
//! issues (a code, an implicit token, a device flow's answer) or the refusal.

use super::authorize::{
    Decision, DeviceRef, PendingAuthorization, ResponseType, within_client_scope,
};
use super::device::Devices;
use super::implicit::Implicit;
use super::{Issued, Issuer, authorization_code, implicit};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::secret::AuthorizationCode;
use crate::store::{ClientStore, SignInFacts, User, UserId, UserStore};

/// What an approval issues, for the redirect to the client.
#[derive(Debug)]
pub(crate) enum Answer {
    /// `response_type=code`: the code for the query.
    Code(AuthorizationCode),
    /// `response_type=token` (or `id_token token`): the token for the fragment.
    Token(Issued),
    /// `response_type=id_token`: the ID token alone, for the fragment.
    IdToken(String),
    /// A device flow's decision, recorded for the device (RFC 8628).
    Device(Decision),
}

/// Why a decision does not issue anything.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Answered at the client's redirect URI (`access_denied`, `server_error`…).
    Redirect(OAuthError),
    /// The client or its redirect URI went away while the user signed in: shown, not redirected.
    NotRedirectable(OAuthError),
}

impl From<OAuthError> for Refused {
    fn from(error: OAuthError) -> Self {
        Self::Redirect(error)
    }
}

impl From<crate::error::StoreError> for Refused {
    fn from(error: crate::error::StoreError) -> Self {
        Self::Redirect(error.into())
    }
}

/// What a decision needs: the registrations as they are now, the accounts, and the issuer.
pub(crate) struct Decide<'a> {
    pub(crate) clients: &'a dyn ClientStore,
    pub(crate) users: &'a dyn UserStore,
    pub(crate) issuer: Issuer<'a>,
    /// Set when the device authorization grant is served.
    pub(crate) devices: Option<Devices<'a>>,
}

impl Decide<'_> {
    /// The signed-in `user`'s `decision` on `pending`.
    pub(crate) async fn decide(
        &self,
        pending: &PendingAuthorization,
        user: &UserId,
        decision: Decision,
        now: UnixTime,
    ) -> Result<Answer, Refused> {
        let current = self
            .clients
            .find_client(pending.client.id().as_str())
            .await?;
        let device = pending.response_type == ResponseType::Device;
        let Some(current) = current.filter(|c| device || c.has_redirect_uri(&pending.redirect_uri))
        else {
            return Err(Refused::NotRedirectable(OAuthError::invalid_request(
                "the client or its redirect URI is no longer registered",
            )));
        };
        // The registration may have changed while the user signed in; what is issued follows
        // the registration as it is now.
        let grant = pending.response_type.grant();
        if !current.allows(grant) {
            return Err(Refused::Redirect(OAuthError::unauthorized_client(
                "the client is no longer allowed this response_type",
            )));
        }
        if !within_client_scope(&pending.scope, &current, pending.openid.is_some()) {
            return Err(Refused::Redirect(OAuthError::invalid_scope(
                "the requested scope exceeds what the client may now be granted",
            )));
        }
        if !pending.audience.iter().all(|r| current.may_target(r)) {
            return Err(Refused::Redirect(OAuthError::new(
                ErrorCode::InvalidTarget,
                "the client may no longer request tokens for this resource",
            )));
        }
        let lifetime = self.issuer.lifetimes.authorization_request;
        if pending.created_at.plus(lifetime) <= now {
            return Err(Refused::Redirect(OAuthError::new(
                ErrorCode::AccessDenied,
                "the authorization request expired before the user answered",
            )));
        }
        if let Some(device) = &pending.device {
            return self.answer_device(device, user, decision, now).await;
        }
        if decision == Decision::Deny {
            return Err(Refused::Redirect(OAuthError::new(
                ErrorCode::AccessDenied,
                "the user denied the request",
            )));
        }
        let user: User = self.users.find_user(user).await?.ok_or_else(|| {
            OAuthError::new(ErrorCode::AccessDenied, "the user account is not available")
        })?;
        // The user has just signed in for this decision: that is the ID token's `auth_time`.
        let facts = pending
            .openid
            .as_ref()
            .map(|openid| SignInFacts::new(openid.nonce.clone(), now));
        Ok(match pending.response_type {
            ResponseType::Code => Answer::Code(
                authorization_code::issue_code(self.issuer, pending, user, facts, now).await?,
            ),
            ResponseType::Token | ResponseType::IdToken | ResponseType::IdTokenToken => {
                match implicit::issue(self.issuer, self.users, pending, user, facts, now).await? {
                    Implicit::Token(issued) => Answer::Token(issued),
                    Implicit::IdToken(id_token) => Answer::IdToken(id_token),
                }
            }
            // A device authorization always carries its flow, answered above.
            ResponseType::Device => {
                return Err(Refused::NotRedirectable(OAuthError::invalid_request(
                    "the device authorization is not valid",
                )));
            }
        })
    }

    /// RFC 8628 §3.3: the user's decision on a device flow, recorded for the device's next
    /// poll.
    async fn answer_device(
        &self,
        device: &DeviceRef,
        user: &UserId,
        decision: Decision,
        now: UnixTime,
    ) -> Result<Answer, Refused> {
        let devices = self.devices.ok_or_else(|| {
            Refused::NotRedirectable(OAuthError::invalid_request(
                "this server does not serve the device authorization grant",
            ))
        })?;
        let user = match decision {
            Decision::Approve => Some(self.users.find_user(user).await?.ok_or_else(|| {
                OAuthError::new(ErrorCode::AccessDenied, "the user account is not available")
            })?),
            Decision::Deny => None,
        };
        devices
            .record(device, user.as_ref().map(User::id), now)
            .await?;
        Ok(Answer::Device(decision))
    }
}
