//! Token introspection (RFC 7662): what an access or refresh token is, for an authenticated
//! client; anything it may not see is exactly `{"active":false}`.

use http::{Request, Response, StatusCode};

use super::Wire;
use super::{json, parse, render};
use crate::error::OAuthError;
use crate::grant::client_auth::Authenticator;
use crate::grant::lookup::{self, Found};
use crate::store::seam::TokenSeam;
use crate::token_format::AccessTokenFormat;

/// What introspection needs: client authentication at this endpoint and the tokens.
pub(crate) struct Introspection<'a> {
    pub(crate) clients: Authenticator<'a>,
    pub(crate) tokens: TokenSeam<'a>,
    /// Set when access tokens are self-contained (their `jti` is read from them).
    pub(crate) format: Option<&'a dyn AccessTokenFormat>,
}

pub(crate) async fn introspect<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    introspection: &Introspection<'_>,
    request: &Request<B>,
) -> Response<String> {
    match handle(wire, introspection, request).await {
        Ok(Some(found)) => render::json_text(
            StatusCode::OK,
            json::introspection(
                &found,
                &wire.settings.issuer,
                &wire.settings.resources.default,
            ),
        ),
        Ok(None) => render::json_text(StatusCode::OK, r#"{"active":false}"#.to_owned()),
        Err(error) => wire.error(&error),
    }
}

async fn handle<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    introspection: &Introspection<'_>,
    request: &Request<B>,
) -> Result<Option<Found>, OAuthError> {
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
    lookup::introspect(tokens, format, &client, resources, &query, wire.now).await
}
