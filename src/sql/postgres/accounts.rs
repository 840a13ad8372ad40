//! Clients and user accounts on [`PostgresStore`]: [`ClientStore`], [`UserStore`], [`Admin`],
//! [`UserAdmin`], [`Purge`] and what an administrator lists.

use std::sync::Arc;

use async_trait::async_trait;

use super::errors::store_error;
use super::{PostgresStore, Statements};
use crate::client::{Client, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::sql::columns::{ClientColumns, secs};
use crate::sql::rows::accounts::{
    AccountRow, ClaimsRow, ClientIdRow, ClientRow, LastUsedRow, UserRow,
};
use crate::sql::rows::time;
use crate::sql::text;
use crate::store::{
    Account, Admin, AdminError, ClientActivity, ClientStore, Purge, User, UserAdmin, UserClaims,
    UserId, UserStore, username_key,
};

#[async_trait]
impl ClientStore for PostgresStore {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        let row: Option<ClientRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_CLIENT)
                .bind(client_id)
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        row.map(|row| row.into_client().map(Arc::new)).transpose()
    }
}

#[async_trait]
impl UserStore for PostgresStore {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        let Some(key) = username_key(username) else {
            return Ok(None);
        };
        let found: Option<AccountRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_ACCOUNT_BY_KEY)
                .bind(key.as_str())
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(found.map(|row| Account::new(row.user.into_user(), row.password_hash)))
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        let row: Option<UserRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_USER_BY_ID)
                .bind(id.as_str())
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(row.map(UserRow::into_user))
    }

    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        let row: Option<ClaimsRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_CLAIMS)
                .bind(id.as_str())
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        row.map(|row| match row.claims {
            None => Ok(UserClaims::new()),
            Some(stored) => UserClaims::from_stored(&stored)
                .ok_or_else(|| StoreError::failed("a stored user's claims are malformed")),
        })
        .transpose()
    }
}

#[async_trait]
impl Admin for PostgresStore {
    async fn register_client(&self, client: &Client) -> Result<(), AdminError> {
        if self.write_client(text::INSERT_CLIENT, client).await? {
            Ok(())
        } else {
            Err(AdminError::ClientIdTaken)
        }
    }

    async fn replace_client(&self, client: &Client) -> Result<bool, StoreError> {
        self.write_client(text::REPLACE_CLIENT, client).await
    }

