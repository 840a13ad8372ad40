//! The token endpoint (RFC 6749 §3.2): `POST`, form-encoded, client authenticated, then one
//! grant by `grant_type`; token JSON (RFC 6749 §5.1) or an RFC 6749 §5.2 error.

use http::{Request, Response, StatusCode};

use super::Wire;
use super::{json, parse, render};
use crate::error::OAuthError;
use crate::grant::issue::Issued;
use crate::grant::proof::{NONCE_HEADER, PROOF_HEADER, ProofOfPossession};
use crate::grant::token::{self, TokenGrants};

/// What the token endpoint needs beyond the wire: its grants and, with DPoP on, the proof
/// checker.
pub(crate) struct TokenEndpoint<'a> {
    pub(crate) grants: TokenGrants<'a>,
    /// Set when DPoP proofs are accepted.
    pub(crate) proofs: Option<&'a dyn ProofOfPossession>,
}

pub(crate) async fn token<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    endpoint: &TokenEndpoint<'_>,
    request: &Request<B>,
) -> Response<String> {
    let proofs = endpoint.proofs;
    let response = match handle(wire, endpoint, request).await {
        Ok(issued) => render::json_text(StatusCode::OK, json::token_response(&issued)),
        Err(error) => wire.error(&error),
    };
    match proofs {
        Some(proofs) if proofs.offers_nonces() => offer_nonce(wire, proofs, response).await,
        _ => response,
    }
}

/// Reads the request and hands it to the grant. Each step's result is bound at once (`?`), so
/// no parse result is kept twice in this future while the grant runs.
async fn handle<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    endpoint: &TokenEndpoint<'_>,
    request: &Request<B>,
) -> Result<Issued, OAuthError> {
    let form = super::read_post_form(wire.settings.limits, request)?;
    let auth = parse::client_auth(request.headers(), &form, wire.settings.limits.max_param)?;
    let token_request = parse::token_request(&form);
    let now = wire.now;
    let presented = match endpoint.proofs {
        Some(proofs) if request.headers().contains_key(PROOF_HEADER) => {
            proofs.at_token_endpoint(request.headers(), now).await?
        }
        _ => None,
    };
    let possession = presented.as_deref();
    let certificate = request.extensions().get();
    let sender = token::Sender {
        possession,
        certificate,
    };
    token::token(&endpoint.grants, sender, &auth, &token_request, now).await
}

/// With server nonces on, every answer carries the current one (RFC 9449 §8.2), so the client's
/// next proof can use it; a `use_dpop_nonce` error must.
pub(crate) async fn offer_nonce(
    wire: &Wire<'_>,
    proofs: &dyn ProofOfPossession,
    mut response: Response<String>,
) -> Response<String> {
    match proofs.current_nonce(wire.now).await {
        Ok(Some(nonce)) => {
            if let Ok(value) = http::HeaderValue::from_str(&nonce) {
                response.headers_mut().insert(NONCE_HEADER, value);
            }
        }
        Ok(None) => {}
        Err(error) => render::log(&OAuthError::from(error)),
    }
    response
}
