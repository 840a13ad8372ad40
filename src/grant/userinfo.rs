//! UserInfo (OpenID Connect Core §5.3): which of the user's claims an access token releases.

use serde_json::{Map, Value};

use std::sync::Arc;

use super::id_token::IdTokens;
use crate::client::Client;
use crate::error::OAuthError;
use crate::store::seam::ClientSeam;
use crate::store::{AccessGrant, UserStore};

/// What userinfo answers: the claims, and the client that asked, whose registration says how.
pub(crate) struct Released {
    pub(crate) client: Arc<Client>,
    pub(crate) claims: Map<String, Value>,
}

/// The claims `grant`'s scope releases of its user, `sub` first (§5.3.2) as the token's client
/// knows the user (§8); `None` when the token stands for no user (a client's own), or its user
/// or its client is gone.
pub(crate) async fn claims(
    id_tokens: IdTokens<'_>,
    users: &dyn UserStore,
    clients: ClientSeam<'_>,
    grant: &AccessGrant,
) -> Result<Option<Released>, OAuthError> {
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
    Ok(Some(Released {
        client,
        claims: answer,
    }))
}

/// A signed userinfo answer (§5.3.2): the claims with `iss` and `aud` (the client), and `iat`
/// and `exp` (an ID token's lifetime) for relying parties that check them, signed with
/// `algorithm` by the server's ID token keys.
pub(crate) async fn signed(
    id_tokens: IdTokens<'_>,
    released: Released,
    algorithm: crate::signing::SigningAlgorithm,
    now: crate::clock::UnixTime,
) -> Result<String, OAuthError> {
    let mut claims = released.claims;
    claims.insert("iss".to_owned(), Value::from(id_tokens.issuer_id));
    claims.insert("aud".to_owned(), Value::from(released.client.id().as_str()));
    claims.insert("iat".to_owned(), Value::from(now.as_secs()));
    let exp = now.plus(id_tokens.settings.id_token_lifetime);
    claims.insert("exp".to_owned(), Value::from(exp.as_secs()));
    let body = Value::Object(claims);
    Ok(id_tokens
        .signer
        .sign(&body, crate::oidc::ID_TOKEN_TYP, algorithm, now)
        .await?)
}
