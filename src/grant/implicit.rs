//! The implicit grant (RFC 6749 §4.2): on approval, an access token for the redirect's
//! fragment. Never a refresh token (RFC 6749 §4.2.2).

use super::authorize::PendingAuthorization;
use super::{Issued, Issuer};
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::store::{Authorization, User};

/// Issues the token for the approved `pending` authorization.
pub(crate) async fn issue_token(
    issuer: Issuer<'_>,
    pending: &PendingAuthorization,
    user: User,
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    let authorization = Authorization::new(
        pending.client.id().clone(),
        Some(user),
        pending.scope.clone(),
    )
    .with_audience(pending.audience.clone());
    issuer
        .issue(
            crate::client::GrantType::Implicit,
            authorization,
            None,
            false,
            now,
        )
        .await
}
