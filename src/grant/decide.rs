//! The signed-in user's decision on a pending authorization (RFC 6749 §4.1.2, §4.2.2; RFC 8628
//! §3.3 for a device flow): the client checked again as registered now, then what approval
//! issues (a code, an implicit token, a device flow's answer) or the refusal.

use super::authorize::{ResponseType, within_client_scope};
use super::device::Devices;
use super::implicit::Implicit;
use super::issue::{Issued, Issuer};
use super::pending::{Decision, DeviceRef, PendingAuthorization};
use super::{authorization_code, implicit, pushed};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::oidc::OpenIdRequest;
use crate::secret::AuthorizationCode;
use crate::store::seam::ClientSeam;
use crate::store::{
    SignInFacts, SingleUseStore, User, UserAuthentication, UserId, UserSessionStore, UserStore,
};

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

/// What a decision needs: the registrations as they are now, the accounts, the issuer, and
/// the signed-in browsers (a grant made in one is recorded there, for logout to end it).
pub(crate) struct Decide<'a> {
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) users: &'a dyn UserStore,
    pub(crate) user_sessions: &'a dyn UserSessionStore,
    pub(crate) issuer: Issuer<'a>,
    /// Set when the device authorization grant is served.
    pub(crate) devices: Option<Devices<'a>>,
    /// Where a visited pushed request waits for its sign-in's answer.
    pub(crate) single_use: &'a dyn SingleUseStore,
}

/// What an OpenID Connect request's ID token will say of the sign-in: as grantor's sign-in
/// recorded it, or, for a host that signs users in itself, a sign-in that is this decision.
fn sign_in_facts(
    pending: &PendingAuthorization,
    openid: &OpenIdRequest,
    now: UnixTime,
) -> SignInFacts {
    let nonce = openid.nonce.clone();
    let facts = match &pending.authenticated {
        Some(signed) => SignInFacts::new(nonce, signed.auth_time)
            .in_session(signed.sid.clone(), signed.amr.clone())
            .with_acr(signed.acr.clone()),
        None => SignInFacts::new(nonce, now),
    };
    facts.with_id_token_claims(openid.claims.id_token.clone())
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
        // A pushed request is answered once, however many visits started a sign-in for it.
        if let Some(key) = &pending.pushed
            && !pushed::spend_visited(self.single_use, key, now).await?
        {
            return Err(Refused::Redirect(OAuthError::new(
                ErrorCode::InvalidRequestUri,
                "the pushed authorization request was already answered in another sign-in",
            )));
        }
        if let Some(device) = &pending.device {
            let authentication = pending.authentication(now);
            return self
                .answer_device(device, user, decision, authentication, now)
                .await;
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
        let facts = pending
            .openid
            .as_ref()
            .map(|openid| sign_in_facts(pending, openid, now));
        let (answer, family) = match pending.response_type {
            ResponseType::Code => {
                let (code, family) =
                    authorization_code::issue_code(&self.issuer, pending, user, facts, now).await?;
                (Answer::Code(code), Some(family))
            }
            ResponseType::Token | ResponseType::IdToken | ResponseType::IdTokenToken => {
                match implicit::issue(&self.issuer, pending, user, facts, now).await? {
                    Implicit::Token(issued) => {
                        let family = issued.family;
                        (Answer::Token(issued), family)
                    }
                    Implicit::IdToken(id_token) => (Answer::IdToken(id_token), None),
                }
            }
            // A device authorization always carries its flow, answered above.
            ResponseType::Device => {
                return Err(Refused::NotRedirectable(OAuthError::invalid_request(
                    "the device authorization is not valid",
                )));
            }
        };
        // Made in a signed-in browser: recorded there, so that its logout ends the grant.
        let session = pending
            .authenticated
            .as_ref()
            .and_then(|a| a.session.as_ref());
        if let (Some(session), Some(family)) = (session, family) {
            self.user_sessions
                .add_session_grant(session, pending.client.id(), family, now)
                .await?;
        }
        Ok(answer)
    }

    /// RFC 8628 §3.3: the user's decision on a device flow, recorded for the device's next
    /// poll with how the user signed in (`authentication`), which its tokens carry.
    async fn answer_device(
        &self,
        device: &DeviceRef,
        user: &UserId,
        decision: Decision,
        authentication: UserAuthentication,
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
        let approved = user.as_ref().map(|user| (user.id(), authentication));
        devices.record(device, approved, now).await?;
        Ok(Answer::Device(decision))
    }
}
