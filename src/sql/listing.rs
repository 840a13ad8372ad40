//! What an administrator reads besides the seams: every client, and an account by its username
//! (the `grantor` command's `client list` and `user set-password`).

use sqlx::Postgres;

use super::columns::store_error;
use super::rows::{ClientRow, UserRow};
use super::{SqlStore, text};
use crate::client::Client;
use crate::error::StoreError;
use crate::store::{User, username_key};

impl SqlStore<Postgres> {
    /// Every registered client, ordered by id: for an administrator (the request path looks
    /// clients up one by one).
    pub async fn clients(&self) -> Result<Vec<Client>, StoreError> {
        let rows: Vec<ClientRow> = store_read!(self.primary, |conn| {
            sqlx::query_as(text::LIST_CLIENTS)
                .fetch_all(&mut *conn)
                .await
                .map_err(store_error::<Postgres>)
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
                .map_err(store_error::<Postgres>)
        })?;
        Ok(row.map(UserRow::into_user))
    }
}
