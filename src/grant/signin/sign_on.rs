//! Single sign-on, decided: a successful sign-in opens a session for the browser (a cookie of
//! 256 random bits, kept as its digest), and while it lives an authorization request from that
//! browser needs no password; an approval a person gave a client is remembered, so a request
//! from a signed-in browser asking for no more skips the approval page (a person who has just
//! typed their password sees it, as a first visit would). OpenID Connect's `prompt` and
//! `max_age` (Core §3.1.2.1) ask for a fresh sign-in or approval all the same.

use std::time::Duration;

use super::super::pending::{Authenticated, PendingAuthorization};
use super::levels::{Levels, Needed};
use crate::audience::Audience;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError, StoreErrorKind};
use crate::grant::id_token::IdTokens;
use crate::mint;
use crate::oidc::Prompt;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::store::{Consent, ConsentStore, User, UserSession, UserSessionStore, UserStore};

/// What single sign-on needs: the signed-in browsers, the remembered approvals, the accounts
/// (a session's user may be gone), and how long each lives.
pub(crate) struct SignOn<'a> {
    pub(crate) sessions: &'a dyn UserSessionStore,
    pub(crate) consents: &'a dyn ConsentStore,
    pub(crate) users: &'a dyn UserStore,
    /// Zero: no single sign-on.
    pub(crate) session_ttl: Duration,
    /// Zero: approvals are not remembered.
    pub(crate) consent_ttl: Duration,
    /// The audience of a request that names no resource (RFC 8707), which an approval kept
    /// without resources covers.
    pub(crate) default_audience: &'a Audience,
    /// Whether a session's sign-in is enough for what a request asks of it.
    pub(crate) levels: Levels<'a>,
}

/// Where an authorization request stands with its browser's session.
pub(crate) enum Resumed {
    /// Not signed in, or the request wants a fresh sign-in (`prompt=login`, `max_age` passed):
    /// the sign-in page.
    SignIn(PendingAuthorization),
    /// Signed in, and nothing to ask: the decision is approval.
    Approved(PendingAuthorization, User),
    /// Signed in; the approval page is needed.
    Approve(PendingAuthorization, User),
    /// Signed in, but the request asks for a class only the second factor reaches: its page,
    /// for the session's user (`pending.authenticated` holds the sign-in so far).
    SecondFactor(PendingAuthorization),
    /// Signed in, but the request requires a class this user cannot reach.
    Refused(PendingAuthorization, OAuthError),
}

