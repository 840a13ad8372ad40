//! Codes, tokens and their families on [`SqliteStore`]: [`TokenIssuer`]. Each write is one
//! job on the writer thread, so its statements happen whole or not at all.

use async_trait::async_trait;
use rusqlite::Connection;

use super::{SqliteStore, access, from_lite, row, run};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::sql::bounds::REPLAY_MEMORY;
use crate::sql::columns::{AuthorizationColumns, secs};
use crate::sql::rows::tokens::{
    AccessRow, CodeRow, CodeStateRow, GenerationRow, LastRotationRow, RefreshRow,
};
use crate::sql::text;
use crate::store::{
    AccessGrant, Actor, Authorization, CodeGrant, CodeRedemption, Family, FamilyId, NewTokens,
    RefreshGrant, Rotation, SignInFacts, TokenBinding, TokenIssuer,
};

/// Extends an existing family to `$2` and answers its current refresh generation and its
/// `seq`, which its new access token names (on PostgreSQL, the statement that keeps tokens in
/// the family does this too: `JOIN_FAMILY_WITH_TOKENS`).
const EXTEND_FAMILY: &str = "UPDATE grantor_families \
    SET expires_at = CASE WHEN expires_at < $2 THEN $2 ELSE expires_at END \
    WHERE id = $1 RETURNING generation, seq";

/// A family just extended: its refresh generation and its `seq`.
struct ExtendedRow {
    generation: i64,
    seq: i64,
}

from_lite!(ExtendedRow { generation, seq });

/// Whether a family id is taken.
struct TakenRow {
    taken: bool,
}

from_lite!(TakenRow { taken });

