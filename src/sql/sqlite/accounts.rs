//! Clients and user accounts on [`SqliteStore`]: [`ClientStore`], [`UserStore`], [`Admin`],
//! [`UserAdmin`], [`Purge`] and what an administrator lists.

use std::sync::Arc;

use async_trait::async_trait;

use super::{SqliteStore, access, row, rows, run};
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
impl ClientStore for SqliteStore {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        let client_id = client_id.to_owned();
        let found: Option<ClientRow> = self
            .read(move |conn| row(conn, text::FIND_CLIENT, &[&client_id]))
            .await?;
        found.map(|row| row.into_client().map(Arc::new)).transpose()
    }
}

#[async_trait]
impl UserStore for SqliteStore {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        let Some(key) = username_key(username) else {
            return Ok(None);
        };
        let found: Option<AccountRow> = self
            .read(move |conn| row(conn, text::FIND_ACCOUNT_BY_KEY, &[&key.as_str()]))
            .await?;
        Ok(found.map(|row| Account::new(row.user.into_user(), row.password_hash)))
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        let id = id.as_str().to_owned();
        let found: Option<UserRow> = self
            .read(move |conn| row(conn, text::FIND_USER_BY_ID, &[&id]))
            .await?;
        Ok(found.map(UserRow::into_user))
    }

    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        let id = id.as_str().to_owned();
        let found: Option<ClaimsRow> = self
            .read(move |conn| row(conn, text::FIND_CLAIMS, &[&id]))
            .await?;
        found
            .map(|row| match row.claims {
                None => Ok(UserClaims::new()),
                Some(stored) => UserClaims::from_stored(&stored)
                    .ok_or_else(|| StoreError::failed("a stored user's claims are malformed")),
            })
            .transpose()
    }
}

#[async_trait]
impl Admin for SqliteStore {
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
        let client_id = client_id.to_owned();
        let stored = secret.to_stored();
        let done = self
            .write(move |conn| {
                run(
                    conn,
                    text::ROTATE_CLIENT_SECRET,
                    &[&client_id, &stored, &secs(retire_until)],
                )
            })
            .await?;
        Ok(done > 0)
    }

    async fn remove_client(&self, client_id: &str) -> Result<bool, StoreError> {
        let client_id = client_id.to_owned();
        let done = self
            .write(move |conn| run(conn, text::DELETE_CLIENT, &[&client_id]))
            .await?;
        Ok(done > 0)
    }
}

#[async_trait]
impl ClientActivity for SqliteStore {
    async fn touch_client(&self, client_id: &str, at: UnixTime) -> Result<(), StoreError> {
        let client_id = client_id.to_owned();
        self.write(move |conn| run(conn, text::TOUCH_CLIENT, &[&client_id, &secs(at)]))
            .await?;
        Ok(())
    }

    async fn client_last_used(&self, client_id: &str) -> Result<Option<UnixTime>, StoreError> {
        let client_id = client_id.to_owned();
        let found: Option<LastUsedRow> = self
            .read(move |conn| row(conn, text::CLIENT_LAST_USED, &[&client_id]))
            .await?;
        Ok(found.and_then(|row| row.last_used).map(time))
    }

    async fn idle_clients(
        &self,
        before: UnixTime,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let found: Vec<ClientIdRow> = self
            .read(move |conn| rows(conn, text::IDLE_CLIENTS, &[&secs(before), &limit]))
            .await?;
        Ok(found.into_iter().map(|row| row.client_id).collect())
    }
}

#[async_trait]
impl UserAdmin for SqliteStore {
    async fn insert_user(&self, user: &User, password_hash: &str) -> Result<User, AdminError> {
        let key = username_key(user.username()).ok_or(AdminError::InvalidUsername)?;
        let id = user.id().as_str().to_owned();
        let username = user.username().to_owned();
        let hash = password_hash.to_owned();
        let done = self
            .write(move |conn| {
                run(
                    conn,
                    text::INSERT_USER,
                    &[&id, &username, &key.as_str(), &hash],
                )
            })
            .await?;
        if done == 0 {
            return Err(AdminError::UsernameTaken);
        }
        Ok(user.clone())
    }

