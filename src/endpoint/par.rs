//! The pushed authorization request endpoint on the wire (RFC 9126 §2): `POST`, form-encoded,
//! the client authenticated as at the token endpoint; `201` with the `request_uri` (§2.2) or
//! an error in JSON (§2.3), never a redirect.

use http::{Request, Response, StatusCode};

use super::Wire;
use super::{parse, render};
use crate::budget::CallerAddress;
use crate::error::OAuthError;
use crate::grant::client_auth::Authenticator;
use crate::grant::pushed::Pushed;
use crate::grant::pushed::Pushes;
use crate::settings::Profile;

/// `pushes` is `None` when pushed requests are not taken; `clients` authenticates at this
/// endpoint.
pub(crate) async fn par<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    pushes: Option<Pushes<'_>>,
    clients: Authenticator<'_>,
    request: &Request<B>,
) -> Response<String> {
    let proofs = pushes.and_then(|pushes| pushes.proofs);
    let response = match handle(wire, pushes, clients, request).await {
        Ok(pushed) => {
            let body = serde_json::json!({
                "request_uri": pushed.request_uri,
                "expires_in": pushed.expires_in,
            });
            render::json(StatusCode::CREATED, &body)
        }
        Err(error) => wire.error(&error),
    };
    match proofs {
        Some(proofs) if proofs.offers_nonces() => {
            super::token::offer_nonce(wire, proofs, response).await
        }
        _ => response,
    }
}

async fn handle<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    pushes: Option<Pushes<'_>>,
    clients: Authenticator<'_>,
    request: &Request<B>,
) -> Result<Pushed, OAuthError> {
    let Some(pushes) = pushes else {
        return Err(OAuthError::invalid_request(
            "this server does not take pushed authorization requests",
        )
        .with_status(StatusCode::NOT_FOUND));
    };
    let form = super::read_post_form(wire.settings.limits, request)?;
    let auth = parse::client_auth(request.headers(), &form, wire.settings.limits.max_param)?;
    let client = clients.of_request(request).authenticate(&auth).await?;
    crate::grant::checks::fapi2_client(pushes.rules.profile, &client)?;
    let authorization = parse::authorization_request(&form);
    if pushes.rules.profile == Profile::Fapi2MessageSigning
        && authorization.openid.request.is_none()
    {
        return Err(OAuthError::invalid_request(
            "FAPI 2.0 Message Signing takes only signed request objects: send the request's \
             parameters in a request JWT (RFC 9101)",
        ));
    }
    let object_form;
    // RFC 9126 §3: a pushed request may carry a request object, verified as at the
    // authorization endpoint (every refusal answered here, never redirected).
    let authorization = match (authorization.openid.request, pushes.rules.objects) {
        (Some(_), Some(_)) if form.repeats("request") => {
            return Err(OAuthError::invalid_request("request is repeated"));
        }
        (Some(jws), Some(objects)) => {
            let verified = objects.verifier.verify(&client, jws, wire.now).await?;
            let limit = wire.settings.limits.max_param;
            object_form = parse::request_object(&verified.claims, limit)?;
            let object = parse::authorization_request(&object_form);
            objects
                .accept(&client, &authorization, object, &verified, wire.now)
                .await?
        }
        _ => authorization,
    };
    // FAPI 2.0 Security Profile §5.3.2.2: the redirect URI is named in every request, even a
    // client's only one.
    if pushes.rules.profile.is_fapi2() && authorization.redirect_uri.is_none() {
        return Err(OAuthError::invalid_request(
            "FAPI 2.0 needs redirect_uri in every authorization request",
        ));
    }
    let presented = match pushes.proofs {
        Some(proofs) => {
            proofs
                .at_pushed_endpoint(request.headers(), wire.now)
                .await?
        }
        None => None,
    };
    let possession = presented.as_deref();
    pushes
        .push(
            &client,
            &authorization,
            possession,
            CallerAddress::of(request),
            wire.now,
        )
        .await
}
