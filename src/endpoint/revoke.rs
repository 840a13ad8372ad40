//! Token revocation (RFC 7009): a client revokes its own access or refresh token; the answer
//! is `200 {}` whether or not there was such a token (RFC 7009 §2.2).

use http::{Request, Response, StatusCode};

use super::Wire;
use super::{parse, render};
use crate::error::OAuthError;
use crate::events::Events;
use crate::grant::client_auth::Authenticator;
use crate::grant::lookup;
use crate::store::seam::TokenSeam;
use crate::token_format::AccessTokenFormat;

/// What revocation needs: client authentication at this endpoint, the tokens, the audit trail.
#[derive(Clone, Copy)]
pub(crate) struct Revocation<'a> {
    pub(crate) clients: Authenticator<'a>,
    pub(crate) tokens: TokenSeam<'a>,
    /// Set when access tokens are self-contained (their `jti` is read from them).
    pub(crate) format: Option<&'a dyn AccessTokenFormat>,
    pub(crate) events: &'a dyn Events,
}

pub(crate) async fn revoke<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    revocation: &Revocation<'_>,
    request: &Request<B>,
) -> Response<String> {
    match handle(wire, revocation, request).await {
        Ok(()) => render::json_text(StatusCode::OK, "{}".to_owned()),
        Err(error) => wire.error(&error),
    }
}

async fn handle<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    revocation: &Revocation<'_>,
    request: &Request<B>,
) -> Result<(), OAuthError> {
    let form = super::read_post_form(wire.settings.limits, request)?;
    let auth = parse::client_auth(request.headers(), &form, wire.settings.limits.max_param)?;
    let client = revocation
        .clients
        .of_request(request)
        .authenticate(&auth)
        .await?;
    let query = parse::token_query(&form)?;
    let Revocation {
        tokens,
        format,
        events,
        ..
    } = *revocation;
    lookup::revoke(tokens, format, events, &client, &query, wire.now).await
}
