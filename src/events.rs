//! An audit trail: what grantor did and refused, as typed [`Event`]s handed to the host's
//! [`Events`] seam ([`AuthorizationServerBuilder::events`](crate::AuthorizationServerBuilder::events)).
//!
//! Each event names what happened ([`EventKind`]), when, and whichever of the client id, the
//! user id, the token family and the access token's `jti` apply. Never a secret: no token, code,
//! password, client secret or session id, nor anything a secret could be recomputed from (a
//! `jti` is half of a one-way digest). The default, [`TracingEvents`], emits each as a
//! `tracing` event with target `grantor::events`; a host that keeps an audit log implements
//! [`Events`] (a channel to a writer, a table, a queue).
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use grantor::events::{Event, Events};
//!
//! /// Keeps every event, for a test or an admin page.
//! #[derive(Default)]
//! struct Kept(Mutex<Vec<Event>>);
//!
//! impl Events for Kept {
//!     fn record(&self, event: &Event) {
//!         self.0.lock().unwrap().push(event.clone());
//!     }
//! }
//!
//! let kept = Arc::new(Kept::default());
//! let builder = grantor::AuthorizationServer::builder().events(kept.clone());
//! # let _ = builder;
//! ```

use crate::client::{ClientId, GrantType};
use crate::clock::UnixTime;
use crate::store::{FamilyId, Jti, NewTokens, User, UserId};

/// Where events go. Called on the request's task, after what it reports happened, and must
/// not block: hand slow work (a database, a network) to a task or a bounded channel of your
/// own. Whatever it does, the request's answer is the same.
pub trait Events: Send + Sync {
    /// Takes one event.
    fn record(&self, event: &Event);
}

/// The default: each event as a `tracing` event at `INFO` (refusals at `WARN`), target
/// `grantor::events`, with the fields `event` ([`EventKind::as_str`]), `grant_type`,
/// `client_id`, `user_id`, `family` (32 hex digits), `jti` and `at` (Unix seconds); fields
/// that do not apply are left out.
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingEvents;

impl Events for TracingEvents {
    fn record(&self, event: &Event) {
        // Written out only if a subscriber takes the event: most requests log nothing.
        let family = event
            .family
            .map(|id| tracing::field::display(FamilyHex(id.as_u128())));
        let kind = event.kind.as_str();
        let grant_type = match event.kind {
            EventKind::TokenIssued(grant) => Some(grant.as_str()),
            _ => None,
        };
        macro_rules! emit {
            ($level:ident) => {
                tracing::$level!(
                    target: "grantor::events",
                    event = kind,
                    grant_type,
                    client_id = event.client_id.as_ref().map(ClientId::as_str),
                    user_id = event.user_id.as_ref().map(UserId::as_str),
                    family,
                    jti = event.jti.as_ref().map(Jti::as_str),
                    at = event.at.as_secs(),
                )
            };
        }
        if event.kind.is_refusal() {
            emit!(warn);
        } else {
            emit!(info);
        }
    }
}

/// A family id as the events print it: 32 hex digits.
struct FamilyHex(u128);

impl std::fmt::Display for FamilyHex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventKind {
    /// Tokens issued by a grant (the refresh grant is [`EventKind::TokenRefreshed`]): client,
    /// user (none for client credentials), family, `jti`.
    TokenIssued(GrantType),
    /// An Identity Assertion JWT Authorization Grant issued by token exchange, for another
    /// authorization server: client, user, its `jti` (no family: grantor keeps no record of
    /// it).
    IdJagIssued,
    /// A refresh token rotated into new tokens: client, user, family, the new `jti`.
    TokenRefreshed,
    /// A client revoked its own access token, or a refresh token and with it its family
    /// (RFC 7009): client, user, family (for a refresh token).
    TokenRevoked,
    /// A rotated refresh token was presented again: its family was revoked (RFC 9700 §4.14.2):
    /// client, user, family.
    RefreshReuseDetected,
    /// A redeemed authorization code was presented again: its family was revoked (RFC 6749
    /// §4.1.2): client, family.
    CodeReplayed,
    /// A user signed in (the sign-in page, the device verification page or the password
    /// grant): client, user.
    SignInSucceeded,
    /// Wrong credentials at a sign-in: the client, never which account was tried.
    SignInFailed,
    /// A sign-in refused because the account had too many failures: the client.
    AccountThrottled,
    /// A client's credentials were refused (`invalid_client`): the client id presented, when
    /// it is a well-formed one.
    ClientAuthenticationFailed,
    /// A client registered itself (RFC 7591): its new id.
    ClientRegistered,
    /// A self-registered client unused for the registration policy's idle lifetime was
    /// deleted with its tokens: its id.
    ClientExpired,
    /// A browser's signed-in session ended (a logout): the user.
    SessionEnded,
    /// A client took a back-channel logout token (OpenID Connect Back-Channel Logout 1.0):
    /// client, user.
    BackChannelLogoutDelivered,
    /// A back-channel logout token could not be delivered (refused address, no answer, an
    /// error status) after every attempt: client, user.
    BackChannelLogoutFailed,
}

