//! The token endpoint's decision (RFC 6749 §3.2): the client authenticated, the grant type
//! checked as offered and agreed, and the request handed to its grant.

use super::client_auth::Authenticator;
use super::issue::{Issued, Issuer};
use super::proof::Possession;
use super::{
    authorization_code, checks, client_credentials, device, id_jag, jwt_bearer, password, refresh,
    token_exchange,
};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::mtls::ClientCertificate;
use crate::request::{ClientAuth, TokenRequest, Unreadable};
use crate::settings::Profile;

/// What the token endpoint's grants depend on, each grant taking its own part.
#[derive(Clone)]
pub(crate) struct TokenGrants<'a> {
    pub(crate) clients: Authenticator<'a>,
    pub(crate) issuer: Issuer<'a>,
    pub(crate) sign_in: password::SignIn<'a>,
    pub(crate) profile: Profile,
    /// Whether every client must send a DPoP proof.
    pub(crate) dpop_required: bool,
    /// Set when the device authorization grant is served (RFC 8628).
    pub(crate) devices: Option<device::Devices<'a>>,
    /// Where a device flow's user is found.
    pub(crate) users: &'a dyn crate::store::UserStore,
    /// The host's token exchange policy (RFC 8693); `None`: no exchange is offered.
    pub(crate) exchange: Option<&'a dyn crate::exchange::ExchangePolicy>,
    /// Set when ID-JAGs are issued by token exchange.
    pub(crate) id_jags: Option<id_jag::IdJags<'a>>,
    /// Set when assertion issuers are trusted (the JWT-bearer grant, RFC 7523).
    pub(crate) trust: Option<jwt_bearer::Trust<'a>>,
}

/// What a token request proved it holds, which what it gets may be bound to.
#[derive(Clone, Copy)]
pub(crate) struct Sender<'a> {
    /// Its DPoP proof (RFC 9449), checked but not yet spent.
    pub(crate) possession: Option<&'a dyn Possession>,
    /// The client certificate of its connection (RFC 8705).
    pub(crate) certificate: Option<&'a ClientCertificate>,
}

/// The token endpoint's decision (RFC 6749 §3.2): authenticate the client, check it was agreed
/// the grant, then run the grant, binding what it issues to the `sender`'s DPoP key when the
/// request proved one (RFC 9449), else, when the server binds to certificates, to its client
/// certificate (RFC 8705 §3). The request is borrowed, not moved, so that this future does not
/// keep a second copy of it (each level of `async fn` stores its arguments).
pub(crate) async fn token(
    grants: &TokenGrants<'_>,
    sender: Sender<'_>,
    auth: &ClientAuth<'_>,
    request: &Result<TokenRequest<'_>, Unreadable>,
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    let client = grants.clients.authenticate(auth).await?;
    let issuer = Issuer {
        bind_refresh: client.is_public(),
        tier: client.tier(),
        possession: sender.possession.or(grants.issuer.possession),
        certificate: sender.certificate,
        ..grants.issuer
    };
    checks::fapi2_client(grants.profile, &client)?;
    let bound_to_certificate = issuer.bind_certificates && issuer.certificate.is_some();
    if grants.profile.is_fapi2() && issuer.possession.is_none() && !bound_to_certificate {
        return Err(OAuthError::new(
            ErrorCode::InvalidDpopProof,
            if issuer.bind_certificates {
                "FAPI 2.0 issues only sender-constrained tokens: send a DPoP proof (RFC 9449) \
                 or make the request over mutual TLS with a client certificate (RFC 8705)"
            } else {
                "FAPI 2.0 issues only sender-constrained tokens: send a DPoP proof (RFC 9449)"
            },
        ));
    }
    if issuer.possession.is_none() && (grants.dpop_required || client.requires_dpop()) {
        return Err(OAuthError::new(
            ErrorCode::InvalidDpopProof,
            "this client must send a DPoP proof with its token requests (RFC 9449)",
        ));
    }
    let grant_type = match request {
        Ok(request) => Some(request.grant_type()),
        Err(unreadable) => unreadable.grant_type,
    };
    if let Some(grant_type) = grant_type {
        tracing::Span::current().record("grant_type", grant_type.as_str());
        if !checks::offered(grants.profile, grant_type) {
            return Err(OAuthError::new(
                ErrorCode::UnsupportedGrantType,
                "this grant_type is not offered under OAuth 2.1 (nor FAPI 2.0)",
            ));
        }
        checks::agreed(&client, grant_type)?;
    }
    let request = match request {
        Ok(request) => request,
        Err(unreadable) => return Err(unreadable.error()),
    };
    match request {
        TokenRequest::AuthorizationCode {
            code,
            redirect_uri,
            code_verifier,
            resources,
        } => {
            let exchange = authorization_code::Exchange {
                code,
                redirect_uri,
                code_verifier: *code_verifier,
                resources,
            };
            authorization_code::exchange(&issuer, &client, exchange, now).await
        }
        TokenRequest::Password {
            username,
            password,
            scope,
            resources,
        } => {
            // Not in OpenID Connect's flows, but a provider that serves it answers `openid`
            // here with an ID token too, as relying parties of this grant expect.
            let served = issuer.id_tokens.is_some();
            let (scope, openid) = checks::resolve_openid_scope(*scope, &client, served)?;
            let granted = password::Granted {
                scope,
                audience: issuer.resources.resolve(resources, &client)?,
            };
            let sign_in = &grants.sign_in;
            let credentials = password::Credentials { username, password };
            password::exchange(&issuer, sign_in, &client, credentials, granted, openid, now).await
        }
        TokenRequest::RefreshToken {
            refresh_token,
            scope,
            resources,
        } => refresh::exchange(&issuer, &client, refresh_token, *scope, resources, now).await,
        TokenRequest::ClientCredentials { scope, resources } => {
            client_credentials::exchange(&issuer, &client, *scope, resources, now).await
        }
        TokenRequest::JwtBearer {
            assertion,
            scope,
            resources,
        } => {
            let asked = (*scope, resources.as_slice());
            jwt_bearer::exchange(&issuer, grants.trust, &client, *assertion, asked, now).await
        }
        TokenRequest::DeviceCode { device_code } => {
            let Some(devices) = grants.devices else {
                return Err(OAuthError::new(
                    ErrorCode::UnsupportedGrantType,
                    "this server does not serve the device authorization grant",
                ));
            };
            let poll = device::Poll {
                devices,
                users: grants.users,
                issuer,
            };
            poll.exchange(&client, device_code, now).await
        }
        TokenRequest::TokenExchange {
            subject_token,
            subject_token_type,
            actor_token,
            scope,
            resources,
            audiences,
        } => {
            let exchange = token_exchange::Exchange {
                subject: (subject_token, *subject_token_type),
                actor: actor_token.as_ref().map(|(token, kind)| (token, *kind)),
                scope: *scope,
                resources,
                audiences,
            };
            token_exchange::exchange(&issuer, grants.exchange, &client, exchange, now).await
        }
        TokenRequest::IdJag {
            subject_token,
            scope,
            resources,
            audiences,
        } => {
            let asked = id_jag::Asked {
                subject_token: *subject_token,
                scope: *scope,
                resources,
                audiences,
            };
            id_jag::issue(grants.id_jags.as_ref(), &issuer, &client, asked, now).await
        }
    }
}
