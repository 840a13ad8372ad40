//! Bearer tokens on the wire (RFC 6750 §2.1, §3): reading `Authorization: Bearer`, and the
//! 400/401/403 refusals with their `WWW-Authenticate` challenges.

use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use serde::Serialize;

use super::render;
use crate::config::Config;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::bearer::{self, Demand, Refusal};
use crate::scope::Scope;
use crate::secret::AccessToken;
use crate::server::Inner;
use crate::store::AccessGrant;

/// Validates the request's `Authorization: Bearer` token: meant for `audience` (the server's
/// default audience when `None`) and, if asked, carrying every token of `required`. The grant,
/// or the ready refusal.
pub(crate) async fn check(
    inner: &Inner,
    headers: &HeaderMap,
    audience: Option<&str>,
    required: Option<&Scope>,
) -> Result<AccessGrant, Response<String>> {
    let token = match read_token(headers) {
        Ok(token) => token,
        Err(refusal) => return Err(refuse(&inner.config, refusal)),
    };
    let default = &inner.config.resources.default;
    let demand = Demand {
        audience: audience.unwrap_or(default.as_str()),
        default,
        required,
    };
    #[cfg(feature = "jwt")]
    if let Some(jwt) = &inner.jwt
        && crate::jwt::looks_like_jwt(token.expose_secret())
    {
        let check = bearer::JwtCheck {
            jwt,
            issuer: &inner.config.issuer,
            store: &*inner.tokens,
            users: &*inner.users,
        };
        return bearer::check_jwt(check, &token, demand, inner.clock.now())
            .await
            .map_err(|refusal| refuse(&inner.config, refusal));
    }
    bearer::check(&*inner.tokens, &token, demand, inner.clock.now())
        .await
        .map_err(|refusal| refuse(&inner.config, refusal))
}

/// The token of `Authorization: Bearer <b64token>`; the scheme is case-insensitive.
pub(crate) fn read_token(headers: &HeaderMap) -> Result<AccessToken, Refusal> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Refusal::NoCredentials);
    };
    let malformed = |why: &'static str| Refusal::Error(OAuthError::invalid_request(why));
    if values.next().is_some() {
        return Err(malformed("more than one Authorization header was sent"));
    }
    // The well-formed header, `Bearer <b64token>`, read in one pass over its bytes; anything
    // else takes the careful path below, which says what is wrong.
    if let Some(token) = value
        .as_bytes()
        .get(7..)
        .filter(|_| value.as_bytes()[..7].eq_ignore_ascii_case(b"bearer "))
        && is_b64token(token)
        && let Ok(token) = std::str::from_utf8(token)
    {
        return Ok(AccessToken::hashed(token));
    }
    let value = value
        .to_str()
        .map_err(|_| malformed("the Authorization header is not ASCII"))?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Refusal::NoCredentials);
    }
    let token = token.trim_matches(' ');
    if !is_b64token(token.as_bytes()) {
        return Err(malformed(
            "the Authorization header is not a bearer token (RFC 6750 §2.1)",
        ));
    }
    Ok(AccessToken::hashed(token))
}

/// RFC 6750 §2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &[u8]) -> bool {
    let padding = token.iter().rev().take_while(|&&b| b == b'=').count();
    let body = &token[..token.len() - padding];
    !body.is_empty() && body.iter().all(|&b| B64TOKEN[usize::from(b)])
}

/// The characters of a b64token before its padding, as a table: one load per byte.
const B64TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'+' | b'/');
        b += 1;
    }
    table
};

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'static str,
    error_description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'a str>,
}

/// The two refusals answered most, built once with the configuration.
#[derive(Debug, Clone)]
pub(crate) struct Refusals {
    bare: HeaderValue,
    invalid_token: HeaderValue,
    invalid_token_body: String,
}

const INVALID_TOKEN: &str = "the access token is invalid, expired or revoked";

impl Refusals {
    /// `realm` is printable ASCII without '"' or '\\' (checked by the builder).
    pub(crate) fn new(realm: &str) -> Option<Self> {
        let body = ErrorBody {
            error: ErrorCode::InvalidToken.as_str(),
            error_description: INVALID_TOKEN,
            scope: None,
        };
        let invalid_token = challenge(realm, ErrorCode::InvalidToken, INVALID_TOKEN, None);
        Some(Self {
            bare: HeaderValue::from_str(&format!("Bearer realm=\"{realm}\"")).ok()?,
            invalid_token: HeaderValue::from_str(&invalid_token).ok()?,
            invalid_token_body: serde_json::to_string(&body).ok()?,
        })
    }
}

/// A challenge with an error. Descriptions and scopes hold no '"' or '\\' (RFC 6749 §5.2,
/// §3.3), so they quote as they are.
fn challenge(realm: &str, code: ErrorCode, description: &str, scope: Option<&str>) -> String {
    let mut challenge =
        format!("Bearer realm=\"{realm}\", error=\"{code}\", error_description=\"{description}\"");
    if let Some(scope) = scope {
        challenge.push_str(&format!(", scope=\"{scope}\""));
    }
    challenge
}

/// The 400/401/403 with its `WWW-Authenticate: Bearer` challenge (RFC 6750 §3).
fn refuse(config: &Config, refusal: Refusal) -> Response<String> {
    let refusals = &config.bearer_refusals;
    let (error, scope) = match refusal {
        Refusal::NoCredentials => {
            let mut response = Response::new(String::new());
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, refusals.bare.clone());
            return response;
        }
        Refusal::InvalidToken => {
            let body = refusals.invalid_token_body.clone();
            let mut response = render::json_text(StatusCode::UNAUTHORIZED, body);
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, refusals.invalid_token.clone());
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
    if matches!(
        error.code(),
        ErrorCode::ServerError | ErrorCode::TemporarilyUnavailable
    ) {
        // A store failure is not the token's fault: no challenge to answer.
        return response;
    }
    let realm = &config.realm;
    let text = challenge(realm, error.code(), error.description(), scope);
    insert_challenge(&mut response, text);
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
        assert!(is_b64token(b"abc-._~+/=="));
        assert!(is_b64token(b"AZaz09"));
        assert!(!is_b64token(b""));
        assert!(!is_b64token(b"=="));
        assert!(!is_b64token(b"a b"));
        assert!(!is_b64token(b"a=b"));
        assert!(!is_b64token(b"a\"b"));
        assert!(!is_b64token("\u{e9}".as_bytes()));
    }
}
