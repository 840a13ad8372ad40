//! Codes, tokens and their families: [`TokenIssuer`].

use async_trait::async_trait;

use super::errors::store_error;
use super::{Conn, PostgresStore, Statements, access};
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

#[async_trait]
impl TokenIssuer for PostgresStore {
    async fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError> {
        let forget_at = grant.expires_at.plus(REPLAY_MEMORY);
        let id = family.to_bytes();
        let authorization = AuthorizationColumns::of(&grant.authorization);
        let challenge = grant.code_challenge.as_ref();
        let openid = grant.openid.as_ref().map(SignInFacts::to_stored);
        let jkt = grant.dpop_jkt.map(|jkt| jkt.to_string());
        store_write!(self, Statements::Many, |conn| {
            // The family first: a code without its family would be refused as revoked. It lives
            // as long as the code's tombstone.
            Self::insert_family(conn, family, &grant.authorization, forget_at).await?;
            sqlx::query(text::INSERT_CODE)
                .bind(code.as_bytes().as_slice())
                .bind(id.as_slice())
                .bind(authorization.client_id)
                .bind(authorization.user_id)
                .bind(authorization.username)
                .bind(authorization.scope)
                .bind(grant.redirect_uri.as_str())
                .bind(challenge.map(|c| c.as_str()))
                .bind(challenge.map(|c| c.method().as_str()))
                .bind(secs(grant.issued_at))
                .bind(secs(grant.expires_at))
                .bind(secs(forget_at))
                .bind(authorization.audience)
                .bind(openid.as_deref())
                .bind(jkt.as_deref())
                .bind(authorization.authentication.as_deref())
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(())
        })
    }

    async fn redeem_code(
        &self,
        code: &SecretDigest,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError> {
        // One statement writes; the second only reads, on the same connection, so it sees a
        // redemption still waiting for its commit in the same batch.
        store_write!(self, Statements::One, |conn| {
            let redeemed: Option<CodeRow> = sqlx::query_as(text::REDEEM_CODE)
                .bind(code.as_bytes().as_slice())
                .bind(secs(now))
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)?;
            if let Some(row) = redeemed {
                let (family, grant) = row.into_grant()?;
                return Ok(CodeRedemption::Redeemed { grant, family });
            }
            // Not ours: redeemed before (a replay), or unknown, expired or revoked.
            let seen: Option<CodeStateRow> = sqlx::query_as(text::CODE_STATE)
                .bind(code.as_bytes().as_slice())
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(match seen {
                Some(row) if row.redeemed => CodeRedemption::Replayed {
                    family: row.family()?,
                },
                _ => CodeRedemption::Invalid,
            })
        })
    }

    async fn insert_tokens(&self, tokens: NewTokens) -> Result<(), StoreError> {
        if let (Family::New(_), None) = (tokens.family, &tokens.refresh_token) {
            // Concurrent ones share a statement.
            return self
                .batches
                .insert_family_with_access(&self.primary, tokens)
                .await;
        }
        let id = match tokens.family {
            Family::Existing(id) => {
                let joined = store_write!(self, Statements::One, |conn| {
                    Self::join_family(conn, id, &tokens).await
                })?;
                return joined
                    .map(|_| ())
                    .ok_or_else(|| StoreError::failed("tokens asked for an unknown family"));
            }
            Family::New(id) => id,
        };
        // A new family with a refresh token: the family, then its tokens, in one transaction.
        store_write!(self, Statements::Many, |conn| {
            Self::insert_family(conn, id, &tokens.authorization, tokens.expires_at()).await?;
            Self::keep_tokens(conn, &tokens, 0).await
        })
    }

