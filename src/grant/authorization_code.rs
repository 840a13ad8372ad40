//! The authorization code grant (RFC 6749 §4.1): a single-use code on approval, exchanged at
//! the token endpoint by the client it was issued to, with the same redirect URI and, where
//! the request carried a challenge, the PKCE verifier (RFC 7636).

use super::checks;
use super::id_token::{self, Beside, Subject};
use super::issue::{Issued, Issuer};
use super::pending::PendingAuthorization;
use crate::client::{Client, GrantType};
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::events::{Event, EventKind};
use crate::mint;
use crate::secret::AuthorizationCode;
use crate::store::seam::answer_now;
use crate::store::{Authorization, CodeGrant, CodeRedemption, FamilyId, SignInFacts, User};

/// Mints the code for the approved `pending` authorization and hands the store its digest,
/// with how the user signed in (which every token of the code's family carries) and what an
/// OpenID Connect request's ID token will say of the sign-in (`facts`).
pub(crate) async fn issue_code(
    issuer: &Issuer<'_>,
    pending: &PendingAuthorization,
    user: User,
    facts: Option<SignInFacts>,
    now: UnixTime,
) -> Result<(AuthorizationCode, FamilyId), OAuthError> {
    let grant = CodeGrant::new(
        Authorization::new(
            pending.client.id().clone(),
            Some(user),
            pending.scope.clone(),
        )
        .with_audience(pending.audience.clone())
        .with_authentication(Some(pending.authentication(now))),
        pending.redirect_uri.clone(),
        pending.code_challenge.clone(),
        now,
        now.plus(issuer.lifetimes.code),
    )
    .with_openid(facts)
    .bound_to(pending.dpop_jkt);
    let (code, family) = mint::code()?;
    issuer
        .store
        .insert_code(&code.digest(), family, grant)
        .await?;
    Ok((code, family))
}

/// The token request of RFC 6749 §4.1.3.
pub(crate) struct Exchange<'a> {
    pub(crate) code: &'a AuthorizationCode,
    pub(crate) redirect_uri: &'a str,
    pub(crate) code_verifier: Option<&'a str>,
    /// RFC 8707 §2.2: the access token's audience, within the code's.
    pub(crate) resources: &'a [&'a str],
}

pub(crate) async fn exchange(
    issuer: &Issuer<'_>,
    client: &Client,
    request: Exchange<'_>,
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    // The redemption's answer is gone once this statement ends, so it is not kept in this
    // future while a replay's family is revoked.
    let replayed = match redeem_and_issue(issuer, client, request, now).await {
        Ok(issued) => return Ok(issued),
        Err(Failure::Refused(error)) => return Err(error),
        Err(Failure::Replayed(family)) => family,
    };
    // RFC 6749 §4.1.2: a code used twice revokes what it was exchanged for.
    let event = Event::new(EventKind::CodeReplayed, now).client(client.id());
    issuer.revoke_after_replay(replayed, event).await?;
    Err(OAuthError::invalid_grant(
        "the authorization code was already used; tokens issued for it are revoked",
    ))
}

/// Why a code was not exchanged.
enum Failure {
    /// Redeemed before: its family is to be revoked.
    Replayed(FamilyId),
    /// Anything else, answered as it is.
    Refused(OAuthError),
}

impl From<OAuthError> for Failure {
    fn from(error: OAuthError) -> Self {
        Self::Refused(error)
    }
}

async fn redeem_and_issue(
    issuer: &Issuer<'_>,
    client: &Client,
    request: Exchange<'_>,
    now: UnixTime,
) -> Result<Issued, Failure> {
    // The code's grant lives in this block alone, so this future does not keep it (312 bytes)
    // while the tokens are issued.
    let (family, authorization, facts) = {
        // Consumed before any other check: a code presented once is spent, whoever presented
        // it.
        let digest = request.code.digest();
        let redemption = answer_now!(issuer.store.redeem_code(&digest, now));
        let (mut grant, family) = match redemption.map_err(OAuthError::from)? {
            CodeRedemption::Redeemed { grant, family } => (grant, family),
            CodeRedemption::Replayed { family } => return Err(Failure::Replayed(family)),
            _ => {
                return Err(Failure::Refused(OAuthError::invalid_grant(
                    "the authorization code is invalid or expired",
                )));
            }
        };
        checks::code_binding(&grant, client, request.redirect_uri, request.code_verifier)?;
        checks::key_binding(&grant, issuer.possession.map(|p| p.jkt()))?;
        let audience = issuer
            .resources
            .narrow(request.resources, &grant.authorization.audience)?;
        let facts = grant.openid.take();
        (family, grant.authorization.with_audience(audience), facts)
    };
    let user = authorization.user.as_ref().map(|u| u.id().clone());
    let with_id_token = id_token::asked(&authorization.scope, facts.as_ref());
    let refresh = client.issues_refresh_tokens();
    let mut issued = issuer
        .issue(
            GrantType::AuthorizationCode,
            authorization,
            Some(family),
            refresh,
            now,
        )
        .await?;
    // OIDC Core §3.1.3.3: an OpenID Connect request's tokens come with an ID token.
    if let (true, Some(id_tokens), Some(facts), Some(user)) =
        (with_id_token, issuer.id_tokens, &facts, &user)
    {
        let subject = Subject {
            client,
            user,
            facts,
        };
        let beside = Beside {
            access_token: Some(issued.access_token()),
            code: None,
        };
        // The user's claims are fetched at userinfo (§5.4), but for those the `claims`
        // parameter named for the ID token (§5.5).
        let claims = id_tokens
            .released(user, None, &facts.id_token_claims)
            .await?;
        let id_token = id_tokens.sign(subject, beside, claims, now).await?;
        issued.id_token = Some(id_token);
    }
    Ok(issued)
}
