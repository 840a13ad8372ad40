//! A pending authorization as a sign-in session keeps it: a small JSON document the session
//! store holds opaquely, turned back into a [`PendingAuthorization`] with the client as it is
//! registered now.

use serde::{Deserialize, Serialize};

use crate::audience::Audience;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError, StoreError};
use crate::grant::authorize::DeviceRef;
use crate::grant::authorize::{Authenticated, PendingAuthorization, ResponseMode, ResponseType};
use crate::oidc::{AcrRequest, OpenIdRequest};
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::store::JwkThumbprint;
use crate::store::seam::ClientSeam;

#[derive(Serialize, Deserialize)]
struct Stored {
    client_id: String,
    /// `code`, `token`, `id_token`, `id_token token` or `device`.
    response_type: String,
    redirect_uri: String,
    scope: String,
    /// Absent from sessions kept before audiences were: the default audience then.
    #[serde(default)]
    audience: String,
    state: Option<String>,
    /// `fragment`, `form_post` or a JWT mode (`query.jwt`…) when the request asked for a
    /// mode other than its response type's own; absent otherwise (and from sessions kept before modes were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response_mode: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    /// The DPoP key the code will be bound to (RFC 9449 §10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dpop_jkt: Option<String>,
    created_at: u64,
    /// The device flow answered, for a device authorization (RFC 8628).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    device: Option<DeviceRef>,
    /// What an OpenID Connect request asks beyond OAuth's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    openid: Option<OpenIdRequest>,
    /// How the user signed in, once they have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authenticated: Option<Authenticated>,
    /// What the request asks of the sign-in's `acr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    acr: Option<AcrRequest>,
    /// The reference of the pushed request it came from, until the sign-in is answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pushed: Option<String>,
}

/// `pending` as the session store keeps it.
pub(crate) fn to_session(pending: &PendingAuthorization) -> String {
    let challenge = pending.code_challenge.as_ref();
    let stored = Stored {
        client_id: pending.client.id().as_str().to_owned(),
        response_type: pending.response_type.as_str().to_owned(),
        redirect_uri: pending.redirect_uri.clone(),
        scope: pending.scope.as_str().to_owned(),
        audience: pending.audience.as_str().to_owned(),
        state: pending.state.clone(),
        response_mode: (pending.response_mode != ResponseMode::default_for(pending.response_type))
            .then(|| pending.response_mode.as_stored().to_owned()),
        code_challenge: challenge.map(|c| c.as_str().to_owned()),
        code_challenge_method: challenge.map(|c| c.method().as_str().to_owned()),
        dpop_jkt: pending.dpop_jkt.map(|jkt| jkt.to_string()),
        created_at: pending.created_at.as_secs(),
        device: pending.device.clone(),
        openid: pending.openid.as_deref().cloned(),
        authenticated: pending.authenticated.as_deref().cloned(),
        acr: pending.acr.as_deref().cloned(),
        pushed: pending.pushed.as_deref().map(str::to_owned),
    };
    // A struct of strings and integers always serializes.
    serde_json::to_string(&stored).unwrap_or_default()
}

/// The client id of a pending authorization as [`to_session`] wrote it, without looking the
/// client up.
pub(crate) fn client_id(text: &str) -> Result<String, serde_json::Error> {
    #[derive(Deserialize)]
    struct ClientOnly {
        client_id: String,
    }
    Ok(serde_json::from_str::<ClientOnly>(text)?.client_id)
}

/// When the pending authorization [`to_session`] wrote was made (Unix seconds), without
/// looking the client up.
pub(crate) fn created_at(text: &str) -> Result<u64, serde_json::Error> {
    #[derive(Deserialize)]
    struct CreatedOnly {
        created_at: u64,
    }
    Ok(serde_json::from_str::<CreatedOnly>(text)?.created_at)
}

/// The pending authorization a session holds, with its client as registered now; an error page
/// if the client is gone.
pub(crate) async fn from_session(
    text: &str,
    clients: ClientSeam<'_>,
) -> Result<PendingAuthorization, OAuthError> {
    let corrupt = || OAuthError::from(StoreError::failed("a stored sign-in session is malformed"));
    let stored: Stored = serde_json::from_str(text).map_err(|_| corrupt())?;
    ClientId::new(&stored.client_id).map_err(|_| corrupt())?;
    let client = clients
        .find_client(&stored.client_id)
        .await?
        .ok_or_else(|| {
            OAuthError::new(
                ErrorCode::InvalidRequest,
                "the client is no longer registered",
            )
        })?;
    let response_type = match stored.response_type.as_str() {
        "device" if stored.device.is_some() => ResponseType::Device,
        other => ResponseType::read(other).ok_or_else(corrupt)?,
    };
    let code_challenge = match (stored.code_challenge, stored.code_challenge_method) {
        (None, None) => None,
        (Some(challenge), Some(method)) => {
            Some(CodeChallenge::new(&challenge, Some(&method), true).map_err(|_| corrupt())?)
        }
        _ => return Err(corrupt()),
    };
    Ok(PendingAuthorization {
        client,
        response_type,
        redirect_uri: stored.redirect_uri,
        scope: Scope::parse(&stored.scope).map_err(|_| corrupt())?,
        audience: Audience::from_stored(&stored.audience).ok_or_else(corrupt)?,
        state: stored.state,
        // A JWT mode was offered when the request was validated.
        response_mode: ResponseMode::read(stored.response_mode.as_deref(), response_type, true)
            .ok_or_else(corrupt)?,
        code_challenge,
        dpop_jkt: stored
            .dpop_jkt
            .map(|text| JwkThumbprint::parse(&text).ok_or_else(corrupt))
            .transpose()?,
        created_at: UnixTime::from_secs(stored.created_at),
        device: stored.device,
        openid: stored.openid.map(Box::new),
        authenticated: stored.authenticated.map(Box::new),
        acr: stored.acr.map(Box::new),
        pushed: stored.pushed.map(String::into_boxed_str),
    })
}
