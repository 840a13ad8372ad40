//! Single sign-on: [`UserSessionStore`] (signed-in browsers and the grants issued in them) and
//! [`ConsentStore`] (remembered approvals).
//!
//! A session's grants are rows of their own, numbered by the session's `last_grant`: a grant
//! increments it (locking the session's row until its write commits), inserts its row and
//! deletes the rows that fell past [`MAX_SESSION_GRANTS`], so concurrent grants each keep
//! theirs and the bound holds after every write. Ending a session deletes its row first
//! (`DELETE … RETURNING`: of concurrent callers, one gets it), then takes its grants, in one
//! transaction.

use async_trait::async_trait;
use sqlx::{Executor, Postgres};

use super::errors::store_error;
use super::{PostgresStore, Statements};
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::sql::columns::secs;
use crate::sql::rows::sign_on::{
    ClientConsentRow, ConsentRow, NextGrantRow, SessionGrantRow, UserSessionGrantRow,
    UserSessionRow,
};
use crate::sql::rows::state::ValueRow;
use crate::sql::text;
use crate::store::{
    Consent, ConsentStore, FamilyId, MAX_SESSION_GRANTS, MAX_SESSIONS_PER_USER, UserId,
    UserSession, UserSessionStore,
};

/// [`MAX_SESSION_GRANTS`] as a grant number's distance.
const KEPT_GRANTS: i64 = MAX_SESSION_GRANTS as i64;
/// The other live sessions a user keeps beside a new one.
const KEPT_OTHER_SESSIONS: i64 = MAX_SESSIONS_PER_USER as i64 - 1;

#[async_trait]
impl UserSessionStore for PostgresStore {
    async fn insert_user_session(
        &self,
        id: &SecretDigest,
        session: UserSession,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        // Expired sessions are never found; `purge_expired` deletes them. A session arrives
        // with at most MAX_SESSION_GRANTS grants; should it carry more, the newest are kept, as
        // adding them one by one would.
        let skipped = session.grants.len().saturating_sub(MAX_SESSION_GRANTS);
        let grants = &session.grants[skipped..];
        // A list of strings cannot fail to serialize.
        let amr = serde_json::to_string(&session.amr).unwrap_or_default();
        let expires_at = secs(session.expires_at);
        store_write!(self, Statements::Many, |conn| {
            sqlx::query(text::UPSERT_USER_SESSION)
                .bind(id.as_bytes().as_slice())
                .bind(session.user.id().as_str())
                .bind(session.user.username())
                .bind(session.sid.as_str())
                .bind(secs(session.auth_time))
                .bind(amr.as_str())
                .bind(expires_at)
                .bind(grant_number(grants.len()))
                .bind(session.acr.as_deref())
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            // A session kept under this digest before takes its grants with it.
            sqlx::query(text::FORGET_SESSION_GRANTS)
                .bind(id.as_bytes().as_slice())
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            for (number, (client, family)) in (1..).zip(grants) {
                insert_grant(&mut *conn, id, number, client, *family, expires_at).await?;
            }
            // The user's oldest sessions past the bound, and their grants. Concurrent sign-ins
            // of one user on PostgreSQL may each keep theirs for a moment; the next trims.
            let forgotten: Vec<ValueRow> = sqlx::query_as(text::FORGET_OLDEST_USER_SESSIONS)
                .bind(session.user.id().as_str())
                .bind(id.as_bytes().as_slice())
                .bind(secs(now))
                .bind(KEPT_OTHER_SESSIONS)
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error)?;
            for gone in forgotten {
                sqlx::query(text::FORGET_SESSION_GRANTS)
                    .bind(gone.value.as_slice())
                    .execute(&mut *conn)
                    .await
                    .map_err(store_error)?;
            }
            Ok(())
        })
    }

    async fn find_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        let rows: Vec<UserSessionGrantRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_USER_SESSION)
                .bind(id.as_bytes().as_slice())
                .bind(secs(now))
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        UserSessionGrantRow::into_session(rows)
    }

    async fn add_session_grant(
        &self,
        id: &SecretDigest,
        client: &ClientId,
        family: FamilyId,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        store_write!(self, Statements::Many, |conn| {
            let next: Option<NextGrantRow> = sqlx::query_as(text::NEXT_SESSION_GRANT)
                .bind(id.as_bytes().as_slice())
                .bind(secs(now))
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)?;
            let Some(next) = next else {
                return Ok(false);
            };
            let number = next.last_grant;
            insert_grant(&mut *conn, id, number, client, family, next.expires_at).await?;
            if number > KEPT_GRANTS {
                sqlx::query(text::FORGET_OLD_SESSION_GRANTS)
                    .bind(id.as_bytes().as_slice())
                    .bind(number - KEPT_GRANTS)
                    .execute(&mut *conn)
                    .await
                    .map_err(store_error)?;
            }
            Ok(true)
        })
    }

    async fn end_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        store_write!(self, Statements::Many, |conn| {
            // The session's row first: the delete that removes it is the one caller that
            // ends it; the others find no row and take nothing.
            let ended: Option<UserSessionRow> = sqlx::query_as(text::END_USER_SESSION)
                .bind(id.as_bytes().as_slice())
                .bind(secs(now))
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)?;
            let Some(ended) = ended else {
                return Ok(None);
            };
            let mut grants: Vec<SessionGrantRow> = sqlx::query_as(text::TAKE_SESSION_GRANTS)
                .bind(id.as_bytes().as_slice())
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error)?;
            // `DELETE … RETURNING` answers rows in no particular order.
            grants.sort_by_key(|grant| grant.seq);
            let grants = grants
                .into_iter()
                .map(SessionGrantRow::into_grant)
                .collect::<Result<_, _>>()?;
            ended.into_session(grants).map(Some)
        })
    }

    async fn end_user_sessions(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<UserSession>, StoreError> {
        let digests: Vec<ValueRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::USER_SESSION_DIGESTS)
                .bind(user.as_str())
                .bind(secs(now))
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        // Each ended as one logout ends it: a session a concurrent logout took is its.
        let mut ended = Vec::with_capacity(digests.len());
        for digest in digests {
            let id = digest.into_session_digest()?;
            ended.extend(self.end_user_session(&id, now).await?);
        }
        Ok(ended)
    }
}