impl SignOn<'_> {
    /// Where a valid authorization request `pending` from a browser whose single sign-on
    /// cookie is `cookie` (empty when it has none) stands, decided whole: its `id_token_hint`
    /// verified (OIDC Core §3.1.2.1: an ID token of this server, expired or not, of which only
    /// the `sub` is kept; anything else is `invalid_request`), the browser's session consulted,
    /// and `prompt=none` answered with the error of what would have to be asked (§3.1.2.6:
    /// `login_required`, `consent_required`, `interaction_required` for the second factor).
    pub(crate) async fn begin(
        &self,
        id_tokens: Option<IdTokens<'_>>,
        cookie: &str,
        mut pending: PendingAuthorization,
        now: UnixTime,
    ) -> Result<Resumed, OAuthError> {
        if let Err(error) = read_id_token_hint(id_tokens, &mut pending, now).await {
            return Ok(Resumed::Refused(pending, error));
        }
        let prompt_none = pending.prompt() == Prompt::None;
        let resumed = self.resume(id_tokens, cookie, pending, now).await?;
        if !prompt_none {
            return Ok(resumed);
        }
        let refused = |pending, code, description| {
            Ok(Resumed::Refused(
                pending,
                OAuthError::new(code, description),
            ))
        };
        match resumed {
            Resumed::SignIn(pending) => refused(
                pending,
                ErrorCode::LoginRequired,
                "prompt=none, and the user would have to sign in",
            ),
            Resumed::Approve(pending, _) => refused(
                pending,
                ErrorCode::ConsentRequired,
                "prompt=none, and the user would have to approve this client",
            ),
            Resumed::SecondFactor(pending) => refused(
                pending,
                ErrorCode::InteractionRequired,
                "prompt=none, and the request asks for the second factor",
            ),
            answered => Ok(answered),
        }
    }

    /// The request `pending` from a browser whose session cookie is `cookie` (empty when it has
    /// none).
    async fn resume(
        &self,
        id_tokens: Option<IdTokens<'_>>,
        cookie: &str,
        mut pending: PendingAuthorization,
        now: UnixTime,
    ) -> Result<Resumed, OAuthError> {
        // A device flow is approved by whoever types its code: always a sign-in of its own.
        let fresh = pending.prompt() == Prompt::Login || pending.device.is_some();
        if self.session_ttl.is_zero() || cookie.is_empty() || fresh {
            return Ok(Resumed::SignIn(pending));
        }
        let digest = SecretDigest::of(cookie);
        let Some(session) = self.sessions.find_user_session(&digest, now).await? else {
            return Ok(Resumed::SignIn(pending));
        };
        // OIDC Core §3.1.2.1: past `max_age` since the sign-in, the user signs in again.
        if pending
            .max_age()
            .is_some_and(|age| too_old(session.auth_time, age, now))
        {
            return Ok(Resumed::SignIn(pending));
        }
        // OIDC Core §3.1.2.1: an `id_token_hint` for another user than the signed-in one,
        // its `sub` compared with the one this client knows the session's user by (§8).
        let hinted = pending
            .openid
            .as_ref()
            .and_then(|o| o.hinted_sub.as_deref());
        let names_user =
            |sub: &str| id_tokens.is_some_and(|t| t.names(sub, &pending.client, session.user.id()));
        if hinted.is_some_and(|sub| !names_user(sub)) {
            return Ok(Resumed::SignIn(pending));
        }
        let Some(user) = self.users.find_user(session.user.id()).await? else {
            return Ok(Resumed::SignIn(pending));
        };
        let mut authenticated = Authenticated {
            auth_time: session.auth_time,
            amr: session.amr,
            sid: Some(session.sid),
            session: Some(digest),
            acr: session.acr,
            user: None,
        };
        match self
            .levels
            .needed(&pending, &authenticated, &user, true)
            .await?
        {
            Needed::Nothing => {}
            // Only the missing step: the second factor's code, for the session's user; a new
            // session follows it.
            Needed::SecondFactor => {
                authenticated.sid = None;
                authenticated.session = None;
                authenticated.user = Some(user.id().as_str().to_owned());
                pending.authenticated = Some(Box::new(authenticated));
                return Ok(Resumed::SecondFactor(pending));
            }
            Needed::Refused(error) => return Ok(Resumed::Refused(pending, error)),
        }
        pending.authenticated = Some(Box::new(authenticated));
        if self.approved(&pending, &user, now).await? {
            Ok(Resumed::Approved(pending, user))
        } else {
            Ok(Resumed::Approve(pending, user))
        }
    }

    /// Whether `user` needs no approval page for `pending`: none is asked for, or they approved
    /// this client for at least this scope and these resources (RFC 8707: an approval for one
    /// audience is not one for another) before (unless the request says `prompt=consent`; a
    /// device flow is always confirmed, RFC 8628 §5.4).
    pub(crate) async fn approved(
        &self,
        pending: &PendingAuthorization,
        user: &User,
        now: UnixTime,
    ) -> Result<bool, OAuthError> {
        if !pending.needs_approval() {
            return Ok(true);
        }
        // A client ID metadata document's client is asked about every time: no one vouched
        // for it, and its document may change.
        if pending.prompt() == Prompt::Consent
            || pending.device.is_some()
            || self.consent_ttl.is_zero()
            || pending.client().is_from_metadata_document()
        {
            return Ok(false);
        }
        let client = pending.client().id();
        let remembered = self.consents.find_consent(user.id(), client, now).await?;
        Ok(remembered.is_some_and(|consent| {
            pending.scope().is_subset_of(&consent.scope)
                && self
                    .audience_of(pending)
                    .is_subset_of(self.approved_audience(&consent))
        }))
    }

    /// The resources `pending` asks for, as kept (empty: the default audience).
    fn audience_of<'p>(&'p self, pending: &'p PendingAuthorization) -> &'p Audience {
        pending.audience.or(self.default_audience)
    }

    /// The resources `consent` approved; one kept with none covers the default audience.
    fn approved_audience<'c>(&'c self, consent: &'c Consent) -> &'c Audience {
        consent.audience.or(self.default_audience)
    }

    /// `user` just signed in for `pending` as `authenticated` says: marks `pending` as signed
    /// in and, with single sign-on, opens the browser's session for it. Answers the session's
    /// cookie for the browser.
    pub(crate) async fn open(
        &self,
        user: &User,
        pending: &mut PendingAuthorization,
        mut authenticated: Authenticated,
        now: UnixTime,
    ) -> Result<Option<String>, OAuthError> {
        authenticated.user = None;
        if self.session_ttl.is_zero() {
            pending.authenticated = Some(Box::new(authenticated));
            return Ok(None);
        }
        let (cookie, sid) = mint::user_session()?;
        let digest = SecretDigest::of(&cookie);
        let amr = authenticated.amr.clone();
        let expires_at = now.plus(self.session_ttl);
        let session = UserSession::new(
            user.clone(),
            sid.clone(),
            authenticated.auth_time,
            amr,
            expires_at,
        )
        .with_acr(authenticated.acr.clone());
        match self
            .sessions
            .insert_user_session(&digest, session, now)
            .await
        {
            Ok(()) => {}
            // A full store (one account signing in over and over, say) costs single sign-on
            // for this sign-in, never the sign-in itself.
            Err(error) if error.kind() == StoreErrorKind::Unavailable => {
                tracing::warn!(%error, "no single sign-on session for this sign-in");
                pending.authenticated = Some(Box::new(authenticated));
                return Ok(None);
            }
            Err(error) => return Err(error.into()),
        }
        authenticated.sid = Some(sid);
        authenticated.session = Some(digest);
        pending.authenticated = Some(Box::new(authenticated));
        Ok(Some(cookie))
    }

    /// Remembers that `user` approved `pending`: with what they approved the client before, so
    /// that approving a narrower request forgets nothing.
    pub(crate) async fn remember(
        &self,
        pending: &PendingAuthorization,
        user: &User,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        if self.consent_ttl.is_zero() || pending.device.is_some() {
            return Ok(());
        }
        let client = pending.client().id();
        let before = self.consents.find_consent(user.id(), client, now).await?;
        let asked = self.audience_of(pending);
        let consent = match before {
            Some(before) => {
                let scope = before.scope.iter().chain(pending.scope().iter());
                let scope = Scope::from_tokens(scope).unwrap_or_else(|_| pending.scope().clone());
                let resources = self.approved_audience(&before).iter().chain(asked.iter());
                let audience = Audience::from_resources(resources).unwrap_or_else(|| asked.clone());
                Consent::new(scope, audience)
            }
            None => Consent::new(pending.scope().clone(), asked.clone()),
        };
        let expires_at = now.plus(self.consent_ttl);
        match self
            .consents
            .remember_consent(user.id(), client, &consent, expires_at, now)
            .await
        {
            // A full store forgets this approval, it never refuses it.
            Err(error) if error.kind() == StoreErrorKind::Unavailable => {
                tracing::warn!(%error, "the approval is not remembered");
                Ok(())
            }
            answer => Ok(answer?),
        }
    }
}

