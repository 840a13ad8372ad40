//! The implicit grant (RFC 6749 §4.2): on approval, an access token in the redirect's fragment.
//! Never a refresh token (RFC 6749 §4.2.2).

use super::TokenResponse;
use crate::authorize::PendingAuthorization;
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::server::Inner;
use crate::store::{Authorization, User};

/// Issues the token for the redirect's fragment (`state` and `iss` are added by the caller).
pub(crate) async fn issue_token(
    inner: &Inner,
    pending: &PendingAuthorization,
    user: User,
    now: UnixTime,
) -> Result<TokenResponse, OAuthError> {
    let authorization = Authorization::new(pending.client.id().clone(), Some(user), pending.scope.clone());
    super::issue(inner, authorization, None, false, now).await
}
