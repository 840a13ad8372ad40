//! Bearer token validation for resource servers (RFC 6750 §2.1, §3).

use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use serde::Serialize;

use crate::endpoint::render;
use crate::error::{ErrorCode, OAuthError};
use crate::scope::Scope;
use crate::secret::AccessToken;
use crate::server::Inner;
use crate::store::AccessGrant;

/// Why a request was refused; rendered into the challenge.
enum Refusal {
    /// No credentials, or another scheme: a bare challenge, no error code (RFC 6750 §3.1).
    NoCredentials,
    /// `invalid_request`, `invalid_token` or a store failure.
    Error(OAuthError),
    /// The token lacks `scope`.
    InsufficientScope(Scope),
}

/// Validates the request's `Authorization: Bearer` token and, if asked, that it carries every
/// token of `required`.
pub(crate) async fn check(
    inner: &Inner,
    headers: &HeaderMap,
    required: Option<&Scope>,
) -> Result<AccessGrant, Response<String>> {
    match validate(inner, headers, required).await {
        Ok(grant) => Ok(grant),
        Err(refusal) => Err(refuse(inner, refusal)),
    }
}

async fn validate(
    inner: &Inner,
    headers: &HeaderMap,
    required: Option<&Scope>,
) -> Result<AccessGrant, Refusal> {
    let token = read_token(headers)?;
    let now = inner.clock.now();
    let grant = inner
        .tokens
        .find_access_token(&token, now)
        .await
        .map_err(|e| Refusal::Error(e.into()))?
        .ok_or_else(|| {
            Refusal::Error(OAuthError::new(
                ErrorCode::InvalidToken,
                "the access token is invalid, expired or revoked",
            ))
        })?;
    if let Some(required) = required {
        if !required.is_subset_of(&grant.authorization.scope) {
            return Err(Refusal::InsufficientScope(required.clone()));
        }
    }
    Ok(grant)
}

/// The token of `Authorization: Bearer <b64token>`; the scheme is case-insensitive.
fn read_token(headers: &HeaderMap) -> Result<AccessToken, Refusal> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Refusal::NoCredentials);
    };
    let malformed = |why: &'static str| Refusal::Error(OAuthError::invalid_request(why));
    if values.next().is_some() {
        return Err(malformed("more than one Authorization header was sent"));
    }
    let value = value
        .to_str()
        .map_err(|_| malformed("the Authorization header is not ASCII"))?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Refusal::NoCredentials);
    }
    let token = token.trim_matches(' ');
    if !is_b64token(token) {
        return Err(malformed(
            "the Authorization header is not a bearer token (RFC 6750 §2.1)",
        ));
    }
    Ok(AccessToken::new(token))
}

/// RFC 6750 §2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'static str,
    error_description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'a str>,
}

/// The 400/401/403 with its `WWW-Authenticate: Bearer` challenge (RFC 6750 §3).
fn refuse(inner: &Inner, refusal: Refusal) -> Response<String> {
    let realm = &inner.config.realm;
    let (error, scope) = match refusal {
        Refusal::NoCredentials => {
            let mut response = Response::new(String::new());
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            insert_challenge(&mut response, format!("Bearer realm=\"{realm}\""));
            return response;
        }
        Refusal::Error(error) => (error, None),
        Refusal::InsufficientScope(scope) => (
            OAuthError::new(
                ErrorCode::InsufficientScope,
                "the access token lacks the scope this resource requires",
            ),
            Some(scope),
        ),
    };
    render::log(&error);
    let scope = scope.as_ref().map(Scope::as_str);
    let body = ErrorBody {
        error: error.code().as_str(),
        error_description: error.description(),
        scope,
    };
    let mut response = render::json(error.status(), &body);
    // Descriptions and scopes hold no '"' or '\' (RFC 6749 §5.2, §3.3), so they quote as is.
    let mut challenge = format!(
        "Bearer realm=\"{realm}\", error=\"{}\", error_description=\"{}\"",
        error.code(),
        error.description()
    );
    if let Some(scope) = scope {
        challenge.push_str(&format!(", scope=\"{scope}\""));
    }
    if matches!(
        error.code(),
        ErrorCode::ServerError | ErrorCode::TemporarilyUnavailable
    ) {
        // A store failure is not the token's fault: no challenge to answer.
        return response;
    }
    insert_challenge(&mut response, challenge);
    response
}

fn insert_challenge(response: &mut Response<String>, challenge: String) {
    // Every part is printable ASCII (checked realm, RFC-restricted description and scope).
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b64token_syntax() {
        assert!(is_b64token("abc-._~+/=="));
        assert!(!is_b64token(""));
        assert!(!is_b64token("=="));
        assert!(!is_b64token("a b"));
        assert!(!is_b64token("a=b"));
        assert!(!is_b64token("a\"b"));
    }
}
