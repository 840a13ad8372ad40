//! The resource owner password credentials grant (RFC 6749 §4.3): the username is the user's
//! email address.

use super::{TokenResponse, resolve_scope};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::endpoint::form::Form;
use crate::error::OAuthError;
use crate::secret::Password;
use crate::server::Inner;
use crate::signin::SignInProblem;
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
    let authorization = Authorization::new(client.id().clone(), Some(user), scope);
    super::issue(
        inner,
        authorization,
        None,
        client.issues_refresh_tokens(),
        now,
    )
    .await
}

/// Why a sign-in failed.
pub(crate) enum Failure {
    /// Wrong credentials, or too many failures: shown on a sign-in page, or `invalid_grant`.
    Problem(SignInProblem),
    /// The user store failed.
    Store(OAuthError),
}

impl From<Failure> for OAuthError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Problem(SignInProblem::WrongCredentials) => {
                OAuthError::invalid_grant("the username or password is incorrect")
            }
            Failure::Problem(SignInProblem::Throttled(_)) => OAuthError::invalid_grant(
                "too many failed sign-ins for this account; try again later",
            ),
            Failure::Store(error) => error,
        }
    }
}

/// Checks a username and password against the user store, throttled per account: past the
/// limit, attempts are refused without checking the password.
pub(crate) async fn authenticate(
    inner: &Inner,
    username: &str,
    password: &Password,
    now: UnixTime,
) -> Result<User, Failure> {
    if let Err(wait) = inner.throttle.check(username, now) {
        return Err(Failure::Problem(SignInProblem::Throttled(wait)));
    }
    let found = inner.users.authenticate(username, password).await;
    match found.map_err(|e| Failure::Store(e.into()))? {
        Some(user) => {
            inner.throttle.record_success(username);
            Ok(user)
        }
        None => {
            inner.throttle.record_failure(username, now);
            Err(Failure::Problem(SignInProblem::WrongCredentials))
        }
    }
}
