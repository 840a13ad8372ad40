//! Logout, decided: OpenID Connect RP-Initiated Logout 1.0 (which client asks, whether its
//! `post_logout_redirect_uri` is one it registered, whether its `id_token_hint` is an ID token
//! of this server) and what ending a browser's session does (Back-Channel Logout 1.0: each
//! client issued tokens in it that registered a `backchannel_logout_uri` gets a logout token,
//! and the refresh tokens it was issued there are revoked).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::id_token::IdTokens;
use super::signin::{SealKeys, Sealed, Unsealed};
use crate::client::{Client, ClientId};
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::events::{Event, EventKind, Events};
use crate::mint;
use crate::oidc::LOGOUT_TOKEN_TYP;
use crate::outbound::{Delivery, Outbound, OutboundPost};
use crate::secret::SecretDigest;
use crate::store::seam::{ClientSeam, TokenSeam};
use crate::store::{KeyStore, UserId, UserSession, UserSessionStore};

/// How long a logout token is valid (Back-Channel Logout 1.0 §2.4 asks for a short life).
const LOGOUT_TOKEN_LIFETIME: Duration = Duration::from_secs(120);
/// How long the confirmation page's form may be answered.
const CONFIRMATION_LIFETIME: Duration = Duration::from_secs(600);
/// The `events` member of a logout token (Back-Channel Logout 1.0 §2.4).
const BACKCHANNEL_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// What logout needs.
pub(crate) struct Logout<'a> {
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) sessions: &'a dyn UserSessionStore,
    pub(crate) tokens: TokenSeam<'a>,
    pub(crate) id_tokens: IdTokens<'a>,
    /// Where logout tokens go; `None`: back-channel logout is not offered.
    pub(crate) outbound: Option<Arc<dyn Outbound>>,
    pub(crate) events: Arc<dyn Events>,
    pub(crate) seal_keys: &'a SealKeys,
    pub(crate) keys: &'a dyn KeyStore,
}

/// The parameters of a logout request (RP-Initiated Logout 1.0 §2), as sent.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct LogoutRequest<'r> {
    pub(crate) id_token_hint: Option<&'r str>,
    pub(crate) client_id: Option<&'r str>,
    pub(crate) post_logout_redirect_uri: Option<&'r str>,
    pub(crate) state: Option<&'r str>,
}

/// A logout request checked: where the browser goes afterwards, and whether the request
/// proved itself with an ID token of this server (then no confirmation is asked).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CheckedLogout {
    /// The registered `post_logout_redirect_uri`, with `state`, when one was asked for.
    pub(crate) redirect: Option<(String, Option<String>)>,
    /// The client's name, for the confirmation page.
    pub(crate) client_name: Option<String>,
    /// The hint's `sub`, when a valid `id_token_hint` came: as its client knows the user,
    /// which may be a pairwise `sub` ([`Logout::hint_names`] compares it).
    #[serde(skip)]
    pub(crate) hinted_user: Option<String>,
    /// The client of the logout (the hint's audience, or the `client_id` sent).
    #[serde(skip)]
    pub(crate) client: Option<Arc<Client>>,
}