    async fn rotate_client_secret(
        &self,
        client_id: &str,
        secret: &SecretVerifier,
        retire_until: UnixTime,
    ) -> Result<bool, StoreError> {
        let done = store_write!(self, Statements::One, |conn| {
            sqlx::query(text::ROTATE_CLIENT_SECRET)
                .bind(client_id)
                .bind(secret.to_stored().as_str())
                .bind(secs(retire_until))
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(done.rows_affected() > 0)
    }

    async fn remove_client(&self, client_id: &str) -> Result<bool, StoreError> {
        let done = store_write!(self, Statements::One, |conn| {
            sqlx::query(text::DELETE_CLIENT)
                .bind(client_id)
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(done.rows_affected() > 0)
    }
}

#[async_trait]
impl ClientActivity for PostgresStore {
    async fn touch_client(&self, client_id: &str, at: UnixTime) -> Result<(), StoreError> {
        store_write!(self, Statements::One, |conn| {
            sqlx::query(text::TOUCH_CLIENT)
                .bind(client_id)
                .bind(secs(at))
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(())
    }

    async fn client_last_used(&self, client_id: &str) -> Result<Option<UnixTime>, StoreError> {
        let row: Option<LastUsedRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::CLIENT_LAST_USED)
                .bind(client_id)
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(row.and_then(|row| row.last_used).map(time))
    }

    async fn idle_clients(
        &self,
        before: UnixTime,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows: Vec<ClientIdRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::IDLE_CLIENTS)
                .bind(secs(before))
                .bind(limit)
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(rows.into_iter().map(|row| row.client_id).collect())
    }
}

#[async_trait]
impl UserAdmin for PostgresStore {
    async fn insert_user(&self, user: &User, password_hash: &str) -> Result<User, AdminError> {
        let key = username_key(user.username()).ok_or(AdminError::InvalidUsername)?;
        let done = store_write!(self, Statements::One, |conn| {
            sqlx::query(text::INSERT_USER)
                .bind(user.id().as_str())
                .bind(user.username())
                .bind(key.as_str())
                .bind(password_hash)
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        if done.rows_affected() == 0 {
            return Err(AdminError::UsernameTaken);
        }
        Ok(user.clone())
    }

    async fn set_password_hash(
        &self,
        user: &UserId,
        password_hash: &str,
    ) -> Result<bool, StoreError> {
        let done = store_write!(self, Statements::One, |conn| {
            sqlx::query(text::SET_PASSWORD_HASH)
                .bind(user.as_str())
                .bind(password_hash)
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(done.rows_affected() > 0)
    }

    async fn set_claims(&self, user: &UserId, claims: &UserClaims) -> Result<bool, StoreError> {
        let stored = claims.to_stored();
        let done = store_write!(self, Statements::One, |conn| {
            sqlx::query(text::SET_CLAIMS)
                .bind(user.as_str())
                .bind(stored.as_str())
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(done.rows_affected() > 0)
    }
}

#[async_trait]
impl Purge for PostgresStore {
    async fn purge_expired(&self, now: UnixTime) -> Result<u64, StoreError> {
        let mut deleted = 0;
        // Each statement on its own: a long purge does not hold back other writes as one
        // transaction would.
        for statement in text::PURGE {
            deleted += self.purge(statement, now).await?;
        }
        // Parts of entries counted above (a session's grants), so that every store answers
        // the same count for the same entries.
        for statement in text::PURGE_PARTS {
            self.purge(statement, now).await?;
        }
        Ok(deleted)
    }
}

impl PostgresStore {
    /// Every registered client, ordered by id: for an administrator (the request path looks
    /// clients up one by one).
    pub async fn clients(&self) -> Result<Vec<Client>, StoreError> {
        let rows: Vec<ClientRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::LIST_CLIENTS)
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        rows.into_iter().map(ClientRow::into_client).collect()
    }

    /// The account with this username (matched in any case), if any.
    pub async fn find_user_by_username(&self, username: &str) -> Result<Option<User>, StoreError> {
        let Some(key) = username_key(username) else {
            return Ok(None);
        };
        let row: Option<UserRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::FIND_USER_BY_KEY)
                .bind(key.as_str())
                .fetch_optional(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(row.map(UserRow::into_user))
    }
}

impl PostgresStore {
    /// Runs one statement of [`text::PURGE`] or [`text::PURGE_PARTS`], binding `now` where it
    /// has `$1`; answers how many rows it deleted.
    async fn purge(&self, statement: &'static str, now: UnixTime) -> Result<u64, StoreError> {
        let done = store_write!(self, Statements::One, |conn| {
            let query = sqlx::query(statement);
            let query = if statement.contains("$1") {
                query.bind(secs(now))
            } else {
                query
            };
            query.execute(&mut *conn).await.map_err(store_error)
        })?;
        Ok(done.rows_affected())
    }
}

impl PostgresStore {
    /// Runs [`text::INSERT_CLIENT`] or [`text::REPLACE_CLIENT`] for `client`; answers whether a
    /// row changed. Only its secret's verifier is stored.
    async fn write_client(&self, statement: &str, client: &Client) -> Result<bool, StoreError> {
        let columns = ClientColumns::of(client);
        let openid = client.openid().to_stored();
        let done = store_write!(self, Statements::One, |conn| {
            sqlx::query(statement)
                .bind(client.id().as_str())
                .bind(client.name())
                .bind(columns.secret_verifier.as_deref())
                .bind(columns.redirect_uris.as_str())
                .bind(columns.grant_types.as_str())
                .bind(client.scopes().as_str())
                .bind(client.default_scope().as_str())
                .bind(columns.approval_required)
                .bind(columns.audiences.as_str())
                .bind(columns.resources.as_str())
                .bind(columns.registration_token.as_ref().map(|d| &d[..]))
                .bind(client.requires_dpop())
                .bind(client.requires_pushed_requests())
                .bind(columns.previous_secret_verifier.as_deref())
                .bind(columns.previous_secret_expires_at)
                .bind(columns.jwks.as_deref())
                .bind(columns.jwks_uri.as_deref())
                .bind(openid.as_deref())
                .execute(&mut *conn)
                .await
                .map_err(store_error)
        })?;
        Ok(done.rows_affected() > 0)
    }
}
