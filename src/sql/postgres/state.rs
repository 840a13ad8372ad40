//! The state every node shares besides codes and tokens: [`SessionStore`], [`AttemptCounter`],
//! [`SingleUseStore`] and [`KeyStore`] (its own table, `grantor_keys`). Each step is one statement, so the database makes it atomic whichever
//! node asks.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::{Executor, Postgres};

use super::errors::store_error;
use super::{PostgresStore, Statements};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::sql::columns::secs;
use crate::sql::rows::state::{AttemptsRow, HeldRow, KeyNameRow, Room, SessionRow, ValueRow, full};
use crate::sql::text;
use crate::store::{
    AttemptCounter, Attempts, KeyStore, Session, SessionStore, SingleUseStore, namespace,
};

#[async_trait]
impl SessionStore for PostgresStore {
    async fn insert_session(
        &self,
        id: &SecretDigest,
        session: Session,
        _now: UnixTime,
    ) -> Result<(), StoreError> {
        // Expired sessions are never found; `purge_expired` deletes them.
        let user = session.user.as_ref();
        store_write!(self, Statements::One, |conn| {
            sqlx::query(text::UPSERT_SESSION)
                .bind(id.as_bytes().as_slice())
                .bind(session.authorization.as_str())
                .bind(session.csrf.as_bytes().as_slice())
                .bind(user.map(|u| u.id().as_str()))
                .bind(user.map(|u| u.username()))
                .bind(secs(session.expires_at))
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(())
        })
    }

    async fn find_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        store_read!(self.primary, |conn| {
            session(&mut *conn, text::FIND_SESSION, id, now).await
        })
    }

    async fn take_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        store_write!(self, Statements::One, |conn| {
            session(&mut *conn, text::TAKE_SESSION, id, now).await
        })
    }
}

#[async_trait]
impl AttemptCounter for PostgresStore {
    async fn record_attempt(
        &self,
        key: &str,
        window: Duration,
        now: UnixTime,
    ) -> Result<Attempts, StoreError> {
        store_write!(self, Statements::One, |conn| {
            let row: AttemptsRow = sqlx::query_as(text::RECORD_ATTEMPT)
                .bind(key)
                .bind(secs(now.plus(window)))
                .bind(secs(now))
                .fetch_one(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(row.into_attempts())
        })
    }

    async fn attempts(&self, key: &str, now: UnixTime) -> Result<Option<Attempts>, StoreError> {
        let row: Option<AttemptsRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_ATTEMPTS)
                .bind(key)
                .bind(secs(now))
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(row.map(AttemptsRow::into_attempts))
    }

    async fn clear_attempts(&self, key: &str) -> Result<(), StoreError> {
        store_write!(self, Statements::One, |conn| {
            sqlx::query(text::CLEAR_ATTEMPTS)
                .bind(key)
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(())
        })
    }
}

#[async_trait]
impl SingleUseStore for PostgresStore {
    async fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        // Room is checked in the insert itself (the kind's counters, kept by triggers), and
        // read again only when it kept nothing. Concurrent inserts on every node may pass the
        // check together: the bound is overshot by at most the inserts in flight at once.
        let kind = namespace::kind(key);
        let room = Room::for_value(value.len());
        let insert = || async {
            store_write!(self, Statements::One, |conn| {
                let done = sqlx::query(text::INSERT_ONCE)
                    .bind(key)
                    .bind(value)
                    .bind(secs(expires_at))
                    .bind(secs(now))
                    .bind(kind)
                    .bind(room.max_held)
                    .bind(room.bytes)
                    .bind(room.max_bytes)
                    .execute(&mut *conn)
                    .await
                    .map_err(store_error)?;
                Ok(done.rows_affected() > 0)
            })
        };
        if insert().await? {
            return Ok(true);
        }
        // Nothing kept: a live value holds the key, or the kind is full. (Should the kind have
        // been full at the insert and have room now, the value is answered as held: only at
        // the bound, and never a live value evicted.)
        if self.held(kind).await?.has_room_for(room.bytes) {
            return Ok(false);
        }
        store_write!(self, Statements::One, |conn| {
            sqlx::query(text::PURGE_KIND)
                .bind(kind)
                .bind(secs(now))
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(())
        })?;
        if !self.held(kind).await?.has_room_for(room.bytes) {
            return Err(full(kind));
        }
        insert().await
    }

    async fn peek(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        store_read!(self.primary, |conn| {
            value(&mut *conn, text::PEEK, key, now).await
        })
    }

    async fn take(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        store_write!(self, Statements::One, |conn| {
            value(&mut *conn, text::TAKE, key, now).await
        })
    }
}

