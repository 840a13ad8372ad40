//! The grants (RFC 6749 §4, §6), one file each, and the steps they share: scope resolution,
//! issuing tokens, the token response.

pub(crate) mod authorization_code;
pub(crate) mod client_auth;
pub(crate) mod client_credentials;
pub(crate) mod implicit;
pub(crate) mod password;
pub(crate) mod refresh;

use http::HeaderValue;

use crate::client::Client;
use crate::clock::UnixTime;
use crate::endpoint::render::JsonObject;
use crate::error::OAuthError;
use crate::scope::Scope;
use crate::secret::RefreshToken;
use crate::server::Inner;
use crate::mint;
use crate::store::{Authorization, Family, FamilyId, Jti, NewRefreshToken, NewTokens};

/// `token_type` as the spec writes it.
pub(crate) const TOKEN_TYPE: &str = "bearer";

/// Whether a `Content-Type` is `application/x-www-form-urlencoded`, parameters (such as
/// `charset`) allowed.
pub(crate) fn is_form_content_type(value: Option<&HeaderValue>) -> bool {
    const FORM: &[u8] = b"application/x-www-form-urlencoded";
    let Some(value) = value else {
        return false;
    };
    // The value nearly every client sends, checked without splitting.
    if value.as_bytes().eq_ignore_ascii_case(FORM) {
        return true;
    }
    let Ok(value) = value.to_str() else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

/// The scope a request gets (RFC 6749 §3.3): the requested one if the client may have all of
/// it, the client's default when none is requested.
pub(crate) fn resolve_scope(requested: Option<&str>, client: &Client) -> Result<Scope, OAuthError> {
    let Some(requested) = requested else {
        return Ok(client.default_scope().clone());
    };
    // Most requests name the client's default or full scope as registered: share it.
    for registered in [client.default_scope(), client.scopes()] {
        if requested == registered.as_str() {
            return Ok(registered.clone());
        }
    }
    let scope = Scope::parse(requested)
        .map_err(|_| OAuthError::invalid_scope("the scope is malformed (RFC 6749 §3.3)"))?;
    if !scope.is_subset_of(client.scopes()) {
        return Err(OAuthError::invalid_scope(
            "the requested scope exceeds what the client may be granted",
        ));
    }
    Ok(scope)
}

/// The token endpoint's success body (RFC 6749 §5.1, with the spec's `jti`).
#[derive(Debug)]
pub(crate) struct TokenResponse {
    pub(crate) access_token: String,
    pub(crate) token_type: &'static str,
    pub(crate) expires_in: u64,
    pub(crate) jti: Jti,
    pub(crate) scope: Scope,
    pub(crate) refresh_token: Option<String>,
}

impl TokenResponse {
    /// The JSON body, members in the order RFC 6749 §5.1 lists them.
    pub(crate) fn to_json(&self) -> String {
        let refresh_len = self.refresh_token.as_ref().map_or(0, |t| t.len() + 20);
        let capacity =
            96 + self.access_token.len() + self.jti.as_str().len() + self.scope.as_str().len();
        let mut json = JsonObject::with_capacity(capacity + refresh_len);
        json.string("access_token", &self.access_token)
            .string("token_type", self.token_type)
            .number("expires_in", self.expires_in)
            .string("jti", self.jti.as_str())
            .string("scope", self.scope.as_str());
        if let Some(refresh_token) = &self.refresh_token {
            json.string("refresh_token", refresh_token);
        }
        json.finish()
    }
}

/// Mints an access token for `authorization`, with a refresh token when `with_refresh`, and
/// hands the store their digests: in a new family, or in `family` (a redeemed code's).
pub(crate) async fn issue(
    inner: &Inner,
    authorization: Authorization,
    family: Option<FamilyId>,
    with_refresh: bool,
    now: UnixTime,
) -> Result<TokenResponse, OAuthError> {
    let family = match family {
        Some(id) => Family::Existing(id),
        None => Family::New(mint::family_id()?),
    };
    let (tokens, record) = mint_tokens(inner, family, authorization, with_refresh, now)?;
    inner.tokens.insert_tokens(record).await?;
    Ok(tokens)
}

/// Mints an access token (and a refresh token when asked) for `authorization` in `family`:
/// the response for the client and the record for the store.
pub(crate) fn mint_tokens(
    inner: &Inner,
    family: Family,
    authorization: Authorization,
    with_refresh: bool,
    now: UnixTime,
) -> Result<(TokenResponse, NewTokens), OAuthError> {
    let config = &inner.config;
    let (access_token, refresh_token) = mint::tokens(with_refresh)?;
    let access_expires_at = now.plus(config.access_token_lifetime);
    let jti = mint::jti(&access_token.digest());
    let scope = authorization.scope.clone();
    let mut record = NewTokens::new(
        family,
        authorization,
        now,
        access_token.digest(),
        jti.clone(),
        access_expires_at,
    );
    if let Some(refresh) = &refresh_token {
        let expires_at = now.plus(config.refresh_token_lifetime);
        record = record.with_refresh_token(NewRefreshToken::new(refresh.digest(), expires_at));
    }
    let response = TokenResponse {
        access_token: access_token.into_secret(),
        token_type: TOKEN_TYPE,
        expires_in: now.seconds_until(access_expires_at),
        jti,
        scope,
        refresh_token: refresh_token.map(RefreshToken::into_secret),
    };
    Ok((response, record))
}

/// Revokes `family` after a replayed code or a reused refresh token (RFC 6749 §4.1.2, RFC 9700
/// §4.14.2): the one place grantor does, so the store never decides it.
pub(crate) async fn revoke_after_replay(inner: &Inner, family: FamilyId) -> Result<(), OAuthError> {
    inner.tokens.revoke_family(family).await?;
    Ok(())
}
