//! The UserInfo endpoint (OpenID Connect Core §5.3): `GET` or `POST`, the access token in the
//! `Authorization` header (Bearer or DPoP) or, for `POST`, in the form body (RFC 6750 §2.2);
//! the user's claims as JSON, or an RFC 6750 challenge.

use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};

use super::bearer::{self, Presented, Required, Validation};
use super::{Wire, form, is_form_content_type, render};
use crate::error::OAuthError;
use crate::grant::id_token::IdTokens;
use crate::grant::userinfo;
use crate::scope::Scope;
use crate::store::UserStore;
use crate::store::seam::ClientSeam;

/// What userinfo needs: the token checks, the accounts, the clients (whose `sub` it answers)
/// and the claim settings.
pub(crate) struct UserInfo<'a> {
    pub(crate) validation: Validation<'a>,
    pub(crate) users: &'a dyn UserStore,
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) id_tokens: IdTokens<'a>,
}

/// Answers a userinfo request.
pub(crate) async fn userinfo<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    info: &UserInfo<'_>,
    request: &Request<B>,
) -> Response<String> {
    let method = request.method();
    if method != Method::GET && method != Method::POST {
        let error = OAuthError::invalid_request("userinfo takes GET or POST");
        let mut response = wire.error(&error.with_status(StatusCode::METHOD_NOT_ALLOWED));
        response
            .headers_mut()
            .insert(http::header::ALLOW, HeaderValue::from_static("GET, POST"));
        return response;
    }
    let from_body = match token_in_body(wire, request) {
        Ok(headers) => headers,
        Err(error) => return wire.error(&error),
    };
    let presented = Presented {
        target: Some((method, request.uri())),
        headers: from_body.as_ref().unwrap_or(request.headers()),
        certificate: request.extensions().get(),
    };
    let openid = Scope::from_tokens(["openid"]).unwrap_or_else(|_| Scope::empty());
    let grant = match bearer::check(
        wire,
        info.validation,
        presented,
        None,
        Required::scope(Some(&openid)),
    )
    .await
    {
        Ok(grant) => grant,
        Err(refusal) => return refusal.into_response(),
    };
    match userinfo::claims(info.id_tokens, info.users, info.clients, &grant).await {
        Ok(Some(released)) => match released.client.userinfo_signing_algorithm() {
            None => render::json(StatusCode::OK, &released.claims),
            Some(algorithm) => {
                match userinfo::signed(info.id_tokens, released, algorithm, wire.now).await {
                    Ok(jwt) => render::jwt(StatusCode::OK, jwt),
                    Err(error) => wire.error(&error),
                }
            }
        },
        Ok(None) => bearer::not_a_users_token(wire).into_response(),
        Err(error) => wire.error(&error),
    }
}

/// RFC 6750 §2.2: a `POST` whose form body carries `access_token` is read as if the token came
/// in the header; sending it both ways is `invalid_request` (§2: one method per request).
fn token_in_body<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    request: &Request<B>,
) -> Result<Option<HeaderMap>, OAuthError> {
    let body = request.body().as_ref();
    if request.method() != Method::POST
        || body.is_empty()
        || !is_form_content_type(request.headers().get(http::header::CONTENT_TYPE))
    {
        return Ok(None);
    }
    let form = form::parse(body, wire.settings.limits)
        .map_err(|e| OAuthError::invalid_request(e.description()))?;
    let Some(token) = form.get("access_token") else {
        return Ok(None);
    };
    if form.repeated() == Some("access_token") {
        return Err(OAuthError::invalid_request("access_token is repeated"));
    }
    if request.headers().contains_key(AUTHORIZATION) {
        return Err(OAuthError::invalid_request(
            "the access token was sent both in the header and in the body (RFC 6750 section 2)",
        ));
    }
    let value = HeaderValue::try_from(format!("Bearer {token}"))
        .map_err(|_| OAuthError::invalid_request("access_token is malformed"))?;
    let mut headers = request.headers().clone();
    headers.insert(AUTHORIZATION, value);
    Ok(Some(headers))
}
