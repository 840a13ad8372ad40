//! The authorization endpoint's decisions (RFC 6749 §3.1, §4.1.1, §4.2.1): whether a request is
//! valid and where its errors may go, and what the user's decision issues.

use std::fmt;
use std::sync::Arc;

use super::device::{DeviceRef, Devices};
use super::{Issued, Issuer, authorization_code, checks, implicit};
use crate::audience::Audience;
use crate::client::{Approval, Client, GrantType};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::pkce::CodeChallenge;
use crate::request::AuthorizationRequest;
use crate::scope::Scope;
use crate::secret::AuthorizationCode;
use crate::settings::Resources;
use crate::settings::{PkcePolicy, Profile};
use crate::store::{ClientStore, User, UserId, UserStore};

/// The user's answer on the approval page (or the host's, for clients without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The user approves: the client gets a code or a token.
    Approve,
    /// The user denies: the client gets `access_denied`.
    Deny,
}

/// Which response the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseType {
    /// `code`: the authorization code grant, answered in the redirect's query.
    Code,
    /// `token`: the implicit grant, answered in the redirect's fragment.
    Token,
    /// No redirect: the device authorization grant (RFC 8628), whose answer the device
    /// collects by polling the token endpoint.
    Device,
}

/// A validated authorization request waiting for the user to sign in.
///
/// Only [`AuthorizationServer::authorize`](crate::AuthorizationServer::authorize) makes one,
/// and it cannot be changed: the host keeps it where the browser cannot alter it (server-side,
/// or sealed as [`AuthorizationServer::begin_sign_in`](crate::AuthorizationServer::begin_sign_in) does until the sign-in, then in the session
/// seam) while its sign-in page runs, then hands it to
/// [`AuthorizationServer::decide`](crate::AuthorizationServer::decide). Nothing the browser
/// sends afterwards can alter the client, redirect URI, scope or PKCE challenge it carries.
pub struct PendingAuthorization {
    pub(crate) client: Arc<Client>,
    pub(crate) response_type: ResponseType,
    pub(crate) redirect_uri: String,
    pub(crate) scope: Scope,
    /// The resources the tokens will be for (RFC 8707).
    pub(crate) audience: Audience,
    pub(crate) state: Option<String>,
    pub(crate) code_challenge: Option<CodeChallenge>,
    pub(crate) created_at: UnixTime,
    /// The device flow this authorization answers (RFC 8628), for [`ResponseType::Device`].
    pub(crate) device: Option<super::device::DeviceRef>,
}

impl PendingAuthorization {
    /// The client asking.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The scope that will be granted on approval.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The resources the tokens will be for (RFC 8707): the request's `resource`s, or the
    /// default audience.
    pub fn audience(&self) -> &Audience {
        &self.audience
    }

    /// Whether the user must see an approval page naming the client and the scope.
    pub fn needs_approval(&self) -> bool {
        self.client.approval() == Approval::Required
    }

    /// `code`, `token`, or [`ResponseType::Device`] for a device flow.
    pub fn response_type(&self) -> ResponseType {
        self.response_type
    }

    /// The redirect URI the answer will go to.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Where this request's answer goes.
    pub(crate) fn reply_to(&self) -> ReplyTo<'_> {
        ReplyTo {
            redirect_uri: &self.redirect_uri,
            response_type: self.response_type,
            state: self.state.as_deref(),
        }
    }
}

impl fmt::Debug for PendingAuthorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingAuthorization")
            .field("client_id", self.client.id())
            .field("response_type", &self.response_type)
            .field("redirect_uri", &self.redirect_uri)
            .field("scope", &self.scope)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

/// Where an authorization response goes (RFC 6749 §4.1.2, §4.2.2): a registered redirect URI,
/// in its query (`code`) or fragment (`token`), with the client's `state`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplyTo<'a> {
    pub(crate) redirect_uri: &'a str,
    pub(crate) response_type: ResponseType,
    pub(crate) state: Option<&'a str>,
}

/// What the authorization endpoint decided about a request.
#[derive(Debug)]
pub(crate) enum Validated<'a> {
    /// Valid: the user signs in next.
    SignIn(PendingAuthorization),
    /// Invalid, answered at the client's redirect URI (already known to be registered).
    Redirect(OAuthError, ReplyTo<'a>),
    /// Invalid without a trustworthy redirect URI: the host shows it (RFC 6749 §4.1.2.1).
    Reject(OAuthError),
}

/// The server's rules for authorization requests: PKCE (RFC 7636, RFC 9700 §2.1.1), the
/// profile, which decides whether the implicit grant is offered at all, and the resources
/// tokens may be for (RFC 8707).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules<'a> {
    pub(crate) policy: PkcePolicy,
    pub(crate) allow_plain: bool,
    pub(crate) profile: Profile,
    pub(crate) resources: &'a Resources,
    /// Whether every client must push its requests (RFC 9126 §5).
    pub(crate) require_pushed: bool,
    /// Whether the request being validated was pushed (RFC 9126 §2.1), as clients that must
    /// push need.
    pub(crate) pushed: bool,
}

