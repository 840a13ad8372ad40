//! The client credentials grant (RFC 6749 §4.4): a confidential client acting for itself. No
//! user, never a refresh token (RFC 6749 §4.4.3).

use super::checks;
use super::issue::{Issued, Issuer};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::store::Authorization;

pub(crate) async fn exchange(
    issuer: &Issuer<'_>,
    client: &Client,
    scope: Option<&str>,
    resources: &[&str],
    now: UnixTime,
) -> Result<Issued, OAuthError> {
    if client.is_public() {
        return Err(OAuthError::unauthorized_client(
            "a public client cannot use client_credentials",
        ));
    }
    let scope = checks::resolve_scope(scope, client)?;
    let audience = issuer.resources.resolve(resources, client)?;
    let authorization =
        Authorization::new(client.id().clone(), None, scope).with_audience(audience);
    issuer
        .issue(
            crate::client::GrantType::ClientCredentials,
            authorization,
            None,
            false,
            now,
        )
        .await
}
