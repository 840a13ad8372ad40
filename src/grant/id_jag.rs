//! Identity Assertion JWT Authorization Grants issued by token exchange
//! (draft-ietf-oauth-identity-assertion-authz-grant, "Token Exchange"): a confidential client
//! trades an ID token grantor issued to it for a short-lived assertion about the same user,
//! signed with the ID-token keys and aimed at another authorization server, under the host's
//! [`IdJagPolicy`]. grantor keeps no record of it: the other server redeems it once, by its
//! `jti`, and it lives at most [`ID_JAG_LIFETIME`].

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::id_token::IdTokens;
use super::issue::{Issued, Issuer};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError, StoreError};
use crate::events::{Event, EventKind, Events};
use crate::id_jag::{ID_JAG_LIFETIME, ID_JAG_TYP, IdJagGrant, IdJagPolicy, IdJagRequest};
use crate::mint;
use crate::request::{IdTokenText, TokenType};
use crate::scope::Scope;
use crate::signing::SigningAlgorithm;
use crate::store::seam::ClientSeam;
use crate::store::{Jti, JwkThumbprint, UserClaims, UserId};

/// What issuing ID-JAGs needs: the host's policy, the ID-token keys (which read the subject
/// token and sign the grant) and users' claims, the clients an ID token may name, and where
/// events go.
#[derive(Clone, Copy)]
pub(crate) struct IdJags<'a> {
    pub(crate) policy: &'a dyn IdJagPolicy,
    pub(crate) id_tokens: IdTokens<'a>,
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) events: &'a dyn Events,
}

/// What the client asked for, parsed.
pub(crate) struct Asked<'r> {
    pub(crate) subject_token: IdTokenText<'r>,
    pub(crate) scope: Option<&'r str>,
    pub(crate) resources: &'r [&'r str],
    pub(crate) audiences: &'r [&'r str],
}

/// ID-JAGs are signed with RS256, as ID tokens are by default: every relying party verifies it.
const ALGORITHM: SigningAlgorithm = SigningAlgorithm::RS256;

/// Issues an ID-JAG for `asked`, or the RFC error that refuses it.
pub(crate) async fn issue(
    id_jags: Option<&IdJags<'_>>,
    issuer: &Issuer<'_>,
    client: &Client,
    asked: Asked<'_>,
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    // The draft's "Client Authentication": an ID-JAG delegates access without the user at the
    // other server, so only a client that proves who it is may ask.
    if client.is_public() {
        return Err(OAuthError::unauthorized_client(
            "a public client cannot obtain identity assertion grants",
        ));
    }
    let id_jags = id_jags.ok_or_else(|| {
        OAuthError::invalid_request(
            "requested_token_type urn:ietf:params:oauth:token-type:id-jag is not issued by \
             this server",
        )
    })?;
    let (audience, resource) = target(asked.audiences, asked.resources)?;
    let scope = requested_scope(asked.scope)?;
    let subject = id_jags.subject(client, asked.subject_token, now).await?;
    let request = IdJagRequest {
        client,
        issued_to: subject.issued_to.as_deref().unwrap_or(client),
        user: &subject.user,
        audience,
        resource,
        scope: scope.as_ref(),
    };
    let granted = id_jags.policy.decide(&request).await?;
    // The draft's "Proof-of-Possession During Token Exchange": a proof sent with the request
    // binds the grant to its key (`cnf`), and is spent like any other.
    let jkt = match issuer.possession {
        Some(possession) => {
            possession.spend(issuer.tier, now).await?;
            Some(possession.jkt())
        }
        None => None,
    };
    let lifetime = id_jags.lifetime();
    let jti = mint::assertion_jti()?;
    let scope = granted.scope.clone().unwrap_or_else(Scope::empty);
    let signed = Signed {
        audience,
        resource,
        granted: &granted,
        jti: &jti,
        jkt,
        lifetime,
    };
    let assertion = id_jags.sign(&subject, signed, now).await?;
    let event = Event::new(EventKind::IdJagIssued, now)
        .client(client.id())
        .user(Some(&subject.user))
        .jti(&jti);
    id_jags.events.record(&event);
    Ok(Issued::assertion(
        assertion,
        TokenType::ID_JAG,
        jti,
        scope,
        lifetime.as_secs(),
    ))
}

