//! Token introspection (RFC 7662): what an access or refresh token is, for an authenticated
//! client; anything it may not see is exactly `{"active":false}`. A caller that asks with
//! `Accept: application/token-introspection+jwt` gets the same answer signed (RFC 9701).

use std::sync::Arc;

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};

use super::Wire;
use super::{json, parse, render};
use crate::client::Client;
use crate::error::OAuthError;
use crate::grant::client_auth::Authenticator;
use crate::grant::lookup::{self, Found};
use crate::oidc::IdTokenSigner;
use crate::store::seam::TokenSeam;
use crate::token_format::AccessTokenFormat;

/// The media type of a signed introspection answer (RFC 9701 §4, §12.3).
const SIGNED_ANSWER: &str = "application/token-introspection+jwt";

/// What introspection needs: client authentication at this endpoint and the tokens.
pub(crate) struct Introspection<'a> {
    pub(crate) clients: Authenticator<'a>,
    pub(crate) tokens: TokenSeam<'a>,
    /// Set when access tokens are self-contained (their `jti` is read from them).
    pub(crate) format: Option<&'a dyn AccessTokenFormat>,
    /// The server's signing keys, when it has them: answers are then signed for a caller
    /// that asks (RFC 9701).
    pub(crate) signer: Option<&'a dyn IdTokenSigner>,
}

pub(crate) async fn introspect<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    introspection: &Introspection<'_>,
    request: &Request<B>,
) -> Response<String> {
    let (caller, found) = match handle(wire, introspection, request).await {
        Ok(answered) => answered,
        Err(error) => return wire.error(&error),
    };
    let answer = match found {
        Some(found) => json::introspection(
            &found,
            &wire.settings.issuer,
            &wire.settings.resources.default,
        ),
        None => r#"{"active":false}"#.to_owned(),
    };
    match introspection.signer {
        Some(signer) if asks_for_jwt(request.headers()) => {
            signed(wire, signer, &caller, answer).await
        }
        _ => render::json_text(StatusCode::OK, answer),
    }
}

/// The answer as a JWT (RFC 9701 §5), with its own media type.
async fn signed(
    wire: &Wire<'_>,
    signer: &dyn IdTokenSigner,
    caller: &Client,
    answer: String,
) -> Response<String> {
    // The answer was written by grantor a moment ago: it reads back.
    let answer = serde_json::from_str(&answer).unwrap_or_default();
    let issuer = wire.settings.issuer.as_str();
    match lookup::signed_answer(signer, issuer, caller, answer, wire.now).await {
        Ok(jwt) => {
            let mut response = render::json_text(StatusCode::OK, jwt);
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(SIGNED_ANSWER));
            response
        }
        Err(error) => wire.error(&error),
    }
}

/// Whether `Accept` names the signed answer's media type (RFC 9701 §4), with any parameters
/// and a weight above zero. Any other `Accept`, or none, gets the JSON answer.
fn asks_for_jwt(headers: &HeaderMap) -> bool {
    let mut ranges = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','));
    ranges.any(|range| {
        let mut parts = range.split(';').map(str::trim);
        let media_type = parts.next().unwrap_or_default();
        let refused = parts.any(|parameter| {
            parameter
                .strip_prefix("q=")
                .and_then(|weight| weight.parse::<f32>().ok())
                .is_some_and(|weight| weight <= 0.0)
        });
        media_type.eq_ignore_ascii_case(SIGNED_ANSWER) && !refused
    })
}

async fn handle<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    introspection: &Introspection<'_>,
    request: &Request<B>,
) -> Result<(Arc<Client>, Option<Found>), OAuthError> {
    let form = super::read_post_form(wire.settings.limits, request)?;
    let auth = parse::client_auth(request.headers(), &form, wire.settings.limits.max_param)?;
    let client = introspection
        .clients
        .of_request(request)
        .authenticate(&auth)
        .await?;
    let query = parse::token_query(&form)?;
    let resources = &wire.settings.resources;
    let Introspection { tokens, format, .. } = *introspection;
    let found = lookup::introspect(tokens, format, &client, resources, &query, wire.now).await?;
    Ok((client, found))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn only_an_accept_naming_the_signed_type_with_weight_asks_for_it() {
        for asks in [
            "application/token-introspection+jwt",
            "Application/Token-Introspection+JWT",
            "application/json, application/token-introspection+jwt;q=0.5",
            "application/token-introspection+jwt; charset=utf-8",
        ] {
            assert!(asks_for_jwt(&accept(asks)), "{asks}");
        }
        for plain in [
            "application/json",
            "*/*",
            "application/jwt",
            "application/token-introspection+jwt;q=0",
            "application/token-introspection+jwtx",
        ] {
            assert!(!asks_for_jwt(&accept(plain)), "{plain}");
        }
        assert!(!asks_for_jwt(&HeaderMap::new()));
    }
}
