//! The refresh token grant (RFC 6749 §6): the refresh token rotates on every use; presenting a
//! rotated one revokes its whole family (RFC 9700 §4.14.2); the scope may only narrow.
//!
//! A rotation's answer can be lost (a timeout, a dropped connection), leaving the client with
//! a refresh token that is already rotated. With a retry window (the builder's
//! `refresh_grace`, default zero: off), the token the family's current one replaced, presented
//! again by its own client within the window of that rotation, is a retry: the family rotates
//! once more and the pair the lost answer carried is revoked, so exactly one pair stays live.
//! Any other rotated token (older, from another client, or past the window) is reuse and
//! revokes the family. Every family also has an absolute end (default 90 days after its first
//! refresh token), past which none of its tokens is found and which no refresh token outlives.

use serde_json::Map;

use super::checks;
use super::id_token::{Beside, Subject};
use super::issue::{Issued, Issuer};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::events::{Event, EventKind};
use crate::oidc::{OPENID, SignInFacts};
use crate::secret::RefreshToken;
use crate::store::seam::answer_now;
use crate::store::{Authorization, Rotation, TokenBinding, User};

pub(crate) async fn exchange(
    issuer: &Issuer<'_>,
    client: &Client,
    token: &RefreshToken,
    scope: Option<&str>,
    resources: &[&str],
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    let digest = token.digest();
    let grace = issuer.lifetimes.refresh_grace;
    // The token's grant lives in this block alone, so this future does not keep it while the
    // successor is minted and the rotation stored.
    let (family, family_end, authorization, openid) = {
        let grant = answer_now!(issuer.store.find_refresh_token(&digest, now))?
            .ok_or_else(invalid_token)?;
        let own = grant.authorization.client_id == *client.id();
        if grant.rotated && (!own || grace.is_zero()) {
            let event = Event::new(EventKind::RefreshReuseDetected, now)
                .client(&grant.authorization.client_id)
                .user(grant.authorization.user.as_ref().map(User::id));
            issuer.revoke_after_replay(grant.family, event).await?;
            return Err(reused());
        }
        if !own {
            return Err(invalid_token());
        }
        if let Some(binding) = grant.binding {
            presents(issuer, binding)?;
        }
        let access_scope = checks::narrow_scope(scope, &grant.authorization.scope)?;
        let audience = issuer
            .resources
            .narrow(resources, &grant.authorization.audience)?;
        // The family's sign-in rides on: a refresh is no new sign-in (OIDC Core §12.2).
        let Authorization {
            client_id,
            user,
            authentication,
            ..
        } = grant.authorization;
        // OIDC Core §12.2: a grant that had `openid` answers a new ID token of the same
        // sign-in (its `auth_time`, `acr`, `amr`; no `nonce`, which belonged to the request).
        let openid = match (&user, &authentication) {
            (Some(user), Some(signed_in))
                if issuer.id_tokens.is_some() && access_scope.contains(OPENID) =>
            {
                let mut facts = SignInFacts::new(None, signed_in.auth_time());
                facts.amr = signed_in.amr().to_vec();
                facts.acr = signed_in.acr().map(str::to_owned);
                Some(Box::new((user.id().clone(), facts)))
            }
            _ => None,
        };
        let authorization = Authorization::new(client_id, user, access_scope)
            .with_audience(audience)
            .with_authentication(authentication);
        (grant.family, grant.family_ends_at, authorization, openid)
    };
    // Whether this is a retry of a lost answer is the store's atomic decision.
    let retry_since = (!grace.is_zero()).then(|| now.minus(grace));
    let (issued, successor) = issuer
        .mint(Some(family), family_end, authorization, true, now)
        .await?;
    let refreshed = Event::new(EventKind::TokenRefreshed, now).about(&successor);
    match issuer
        .store
        .rotate_refresh_token(&digest, successor, retry_since)
        .await?
    {
        Rotation::Rotated | Rotation::Retried => {
            issuer.events.record(&refreshed);
            let mut issued = issued;
            if let (Some(id_tokens), Some(openid)) = (issuer.id_tokens, openid) {
                let (user, facts) = &*openid;
                let subject = Subject {
                    client,
                    user,
                    facts,
                };
                let beside = Beside {
                    access_token: Some(issued.access_token()),
                    code: None,
                };
                issued.id_token = Some(id_tokens.sign(subject, beside, Map::new(), now).await?);
            }
            Ok(issued)
        }
        Rotation::Reused { family } => {
            let mut event = refreshed;
            event.kind = EventKind::RefreshReuseDetected;
            event.jti = None;
            issuer.revoke_after_replay(family, event).await?;
            Err(reused())
        }
        _ => Err(invalid_token()),
    }
}

/// Whether the refresh request presents what a bound refresh token (a public client's) is
/// bound to: a proof of its DPoP key (RFC 9449 §5), or its client certificate (RFC 8705 §4).
fn presents(issuer: &Issuer<'_>, binding: TokenBinding) -> Result<(), OAuthError> {
    match binding {
        TokenBinding::Dpop(bound) => match issuer.possession.map(|p| p.jkt()) {
            None => Err(OAuthError::new(
                ErrorCode::InvalidDpopProof,
                "the refresh token is bound to a DPoP key: send a proof of it",
            )),
            Some(key) if key != bound => Err(OAuthError::invalid_grant(
                "the refresh token is bound to another DPoP key",
            )),
            Some(_) => Ok(()),
        },
        TokenBinding::Certificate(bound) => match issuer.certificate {
            Some(certificate) if bound.matches(certificate) => Ok(()),
            _ => Err(OAuthError::invalid_grant(
                "the refresh token is bound to a client certificate: send the request over a \
                 connection with that certificate (RFC 8705 section 4)",
            )),
        },
    }
}

fn invalid_token() -> OAuthError {
    OAuthError::invalid_grant("the refresh token is invalid, expired or revoked")
}

fn reused() -> OAuthError {
    OAuthError::invalid_grant("the refresh token was already used; its grant is revoked")
}
