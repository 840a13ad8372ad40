//! The implicit grant (RFC 6749 §4.2): on approval, an access token in the redirect's fragment.
//! Never a refresh token (RFC 6749 §4.2.2).

use crate::authorize::PendingAuthorization;
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::server::Inner;
use crate::store::{Authorization, User};

/// Issues the token; answers the fragment parameters (`state` and `iss` are added by the
/// caller).
pub(crate) async fn issue_token(
    inner: &Inner,
    pending: &PendingAuthorization,
    user: User,
    now: UnixTime,
) -> Result<Vec<(&'static str, String)>, OAuthError> {
    let authorization = Authorization {
        client_id: pending.client.id().clone(),
        user: Some(user),
        scope: pending.scope.clone(),
    };
    let token = super::issue(inner, authorization, None, false, now).await?;
    Ok(vec![
        ("access_token", token.access_token),
        ("token_type", token.token_type.to_owned()),
        ("expires_in", token.expires_in.to_string()),
        ("scope", token.scope.as_str().to_owned()),
        ("jti", token.jti),
    ])
}
