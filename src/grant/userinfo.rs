//! UserInfo (OpenID Connect Core §5.3): which of the user's claims an access token releases.

use serde_json::{Map, Value};

use super::id_token::IdTokens;
use crate::error::OAuthError;
use crate::memory::ClientSeam;
use crate::store::{AccessGrant, UserStore};

/// The claims `grant`'s scope releases of its user, `sub` first (§5.3.2) as the token's client
/// knows the user (§8); `None` when the token stands for no user (a client's own), or its user
/// or its client is gone.
pub(crate) async fn claims(
    id_tokens: IdTokens<'_>,
    users: &dyn UserStore,
    clients: ClientSeam<'_>,
    grant: &AccessGrant,
) -> Result<Option<Map<String, Value>>, OAuthError> {
    let Some(user) = &grant.authorization.user else {
        return Ok(None);
    };
    let client_id = grant.authorization.client_id.as_str();
    let Some(client) = clients.find_client(client_id).await? else {
        return Ok(None);
    };
    let Some(claims) = users.claims(user.id()).await? else {
        return Ok(None);
    };
    let sub = id_tokens.subject(&client, user.id())?;
    let mut answer = Map::new();
    answer.insert("sub".to_owned(), Value::from(sub.into_owned()));
    let scope = &grant.authorization.scope;
    let extra = &id_tokens.settings.scope_claims;
    answer.extend(claims.released(scope, extra));
    // OIDC Core §5.5: what the authorization request's `claims` parameter named for userinfo.
    if let Some(signed_in) = &grant.authorization.authentication {
        answer.extend(claims.named(signed_in.userinfo_claims(), extra));
    }
    Ok(Some(answer))
}