    async fn set_password_hash(
        &self,
        user: &UserId,
        password_hash: &str,
    ) -> Result<bool, StoreError> {
        let id = user.as_str().to_owned();
        let hash = password_hash.to_owned();
        let done = self
            .write(move |conn| run(conn, text::SET_PASSWORD_HASH, &[&id, &hash]))
            .await?;
        Ok(done > 0)
    }

    async fn set_claims(&self, user: &UserId, claims: &UserClaims) -> Result<bool, StoreError> {
        let id = user.as_str().to_owned();
        let stored = claims.to_stored();
        let done = self
            .write(move |conn| run(conn, text::SET_CLAIMS, &[&id, &stored]))
            .await?;
        Ok(done > 0)
    }
}

#[async_trait]
impl Purge for SqliteStore {
    async fn purge_expired(&self, now: UnixTime) -> Result<u64, StoreError> {
        let mut deleted = 0;
        // Each statement a write of its own: a long purge does not hold back other writes as
        // one transaction would.
        for statement in access::PURGE {
            deleted += self
                .write(move |conn| run(conn, statement, &[&secs(now)]))
                .await?;
        }
        // Parts of entries counted above (a session's grants), so that every store answers
        // the same count for the same entries.
        for statement in text::PURGE_PARTS {
            self.write(move |conn| run(conn, statement, &[&secs(now)]))
                .await?;
        }
        Ok(deleted)
    }
}

impl SqliteStore {
    /// Every registered client, ordered by id: for an administrator (the request path looks
    /// clients up one by one).
    pub async fn clients(&self) -> Result<Vec<Client>, StoreError> {
        let found: Vec<ClientRow> = self
            .read(|conn| rows(conn, text::LIST_CLIENTS, &[]))
            .await?;
        found.into_iter().map(ClientRow::into_client).collect()
    }

    /// The account with this username (matched in any case), if any.
    pub async fn find_user_by_username(&self, username: &str) -> Result<Option<User>, StoreError> {
        let Some(key) = username_key(username) else {
            return Ok(None);
        };
        let found: Option<UserRow> = self
            .read(move |conn| row(conn, text::FIND_USER_BY_KEY, &[&key.as_str()]))
            .await?;
        Ok(found.map(UserRow::into_user))
    }

    /// Runs [`text::INSERT_CLIENT`] or [`text::REPLACE_CLIENT`] for `client`; answers whether a
    /// row changed. Only its secret's verifier is stored.
    async fn write_client(
        &self,
        statement: &'static str,
        client: &Client,
    ) -> Result<bool, StoreError> {
        let columns = ClientColumns::of(client);
        let openid = client.openid().to_stored();
        let id = client.id().as_str().to_owned();
        let name = client.name().to_owned();
        let scopes = client.scopes().as_str().to_owned();
        let default_scope = client.default_scope().as_str().to_owned();
        let dpop = client.requires_dpop();
        let par = client.requires_pushed_requests();
        let done = self
            .write(move |conn| {
                run(
                    conn,
                    statement,
                    &[
                        &id,
                        &name,
                        &columns.secret_verifier,
                        &columns.redirect_uris,
                        &columns.grant_types,
                        &scopes,
                        &default_scope,
                        &columns.approval_required,
                        &columns.audiences,
                        &columns.resources,
                        &columns.registration_token.as_ref().map(|d| &d[..]),
                        &dpop,
                        &par,
                        &columns.previous_secret_verifier,
                        &columns.previous_secret_expires_at,
                        &columns.jwks,
                        &columns.jwks_uri,
                        &openid,
                    ],
                )
            })
            .await?;
        Ok(done > 0)
    }
}