impl EventKind {
    /// A stable name: `token_issued`, `id_jag_issued`, `token_refreshed`, `token_revoked`,
    /// `refresh_reuse_detected`, `code_replayed`, `sign_in_succeeded`, `sign_in_failed`,
    /// `account_throttled`, `client_authentication_failed`, `client_registered`,
    /// `client_expired`, `session_ended`, `backchannel_logout_delivered`, `backchannel_logout_failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TokenIssued(_) => "token_issued",
            Self::IdJagIssued => "id_jag_issued",
            Self::TokenRefreshed => "token_refreshed",
            Self::TokenRevoked => "token_revoked",
            Self::RefreshReuseDetected => "refresh_reuse_detected",
            Self::CodeReplayed => "code_replayed",
            Self::SignInSucceeded => "sign_in_succeeded",
            Self::SignInFailed => "sign_in_failed",
            Self::AccountThrottled => "account_throttled",
            Self::ClientAuthenticationFailed => "client_authentication_failed",
            Self::ClientRegistered => "client_registered",
            Self::ClientExpired => "client_expired",
            Self::SessionEnded => "session_ended",
            Self::BackChannelLogoutDelivered => "backchannel_logout_delivered",
            Self::BackChannelLogoutFailed => "backchannel_logout_failed",
        }
    }

    /// Whether the event reports something refused, failed or an attack noticed.
    pub fn is_refusal(self) -> bool {
        matches!(
            self,
            Self::RefreshReuseDetected
                | Self::CodeReplayed
                | Self::SignInFailed
                | Self::AccountThrottled
                | Self::ClientAuthenticationFailed
                | Self::BackChannelLogoutFailed
        )
    }
}

/// One event: what, when, and who and what it concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// When (the server's clock).
    pub at: UnixTime,
    /// The client concerned.
    pub client_id: Option<ClientId>,
    /// The user concerned.
    pub user_id: Option<UserId>,
    /// The token family concerned.
    pub family: Option<FamilyId>,
    /// The `jti` of the access token concerned.
    pub jti: Option<Jti>,
}

impl Event {
    /// `kind` at `at`, concerning nothing yet.
    pub fn new(kind: EventKind, at: UnixTime) -> Self {
        Self {
            kind,
            at,
            client_id: None,
            user_id: None,
            family: None,
            jti: None,
        }
    }

    /// The event concerning `client_id`.
    pub fn client(mut self, client_id: &ClientId) -> Self {
        self.client_id = Some(client_id.clone());
        self
    }

    /// The event concerning `user_id`, when there is one.
    pub fn user(mut self, user_id: Option<&UserId>) -> Self {
        self.user_id = user_id.cloned();
        self
    }

    /// The event concerning `family`.
    pub fn family(mut self, family: FamilyId) -> Self {
        self.family = Some(family);
        self
    }

    /// The event concerning the access token `jti`.
    pub fn jti(mut self, jti: &Jti) -> Self {
        self.jti = Some(jti.clone());
        self
    }

    /// The event concerning `tokens`: their client, user, family and access token.
    pub(crate) fn about(self, tokens: &NewTokens) -> Self {
        let authorization = &tokens.authorization;
        self.client(&authorization.client_id)
            .user(authorization.user.as_ref().map(User::id))
            .family(tokens.family.id())
            .jti(&tokens.jti)
    }
}

#[cfg(test)]
mod tests {
    use super::FamilyHex;

    #[test]
    fn a_family_prints_as_32_hex_digits() {
        assert_eq!(FamilyHex(0xab).to_string(), format!("{:0>32}", "ab"));
        assert_eq!(FamilyHex(u128::MAX).to_string(), "f".repeat(32));
    }
}
