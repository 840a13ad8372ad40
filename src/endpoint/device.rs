//! The device authorization endpoint on the wire (RFC 8628 §3.1, §3.2): `POST`, form-encoded,
//! the client authenticated as at the token endpoint (a public client by `client_id`); the
//! codes and the verification URI in JSON, or an RFC 6749 §5.2 error.

use http::{Request, Response, StatusCode};
use serde::Serialize;

use super::{absolute_url, form, parse, render};
use crate::error::OAuthError;
use crate::grant::device::Started;
use crate::server::Inner;

#[derive(Serialize)]
struct Answer<'a> {
    device_code: &'a str,
    user_code: &'a str,
    verification_uri: &'a str,
    verification_uri_complete: String,
    expires_in: u64,
    interval: u64,
}

pub(crate) async fn device_authorization<B: AsRef<[u8]>>(
    inner: &Inner,
    request: &Request<B>,
) -> Response<String> {
    let started = match start(inner, request).await {
        Ok(started) => started,
        Err(error) => return render::error(&error, &inner.config.basic_challenge),
    };
    let verification_uri = verification_uri(inner);
    let mut complete = verification_uri.clone();
    complete.push_str(if complete.contains('?') { "&" } else { "?" });
    complete.push_str("user_code=");
    form::push_encoded(&mut complete, &started.user_code);
    let answer = Answer {
        device_code: started.device_code.expose_secret(),
        user_code: &started.user_code,
        verification_uri: &verification_uri,
        verification_uri_complete: complete,
        expires_in: started.expires_in,
        interval: started.interval,
    };
    render::json(StatusCode::OK, &answer)
}

async fn start<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Result<Started, OAuthError> {
    let Some(devices) = inner.devices() else {
        return Err(OAuthError::invalid_request(
            "this server does not serve the device authorization grant",
        )
        .with_status(StatusCode::NOT_FOUND));
    };
    let form = super::read_post_form(inner, request)?;
    let auth = parse::client_auth(request.headers(), &form, inner.config.limits.max_param)?;
    let client = inner
        .authenticator(&inner.config.endpoints.device_authorization)
        .authenticate(&auth)
        .await?;
    let resources = form.resources();
    devices
        .start(&client, form.get("scope"), &resources, inner.clock.now())
        .await
}

/// The host's verification page as an absolute URL: the setting as it is, or under the
/// issuer when it is a path.
pub(crate) fn verification_uri(inner: &Inner) -> String {
    let configured = inner
        .config
        .device
        .as_ref()
        .map_or("/device", |d| d.verification_uri_value());
    if configured.starts_with('/') {
        absolute_url(&inner.config, configured)
    } else {
        configured.to_owned()
    }
}
