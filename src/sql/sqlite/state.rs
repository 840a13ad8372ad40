//! The state every request shares besides codes and tokens, on [`SqliteStore`]:
//! [`SessionStore`], [`AttemptCounter`], [`SingleUseStore`] and [`KeyStore`].

use std::time::Duration;

use async_trait::async_trait;
use rusqlite::Connection;

use super::{SqliteStore, row, rows, run};
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
impl SessionStore for SqliteStore {
    async fn insert_session(
        &self,
        id: &SecretDigest,
        session: Session,
        _now: UnixTime,
    ) -> Result<(), StoreError> {
        // Expired sessions are never found; `purge_expired` deletes them.
        let id = *id;
        self.write(move |conn| {
            let user = session.user.as_ref();
            run(
                conn,
                text::UPSERT_SESSION,
                &[
                    &id.as_bytes().as_slice(),
                    &session.authorization.as_str(),
                    &session.csrf.as_bytes().as_slice(),
                    &user.map(|u| u.id().as_str()),
                    &user.map(|u| u.username()),
                    &secs(session.expires_at),
                ],
            )
            .map(|_| ())
        })
        .await
    }

    async fn find_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        let id = *id;
        self.read(move |conn| session(conn, text::FIND_SESSION, &id, now))
            .await
    }

    async fn take_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        let id = *id;
        self.write(move |conn| session(conn, text::TAKE_SESSION, &id, now))
            .await
    }
}

/// The live session under `id`, as `statement` (a find or a take) answers it.
fn session(
    conn: &Connection,
    statement: &'static str,
    id: &SecretDigest,
    now: UnixTime,
) -> Result<Option<Session>, StoreError> {
    let found: Option<SessionRow> = row(conn, statement, &[&id.as_bytes().as_slice(), &secs(now)])?;
    found.map(SessionRow::into_session).transpose()
}

#[async_trait]
impl AttemptCounter for SqliteStore {
    async fn record_attempt(
        &self,
        key: &str,
        window: Duration,
        now: UnixTime,
    ) -> Result<Attempts, StoreError> {
        let key = key.to_owned();
        self.write(move |conn| {
            let counted: Option<AttemptsRow> = row(
                conn,
                text::RECORD_ATTEMPT,
                &[&key, &secs(now.plus(window)), &secs(now)],
            )?;
            counted
                .map(AttemptsRow::into_attempts)
                .ok_or_else(|| StoreError::failed("counting an attempt answered no row"))
        })
        .await
    }

    async fn attempts(&self, key: &str, now: UnixTime) -> Result<Option<Attempts>, StoreError> {
        let key = key.to_owned();
        let found: Option<AttemptsRow> = self
            .read(move |conn| row(conn, text::FIND_ATTEMPTS, &[&key, &secs(now)]))
            .await?;
        Ok(found.map(AttemptsRow::into_attempts))
    }

    async fn clear_attempts(&self, key: &str) -> Result<(), StoreError> {
        let key = key.to_owned();
        self.write(move |conn| run(conn, text::CLEAR_ATTEMPTS, &[&key]).map(|_| ()))
            .await
    }
}

#[async_trait]
impl SingleUseStore for SqliteStore {
    async fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        // Room is checked in the insert itself, and the kind's counters read again only when
        // it kept nothing; the writer is the only one, so the kind's bound is exact.
        let kind = namespace::kind(key);
        let room = Room::for_value(value.len());
        let key = key.to_owned();
        let value = value.to_vec();
        self.write(move |conn| {
            let insert = |conn: &Connection| {
                let done = run(
                    conn,
                    text::INSERT_ONCE,
                    &[
                        &key,
                        &value,
                        &secs(expires_at),
                        &secs(now),
                        &kind,
                        &room.max_held,
                        &room.bytes,
                        &room.max_bytes,
                    ],
                )?;
                Ok::<_, StoreError>(done > 0)
            };
            if insert(conn)? {
                return Ok(true);
            }
            // Nothing kept: a live value holds the key, or the kind is full.
            if held(conn, kind)?.has_room_for(room.bytes) {
                return Ok(false);
            }
            run(conn, text::PURGE_KIND, &[&kind, &secs(now)])?;
            if !held(conn, kind)?.has_room_for(room.bytes) {
                return Err(full(kind));
            }
            insert(conn)
        })
        .await
    }

    async fn peek(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        let key = key.to_owned();
        self.read(move |conn| value(conn, text::PEEK, &key, now))
            .await
    }

    async fn take(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        let key = key.to_owned();
        self.write(move |conn| value(conn, text::TAKE, &key, now))
            .await
    }
}

#[async_trait]
impl KeyStore for SqliteStore {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        self.insert_unless_live(text::INSERT_KEY, name, material, expires_at, now)
            .await
    }

    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        let name = name.to_owned();
        self.read(move |conn| value(conn, text::FIND_KEY, &name, now))
            .await
    }

    async fn key_names(&self, now: UnixTime) -> Result<Vec<(String, UnixTime)>, StoreError> {
        let found: Vec<KeyNameRow> = self
            .read(move |conn| rows(conn, text::KEY_NAMES, &[&secs(now)]))
            .await?;
        Ok(found.into_iter().map(KeyNameRow::into_name).collect())
    }

    async fn replace_key(
        &self,
        name: &str,
        material: &[u8],
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let name = name.to_owned();
        let material = material.to_vec();
        let done = self
            .write(move |conn| run(conn, text::REPLACE_KEY, &[&name, &material, &secs(now)]))
            .await?;
        Ok(done > 0)
    }

    /// A file outlives the process; a database in memory does not.
    fn is_durable(&self) -> bool {
        self.is_file()
    }
}

impl SqliteStore {
    /// Keeps `value` under `key` with `statement` (an insert that takes over only an expired
    /// row): whether it was kept.
    async fn insert_unless_live(
        &self,
        statement: &'static str,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let key = key.to_owned();
        let value = value.to_vec();
        let done = self
            .write(move |conn| {
                run(
                    conn,
                    statement,
                    &[&key, &value, &secs(expires_at), &secs(now)],
                )
            })
            .await?;
        Ok(done > 0)
    }
}

/// What kind `kind`'s counters say it holds.
fn held(conn: &Connection, kind: &str) -> Result<HeldRow, StoreError> {
    let held: Option<HeldRow> = row(conn, text::SINGLE_USE_HELD, &[&kind])?;
    held.ok_or_else(|| StoreError::failed("summing a kind's counters answered no row"))
}

/// The live value under `key`, as `statement` (a peek or a take) answers it.
fn value(
    conn: &Connection,
    statement: &'static str,
    key: &str,
    now: UnixTime,
) -> Result<Option<Vec<u8>>, StoreError> {
    let found: Option<ValueRow> = row(conn, statement, &[&key, &secs(now)])?;
    Ok(found.map(|row| row.value))
}