    async fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError> {
        let row: Option<RefreshRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_REFRESH)
                .bind(token.as_bytes().as_slice())
                .bind(secs(now))
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        row.map(RefreshRow::into_grant).transpose()
    }

    async fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError> {
        let now = secs(successor.issued_at);
        let family = successor.family.id();
        if successor.refresh_token.is_some() {
            let rotated = store_write!(self, Statements::One, |conn| {
                Self::rotate_at_once(conn, token, &successor).await
            })?;
            if rotated.is_some() {
                return Ok(Rotation::Rotated);
            }
            // Not rotated, nothing written: a retry, a reuse or an invalid token, told apart
            // below.
        }
        // One transaction: the token is retired and its successor kept together, or neither.
        store_write!(self, Statements::Many, |conn| {
            let rotated: Option<GenerationRow> = sqlx::query_as(text::ROTATE)
                .bind(token.as_bytes().as_slice())
                .bind(now)
                .bind(family.to_bytes().as_slice())
                .bind(secs(successor.expires_at()))
                .bind(successor.access_token.as_bytes().as_slice())
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)?;
            if let Some(row) = rotated {
                Self::keep_tokens(conn, &successor, row.generation).await?;
                return Ok(Rotation::Rotated);
            }
            if let Some(since) = retry_since
                && let Some(rotation) = Self::retry(conn, token, &successor, secs(since)).await?
            {
                return Ok(rotation);
            }
            // Not ours: rotated before (reuse), or unknown, expired, revoked or of another
            // family. Nothing was written; grantor revokes after a reuse, the store does not.
            let seen: Option<RefreshRow> = sqlx::query_as(text::FIND_REFRESH)
                .bind(token.as_bytes().as_slice())
                .bind(now)
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)?;
            match seen {
                Some(row) if row.rotated() && row.family()? == family => {
                    Ok(Rotation::Reused { family })
                }
                _ => Ok(Rotation::Invalid),
            }
        })
    }

    /// In the next shared statement of the primary's lookups (see `batch.rs`).
    async fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        let row = self
            .batches
            .find_access(&self.primary, false, token, now)
            .await?;
        row.map(AccessRow::into_grant).transpose()
    }

    /// From the read replica when there is one; from the primary when the replica knows no
    /// such token (it may not have replayed it yet) or fails. Each pool's lookups share
    /// statements.
    async fn check_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        if let Some(replica) = &self.replica {
            match self.batches.find_access(replica, true, token, now).await {
                Ok(Some(row)) => return row.into_grant().map(Some),
                Ok(None) => {}
                Err(error) => {
                    tracing::debug!(%error, "the read replica failed; asking the primary");
                }
            }
        }
        self.find_access_token(token, now).await
    }

    async fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError> {
        store_write!(self, Statements::One, |conn| {
            sqlx::query(access::DELETE_ACCESS)
                .bind(token.as_bytes().as_slice())
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(())
        })
    }

    async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
        store_write!(self, Statements::One, |conn| {
            sqlx::query(text::REVOKE_FAMILY)
                .bind(family.to_bytes().as_slice())
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(())
        })
    }

    async fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError> {
        store_write!(self, Statements::One, |conn| {
            let done = sqlx::query(text::REVOKE_CLIENT)
                .bind(client_id)
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
            Ok(done.rows_affected())
        })
    }
}

impl PostgresStore {
    /// [`access::ROTATE_WITH_TOKENS`]: `token` rotated and `successor` (which has a refresh
    /// token) kept, in one statement; `None` when `token` is not its family's current one.
    async fn rotate_at_once(
        conn: &mut Conn<'_>,
        token: &SecretDigest,
        successor: &NewTokens,
    ) -> Result<Option<GenerationRow>, StoreError> {
        let refresh = successor.refresh_token.as_ref();
        let access_jkt = successor.binding.as_ref().map(TokenBinding::to_stored);
        let refresh_jkt = refresh
            .and_then(|r| r.binding.as_ref())
            .map(TokenBinding::to_stored);
        let actor = successor.actor.as_ref().map(Actor::to_stored);
        sqlx::query_as(access::ROTATE_WITH_TOKENS)
            .bind(token.as_bytes().as_slice())
            .bind(secs(successor.issued_at))
            .bind(successor.family.id().to_bytes().as_slice())
            .bind(secs(successor.expires_at()))
            .bind(successor.access_token.as_bytes().as_slice())
            .bind(successor.authorization.scope.as_str())
            .bind(successor.jti.as_str())
            .bind(secs(successor.access_expires_at))
            .bind(successor.authorization.audience.as_str())
            .bind(access_jkt.as_deref())
            .bind(actor.as_deref())
            .bind(refresh.map(|r| r.digest.as_bytes().as_slice()))
            .bind(refresh.map(|r| secs(r.expires_at)))
            .bind(refresh_jkt.as_deref())
            .bind(successor.family_ends_at.map(secs))
            .fetch_optional(conn)
            .await
            .map_err(store_error)
    }

    /// [`access::JOIN_FAMILY_WITH_TOKENS`]: `tokens` kept in family `id`, in one statement;
    /// `None` when there is no such family.
    async fn join_family(
        conn: &mut Conn<'_>,
        id: FamilyId,
        tokens: &NewTokens,
    ) -> Result<Option<GenerationRow>, StoreError> {
        let refresh = tokens.refresh_token.as_ref();
        // As `keep_tokens`: the family's end is fixed by its first refresh token.
        let ends_at = refresh.and(tokens.family_ends_at).map(secs);
        let access_jkt = tokens.binding.as_ref().map(TokenBinding::to_stored);
        let refresh_jkt = refresh
            .and_then(|r| r.binding.as_ref())
            .map(TokenBinding::to_stored);
        let actor = tokens.actor.as_ref().map(Actor::to_stored);
        sqlx::query_as(access::JOIN_FAMILY_WITH_TOKENS)
            .bind(id.to_bytes().as_slice())
            .bind(secs(tokens.expires_at()))
            .bind(ends_at)
            .bind(tokens.access_token.as_bytes().as_slice())
            .bind(tokens.authorization.scope.as_str())
            .bind(tokens.jti.as_str())
            .bind(secs(tokens.issued_at))
            .bind(secs(tokens.access_expires_at))
            .bind(tokens.authorization.audience.as_str())
            .bind(access_jkt.as_deref())
            .bind(actor.as_deref())
            .bind(refresh.map(|r| r.digest.as_bytes().as_slice()))
            .bind(refresh.map(|r| secs(r.expires_at)))
            .bind(refresh_jkt.as_deref())
            .fetch_optional(conn)
            .await
            .map_err(store_error)
    }

