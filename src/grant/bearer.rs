//! Bearer token validation for resource servers (RFC 6750): the grant behind a token, whether
//! it carries the scope a resource needs, and whether its user's sign-in is what the resource
//! demands (RFC 9470).

use crate::audience::Audience;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::mint;
use crate::mtls::ClientCertificate;
use crate::scope::Scope;
use crate::secret::AccessToken;
use crate::step_up::{ShortFall, StepUp};
use crate::store::seam::{TokenSeam, answer_now};
use crate::store::{AccessGrant, Authorization, FamilyId, UserStore};
use crate::token_format::{AccessTokenFormat, Unverified};

/// Why a request to a protected resource was refused (RFC 6750 §3.1); `endpoint` renders it
/// into the challenge.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// No credentials, or another scheme: a bare challenge, no error code.
    NoCredentials,
    /// The token is unknown, expired or revoked.
    InvalidToken,
    /// `invalid_request` (a malformed header) or a store failure.
    Error(OAuthError),
    /// The token lacks this scope.
    InsufficientScope(Scope),
    /// The sign-in behind the token falls short of this demand, as said (RFC 9470 §3).
    InsufficientUserAuthentication(Box<StepUp>, ShortFall),
    /// A token bound to a DPoP key was presented as a bearer token (RFC 9449 §7.2).
    BoundAsBearer,
    /// A token bound to a client certificate came over a connection without that certificate
    /// (RFC 8705 §3).
    OtherCertificate,
    /// The DPoP proof lacks the server's current nonce, which is this (RFC 9449 §9).
    #[allow(dead_code, reason = "made by the proofs feature dpop checks")]
    DpopNonce(String),
}

/// What a protected resource asks of a token: that it is meant for `audience` (RFC 8707, RFC
/// 9068 §4: a resource server states which audience it serves). The scope it needs is checked
/// last, by [`require_scope`], once the token's binding is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Demand<'a> {
    pub(crate) audience: &'a str,
    /// The audience of tokens whose store kept none.
    pub(crate) default: &'a Audience,
}

/// The grant behind `token`, checked against what the resource demands.
pub(crate) async fn check(
    store: TokenSeam<'_>,
    token: &AccessToken,
    demand: Demand<'_>,
    now: UnixTime,
) -> Result<AccessGrant, Refusal> {
    let digest = token.digest();
    let grant = answer_now!(store.check_access_token(&digest, now))
        .map_err(|e| Refusal::Error(e.into()))?
        .ok_or(Refusal::InvalidToken)?;
    let audience = grant.authorization.audience.or(demand.default);
    if !audience.contains(demand.audience) {
        return Err(not_meant_for_this_resource());
    }
    Ok(grant.with_jti(mint::jti(&digest)))
}

/// What validating a self-contained access token (a JWT, RFC 9068) needs besides the token.
pub(crate) struct SelfContainedCheck<'a> {
    pub(crate) format: &'a dyn AccessTokenFormat,
    pub(crate) issuer: &'a str,
    /// Asked only when the host checks revocation.
    pub(crate) store: TokenSeam<'a>,
    /// Who `sub` is, for a token with a user.
    pub(crate) users: &'a dyn UserStore,
}

/// The grant behind a self-contained access token: verified by its format (for a JWT: the
/// signature, `typ`, `iss`, `aud` and `exp` with the published keys), without the token store
/// unless revocation is checked.
pub(crate) async fn check_self_contained(
    check: SelfContainedCheck<'_>,
    token: &AccessToken,
    demand: Demand<'_>,
    now: UnixTime,
) -> Result<AccessGrant, Refusal> {
    let verified = check
        .format
        .verify(token.expose_secret(), check.issuer, demand.audience, now)
        .await;
    let verified = match verified {
        Ok(Ok(verified)) => verified,
        Ok(Err(Unverified::WrongAudience)) => return Err(not_meant_for_this_resource()),
        Ok(Err(Unverified::Invalid)) => return Err(Refusal::InvalidToken),
        Err(error) => return Err(Refusal::Error(error.into())),
    };
    let grant = if check.format.checks_revocation() {
        check
            .store
            .check_access_token(&token.digest(), now)
            .await
            .map_err(|e| Refusal::Error(e.into()))?
            .ok_or(Refusal::InvalidToken)?
    } else {
        let user = match &verified.user {
            None => None,
            Some(id) => {
                let user = check.users.find_user(id).await;
                // A token of an account that is gone is no longer honoured.
                Some(
                    user.map_err(|e| Refusal::Error(e.into()))?
                        .ok_or(Refusal::InvalidToken)?,
                )
            }
        };
        let authorization = Authorization::new(verified.client_id, user, verified.scope)
            .with_audience(verified.audience)
            .with_authentication(verified.authentication);
        AccessGrant::new(
            authorization,
            FamilyId::UNKNOWN,
            verified.issued_at,
            verified.expires_at,
        )
        .bound_to(verified.binding)
        .acting(verified.actor)
    };
    Ok(grant.with_jti(verified.jti))
}

/// RFC 8705 §3: a token bound to a client certificate is honoured only on a request that came
/// with that certificate (`presented`); any other token passes, its DPoP binding being checked
/// apart.
pub(crate) fn require_certificate(
    grant: &AccessGrant,
    presented: Option<&ClientCertificate>,
) -> Result<(), Refusal> {
    let Some(bound) = grant.binding.and_then(|binding| binding.certificate()) else {
        return Ok(());
    };
    match presented {
        Some(certificate) if bound.matches(certificate) => Ok(()),
        _ => Err(Refusal::OtherCertificate),
    }
}

/// RFC 6750 §3.1 `insufficient_scope` unless the grant carries every token the resource needs.
pub(crate) fn require_scope(grant: &AccessGrant, required: Option<&Scope>) -> Result<(), Refusal> {
    match required {
        Some(required) if !required.is_subset_of(&grant.authorization.scope) => {
            Err(Refusal::InsufficientScope(required.clone()))
        }
        _ => Ok(()),
    }
}

/// RFC 9470 §3 `insufficient_user_authentication` unless the sign-in behind the grant satisfies
/// `step_up` at `now`: a class among its `acr_values`, within its `max_age`.
pub(crate) fn require_authentication(
    grant: &AccessGrant,
    step_up: Option<&StepUp>,
    now: UnixTime,
) -> Result<(), Refusal> {
    let Some(step_up) = step_up else {
        return Ok(());
    };
    let signed_in = grant.authorization.authentication.as_ref();
    match step_up.falls_short(signed_in, now) {
        None => Ok(()),
        Some(short) => Err(Refusal::InsufficientUserAuthentication(
            Box::new(step_up.clone()),
            short,
        )),
    }
}

fn not_meant_for_this_resource() -> Refusal {
    Refusal::Error(OAuthError::new(
        ErrorCode::InvalidToken,
        "the access token is not meant for this resource (its audience differs)",
    ))
}
