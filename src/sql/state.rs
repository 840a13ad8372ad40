//! The state every node shares besides codes and tokens: [`SessionStore`], [`AttemptCounter`],
//! [`SingleUseStore`] and [`KeyStore`] (its own table, `grantor_keys`). Each step is one statement, so the database makes it atomic whichever
//! node asks.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Type};

use super::backend::Backend;
use super::columns::{secs, store_error};
use super::rows::{AttemptsRow, SessionRow, ValueRow};
use super::{SqlStore, Statements, text};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::{AttemptCounter, Attempts, KeyStore, Session, SessionStore, SingleUseStore};

#[async_trait]
impl<DB> SessionStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'r> &'r str: ColumnIndex<DB::Row>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
{
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
                .map_err(store_error::<DB>)?;
            Ok(())
        })
    }

    async fn find_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        session(&self.pool, text::FIND_SESSION, id, now).await
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
impl<DB> AttemptCounter for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'r> &'r str: ColumnIndex<DB::Row>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
{
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
                .map_err(store_error::<DB>)?;
            Ok(row.into_attempts())
        })
    }

    async fn attempts(&self, key: &str, now: UnixTime) -> Result<Option<Attempts>, StoreError> {
        let row: Option<AttemptsRow> = sqlx::query_as(text::FIND_ATTEMPTS)
            .bind(key)
            .bind(secs(now))
            .fetch_optional(&self.pool)
            .await
            .map_err(store_error::<DB>)?;
        Ok(row.map(AttemptsRow::into_attempts))
    }

    async fn clear_attempts(&self, key: &str) -> Result<(), StoreError> {
        store_write!(self, Statements::One, |conn| {
            sqlx::query(text::CLEAR_ATTEMPTS)
                .bind(key)
                .execute(&mut *conn)
                .await
                .map_err(store_error::<DB>)?;
            Ok(())
        })
    }
}

#[async_trait]
impl<DB> SingleUseStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'r> &'r str: ColumnIndex<DB::Row>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
{
    async fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        store_write!(self, Statements::One, |conn| {
            insert_unless_live(&mut *conn, text::INSERT_ONCE, key, value, expires_at, now).await
        })
    }

    async fn peek(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        value(&self.pool, text::PEEK, key, now).await
    }

    async fn take(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        store_write!(self, Statements::One, |conn| {
            value(&mut *conn, text::TAKE, key, now).await
        })
    }
}

#[async_trait]
impl<DB> KeyStore for SqlStore<DB>
where
    DB: Backend,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'r> &'r str: ColumnIndex<DB::Row>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
{
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
        value(&self.pool, text::FIND_KEY, name, now).await
    }
}

/// The live session under `id`, as `statement` (a find or a take) answers it on `executor`.
async fn session<'e, DB, E>(
    executor: E,
    statement: &'static str,
    id: &SecretDigest,
    now: UnixTime,
) -> Result<Option<Session>, StoreError>
where
    DB: Backend,
    E: Executor<'e, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'r> &'r str: ColumnIndex<DB::Row>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
    for<'r> Option<String>: Decode<'r, DB>,
{
    let row: Option<SessionRow> = sqlx::query_as(statement)
        .bind(id.as_bytes().as_slice())
        .bind(secs(now))
        .fetch_optional(executor)
        .await
        .map_err(store_error::<DB>)?;
    row.map(SessionRow::into_session).transpose()
}

/// Keeps `value` under `key` with `statement` (an insert that takes over only an expired row)
/// on `executor`: whether it was kept.
async fn insert_unless_live<'e, DB, E>(
    executor: E,
    statement: &'static str,
    key: &str,
    value: &[u8],
    expires_at: UnixTime,
    now: UnixTime,
) -> Result<bool, StoreError>
where
    DB: Backend,
    E: Executor<'e, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> &'q [u8]: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query(statement)
        .bind(key)
        .bind(value)
        .bind(secs(expires_at))
        .bind(secs(now))
        .execute(executor)
        .await
        .map_err(store_error::<DB>)?;
    Ok(DB::rows_affected(&done) > 0)
}

/// The live value under `key`, as `statement` (a peek or a take) answers it on `executor`.
async fn value<'e, DB, E>(
    executor: E,
    statement: &'static str,
    key: &str,
    now: UnixTime,
) -> Result<Option<Vec<u8>>, StoreError>
where
    DB: Backend,
    E: Executor<'e, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'r> &'r str: ColumnIndex<DB::Row>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'r> Vec<u8>: Decode<'r, DB> + Type<DB>,
{
    let row: Option<ValueRow> = sqlx::query_as(statement)
        .bind(key)
        .bind(secs(now))
        .fetch_optional(executor)
        .await
        .map_err(store_error::<DB>)?;
    Ok(row.map(|row| row.value))
}
