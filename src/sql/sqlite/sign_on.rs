//! Single sign-on on [`SqliteStore`]: [`UserSessionStore`] and [`ConsentStore`].

use async_trait::async_trait;
use rusqlite::Connection;

use super::{SqliteStore, row, rows, run};
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
impl UserSessionStore for SqliteStore {
    async fn insert_user_session(
        &self,
        id: &SecretDigest,
        session: UserSession,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        let id = *id;
        self.write(move |conn| {
            // Expired sessions are never found; `purge_expired` deletes them. A session arrives
            // with at most MAX_SESSION_GRANTS grants; should it carry more, the newest are
            // kept, as adding them one by one would.
            let skipped = session.grants.len().saturating_sub(MAX_SESSION_GRANTS);
            let grants = &session.grants[skipped..];
            // A list of strings cannot fail to serialize.
            let amr = serde_json::to_string(&session.amr).unwrap_or_default();
            let expires_at = secs(session.expires_at);
            let digest = id.as_bytes().as_slice();
            run(
                conn,
                text::UPSERT_USER_SESSION,
                &[
                    &digest,
                    &session.user.id().as_str(),
                    &session.user.username(),
                    &session.sid.as_str(),
                    &secs(session.auth_time),
                    &amr,
                    &expires_at,
                    &i64::try_from(grants.len()).unwrap_or(i64::MAX),
                    &session.acr,
                ],
            )?;
            // A session kept under this digest before takes its grants with it.
            run(conn, text::FORGET_SESSION_GRANTS, &[&digest])?;
            for (number, (client, family)) in (1..).zip(grants) {
                insert_grant(conn, &id, number, client, *family, expires_at)?;
            }
            // The user's oldest sessions past the bound, and their grants.
            let forgotten: Vec<ValueRow> = rows(
                conn,
                text::FORGET_OLDEST_USER_SESSIONS,
                &[
                    &session.user.id().as_str(),
                    &digest,
                    &secs(now),
                    &KEPT_OTHER_SESSIONS,
                ],
            )?;
            for gone in forgotten {
                run(conn, text::FORGET_SESSION_GRANTS, &[&gone.value])?;
            }
            Ok(())
        })
        .await
    }

    async fn find_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        let id = *id;
        let found: Vec<UserSessionGrantRow> = self
            .read(move |conn| {
                rows(
                    conn,
                    text::FIND_USER_SESSION,
                    &[&id.as_bytes().as_slice(), &secs(now)],
                )
            })
            .await?;
        UserSessionGrantRow::into_session(found)
    }

    async fn add_session_grant(
        &self,
        id: &SecretDigest,
        client: &ClientId,
        family: FamilyId,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let id = *id;
        let client = client.clone();
        self.write(move |conn| {
            let digest = id.as_bytes().as_slice();
            let next: Option<NextGrantRow> =
                row(conn, text::NEXT_SESSION_GRANT, &[&digest, &secs(now)])?;
            let Some(next) = next else {
                return Ok(false);
            };
            let number = next.last_grant;
            insert_grant(conn, &id, number, &client, family, next.expires_at)?;
            if number > KEPT_GRANTS {
                run(
                    conn,
                    text::FORGET_OLD_SESSION_GRANTS,
                    &[&digest, &(number - KEPT_GRANTS)],
                )?;
            }
            Ok(true)
        })
        .await
    }

    async fn end_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        let id = *id;
        self.write(move |conn| {
            let digest = id.as_bytes().as_slice();
            // The session's row first: the delete that removes it is the one caller that ends
            // it; the others find no row and take nothing.
            let ended: Option<UserSessionRow> =
                row(conn, text::END_USER_SESSION, &[&digest, &secs(now)])?;
            let Some(ended) = ended else {
                return Ok(None);
            };
            let mut grants: Vec<SessionGrantRow> =
                rows(conn, text::TAKE_SESSION_GRANTS, &[&digest])?;
            // `DELETE … RETURNING` answers rows in no particular order.
            grants.sort_by_key(|grant| grant.seq);
            let grants = grants
                .into_iter()
                .map(SessionGrantRow::into_grant)
                .collect::<Result<_, _>>()?;
            ended.into_session(grants).map(Some)
        })
        .await
    }

    async fn end_user_sessions(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<UserSession>, StoreError> {
        let user = user.as_str().to_owned();
        let digests: Vec<ValueRow> = self
            .read(move |conn| rows(conn, text::USER_SESSION_DIGESTS, &[&user, &secs(now)]))
            .await?;
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
fn insert_grant(
    conn: &Connection,
    id: &SecretDigest,
    number: i64,
    client: &ClientId,
    family: FamilyId,
    expires_at: i64,
) -> Result<(), StoreError> {
    run(
        conn,
        text::INSERT_SESSION_GRANT,
        &[
            &id.as_bytes().as_slice(),
            &number,
            &client.as_str(),
            &family.to_bytes().as_slice(),
            &expires_at,
        ],
    )?;
    Ok(())
}

#[async_trait]
impl ConsentStore for SqliteStore {
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
        let user = user.as_str().to_owned();
        let client = client.clone();
        let scope = consent.scope.as_str().to_owned();
        let audience = consent.audience.as_str().to_owned();
        self.write(move |conn| {
            run(
                conn,
                text::UPSERT_CONSENT,
                &[
                    &user,
                    &client.as_str(),
                    &scope,
                    &secs(expires_at),
                    &audience,
                ],
            )
            .map(|_| ())
        })
        .await
    }

    async fn find_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        now: UnixTime,
    ) -> Result<Option<Consent>, StoreError> {
        let user = user.as_str().to_owned();
        let client = client.clone();
        let found: Option<ConsentRow> = self
            .read(move |conn| {
                row(
                    conn,
                    text::FIND_CONSENT,
                    &[&user, &client.as_str(), &secs(now)],
                )
            })
            .await?;
        found.map(ConsentRow::into_consent).transpose()
    }

    async fn forget_consent(&self, user: &UserId, client: &ClientId) -> Result<bool, StoreError> {
        let user = user.as_str().to_owned();
        let client = client.clone();
        let done = self
            .write(move |conn| run(conn, text::FORGET_CONSENT, &[&user, &client.as_str()]))
            .await?;
        Ok(done > 0)
    }

    async fn consents(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<(ClientId, Consent)>, StoreError> {
        let user = user.as_str().to_owned();
        let found: Vec<ClientConsentRow> = self
            .read(move |conn| rows(conn, text::USER_CONSENTS, &[&user, &secs(now)]))
            .await?;
        found
            .into_iter()
            .map(ClientConsentRow::into_consent)
            .collect()
    }
}