/// The grant numbered `number` of session `id`: `client` issued tokens of `family`, kept until
/// the session's `expires_at` (Unix seconds).
async fn insert_grant<'e, E>(
    executor: E,
    id: &SecretDigest,
    number: i64,
    client: &ClientId,
    family: FamilyId,
    expires_at: i64,
) -> Result<(), StoreError>
where
    E: Executor<'e, Database = Postgres>,
{
    sqlx::query(text::INSERT_SESSION_GRANT)
        .bind(id.as_bytes().as_slice())
        .bind(number)
        .bind(client.as_str())
        .bind(family.to_bytes().as_slice())
        .bind(expires_at)
        .execute(executor)
        .await
        .map_err(store_error)?;
    Ok(())
}

/// How many grants a session arrived with, as its `last_grant` (at most
/// [`MAX_SESSION_GRANTS`], so it fits).
fn grant_number(grants: usize) -> i64 {
    i64::try_from(grants).unwrap_or(i64::MAX)
}

#[async_trait]
impl ConsentStore for PostgresStore {
    async fn remember_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        consent: &Consent,
        expires_at: UnixTime,
        _now: UnixTime,
    ) -> Result<(), StoreError> {
        // One statement: of concurrent approvals, the last to commit is kept whole. An expired
        // approval is never found; `purge_expired` deletes it.
        store_write!(self, Statements::One, |conn| {
            sqlx::query(text::UPSERT_CONSENT)
                .bind(user.as_str())
                .bind(client.as_str())
                .bind(consent.scope.as_str())
                .bind(secs(expires_at))
                .bind(consent.audience.as_str())
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(())
        })
    }

    async fn find_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        now: UnixTime,
    ) -> Result<Option<Consent>, StoreError> {
        let row: Option<ConsentRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_CONSENT)
                .bind(user.as_str())
                .bind(client.as_str())
                .bind(secs(now))
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        row.map(ConsentRow::into_consent).transpose()
    }

    async fn forget_consent(&self, user: &UserId, client: &ClientId) -> Result<bool, StoreError> {
        let done = store_write!(self, Statements::One, |conn| {
            sqlx::query(text::FORGET_CONSENT)
                .bind(user.as_str())
                .bind(client.as_str())
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(done.rows_affected() > 0)
    }

    async fn consents(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<(ClientId, Consent)>, StoreError> {
        let found: Vec<ClientConsentRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::USER_CONSENTS)
                .bind(user.as_str())
                .bind(secs(now))
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        found
            .into_iter()
            .map(ClientConsentRow::into_consent)
            .collect()
    }
}