#[async_trait]
impl KeyStore for PostgresStore {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        store_write!(self, Statements::One, |conn| {
            insert_unless_live(
                &mut *conn,
                text::INSERT_KEY,
                name,
                material,
                expires_at,
                now,
            )
            .await
        })
    }

    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        store_read!(self.primary, |conn| {
            value(&mut *conn, text::FIND_KEY, name, now).await
        })
    }

    async fn key_names(&self, now: UnixTime) -> Result<Vec<(String, UnixTime)>, StoreError> {
        let found: Vec<KeyNameRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::KEY_NAMES)
                .bind(secs(now))
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(found.into_iter().map(KeyNameRow::into_name).collect())
    }

    async fn replace_key(
        &self,
        name: &str,
        material: &[u8],
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let done = store_write!(self, Statements::One, |conn| {
            sqlx::query(text::REPLACE_KEY)
                .bind(name)
                .bind(material)
                .bind(secs(now))
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(done.rows_affected() > 0)
    }
}

impl PostgresStore {
    /// What kind `kind`'s counters say it holds.
    async fn held(&self, kind: &str) -> Result<HeldRow, StoreError> {
        store_read!(self.primary, |conn| {
            sqlx::query_as(text::SINGLE_USE_HELD)
                .bind(kind)
                .fetch_one(&mut *conn)
                .await
                .map_err(store_error)
        })
    }
}

/// The live session under `id`, as `statement` (a find or a take) answers it on `executor`.
async fn session<'e, E>(
    executor: E,
    statement: &'static str,
    id: &SecretDigest,
    now: UnixTime,
) -> Result<Option<Session>, StoreError>
where
    E: Executor<'e, Database = Postgres>,
{
    let row: Option<SessionRow> = sqlx::query_as(statement)
        .bind(id.as_bytes().as_slice())
        .bind(secs(now))
        .fetch_optional(executor)
        .await
        .map_err(store_error)?;
    row.map(SessionRow::into_session).transpose()
}

/// Keeps `value` under `key` with `statement` (an insert that takes over only an expired row)
/// on `executor`: whether it was kept.
async fn insert_unless_live<'e, E>(
    executor: E,
    statement: &'static str,
    key: &str,
    value: &[u8],
    expires_at: UnixTime,
    now: UnixTime,
) -> Result<bool, StoreError>
where
    E: Executor<'e, Database = Postgres>,
{
    let done = sqlx::query(statement)
        .bind(key)
        .bind(value)
        .bind(secs(expires_at))
        .bind(secs(now))
        .execute(executor)
        .await
        .map_err(store_error)?;
    Ok(done.rows_affected() > 0)
}

/// The live value under `key`, as `statement` (a peek or a take) answers it on `executor`.
async fn value<'e, E>(
    executor: E,
    statement: &'static str,
    key: &str,
    now: UnixTime,
) -> Result<Option<Vec<u8>>, StoreError>
where
    E: Executor<'e, Database = Postgres>,
{
    let row: Option<ValueRow> = sqlx::query_as(statement)
        .bind(key)
        .bind(secs(now))
        .fetch_optional(executor)
        .await
        .map_err(store_error)?;
    Ok(row.map(|row| row.value))
}
