//! The store seams, timed: [`Metered`] answers each call through the seam it wraps and records
//! how long it took in `grantor_store_duration_seconds`, labelled by the seam and the method
//! ([`crate::metrics`]). The single-use seam also counts the one-time values it is offered by
//! kind, and the sign-on session seam the sessions started and ended.
//!
//! The builder wraps each seam a host gives it when the `metrics` feature is on
//! ([`Metering::metered`]); without the feature the seams are left as they are. grantor's
//! memory store as the client or token seam is never wrapped: the server recognises it by
//! identity and calls it in place.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::{
    AccessGrant, Account, AttemptCounter, Attempts, ClientStore, CodeGrant, CodeRedemption,
    Consent, ConsentStore, FamilyId, KeyStore, NewTokens, RefreshGrant, Rotation, SecretDigest,
    Session, SessionStore, SingleUseStore, StoreError, TokenIssuer, User, UserClaims, UserId,
    UserSession, UserSessionStore, UserStore, namespace,
};
use crate::client::{Client, ClientId};
use crate::clock::UnixTime;
use crate::metrics::{self, Timer};

/// A seam whose every call is timed.
pub(crate) struct Metered<S: ?Sized>(Arc<S>);

/// Wraps a seam in [`Metered`] when metrics are built in.
pub(crate) trait Metering {
    /// The seam, timed with the `metrics` feature, else as it is.
    fn metered(self) -> Self;
}

macro_rules! metering {
    ($($seam:ident),*) => {$(
        impl Metering for Arc<dyn $seam> {
            fn metered(self) -> Self {
                if cfg!(feature = "metrics") {
                    Arc::new(Metered(self))
                } else {
                    self
                }
            }
        }
    )*};
}

metering!(
    ClientStore,
    UserStore,
    TokenIssuer,
    SessionStore,
    AttemptCounter,
    SingleUseStore,
    KeyStore,
    UserSessionStore,
    ConsentStore
);

/// Awaits `$call`, a call of the seam `$seam`'s method `$method`, and records its time.
macro_rules! timed {
    ($seam:literal, $method:ident, $call:expr) => {{
        let started = Timer::start();
        let answer = $call.await;
        metrics::store_call($seam, stringify!($method), started);
        answer
    }};
}

#[async_trait]
impl ClientStore for Metered<dyn ClientStore> {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        timed!("clients", find_client, self.0.find_client(client_id))
    }
}

#[async_trait]
impl UserStore for Metered<dyn UserStore> {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        timed!("users", find_account, self.0.find_account(username))
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        timed!("users", find_user, self.0.find_user(id))
    }

    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        timed!("users", claims, self.0.claims(id))
    }
}

#[async_trait]
impl TokenIssuer for Metered<dyn TokenIssuer> {
    async fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError> {
        timed!(
            "tokens",
            insert_code,
            self.0.insert_code(code, family, grant)
        )
    }

    async fn redeem_code(
        &self,
        code: &SecretDigest,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError> {
        timed!("tokens", redeem_code, self.0.redeem_code(code, now))
    }

    async fn insert_tokens(&self, tokens: NewTokens) -> Result<(), StoreError> {
        timed!("tokens", insert_tokens, self.0.insert_tokens(tokens))
    }

    async fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError> {
        timed!(
            "tokens",
            find_refresh_token,
            self.0.find_refresh_token(token, now)
        )
    }

    async fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError> {
        timed!(
            "tokens",
            rotate_refresh_token,
            self.0.rotate_refresh_token(token, successor, retry_since)
        )
    }

    async fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        timed!(
            "tokens",
            find_access_token,
            self.0.find_access_token(token, now)
        )
    }

    async fn check_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        timed!(
            "tokens",
            check_access_token,
            self.0.check_access_token(token, now)
        )
    }

    async fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError> {
        timed!(
            "tokens",
            revoke_access_token,
            self.0.revoke_access_token(token)
        )
    }

    async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
        timed!("tokens", revoke_family, self.0.revoke_family(family))
    }

    async fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError> {
        timed!("tokens", revoke_client, self.0.revoke_client(client_id))
    }
}

#[async_trait]
impl SessionStore for Metered<dyn SessionStore> {
    async fn insert_session(
        &self,
        id: &SecretDigest,
        session: Session,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        timed!(
            "sessions",
            insert_session,
            self.0.insert_session(id, session, now)
        )
    }

