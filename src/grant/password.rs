//! The resource owner password credentials grant (RFC 6749 §4.3): the username is the user's
//! email address.

use super::{TokenResponse, resolve_scope};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::endpoint::form::Form;
use crate::error::OAuthError;
use crate::secret::Password;
use crate::server::Inner;
use crate::store::{Authorization, User};

pub(crate) async fn exchange(
    inner: &Inner,
    client: &Client,
    form: &Form<'_>,
    now: UnixTime,
) -> Result<TokenResponse, OAuthError> {
    let username = form
        .get("username")
        .ok_or_else(|| OAuthError::invalid_request("username is missing"))?;
    let password = form
        .get("password")
        .map(Password::new)
        .ok_or_else(|| OAuthError::invalid_request("password is missing"))?;
    // Checked before the password so a bad scope costs no hashing.
    let scope = resolve_scope(form.get("scope"), client)?;
    let user = authenticate(inner, username, &password, now).await?;
    let authorization = Authorization {
        client_id: client.id().clone(),
        user: Some(user),
        scope,
    };
    super::issue(
        inner,
        authorization,
        None,
        client.issues_refresh_tokens(),
        now,
    )
    .await
}

/// Checks a username and password against the user store, throttled per account: past the
/// limit, attempts are refused without checking the password.
pub(crate) async fn authenticate(
    inner: &Inner,
    username: &str,
    password: &Password,
    now: UnixTime,
) -> Result<User, OAuthError> {
    if inner.throttle.check(username, now).is_err() {
        return Err(OAuthError::invalid_grant(
            "too many failed sign-ins for this account; try again later",
        ));
    }
    match inner.users.authenticate(username, password).await? {
        Some(user) => {
            inner.throttle.record_success(username);
            Ok(user)
        }
        None => {
            inner.throttle.record_failure(username, now);
            Err(OAuthError::invalid_grant(
                "the username or password is incorrect",
            ))
        }
    }
}
