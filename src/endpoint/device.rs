//! The device authorization endpoint on the wire (RFC 8628 §3.1, §3.2): `POST`, form-encoded,
//! the client authenticated as at the token endpoint (a public client by `client_id`); the
//! codes and the verification URI in JSON, or an RFC 6749 §5.2 error.

use http::{Request, Response, StatusCode};
use serde::Serialize;

use super::{Wire, form, parse, render};
use crate::budget::CallerAddress;
use crate::error::OAuthError;
use crate::grant::client_auth::Authenticator;
use crate::grant::device::Devices;
use crate::grant::device::Started;
use crate::settings::Settings;

#[derive(Serialize)]
struct Answer<'a> {
    device_code: &'a str,
    user_code: &'a str,
    verification_uri: &'a str,
    verification_uri_complete: String,
    expires_in: u64,
    interval: u64,
}

/// `devices` is `None` when the device flow is not served; `clients` authenticates at this
/// endpoint.
pub(crate) async fn device_authorization<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    devices: Option<Devices<'_>>,
    clients: Authenticator<'_>,
    request: &Request<B>,
) -> Response<String> {
    let started = match start(wire, devices, clients, request).await {
        Ok(started) => started,
        Err(error) => return wire.error(&error),
    };
    let verification_uri = verification_uri(wire.settings);
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

async fn start<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    devices: Option<Devices<'_>>,
    clients: Authenticator<'_>,
    request: &Request<B>,
) -> Result<Started, OAuthError> {
    let Some(devices) = devices else {
        return Err(OAuthError::invalid_request(
            "this server does not serve the device authorization grant",
        )
        .with_status(StatusCode::NOT_FOUND));
    };
    let form = super::read_post_form(wire.settings.limits, request)?;
    let auth = parse::client_auth(request.headers(), &form, wire.settings.limits.max_param)?;
    let client = clients.of_request(request).authenticate(&auth).await?;
    let resources = form.resources();
    devices
        .start(
            &client,
            form.get("scope"),
            &resources,
            CallerAddress::of(request),
            wire.now,
        )
        .await
}

/// The host's verification page as an absolute URL: the setting as it is, or under the
/// issuer when it is a path.
pub(crate) fn verification_uri(settings: &Settings) -> String {
    let configured = settings
        .device
        .as_ref()
        .map_or("/device", |d| d.verification_uri_value());
    if configured.starts_with('/') {
        settings.absolute_url(configured)
    } else {
        configured.to_owned()
    }
}