/// The `audience` (exactly one: the other authorization server's issuer identifier) and the
/// `resource` (at most one) of the request, each an absolute URI without a fragment
/// (RFC 8707 §2); anything else is `invalid_target` (RFC 8693 §2.2.2).
fn target<'r>(
    audiences: &[&'r str],
    resources: &[&'r str],
) -> Result<(&'r str, Option<&'r str>), OAuthError> {
    let invalid =
        |description: &'static str| OAuthError::new(ErrorCode::InvalidTarget, description);
    let audience = match audiences {
        [audience] => *audience,
        [] => {
            return Err(invalid(
                "audience is missing: name the authorization server the grant is for by its \
                 issuer identifier",
            ));
        }
        _ => return Err(invalid("an identity assertion grant has one audience")),
    };
    if !crate::audience::is_resource(audience) {
        return Err(invalid(
            "audience must be an absolute URI without a fragment: the authorization server's \
             issuer identifier",
        ));
    }
    let resource = match resources {
        [] => None,
        [resource] => Some(*resource),
        _ => return Err(invalid("an identity assertion grant names one resource")),
    };
    if resource.is_some_and(|resource| !crate::audience::is_resource(resource)) {
        return Err(invalid(
            "resource must be an absolute URI without a fragment (RFC 8707 section 2)",
        ));
    }
    Ok((audience, resource))
}

/// The requested scope, scopes at the other server: well-formed (RFC 6749 §3.3), `None` when
/// absent or empty.
fn requested_scope(scope: Option<&str>) -> Result<Option<Scope>, OAuthError> {
    let Some(scope) = scope else {
        return Ok(None);
    };
    let scope = Scope::parse(scope)
        .map_err(|_| OAuthError::invalid_scope("scope is malformed (RFC 6749 section 3.3)"))?;
    Ok((!scope.is_empty()).then_some(scope))
}

/// Who the subject token speaks of: the user, their claims, the client it was issued to
/// (`None`: the requesting client itself) and how the user signed in.
struct Subject {
    issued_to: Option<Arc<Client>>,
    user: UserId,
    claims: UserClaims,
    id_token: Value,
}

/// What the ID-JAG says beyond its subject.
struct Signed<'a> {
    audience: &'a str,
    resource: Option<&'a str>,
    granted: &'a IdJagGrant,
    jti: &'a Jti,
    jkt: Option<JwkThumbprint>,
    lifetime: Duration,
}

/// The claims of an ID-JAG (the draft's "ID-JAG Claims"), ready to sign.
#[derive(Serialize)]
struct IdJagClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    client_id: &'a str,
    jti: &'a str,
    exp: u64,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'a str>,
    /// The draft RECOMMENDS `email`, which the other server may resolve its account by; with
    /// `email_verified`, so that it knows whether it may.
    #[serde(skip_serializing_if = "Option::is_none")]
    email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    email_verified: Option<bool>,
    /// The sign-in the ID token reports, for the other server's step-up policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    auth_time: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    acr: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    amr: Option<Vec<&'a str>>,
    /// RFC 9449 §6.1: the key the grant is bound to.
    #[serde(skip_serializing_if = "Option::is_none")]
    cnf: Option<Confirmation>,
}

#[derive(Serialize)]
struct Confirmation {
    jkt: String,
}