#[async_trait]
impl TokenIssuer for SqliteStore {
    async fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError> {
        let code = *code;
        self.write(move |conn| {
            let forget_at = grant.expires_at.plus(REPLAY_MEMORY);
            let authorization = AuthorizationColumns::of(&grant.authorization);
            let challenge = grant.code_challenge.as_ref();
            let openid = grant.openid.as_ref().map(SignInFacts::to_stored);
            let jkt = grant.dpop_jkt.map(|jkt| jkt.to_string());
            // The family first: a code without its family would be refused as revoked. It lives
            // as long as the code's tombstone.
            insert_family(conn, family, &grant.authorization, forget_at)?;
            run(
                conn,
                text::INSERT_CODE,
                &[
                    &code.as_bytes().as_slice(),
                    &family.to_bytes().as_slice(),
                    &authorization.client_id,
                    &authorization.user_id,
                    &authorization.username,
                    &authorization.scope,
                    &grant.redirect_uri.as_str(),
                    &challenge.map(|c| c.as_str()),
                    &challenge.map(|c| c.method().as_str()),
                    &secs(grant.issued_at),
                    &secs(grant.expires_at),
                    &secs(forget_at),
                    &authorization.audience,
                    &openid,
                    &jkt,
                    &authorization.authentication,
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn redeem_code(
        &self,
        code: &SecretDigest,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError> {
        let code = *code;
        self.write(move |conn| {
            let digest = code.as_bytes().as_slice();
            let redeemed: Option<CodeRow> = row(conn, text::REDEEM_CODE, &[&digest, &secs(now)])?;
            if let Some(row) = redeemed {
                let (family, grant) = row.into_grant()?;
                return Ok(CodeRedemption::Redeemed { grant, family });
            }
            // Not ours: redeemed before (a replay), or unknown, expired or revoked.
            let seen: Option<CodeStateRow> = row(conn, text::CODE_STATE, &[&digest])?;
            Ok(match seen {
                Some(row) if row.redeemed => CodeRedemption::Replayed {
                    family: row.family()?,
                },
                _ => CodeRedemption::Invalid,
            })
        })
        .await
    }

    async fn insert_tokens(&self, tokens: NewTokens) -> Result<(), StoreError> {
        if let (Family::New(id), None) = (tokens.family, &tokens.refresh_token) {
            // An access token alone in its family: one row, one statement.
            return self
                .write_statement(move |conn| keep_alone(conn, id, &tokens))
                .await;
        }
        self.write(move |conn| {
            // The family's `seq` comes back from the statement that wrote it, so the access
            // token names it without looking the family up again by its id.
            let (seq, generation) = match tokens.family {
                Family::New(id) => (
                    insert_family(conn, id, &tokens.authorization, tokens.expires_at())?,
                    0,
                ),
                Family::Existing(id) => {
                    let extended: Option<ExtendedRow> = row(
                        conn,
                        EXTEND_FAMILY,
                        &[&id.to_bytes().as_slice(), &secs(tokens.expires_at())],
                    )?;
                    let extended = extended
                        .ok_or_else(|| StoreError::failed("tokens asked for an unknown family"))?;
                    (extended.seq, extended.generation)
                }
            };
            keep_tokens(conn, &tokens, KeptIn::Seq(seq), generation)
        })
        .await
    }

    async fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError> {
        let token = *token;
        let found: Option<RefreshRow> = self
            .read(move |conn| {
                row(
                    conn,
                    text::FIND_REFRESH,
                    &[&token.as_bytes().as_slice(), &secs(now)],
                )
            })
            .await?;
        found.map(RefreshRow::into_grant).transpose()
    }

    async fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError> {
        let token = *token;
        // One write: the token is retired and its successor kept together, or neither.
        self.write(move |conn| {
            let now = secs(successor.issued_at);
            let family = successor.family.id();
            let digest = token.as_bytes().as_slice();
            let rotated: Option<GenerationRow> = row(
                conn,
                text::ROTATE,
                &[
                    &digest,
                    &now,
                    &family.to_bytes().as_slice(),
                    &secs(successor.expires_at()),
                    &successor.access_token.as_bytes().as_slice(),
                ],
            )?;
            if let Some(row) = rotated {
                keep_tokens(conn, &successor, KeptIn::Id, row.generation)?;
                return Ok(Rotation::Rotated);
            }
            if let Some(since) = retry_since
                && let Some(rotation) = retry(conn, &token, &successor, secs(since))?
            {
                return Ok(rotation);
            }
            // Not ours: rotated before (reuse), or unknown, expired, revoked or of another
            // family. Nothing was written; grantor revokes after a reuse, the store does not.
            let seen: Option<RefreshRow> = row(conn, text::FIND_REFRESH, &[&digest, &now])?;
            match seen {
                Some(row) if row.rotated() && row.family()? == family => {
                    Ok(Rotation::Reused { family })
                }
                _ => Ok(Rotation::Invalid),
            }
        })
        .await
    }

    async fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        let token = *token;
        let found: Option<AccessRow> = self
            .read(move |conn| {
                row(
                    conn,
                    access::FIND_ACCESS,
                    &[&token.as_bytes().as_slice(), &secs(now)],
                )
            })
            .await?;
        found.map(AccessRow::into_grant).transpose()
    }

    async fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError> {
        let token = *token;
        self.write(move |conn| {
            run(conn, access::DELETE_ACCESS, &[&token.as_bytes().as_slice()]).map(|_| ())
        })
        .await
    }

    async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
        self.write(move |conn| {
            let id = family.to_bytes();
            // The family's row, or the token issued alone that names it.
            run(conn, text::REVOKE_FAMILY, &[&id.as_slice()])?;
            run(conn, access::REVOKE_ALONE_FAMILY, &[&id.as_slice()]).map(|_| ())
        })
        .await
    }

    async fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError> {
        let client_id = client_id.to_owned();
        self.write(move |conn| {
            let families = run(conn, text::REVOKE_CLIENT, &[&client_id])?;
            let alone = run(conn, access::REVOKE_ALONE_CLIENT, &[&client_id])?;
            Ok(families.saturating_add(alone))
        })
        .await
    }
}

/// Starts family `id` for `authorization`, living until `expires_at`; answers its `seq`.
fn insert_family(
    conn: &Connection,
    id: FamilyId,
    authorization: &Authorization,
    expires_at: UnixTime,
) -> Result<i64, StoreError> {
    let columns = AuthorizationColumns::of(authorization);
    run(
        conn,
        text::INSERT_FAMILY,
        &[
            &id.to_bytes().as_slice(),
            &columns.client_id,
            &columns.user_id,
            &columns.username,
            &columns.scope,
            &secs(expires_at),
            &columns.audience,
            &columns.authentication,
        ],
    )?;
    // `seq` is the rowid (`INTEGER PRIMARY KEY`), and this connection's last insert was the
    // family's: the writer thread runs one write at a time.
    Ok(conn.last_insert_rowid())
}

/// Keeps the access token of `tokens`, in new family `id` and without a refresh token, in one
/// row that also holds its family's authorization (migration 22): one statement that writes,
/// after one that reads whether the family id is taken.
fn keep_alone(conn: &Connection, id: FamilyId, tokens: &NewTokens) -> Result<(), StoreError> {
    let family_id = id.to_bytes();
    let taken: Option<TakenRow> = row(conn, access::FAMILY_TAKEN, &[&family_id.as_slice()])?;
    if taken.is_some_and(|row| row.taken) {
        return Err(StoreError::failed("a new family's id is taken"));
    }
    let columns = AuthorizationColumns::of(&tokens.authorization);
    let jkt = tokens.binding.as_ref().map(TokenBinding::to_stored);
    let actor = tokens.actor.as_ref().map(Actor::to_stored);
    run(
        conn,
        access::INSERT_ACCESS_ALONE,
        &[
            &tokens.access_token.as_bytes().as_slice(),
            &columns.scope,
            &tokens.jti.as_str(),
            &secs(tokens.issued_at),
            &secs(tokens.access_expires_at),
            &columns.audience,
            &jkt,
            &actor,
            &family_id.as_slice(),
            &columns.client_id,
            &columns.user_id,
            &columns.username,
            &columns.authentication,
        ],
    )?;
    Ok(())
}

/// Inside the rotation's write: a retry of the rotation that replaced `token`, if it is one
/// (rotated at or after `since`): the access token that rotation issued goes, `successor` is
/// kept, and the answer is [`Rotation::Retried`]; [`Rotation::Invalid`] if a concurrent retry
/// won; `None` when it is no retry at all.
fn retry(
    conn: &Connection,
    token: &SecretDigest,
    successor: &NewTokens,
    since: i64,
) -> Result<Option<Rotation>, StoreError> {
    let now = secs(successor.issued_at);
    let family = successor.family.id().to_bytes();
    let digest = token.as_bytes().as_slice();
    let last: Option<LastRotationRow> = row(
        conn,
        text::FIND_LAST_ROTATION,
        &[&digest, &now, &family.as_slice()],
    )?;
    let Some(lost_access) = last.and_then(|row| row.retry_of(since)) else {
        return Ok(None);
    };
    let moved: Option<GenerationRow> = row(
        conn,
        text::RETRY_ROTATION,
        &[
            &digest,
            &now,
            &family.as_slice(),
            &secs(successor.expires_at()),
            &successor.access_token.as_bytes().as_slice(),
            &since,
            &lost_access.as_slice(),
        ],
    )?;
    let Some(moved) = moved else {
        return Ok(Some(Rotation::Invalid));
    };
    run(conn, access::DELETE_ACCESS, &[&lost_access.as_slice()])?;
    keep_tokens(conn, successor, KeptIn::Id, moved.generation)?;
    Ok(Some(Rotation::Retried))
}

/// How the access token being kept names its family's row.
enum KeptIn {
    /// By the family's `seq`, known from the statement that just wrote the family.
    Seq(i64),
    /// By the family's id, looked up as the token is inserted.
    Id,
}

/// Keeps the access token of `tokens`, and its refresh token as `generation` of its family
/// (found as `kept_in` says).
fn keep_tokens(
    conn: &Connection,
    tokens: &NewTokens,
    kept_in: KeptIn,
    generation: i64,
) -> Result<(), StoreError> {
    let family = tokens.family.id().to_bytes();
    let issued_at = secs(tokens.issued_at);
    let access_jkt = tokens.binding.as_ref().map(TokenBinding::to_stored);
    let actor = tokens.actor.as_ref().map(Actor::to_stored);
    let family_id = family.as_slice();
    let (insert, family_key): (_, &dyn rusqlite::ToSql) = match &kept_in {
        KeptIn::Seq(seq) => (access::INSERT_ACCESS_BY_SEQ, seq),
        KeptIn::Id => (access::INSERT_ACCESS, &family_id),
    };
    let kept = run(
        conn,
        insert,
        &[
            &tokens.access_token.as_bytes().as_slice(),
            family_key,
            &tokens.authorization.scope.as_str(),
            &tokens.jti.as_str(),
            &issued_at,
            &secs(tokens.access_expires_at),
            &tokens.authorization.audience.as_str(),
            &access_jkt,
            &actor,
        ],
    )?;
    if kept == 0 {
        // The family was looked up (or inserted) in this same write, so this is a bug, not
        // a race: refuse rather than answer a token that would never be found.
        return Err(StoreError::failed(
            "an access token for a family that is not kept",
        ));
    }
    if let (Some(ends_at), Some(_)) = (tokens.family_ends_at, &tokens.refresh_token) {
        run(
            conn,
            text::END_FAMILY,
            &[&family.as_slice(), &secs(ends_at)],
        )?;
    }
    if let Some(refresh) = &tokens.refresh_token {
        let jkt = refresh.binding.as_ref().map(TokenBinding::to_stored);
        run(
            conn,
            text::INSERT_REFRESH,
            &[
                &refresh.digest.as_bytes().as_slice(),
                &family.as_slice(),
                &generation,
                &issued_at,
                &secs(refresh.expires_at),
                &jkt,
            ],
        )?;
    }
    Ok(())
}
