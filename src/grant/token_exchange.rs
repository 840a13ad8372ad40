//! Token exchange (RFC 8693): a confidential client trades an active access token grantor
//! issued (the subject token) for a new access token aimed at a resource the server knows,
//! under the host's [`ExchangePolicy`]. Without an actor token the new token impersonates the
//! subject (RFC 8693 §1.1); with one it is issued by delegation and names the actor in its
//! `act` claim (RFC 8693 §4.1).
//!
//! The new token is the client's (`client_id`), for the subject token's user, with at most the
//! subject token's scope, and never outlives the subject or actor token. It comes without a
//! refresh token (RFC 8693 §2.2.1 makes one optional): the client exchanges again while the
//! subject token lives. Revoking the subject token later does not revoke what was exchanged
//! for it, which lives no longer than the subject token did.

use std::time::Duration;

use super::checks;
use super::issue::{Issued, Issuer};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::exchange::{ExchangePolicy, ExchangeRequest};
use crate::request::TokenType;
use crate::scope::Scope;
use crate::secret::AccessToken;
use crate::settings::Lifetimes;
use crate::store::{AccessGrant, Actor, Authorization, TokenBinding};

/// What the client asked for, parsed (RFC 8693 §2.1).
pub(crate) struct Exchange<'r> {
    /// The subject token and the type the client said it is.
    pub(crate) subject: (&'r AccessToken, TokenType),
    /// The actor token and its type, for delegation.
    pub(crate) actor: Option<(&'r AccessToken, TokenType)>,
    pub(crate) scope: Option<&'r str>,
    /// RFC 8707 `resource`s.
    pub(crate) resources: &'r [&'r str],
    /// RFC 8693 `audience`s: each must name a resource the server knows, like a `resource`.
    pub(crate) audiences: &'r [&'r str],
}

pub(crate) async fn exchange(
    issuer: &Issuer<'_>,
    policy: Option<&dyn ExchangePolicy>,
    client: &Client,
    request: Exchange<'_>,
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    // RFC 8693 §5: without client authentication anyone holding a stolen token could trade it.
    if client.is_public() {
        return Err(OAuthError::unauthorized_client(
            "a public client cannot exchange tokens",
        ));
    }
    let policy = policy.ok_or_else(|| {
        OAuthError::new(
            ErrorCode::UnsupportedGrantType,
            "this server does not offer token exchange",
        )
    })?;
    let subject = active(issuer, request.subject, Role::Subject, now).await?;
    let actor = match request.actor {
        Some(presented) => Some(active(issuer, presented, Role::Actor, now).await?),
        None => None,
    };
    let targets: Vec<&str> = request
        .resources
        .iter()
        .chain(request.audiences)
        .copied()
        .collect();
    let audience = issuer.resources.resolve(&targets, client)?;
    let scope = within(request.scope, &subject.authorization.scope, client)?;
    let asked = ExchangeRequest {
        client,
        subject: &subject,
        actor: actor.as_ref(),
        audience: &audience,
        scope: &scope,
    };
    policy.decide(&asked).await?;
    let acting = delegation(&subject, actor.as_ref())?;
    // The new token never outlives what it was exchanged for.
    let ends_at = actor.as_ref().map_or(subject.expires_at, |actor| {
        actor.expires_at.min(subject.expires_at)
    });
    let lifetimes = Lifetimes {
        access_token: issuer
            .lifetimes
            .access_token
            .min(Duration::from_secs(now.seconds_until(ends_at))),
        ..*issuer.lifetimes
    };
    let issuer = Issuer {
        lifetimes: &lifetimes,
        actor: acting.as_ref(),
        ..*issuer
    };
    // The subject's sign-in is the new token's: exchanging a token is no new sign-in.
    let authorization = Authorization::new(client.id().clone(), subject.authorization.user, scope)
        .with_audience(audience)
        .with_authentication(subject.authorization.authentication);
    let mut issued = issuer
        .issue(
            crate::client::GrantType::TokenExchange,
            authorization,
            None,
            false,
            now,
        )
        .await?;
    issued.issued_token_type = Some(TokenType::ACCESS_TOKEN);
    Ok(issued)
}