impl IdJags<'_> {
    /// How long an ID-JAG lives: [`ID_JAG_LIFETIME`], and never longer than the rotation period
    /// of the keys that sign it (at least a minute), so it stays verifiable at `jwks_uri` while
    /// it lives (only the previous period's key stays published after a rotation).
    fn lifetime(&self) -> Duration {
        let rotation = self.id_tokens.settings.key_rotation;
        ID_JAG_LIFETIME.min(rotation.max(Duration::from_secs(60)))
    }

    /// The subject of an ID-JAG request: `token` must be an unexpired ID token this server
    /// signed, issued to `client` (the draft's "Processing Rules": its audience is the client
    /// that authenticated) or to a client whose ID tokens the policy lets `client` exchange,
    /// about a user who still exists. Anything else is `invalid_grant` (RFC 8693 §2.2.2).
    async fn subject(
        &self,
        client: &Client,
        token: IdTokenText<'_>,
        now: UnixTime,
    ) -> Result<Subject, OAuthError> {
        let id_token = self.read(token, now).await?;
        let azp = id_token["azp"].as_str().unwrap_or_default();
        let issued_to = self.issued_to(client, azp).await?;
        // A pairwise `sub` (OIDC Core §8.1) is the client's alone: grantor never looks a user
        // up by one, so it cannot say whom such an ID token names.
        if issued_to
            .as_deref()
            .unwrap_or(client)
            .pairwise_sector()
            .is_some()
        {
            return Err(OAuthError::invalid_grant(
                "an ID token with a pairwise subject identifier cannot be exchanged for an \
                 identity assertion grant",
            ));
        }
        let user = UserId::new(id_token["sub"].as_str().unwrap_or_default());
        let claims = self.id_tokens.users.claims(&user).await?.ok_or_else(|| {
            OAuthError::invalid_grant("the user of the subject_token no longer exists")
        })?;
        Ok(Subject {
            issued_to,
            user,
            claims,
            id_token,
        })
    }

    /// The claims of `token` if it is an ID token of this server that has not expired.
    async fn read(&self, token: IdTokenText<'_>, now: UnixTime) -> Result<Value, OAuthError> {
        let not_ours = || {
            OAuthError::invalid_grant(
                "subject_token is not an ID token of this server (a signed JWT with its iss, \
                 sub, aud, azp and exp)",
            )
        };
        let claims = self.id_tokens.signer.read(token.0, now).await?;
        let claims = claims
            .filter(|claims| claims["iss"] == self.id_tokens.issuer_id)
            .ok_or_else(not_ours)?;
        // grantor's ID tokens name their client in `azp` as well as in `aud`; a signed
        // userinfo answer, signed by the same keys, names it in `aud` alone and is no ID token.
        let azp = claims["azp"].as_str().ok_or_else(not_ours)?;
        let named = match &claims["aud"] {
            Value::String(aud) => aud == azp,
            Value::Array(auds) => auds.iter().any(|aud| aud == azp),
            _ => false,
        };
        let sub = claims["sub"].as_str().unwrap_or_default();
        if !named || sub.is_empty() {
            return Err(not_ours());
        }
        let expired = claims["exp"]
            .as_u64()
            .is_none_or(|exp| exp <= now.as_secs());
        if expired {
            return Err(OAuthError::invalid_grant("subject_token has expired"));
        }
        Ok(claims)
    }

    /// The client the ID token was issued to (its `azp`): `None` for `client` itself, else
    /// another existing client whose ID tokens the policy lets `client` exchange.
    async fn issued_to(
        &self,
        client: &Client,
        azp: &str,
    ) -> Result<Option<Arc<Client>>, OAuthError> {
        if azp == client.id().as_str() {
            return Ok(None);
        }
        let refused = || {
            OAuthError::invalid_grant(
                "the subject_token was issued to another client, whose ID tokens this client \
                 may not exchange",
            )
        };
        let other = self.clients.find_client(azp).await?.ok_or_else(refused)?;
        if !self.policy.accepts_id_tokens_of(client, &other) {
            return Err(refused());
        }
        Ok(Some(other))
    }

    /// The signed ID-JAG about `subject` saying `signed`.
    async fn sign(
        &self,
        subject: &Subject,
        signed: Signed<'_>,
        now: UnixTime,
    ) -> Result<String, OAuthError> {
        let id_token = &subject.id_token;
        let amr = id_token["amr"]
            .as_array()
            .map(|amr| amr.iter().filter_map(Value::as_str).collect());
        let email = subject.claims.get("email").and_then(Value::as_str);
        let email_verified = (subject.claims.get("email_verified"))
            .and_then(Value::as_bool)
            .filter(|_| email.is_some());
        let claims = IdJagClaims {
            iss: self.id_tokens.issuer_id,
            sub: subject.user.as_str(),
            aud: signed.audience,
            client_id: &signed.granted.client_id,
            jti: signed.jti.as_str(),
            exp: now.plus(signed.lifetime).as_secs(),
            iat: now.as_secs(),
            resource: signed.resource,
            scope: (signed.granted.scope.as_ref())
                .map(Scope::as_str)
                .filter(|scope| !scope.is_empty()),
            email,
            email_verified,
            auth_time: id_token["auth_time"].as_u64(),
            acr: id_token["acr"].as_str(),
            amr,
            cnf: signed.jkt.map(|jkt| Confirmation {
                jkt: jkt.to_string(),
            }),
        };
        let claims = serde_json::to_value(&claims).map_err(StoreError::failed)?;
        let signer = self.id_tokens.signer;
        Ok(signer.sign(&claims, ID_JAG_TYP, ALGORITHM, now).await?)
    }
}
