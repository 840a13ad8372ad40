//! `Authorization: DPoP` at a protected resource (RFC 9449 §7.1): a token bound to a key, and
//! a fresh proof of that key for this request whose `ath` is the token's hash.

use super::{BearerRefusal, Presented, Scheme, refused};
use crate::dpop::Checker;
use crate::dpop::{ProofContext, ProofError, Refused, proof_header};
use crate::endpoint::Wire;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::bearer::Refusal;
use crate::secret::AccessToken;
use crate::store::AccessGrant;

/// `grant` (found for `token`) if it is bound to the key of the request's proof.
pub(super) async fn check(
    wire: &Wire<'_>,
    checker: Option<&Checker>,
    request: Presented<'_>,
    token: &AccessToken,
    grant: AccessGrant,
) -> Result<AccessGrant, BearerRefusal> {
    let refuse = |refusal| refused(wire, refusal, Scheme::Dpop);
    let Some(checker) = checker else {
        return Err(refuse(Refusal::NoCredentials));
    };
    let Some(bound) = grant.jkt else {
        return Err(refuse(Refusal::Error(OAuthError::new(
            ErrorCode::InvalidToken,
            "the access token is not bound to a DPoP key: present it as a bearer token",
        ))));
    };
    let proof = match proof_header(request.headers) {
        Ok(Some(proof)) => proof,
        Ok(None) => return Err(refuse(invalid_proof(ProofError::Missing))),
        Err(error) => return Err(refuse(invalid_proof(error))),
    };
    let Some((method, uri)) = request.target else {
        // The host passed headers alone: no method or URI to check `htm` and `htu` against.
        return Err(refuse(Refusal::Error(
            OAuthError::new(
                ErrorCode::InvalidDpopProof,
                "this resource cannot check DPoP proofs",
            )
            .with_status(http::StatusCode::UNAUTHORIZED),
        )));
    };
    let now = wire.now;
    let uri = absolute(&checker.origin, uri);
    let context = ProofContext {
        method: method.as_str(),
        uri: &uri,
        access_token: Some(token.expose_secret()),
        now,
        window: checker.settings.window(),
    };
    let verified = checker
        .check(proof, context)
        .await
        .map_err(|r| refuse(refusal(r)))?;
    if verified.jkt != bound {
        return Err(refuse(invalid_proof(ProofError::WrongKey)));
    }
    checker
        .spend(&verified, now)
        .await
        .map_err(|r| refuse(refusal(r)))?;
    Ok(grant)
}

/// The request's URI as an absolute URL: as it is when the host passed one in absolute form,
/// else its path read against the issuer's `origin`.
fn absolute(origin: &str, uri: &http::Uri) -> String {
    if uri.scheme().is_some() && uri.authority().is_some() {
        return uri.to_string();
    }
    format!("{origin}{}", uri.path())
}

fn invalid_proof(error: ProofError) -> Refusal {
    Refusal::Error(
        OAuthError::new(ErrorCode::InvalidDpopProof, error.to_string())
            .with_status(http::StatusCode::UNAUTHORIZED),
    )
}

fn refusal(refused: Refused) -> Refusal {
    match refused {
        Refused::Proof(error) => invalid_proof(error),
        Refused::Nonce(nonce) => Refusal::DpopNonce(nonce),
        Refused::Store(error) => Refusal::Error(error.into()),
    }
}