/// Which token of the request is looked at, for the descriptions of its errors.
#[derive(Clone, Copy)]
enum Role {
    Subject,
    Actor,
}

/// The grant of a presented token that must be an active access token grantor issued, found
/// the way introspection finds one (RFC 8693 §2.2.2: otherwise `invalid_request`).
async fn active(
    issuer: &Issuer<'_>,
    (token, token_type): (&AccessToken, TokenType),
    role: Role,
    now: UnixTime,
) -> Result<AccessGrant, OAuthError> {
    let invalid = |description: &'static str| Err(OAuthError::invalid_request(description));
    if token_type == TokenType::Jwt && !issues_jwts(issuer, token) {
        return invalid(match role {
            Role::Subject => "subject_token is not one of this server's JWT access tokens",
            Role::Actor => "actor_token is not one of this server's JWT access tokens",
        });
    }
    let Some(grant) = issuer.store.find_access_token(&token.digest(), now).await? else {
        return invalid(match role {
            Role::Subject => {
                "subject_token is not an active access token of this server \
                 (unknown, expired or revoked)"
            }
            Role::Actor => {
                "actor_token is not an active access token of this server \
                 (unknown, expired or revoked)"
            }
        });
    };
    // RFC 9449: a token bound to a DPoP key is used only with a proof of that key; RFC 8705
    // §3: one bound to a client certificate only over a connection with that certificate.
    match grant.binding {
        Some(TokenBinding::Dpop(bound)) if issuer.possession.map(|p| p.jkt()) != Some(bound) => {
            invalid(match role {
                Role::Subject => "subject_token is bound to a DPoP key: send a proof of it",
                Role::Actor => "actor_token is bound to a DPoP key: send a proof of it",
            })
        }
        Some(TokenBinding::Certificate(bound))
            if !issuer.certificate.is_some_and(|c| bound.matches(c)) =>
        {
            invalid(match role {
                Role::Subject => {
                    "subject_token is bound to a client certificate: send the request over a \
                     connection with that certificate"
                }
                Role::Actor => {
                    "actor_token is bound to a client certificate: send the request over a \
                     connection with that certificate"
                }
            })
        }
        _ => Ok(grant),
    }
}

/// Whether `token` may be called a JWT (RFC 8693 §3): the server issues self-contained (JWT)
/// access tokens and this has their shape.
fn issues_jwts(issuer: &Issuer<'_>, token: &AccessToken) -> bool {
    issuer
        .format
        .is_some_and(|format| format.recognizes(token.expose_secret()))
}

/// The new token's scope: the requested one, else the subject token's; within both the subject
/// token's scope and what the client may be granted (RFC 8693 §2.1, RFC 6749 §3.3).
fn within(requested: Option<&str>, granted: &Scope, client: &Client) -> Result<Scope, OAuthError> {
    let scope = checks::narrow_scope(requested, granted)?;
    if !scope.is_subset_of(client.scopes()) {
        return Err(OAuthError::invalid_scope(
            "the scope exceeds what the client may be granted; ask for a narrower one",
        ));
    }
    Ok(scope)
}

/// The new token's actor (RFC 8693 §4.1): for delegation, the actor token's subject (its user,
/// or its client for a token without one), then whoever acted for the actor, then the subject
/// token's prior actors; for impersonation, the subject token's own actors, kept.
fn delegation(
    subject: &AccessGrant,
    actor: Option<&AccessGrant>,
) -> Result<Option<Actor>, OAuthError> {
    let Some(actor) = actor else {
        return Ok(subject.actor.clone());
    };
    let authorization = &actor.authorization;
    let name = authorization
        .user
        .as_ref()
        .map_or(authorization.client_id.as_str(), |user| user.id().as_str());
    let mut chain = Actor::new(name)
        .ok_or_else(|| OAuthError::invalid_request("actor_token names no subject"))?;
    let too_deep = || OAuthError::invalid_request("the chain of actors is too long");
    for prior in [&actor.actor, &subject.actor].into_iter().flatten() {
        chain = chain.then(prior).ok_or_else(too_deep)?;
    }
    Ok(Some(chain))
}