/// Checks an authorization request against its client's registration.
pub(crate) async fn validate<'r>(
    clients: &dyn ClientStore,
    rules: Rules<'_>,
    request: &AuthorizationRequest<'r>,
    now: UnixTime,
) -> Validated<'r> {
    let client = match find_client_and_redirect(clients, request).await {
        Ok(client) => client,
        Err(error) => return Validated::Reject(error),
    };
    // From here on the redirect URI is trusted: errors go back to the client.
    let redirect_uri = request.redirect_uri.unwrap_or_default();
    let reply_to = ReplyTo {
        redirect_uri,
        response_type: match request.response_type {
            Some("token") => ResponseType::Token,
            _ => ResponseType::Code,
        },
        state: request.state,
    };
    match check(rules, request, &client) {
        Ok(checked) => Validated::SignIn(PendingAuthorization {
            client,
            response_type: checked.response_type,
            redirect_uri: redirect_uri.to_owned(),
            scope: checked.scope,
            audience: checked.audience,
            state: request.state.map(str::to_owned),
            code_challenge: checked.code_challenge,
            created_at: now,
            device: None,
        }),
        Err(error) => Validated::Redirect(error, reply_to),
    }
}

/// The checks that decide whether errors may be redirected at all (RFC 6749 §4.1.2.1).
async fn find_client_and_redirect(
    clients: &dyn ClientStore,
    request: &AuthorizationRequest<'_>,
) -> Result<Arc<Client>, OAuthError> {
    if let Some(name @ ("client_id" | "redirect_uri")) = request.repeated {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    let client_id = request
        .client_id
        .ok_or_else(|| OAuthError::invalid_request("client_id is missing"))?;
    let client = clients
        .find_client(client_id)
        .await?
        .ok_or_else(|| OAuthError::invalid_request("the client is unknown"))?;
    let redirect_uri = request
        .redirect_uri
        .ok_or_else(|| OAuthError::invalid_request("redirect_uri is missing"))?;
    if !client.has_redirect_uri(redirect_uri) {
        return Err(OAuthError::invalid_request(
            "redirect_uri is not registered for this client",
        ));
    }
    Ok(client)
}

/// What passed the checks a redirectable error may come from.
struct Checked {
    response_type: ResponseType,
    scope: Scope,
    audience: Audience,
    code_challenge: Option<CodeChallenge>,
}

/// Every other check; failures are redirected to the client.
fn check(
    rules: Rules<'_>,
    request: &AuthorizationRequest<'_>,
    client: &Client,
) -> Result<Checked, OAuthError> {
    if let Some(name) = request.repeated {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    if !rules.pushed && (rules.require_pushed || client.requires_pushed_requests()) {
        return Err(OAuthError::invalid_request(
            "this client must push its authorization requests first (RFC 9126 §5)",
        ));
    }
    let (response_type, grant) = match request.response_type {
        Some("code") => (ResponseType::Code, GrantType::AuthorizationCode),
        Some("token") => (ResponseType::Token, GrantType::Implicit),
        Some(_) => {
            return Err(OAuthError::new(
                ErrorCode::UnsupportedResponseType,
                "response_type must be code or token",
            ));
        }
        None => return Err(OAuthError::invalid_request("response_type is missing")),
    };
    if !checks::offered(rules.profile, grant) {
        return Err(OAuthError::new(
            ErrorCode::UnsupportedResponseType,
            "response_type token (the implicit grant) is not offered under OAuth 2.1",
        ));
    }
    if !client.allows(grant) {
        return Err(OAuthError::unauthorized_client(
            "the client is not allowed this response_type",
        ));
    }
    let scope = checks::resolve_scope(request.scope, client)?;
    let audience = rules.resources.resolve(&request.resources, client)?;
    let code_challenge = match response_type {
        ResponseType::Code => code_challenge(rules, request, client)?,
        // PKCE binds a code to its redemption; the implicit grant has no redemption.
        ResponseType::Token | ResponseType::Device => None,
    };
    Ok(Checked {
        response_type,
        scope,
        audience,
        code_challenge,
    })
}

fn code_challenge(
    pkce: Rules<'_>,
    request: &AuthorizationRequest<'_>,
    client: &Client,
) -> Result<Option<CodeChallenge>, OAuthError> {
    match (request.code_challenge, request.code_challenge_method) {
        (Some(challenge), method) => {
            CodeChallenge::new(challenge, method, pkce.allow_plain).map(Some)
        }
        (None, Some(_)) => Err(OAuthError::invalid_request(
            "code_challenge_method was sent without code_challenge",
        )),
        (None, None) if client.is_public() || pkce.policy == PkcePolicy::AllClients => Err(
            OAuthError::invalid_request("code_challenge is required (PKCE, RFC 7636)"),
        ),
        (None, None) => Ok(None),
    }
}

/// What an approval issues, for the redirect to the client.
#[derive(Debug)]
pub(crate) enum Answer {
    /// `response_type=code`: the code for the query.
    Code(AuthorizationCode),
    /// `response_type=token`: the token for the fragment.
    Token(Issued),
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
        let grant = match pending.response_type {
            ResponseType::Code => GrantType::AuthorizationCode,
            ResponseType::Token => GrantType::Implicit,
            ResponseType::Device => GrantType::DeviceCode,
        };
        if !current.allows(grant) {
            return Err(Refused::Redirect(OAuthError::unauthorized_client(
                "the client is no longer allowed this response_type",
            )));
        }
        if !pending.scope.is_subset_of(current.scopes()) {
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
        Ok(match pending.response_type {
            ResponseType::Code => {
                Answer::Code(authorization_code::issue_code(self.issuer, pending, user, now).await?)
            }
            ResponseType::Token => {
                Answer::Token(implicit::issue_token(self.issuer, pending, user, now).await?)
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