impl Logout<'_> {
    /// Checks `request` (RP-Initiated Logout 1.0 §2, §3): an `id_token_hint` is one of this
    /// server's ID tokens (expired or not), its `aud` the `client_id` when both came; a
    /// `post_logout_redirect_uri` is one the client registered, exactly, and needs the client
    /// named. Anything else is an error page, never a redirect.
    pub(crate) async fn check(
        &self,
        request: LogoutRequest<'_>,
        now: UnixTime,
    ) -> Result<CheckedLogout, OAuthError> {
        let hint = match request.id_token_hint {
            Some(token) => Some(self.read_hint(token, now).await?),
            None => None,
        };
        let hinted_client = hint.as_ref().and_then(|(aud, _)| aud.clone());
        let client_id = match (request.client_id, hinted_client.as_deref()) {
            (Some(named), Some(hinted)) if named != hinted => {
                return Err(OAuthError::invalid_request(
                    "client_id is not the audience of the id_token_hint",
                ));
            }
            (Some(named), _) => Some(named.to_owned()),
            (None, hinted) => hinted.map(str::to_owned),
        };
        let client = match &client_id {
            Some(id) => Some(self.clients.find_client(id).await?.ok_or_else(|| {
                OAuthError::invalid_request("the client of this logout is unknown")
            })?),
            None => None,
        };
        let redirect = match (request.post_logout_redirect_uri, &client) {
            (None, _) => None,
            (Some(_), None) => {
                return Err(OAuthError::invalid_request(
                    "post_logout_redirect_uri needs the client: send client_id or id_token_hint",
                ));
            }
            (Some(uri), Some(client)) if registered(client, uri) => {
                Some((uri.to_owned(), request.state.map(str::to_owned)))
            }
            (Some(_), Some(_)) => {
                return Err(OAuthError::invalid_request(
                    "post_logout_redirect_uri is not registered for this client",
                ));
            }
        };
        Ok(CheckedLogout {
            redirect,
            client_name: client.as_ref().map(|c| c.name().to_owned()),
            hinted_user: hint.and_then(|(_, sub)| sub),
            client,
        })
    }

    /// Whether `checked`'s `id_token_hint` names `user`: its `sub` is the one the logout's
    /// client knows `user` by (OIDC Core §8), compared, never looked up.
    pub(crate) fn hint_names(&self, checked: &CheckedLogout, user: &UserId) -> bool {
        match (&checked.hinted_user, &checked.client) {
            (Some(sub), Some(client)) => self.id_tokens.names(sub, client, user),
            (Some(sub), None) => sub == user.as_str(),
            (None, _) => false,
        }
    }

    /// The `aud` and `sub` of an ID token this server signed (RP-Initiated Logout 1.0 §2:
    /// "an ID Token previously issued by the OP").
    async fn read_hint(
        &self,
        token: &str,
        now: UnixTime,
    ) -> Result<(Option<String>, Option<String>), OAuthError> {
        let claims = self.id_tokens.signer.read(token, now).await?;
        let Some(claims) = claims.filter(|c| c["iss"] == self.id_tokens.issuer_id) else {
            return Err(OAuthError::invalid_request(
                "id_token_hint is not an ID token of this server",
            ));
        };
        let aud = match &claims["aud"] {
            Value::String(aud) => Some(aud.clone()),
            Value::Array(auds) => auds.first().and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        Ok((aud, claims["sub"].as_str().map(str::to_owned)))
    }

    /// The confirmation form's hidden value: `checked`, sealed and bound to the browser's
    /// session cookie (so another browser's page cannot log this one out).
    pub(crate) async fn confirmation(
        &self,
        checked: &CheckedLogout,
        cookie: &str,
        now: UnixTime,
    ) -> Result<String, OAuthError> {
        let sealed = Sealed {
            authorization: serde_json::to_string(checked)
                .map_err(crate::error::StoreError::failed)?,
            binding: SecretDigest::of(cookie),
            expires_at: now.plus(CONFIRMATION_LIFETIME),
        };
        Ok(self.seal_keys.seal(self.keys, &sealed, now).await?)
    }

    /// The confirmation form's `POST`: what it sealed, if it opens with the browser's cookie.
    pub(crate) async fn confirmed(
        &self,
        form: &str,
        cookie: &str,
        now: UnixTime,
    ) -> Result<CheckedLogout, OAuthError> {
        let stale = || {
            OAuthError::invalid_request(
                "this logout form has expired or is not valid; go back to the application",
            )
        };
        let sealed = match self.seal_keys.open(self.keys, form, cookie, now).await {
            Ok(sealed) => sealed,
            Err(Unsealed::Stale) => return Err(stale()),
            Err(Unsealed::Store(error)) => return Err(error.into()),
        };
        serde_json::from_str(&sealed.authorization).map_err(|_| stale())
    }

    /// Ends the browser's session under `cookie`, if it has one: each client issued tokens in
    /// it that registered a `backchannel_logout_uri` has its refresh tokens from the session
    /// revoked and is sent a logout token (off the request path). Answers the session ended.
    pub(crate) async fn end(
        &self,
        cookie: &str,
        now: UnixTime,
    ) -> Result<Option<UserSession>, OAuthError> {
        if cookie.is_empty() {
            return Ok(None);
        }
        let Some(session) = self
            .sessions
            .end_user_session(&SecretDigest::of(cookie), now)
            .await?
        else {
            return Ok(None);
        };
        self.ended(&session, now).await?;
        Ok(Some(session))
    }

    /// What ending `session` (taken from the store) does, whoever ended it: the event, and
    /// each client issued tokens in it that registered a `backchannel_logout_uri` has its
    /// refresh tokens from the session revoked and is sent a logout token.
    pub(crate) async fn ended(
        &self,
        session: &UserSession,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let event = Event::new(EventKind::SessionEnded, now).user(Some(session.user.id()));
        self.events.record(&event);
        let mut notified: Vec<&ClientId> = Vec::new();
        for (client_id, family) in &session.grants {
            let Some(client) = self.clients.find_client(client_id.as_str()).await? else {
                continue;
            };
            let Some(uri) = client.backchannel_logout_uri() else {
                continue;
            };
            self.tokens.revoke_family(*family).await?;
            if !notified.contains(&client_id) {
                notified.push(client_id);
                self.notify(&client, uri, session, now).await?;
            }
        }
        Ok(())
    }

    /// Sends `client` a logout token for `session` (Back-Channel Logout 1.0 §2.4).
    async fn notify(
        &self,
        client: &Client,
        uri: &str,
        session: &UserSession,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let Some(outbound) = &self.outbound else {
            return Ok(());
        };
        // Back-Channel Logout 1.0 §2.4: the `sub` the client knows the user by.
        let sub = self.id_tokens.subject(client, session.user.id())?;
        let claims = json!({
            "iss": self.id_tokens.issuer_id,
            "sub": sub,
            "aud": client.id().as_str(),
            "iat": now.as_secs(),
            "exp": now.plus(LOGOUT_TOKEN_LIFETIME).as_secs(),
            "jti": mint::request_reference()?,
            "events": { BACKCHANNEL_EVENT: {} },
            "sid": session.sid,
        });
        let algorithm = self.id_tokens.algorithm(client);
        let token = self
            .id_tokens
            .signer
            .sign(&claims, LOGOUT_TOKEN_TYP, algorithm, now)
            .await?;
        let post = OutboundPost::new(uri, vec![("logout_token", token)], client.id().clone());
        let events = Arc::clone(&self.events);
        let client_id = client.id().clone();
        let user = session.user.id().clone();
        outbound.post(
            post,
            Box::new(move |delivery| {
                let kind = match delivery {
                    Delivery::Delivered => EventKind::BackChannelLogoutDelivered,
                    _ => EventKind::BackChannelLogoutFailed,
                };
                let event = Event::new(kind, now).client(&client_id).user(Some(&user));
                events.record(&event);
            }),
        );
        Ok(())
    }
}

/// Whether `uri` is one of `client`'s `post_logout_redirect_uris`, exactly (RP-Initiated
/// Logout 1.0 §3.1).
fn registered(client: &Client, uri: &str) -> bool {
    client.post_logout_redirect_uris().iter().any(|r| r == uri)
}