    /// Starts family `id` for `authorization`, living until `expires_at`.
    async fn insert_family(
        conn: &mut Conn<'_>,
        id: FamilyId,
        authorization: &Authorization,
        expires_at: UnixTime,
    ) -> Result<(), StoreError> {
        let columns = AuthorizationColumns::of(authorization);
        sqlx::query(text::INSERT_FAMILY)
            .bind(id.to_bytes().as_slice())
            .bind(columns.client_id)
            .bind(columns.user_id)
            .bind(columns.username)
            .bind(columns.scope)
            .bind(secs(expires_at))
            .bind(columns.audience)
            .bind(columns.authentication.as_deref())
            .execute(&mut *conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    /// Inside the rotation's transaction: a retry of the rotation that replaced `token`, if it
    /// is one (rotated at or after `since`): the access token that rotation issued goes,
    /// `successor` is kept, and the answer is [`Rotation::Retried`]; [`Rotation::Invalid`] if a
    /// concurrent retry won; `None` when it is no retry at all.
    async fn retry(
        conn: &mut Conn<'_>,
        token: &SecretDigest,
        successor: &NewTokens,
        since: i64,
    ) -> Result<Option<Rotation>, StoreError> {
        let now = secs(successor.issued_at);
        let family = successor.family.id().to_bytes();
        let last: Option<LastRotationRow> = sqlx::query_as(text::FIND_LAST_ROTATION)
            .bind(token.as_bytes().as_slice())
            .bind(now)
            .bind(family.as_slice())
            .fetch_optional(&mut *conn)
            .await
            .map_err(store_error)?;
        let Some(lost_access) = last.and_then(|row| row.retry_of(since)) else {
            return Ok(None);
        };
        let moved: Option<GenerationRow> = sqlx::query_as(text::RETRY_ROTATION)
            .bind(token.as_bytes().as_slice())
            .bind(now)
            .bind(family.as_slice())
            .bind(secs(successor.expires_at()))
            .bind(successor.access_token.as_bytes().as_slice())
            .bind(since)
            .bind(lost_access.as_slice())
            .fetch_optional(&mut *conn)
            .await
            .map_err(store_error)?;
        let Some(row) = moved else {
            return Ok(Some(Rotation::Invalid));
        };
        sqlx::query(access::DELETE_ACCESS)
            .bind(lost_access.as_slice())
            .execute(&mut *conn)
            .await
            .map_err(store_error)?;
        Self::keep_tokens(conn, successor, row.generation).await?;
        Ok(Some(Rotation::Retried))
    }

    /// Keeps the access token of `tokens`, and its refresh token as `generation` of its family.
    async fn keep_tokens(
        conn: &mut Conn<'_>,
        tokens: &NewTokens,
        generation: i64,
    ) -> Result<(), StoreError> {
        let family = tokens.family.id().to_bytes();
        let issued_at = secs(tokens.issued_at);
        let access_jkt = tokens.binding.as_ref().map(TokenBinding::to_stored);
        let actor = tokens.actor.as_ref().map(Actor::to_stored);
        sqlx::query(access::INSERT_ACCESS)
            .bind(tokens.access_token.as_bytes().as_slice())
            .bind(family.as_slice())
            .bind(tokens.authorization.scope.as_str())
            .bind(tokens.jti.as_str())
            .bind(issued_at)
            .bind(secs(tokens.access_expires_at))
            .bind(tokens.authorization.audience.as_str())
            .bind(access_jkt.as_deref())
            .bind(actor.as_deref())
            .execute(&mut *conn)
            .await
            .map_err(store_error)?;
        if let (Some(ends_at), Some(_)) = (tokens.family_ends_at, &tokens.refresh_token) {
            sqlx::query(text::END_FAMILY)
                .bind(family.as_slice())
                .bind(secs(ends_at))
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
        }
        if let Some(refresh) = &tokens.refresh_token {
            let jkt = refresh.binding.as_ref().map(TokenBinding::to_stored);
            sqlx::query(text::INSERT_REFRESH)
                .bind(refresh.digest.as_bytes().as_slice())
                .bind(family.as_slice())
                .bind(generation)
                .bind(issued_at)
                .bind(secs(refresh.expires_at))
                .bind(jkt.as_deref())
                .execute(&mut *conn)
                .await
                .map_err(store_error)?;
        }
        Ok(())
    }
}
