//! Token introspection (RFC 7662): what an access or refresh token is, for an authenticated
//! client.

use super::render::{self, JsonObject};
use crate::error::OAuthError;
use crate::grant::TOKEN_TYPE;
use crate::lookup::{self, Found};
use crate::server::Inner;
use crate::store::Authorization;
use http::{Request, Response, StatusCode};

pub(crate) async fn introspect<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Response<String> {
    match handle(inner, request).await {
        Ok(Some(found)) => render::json_text(StatusCode::OK, describe(inner, &found)),
        Ok(None) => render::json_text(StatusCode::OK, r#"{"active":false}"#.to_owned()),
        Err(error) => render::error(&error, &inner.config.basic_challenge),
    }
}

/// The token if it is active and the caller may see it.
async fn handle<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Result<Option<Found>, OAuthError> {
    let query = lookup::read_query(inner, request).await?;
    let client = query.client;
    Ok(query.found.filter(|found| {
        // A rotated refresh token is no longer usable, so it is not active (RFC 7662 §2.2).
        let usable = !matches!(found, Found::Refresh(grant) if grant.rotated);
        // Public clients prove nothing about themselves, so they may only introspect their own
        // tokens (RFC 7662 §4: no token scanning); confidential clients, such as resource
        // servers, may introspect any.
        let visible = !client.is_public() || found.client_id() == client.id().as_str();
        usable && visible
    }))
}

/// An active token's description (RFC 7662 §2.2).
fn describe(inner: &Inner, found: &Found) -> String {
    let (authorization, token_type, iat, exp, jti) = match found {
        Found::Access(grant) => (
            &grant.authorization,
            TOKEN_TYPE,
            grant.issued_at,
            grant.expires_at,
            Some(grant.jti().as_str()),
        ),
        Found::Refresh(grant) => (
            &grant.authorization,
            "refresh_token",
            grant.issued_at,
            grant.expires_at,
            None,
        ),
    };
    let Authorization {
        client_id,
        user,
        scope,
        ..
    } = authorization;
    let mut json = JsonObject::with_capacity(256);
    json.boolean("active", true)
        .string("scope", scope.as_str())
        .string("client_id", client_id.as_str());
    if let Some(user) = user {
        json.string("username", user.username());
    }
    json.string("token_type", token_type)
        .number("exp", exp.as_secs())
        .number("iat", iat.as_secs())
        // Without a user the client is its own resource owner (client credentials).
        .string(
            "sub",
            user.as_ref()
                .map_or(client_id.as_str(), |u| u.id().as_str()),
        );
    if let Some(jti) = jti {
        json.string("jti", jti);
    }
    json.string("iss", &inner.config.issuer);
    json.finish()
}
