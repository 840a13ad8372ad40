//! The token endpoint (RFC 6749 §3.2): `POST`, form-encoded, client authenticated, then one
//! grant by `grant_type`.

use http::{Request, Response, StatusCode};

use super::render;
use crate::client::GrantType;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::{
    TokenResponse, authorization_code, client_auth, client_credentials, password, refresh,
};
use crate::server::Inner;

pub(crate) async fn token<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Response<String> {
    match handle(inner, request).await {
        Ok(tokens) => render::json_text(StatusCode::OK, tokens.to_json()),
        Err(error) => render::error(&error, &inner.config.basic_challenge),
    }
}

async fn handle<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Result<TokenResponse, OAuthError> {
    let form = super::read_post_form(inner, request)?;
    let client = client_auth::authenticate(inner, request.headers(), &form).await?;
    let (grant, exchange) = match form.get("grant_type") {
        Some("authorization_code") => (GrantType::AuthorizationCode, Exchange::Code),
        Some("password") => (GrantType::Password, Exchange::Password),
        Some("refresh_token") => (GrantType::RefreshToken, Exchange::Refresh),
        Some("client_credentials") => (GrantType::ClientCredentials, Exchange::ClientCredentials),
        Some(_) => {
            return Err(OAuthError::new(
                ErrorCode::UnsupportedGrantType,
                "grant_type must be authorization_code, password, refresh_token or client_credentials",
            ));
        }
        None => return Err(OAuthError::invalid_request("grant_type is missing")),
    };
    if !client.allows(grant) {
        return Err(OAuthError::unauthorized_client(
            "the client is not allowed this grant_type",
        ));
    }
    let now = inner.clock.now();
    match exchange {
        Exchange::Code => authorization_code::exchange(inner, &client, &form, now).await,
        Exchange::Password => password::exchange(inner, &client, &form, now).await,
        Exchange::Refresh => refresh::exchange(inner, &client, &form, now).await,
        Exchange::ClientCredentials => {
            client_credentials::exchange(inner, &client, &form, now).await
        }
    }
}

enum Exchange {
    Code,
    Password,
    Refresh,
    ClientCredentials,
}
