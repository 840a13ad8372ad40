//! The client credentials grant (RFC 6749 §4.4): a confidential client acting for itself. No
//! user, never a refresh token (RFC 6749 §4.4.3).

use super::{TokenResponse, resolve_scope};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::endpoint::form::Form;
use crate::error::OAuthError;
use crate::server::Inner;
use crate::store::Authorization;

pub(crate) async fn exchange(
    inner: &Inner,
    client: &Client,
    form: &Form<'_>,
    now: UnixTime,
) -> Result<TokenResponse, OAuthError> {
    if client.is_public() {
        return Err(OAuthError::unauthorized_client(
            "a public client cannot use client_credentials",
        ));
    }
    let authorization = Authorization::new(client.id().clone(), None, resolve_scope(form.get("scope"), client)?);
    super::issue(inner, authorization, None, false, now).await
}
