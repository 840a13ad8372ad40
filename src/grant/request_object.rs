//! Request objects (RFC 9101, OIDC Core §6.1): an authorization request's parameters in a JWS
//! the client signed, at the authorization and pushed authorization request endpoints, in
//! every profile. The signature and the object's own claims are checked by the
//! [`RequestObjectVerifier`] a feature wires in; here is what needs the stores: whose keys
//! sign it, that it agrees with what was sent beside it, and that its `jti` serves once.
//!
//! Only the object's parameters count (RFC 9101 §6.3): those beside it are ignored, except
//! `client_id`, which is required beside it (to know whose keys verify it) and must be the
//! object's own `client_id` if the object has one, and `response_type`, which, if sent beside
//! it (as OIDC Core §6.1 requires of OpenID Connect requests), must be the object's.
//!
//! **What it makes the server keep**: an object's `jti`, when it has one, goes to the
//! [`SingleUseStore`] until the object's `exp`, so a replay on any node sharing the store is
//! refused (FAPI 2.0 Message Signing bounds an object's lifetime instead; grantor does both).
//! It is spent only once the signature verified, so only a holder of a client's private key
//! can add entries, each for at most [`MAX_OBJECT_LIFETIME`] plus [`OBJECT_CLOCK_SKEW`]; each
//! client spends at most [`JTIS_PER_CLIENT`] per [`JTI_WINDOW`], and the self-registered
//! clients (apart from them, the document clients) together at most [`JTIS_PER_TIER`]
//! ([`budget`](crate::budget)). An object without `jti` makes the server keep nothing.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::budget::{Budget, Payer, Spending};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::request::AuthorizationRequest;
use crate::store::{AttemptCounter, SingleUseStore, namespace};

/// How far ahead an object's `exp` may be (FAPI 2.0 Message Signing §5.3.1: 60 minutes).
pub(crate) const MAX_OBJECT_LIFETIME: Duration = Duration::from_secs(3600);

/// How far the client's clock may be from the server's for `exp`, `nbf` and `iat`: the same
/// leeway as for client assertions.
pub(crate) const OBJECT_CLOCK_SKEW: Duration = Duration::from_secs(30);

/// The window [`JTIS_PER_CLIENT`] and [`JTIS_PER_TIER`] count in: as long as a spent `jti`
/// can be kept.
pub(crate) const JTI_WINDOW: Duration =
    Duration::from_secs(MAX_OBJECT_LIFETIME.as_secs() + 2 * OBJECT_CLOCK_SKEW.as_secs());

/// Request objects with a `jti` one client may spend per [`JTI_WINDOW`]: about three a
/// second on average.
pub(crate) const JTIS_PER_CLIENT: u32 = 10_000;

/// Request objects with a `jti` all self-registered clients together may spend per
/// [`JTI_WINDOW`], and apart from them all clients read from metadata documents.
pub(crate) const JTIS_PER_TIER: u32 = 20_000;

/// Verifies request objects: the seam feature `private-key-jwt` implements (its JWS
/// verification serves client assertions too) and the builder wires in.
#[async_trait]
pub(crate) trait RequestObjectVerifier: Send + Sync {
    /// Checks `jws` as a request object of `client` at `now`: signed by one of the client's
    /// keys with an algorithm it may use, `iss` the client, `aud` the issuer, `exp` within
    /// [`MAX_OBJECT_LIFETIME`]. Every refusal is `invalid_request_object`; a failure to
    /// resolve the client's keys is `server_error`.
    async fn verify(
        &self,
        client: &Client,
        jws: &str,
        now: UnixTime,
    ) -> Result<VerifiedObject, OAuthError>;
}

/// A request object whose signature and claims checked out.
pub(crate) struct VerifiedObject {
    /// Its claims: the request's parameters beside the JWT's own (`iss`, `aud`, `exp`, …).
    pub(crate) claims: Map<String, Value>,
    /// Its `jti`, if it has one: spent once.
    pub(crate) jti: Option<String>,
    /// Until when the `jti` is remembered: while the object would still be accepted.
    pub(crate) expires_at: UnixTime,
}

impl fmt::Debug for VerifiedObject {
    /// The claims' names, never their values: a request object may carry a `login_hint`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifiedObject")
            .field("claims", &self.claims.keys().collect::<Vec<_>>())
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// What taking request objects needs: the verifier, where spent `jti`s go, and where each
/// client's spending is counted.
#[derive(Clone, Copy)]
pub(crate) struct RequestObjects<'a> {
    pub(crate) verifier: &'a dyn RequestObjectVerifier,
    pub(crate) single_use: &'a dyn SingleUseStore,
    pub(crate) attempts: &'a dyn AttemptCounter,
}