    async fn find_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        timed!("sessions", find_session, self.0.find_session(id, now))
    }

    async fn take_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        timed!("sessions", take_session, self.0.take_session(id, now))
    }
}

#[async_trait]
impl AttemptCounter for Metered<dyn AttemptCounter> {
    async fn record_attempt(
        &self,
        key: &str,
        window: Duration,
        now: UnixTime,
    ) -> Result<Attempts, StoreError> {
        timed!(
            "attempts",
            record_attempt,
            self.0.record_attempt(key, window, now)
        )
    }

    async fn attempts(&self, key: &str, now: UnixTime) -> Result<Option<Attempts>, StoreError> {
        timed!("attempts", attempts, self.0.attempts(key, now))
    }

    async fn clear_attempts(&self, key: &str) -> Result<(), StoreError> {
        timed!("attempts", clear_attempts, self.0.clear_attempts(key))
    }
}

#[async_trait]
impl SingleUseStore for Metered<dyn SingleUseStore> {
    async fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let kept = timed!(
            "single_use",
            insert_once,
            self.0.insert_once(key, value, expires_at, now)
        );
        if let Ok(kept) = kept {
            // The kind is one of a fixed set named by grantor, never the key itself.
            metrics::one_time_value(namespace::kind(key), kept);
        }
        kept
    }

    async fn peek(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        timed!("single_use", peek, self.0.peek(key, now))
    }

    async fn take(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        timed!("single_use", take, self.0.take(key, now))
    }
}

#[async_trait]
impl KeyStore for Metered<dyn KeyStore> {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        timed!(
            "keys",
            insert_key,
            self.0.insert_key(name, material, expires_at, now)
        )
    }

    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        timed!("keys", find_key, self.0.find_key(name, now))
    }

    async fn key_names(&self, now: UnixTime) -> Result<Vec<(String, UnixTime)>, StoreError> {
        timed!("keys", key_names, self.0.key_names(now))
    }

    async fn replace_key(
        &self,
        name: &str,
        material: &[u8],
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        timed!("keys", replace_key, self.0.replace_key(name, material, now))
    }

    fn is_durable(&self) -> bool {
        self.0.is_durable()
    }
}

#[async_trait]
impl UserSessionStore for Metered<dyn UserSessionStore> {
    async fn insert_user_session(
        &self,
        id: &SecretDigest,
        session: UserSession,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        let inserted = timed!(
            "user_sessions",
            insert_user_session,
            self.0.insert_user_session(id, session, now)
        );
        if inserted.is_ok() {
            metrics::sign_on_session_started();
        }
        inserted
    }

    async fn find_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        timed!(
            "user_sessions",
            find_user_session,
            self.0.find_user_session(id, now)
        )
    }

    async fn add_session_grant(
        &self,
        id: &SecretDigest,
        client: &ClientId,
        family: FamilyId,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        timed!(
            "user_sessions",
            add_session_grant,
            self.0.add_session_grant(id, client, family, now)
        )
    }

    async fn end_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        let ended = timed!(
            "user_sessions",
            end_user_session,
            self.0.end_user_session(id, now)
        );
        if let Ok(Some(_)) = &ended {
            metrics::sign_on_sessions_ended(1);
        }
        ended
    }

    async fn end_user_sessions(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<UserSession>, StoreError> {
        let ended = timed!(
            "user_sessions",
            end_user_sessions,
            self.0.end_user_sessions(user, now)
        );
        if let Ok(sessions) = &ended {
            metrics::sign_on_sessions_ended(sessions.len() as u64);
        }
        ended
    }
}

#[async_trait]
impl ConsentStore for Metered<dyn ConsentStore> {
    async fn remember_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        consent: &Consent,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        timed!(
            "consents",
            remember_consent,
            self.0
                .remember_consent(user, client, consent, expires_at, now)
        )
    }

    async fn find_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        now: UnixTime,
    ) -> Result<Option<Consent>, StoreError> {
        timed!(
            "consents",
            find_consent,
            self.0.find_consent(user, client, now)
        )
    }

    async fn forget_consent(&self, user: &UserId, client: &ClientId) -> Result<bool, StoreError> {
        timed!(
            "consents",
            forget_consent,
            self.0.forget_consent(user, client)
        )
    }

    async fn consents(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<(ClientId, Consent)>, StoreError> {
        timed!("consents", consents, self.0.consents(user, now))
    }
}