/// Whether a sign-in at `auth_time` is older than `max_age` seconds at `now` (OIDC Core
/// §3.1.2.1). Times are whole seconds, so a sign-in in this very second may be most of a second
/// old: `max_age=0` (the client wants the user to authenticate now, as `prompt=login`) is never
/// met by a session.
fn too_old(auth_time: UnixTime, max_age: u64, now: UnixTime) -> bool {
    max_age == 0 || auth_time.plus(Duration::from_secs(max_age)) < now
}

/// Verifies an OpenID Connect request's `id_token_hint` (an ID token of this server, expired or
/// not) and keeps only the `sub` it names; one that is not is `invalid_request`.
async fn read_id_token_hint(
    id_tokens: Option<IdTokens<'_>>,
    pending: &mut PendingAuthorization,
    now: UnixTime,
) -> Result<(), OAuthError> {
    let (Some(openid), Some(id_tokens)) = (pending.openid.as_mut(), id_tokens) else {
        return Ok(());
    };
    let Some(hint) = openid.id_token_hint.take() else {
        return Ok(());
    };
    let claims = id_tokens.signer.read(&hint, now).await?;
    let sub = claims
        .filter(|claims| claims["iss"] == id_tokens.issuer_id)
        .and_then(|claims| claims["sub"].as_str().map(str::to_owned))
        .ok_or_else(|| {
            OAuthError::invalid_request("id_token_hint is not an ID token of this server")
        })?;
    openid.hinted_sub = Some(sub);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::too_old;
    use crate::clock::UnixTime;

    #[test]
    fn max_age_zero_is_never_met_by_a_session_even_in_its_sign_in_s_second() {
        let signed_in = UnixTime::from_secs(1_000);
        assert!(too_old(signed_in, 0, signed_in));
        assert!(!too_old(signed_in, 1, signed_in));
        assert!(!too_old(signed_in, 60, UnixTime::from_secs(1_060)));
        assert!(too_old(signed_in, 60, UnixTime::from_secs(1_061)));
    }
}