impl fmt::Debug for RequestObjects<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestObjects").finish_non_exhaustive()
    }
}

impl RequestObjects<'_> {
    /// The request the object `object` stands for, once it agrees with the parameters sent
    /// beside it (`outside`) and its `jti` is spent: the object's parameters, with the
    /// `client_id` sent beside it when the object has none.
    pub(crate) async fn accept<'x>(
        &self,
        client: &Client,
        outside: &AuthorizationRequest<'x>,
        object: AuthorizationRequest<'x>,
        verified: &VerifiedObject,
        now: UnixTime,
    ) -> Result<AuthorizationRequest<'x>, OAuthError> {
        let object = agree(outside, object)?;
        // At the pushed request endpoint the client may name itself only by authenticating;
        // the push then takes its id.
        if object
            .client_id
            .is_some_and(|id| id != client.id().as_str())
        {
            return Err(mismatch(
                "the request object's client_id is not the client's",
            ));
        }
        if let Some(jti) = &verified.jti {
            self.spend(client, jti, verified.expires_at, now).await?;
        }
        Ok(object)
    }

    /// Spends `jti` once for `client`, after its budget and its tier's pool allow it.
    async fn spend(
        &self,
        client: &Client,
        jti: &str,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let budget = Budget {
            spending: Spending::RequestObjects,
            window: JTI_WINDOW,
            per_client: Some(JTIS_PER_CLIENT),
            per_tier: JTIS_PER_TIER,
        };
        // The object is signed by the client's key: nobody else spends for it, so no caller
        // network is counted.
        budget
            .spend(&Payer::new(client, None), self.attempts, now)
            .await?;
        let key = namespace::request_object(client.tier(), client.id(), jti);
        if self
            .single_use
            .insert_once(&key, b"", expires_at, now)
            .await?
        {
            Ok(())
        } else {
            Err(mismatch("the request object was used before (its jti)"))
        }
    }
}

/// The object's parameters, checked against those sent beside it: `client_id` and
/// `response_type` there, if sent, must be the object's (RFC 9101 §6.3, OIDC Core §6.1), and
/// no `request_uri` may come with it (an object travels by value or by reference, RFC 9101
/// §5; a pushed request names no other, RFC 9126 §2.1).
fn agree<'x>(
    outside: &AuthorizationRequest<'x>,
    object: AuthorizationRequest<'x>,
) -> Result<AuthorizationRequest<'x>, OAuthError> {
    if outside.request_uri.is_some() {
        return Err(OAuthError::invalid_request(
            "request_uri may not be sent beside a request object (RFC 9101 section 5, \
             RFC 9126 section 2.1)",
        ));
    }
    let client_id = match (outside.client_id, object.client_id) {
        (Some(sent), Some(signed)) if sent != signed => {
            return Err(mismatch(
                "client_id differs from the request object's client_id",
            ));
        }
        (sent, signed) => signed.or(sent),
    };
    if outside
        .response_type
        .is_some_and(|sent| Some(sent) != object.response_type)
    {
        return Err(mismatch(
            "response_type differs from the request object's response_type",
        ));
    }
    Ok(AuthorizationRequest {
        client_id,
        ..object
    })
}

fn mismatch(why: &'static str) -> OAuthError {
    OAuthError::new(ErrorCode::InvalidRequestObject, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_id_and_response_type_beside_the_object_must_be_its_own() {
        let outside = AuthorizationRequest {
            client_id: Some("app"),
            response_type: Some("code"),
            scope: Some("ignored"),
            ..AuthorizationRequest::default()
        };
        let object = AuthorizationRequest {
            response_type: Some("code"),
            scope: Some("profile"),
            ..AuthorizationRequest::default()
        };
        let agreed = agree(&outside, object.clone()).unwrap();
        assert_eq!(agreed.client_id, Some("app"));
        assert_eq!(agreed.scope, Some("profile"));
        let other = AuthorizationRequest {
            client_id: Some("other"),
            ..object.clone()
        };
        let refused = agree(&outside, other).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::InvalidRequestObject);
        let token = AuthorizationRequest {
            response_type: Some("token"),
            ..object
        };
        assert!(agree(&outside, token).is_err());
    }

    #[test]
    fn a_request_uri_beside_the_object_is_refused() {
        let outside = AuthorizationRequest {
            client_id: Some("app"),
            request_uri: Some("urn:ietf:params:oauth:request_uri:other"),
            ..AuthorizationRequest::default()
        };
        let object = AuthorizationRequest {
            response_type: Some("code"),
            ..AuthorizationRequest::default()
        };
        let refused = agree(&outside, object).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::InvalidRequest);
        assert!(refused.description().contains("request_uri"));
    }
}
