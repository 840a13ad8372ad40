//! `private_key_jwt` at every endpoint that authenticates clients (RFC 7523 §2.2): the client's
//! keys found (registered, or through the host's resolver), the assertion verified against
//! them and the endpoint, then its `jti` spent once.

use std::borrow::Cow;
use std::sync::Arc;

use async_trait::async_trait;

use super::{
    ASSERTION_WINDOW, ASSERTIONS_PER_CLIENT, ASSERTIONS_SELF_REGISTERED, AssertionContext,
    AssertionError, ClientKeyResolver, verify_assertion,
};
use crate::budget::{Budget, Payer, Spending};
use crate::client::{Client, ClientKeys};
use crate::clock::UnixTime;
use crate::error::{OAuthError, StoreError};
use crate::grant::client_auth::ClientAssertions;
use crate::request::Assertion;
use crate::store::{AttemptCounter, SingleUseStore, namespace};

/// The server's assertion checks: where spent `jti`s go, the host's `jwks_uri` resolver, and
/// the URLs an assertion's `aud` may name.
pub(crate) struct Checker {
    pub(crate) single_use: Arc<dyn SingleUseStore>,
    /// Where each client's spent assertions are counted.
    pub(crate) attempts: Arc<dyn AttemptCounter>,
    pub(crate) resolver: Option<Arc<dyn ClientKeyResolver>>,
    /// The issuer identifier, always an acceptable `aud`.
    pub(crate) issuer: String,
    /// The token endpoint's URL, acceptable at every endpoint.
    pub(crate) token_url: String,
    /// Under FAPI 2.0: the issuer, as a string, is the only acceptable `aud`, and RS256 is
    /// refused (Security Profile §5.3.2.1 and §5.4).
    pub(crate) fapi2: bool,
}

#[async_trait]
impl ClientAssertions for Checker {
    /// Verifies `assertion` for `client` at `now` and spends its `jti`; every refusal is
    /// `invalid_client` (401), a store or resolver failure `server_error`.
    async fn check(
        &self,
        client: &Client,
        assertion: Assertion<'_>,
        endpoint_path: &str,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let kid = named_kid(assertion.0);
        let jwks = match client_jwks(client, self.resolver.as_deref(), kid.as_deref()).await {
            Ok(jwks) => jwks,
            Err(MissingKeys::Unresolvable) => {
                return Err(refused("this client's jwks_uri cannot be resolved here"));
            }
            Err(MissingKeys::NoKeys) => {
                return Err(refused(
                    "this client does not authenticate with a client assertion",
                ));
            }
            Err(MissingKeys::Store(error)) => return Err(error.into()),
        };
        let endpoint_url = format!("{}{endpoint_path}", self.issuer.trim_end_matches('/'));
        let all = [
            self.issuer.as_str(),
            self.token_url.as_str(),
            endpoint_url.as_str(),
        ];
        let audiences = if self.fapi2 {
            if !fapi2_algorithm(assertion.0) {
                return Err(refused(
                    "FAPI 2.0 takes client assertions signed PS256, ES256 or EdDSA only",
                ));
            }
            &all[..1]
        } else {
            &all[..]
        };
        let context = AssertionContext {
            client_id: client.id().as_str(),
            audiences,
            now,
        };
        let verified = verify_assertion(assertion.0, &jwks, &context).map_err(into_error)?;
        if self.fapi2 && !audience_is_a_string(assertion.0) {
            return Err(refused(
                "FAPI 2.0 takes the issuer identifier as a string in aud, never in an array",
            ));
        }
        let key = namespace::client_assertion(client.tier(), client.id(), &verified.jti);
        // Only now, every check passed: nobody without the client's key adds entries or
        // spends the client's budget.
        self.count(client, now).await?;
        if self
            .single_use
            .insert_once(&key, b"", verified.expires_at, now)
            .await?
        {
            Ok(())
        } else {
            Err(into_error(AssertionError::Replayed))
        }
    }
}

/// Whether the JWS names an algorithm FAPI 2.0 allows (Security Profile §5.4.1: PS256, ES256,
/// EdDSA). A header that cannot be read fails here; verification would refuse it anyway.
fn fapi2_algorithm(jws: &str) -> bool {
    matches!(
        jsonwebtoken::decode_header(jws).map(|header| header.alg),
        Ok(jsonwebtoken::Algorithm::PS256
            | jsonwebtoken::Algorithm::ES256
            | jsonwebtoken::Algorithm::EdDSA)
    )
}

/// Whether the JWS's `aud` is a single string: FAPI 2.0 Security Profile §5.3.2.1 has the
/// server accept its issuer identifier only as a string there, not inside an array.
fn audience_is_a_string(jws: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Claims {
        aud: Option<serde_json::Value>,
    }
    crate::jose::parts(jws)
        .and_then(|[_, payload, _]| {
            crate::jose::decode_part::<Claims>(payload, super::MAX_ASSERTION_BYTES)
        })
        .is_some_and(|claims| matches!(claims.aud, Some(serde_json::Value::String(_))))
}

/// Why a client's JWK Set could not be had.
#[derive(Debug)]
pub(crate) enum MissingKeys {
    /// The client registered no keys.
    NoKeys,
    /// It registered a `jwks_uri`, and the host set no resolver.
    Unresolvable,
    /// The resolver failed.
    Store(StoreError),
}

/// The JWK Set (JSON text) of `client`: registered as `jwks`, or resolved from its
/// `jwks_uri` through the host's `resolver`, refreshed once when the JWS names a `kid` the
/// resolved set lacks (a rotation; the resolver bounds how often it fetches again).
pub(crate) async fn client_jwks<'c>(
    client: &'c Client,
    resolver: Option<&dyn ClientKeyResolver>,
    kid: Option<&str>,
) -> Result<Cow<'c, str>, MissingKeys> {
    match (client.keys(), resolver) {
        (Some(ClientKeys::Jwks(jwks)), _) => Ok(Cow::Borrowed(&**jwks)),
        (Some(ClientKeys::JwksUri(uri)), Some(resolver)) => {
            let set = resolver
                .resolve(client.id(), uri)
                .await
                .map_err(MissingKeys::Store)?;
            if let Some(kid) = kid
                && !holds_kid(&set, kid)
                && let Some(fresh) = resolver
                    .refresh(client.id(), uri)
                    .await
                    .map_err(MissingKeys::Store)?
            {
                return Ok(Cow::Owned(fresh));
            }
            Ok(Cow::Owned(set))
        }
        (Some(ClientKeys::JwksUri(_)), None) => Err(MissingKeys::Unresolvable),
        (None, _) => Err(MissingKeys::NoKeys),
    }
}

/// The `kid` a compact JWS's header names, if it is well formed and names one.
pub(crate) fn named_kid(jws: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Header {
        kid: Option<String>,
    }
    let [header, _, _] = crate::jose::parts(jws)?;
    crate::jose::decode_part::<Header>(header, super::MAX_HEADER_BYTES)?.kid
}

/// Whether the JWK Set `jwks` (JSON text) holds a key named `kid`.
pub(crate) fn holds_kid(jwks: &str, kid: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Set {
        keys: Vec<serde_json::Map<String, serde_json::Value>>,
    }
    serde_json::from_str::<Set>(jwks).is_ok_and(|set| {
        set.keys
            .iter()
            .any(|key| key.get("kid").and_then(serde_json::Value::as_str) == Some(kid))
    })
}

impl Checker {
    /// Counts a spent assertion against the client's budget and its tier's pool
    /// ([`budget`](crate::budget)).
    async fn count(&self, client: &Client, now: UnixTime) -> Result<(), OAuthError> {
        let budget = Budget {
            spending: Spending::Assertions,
            window: ASSERTION_WINDOW,
            per_client: Some(ASSERTIONS_PER_CLIENT),
            per_tier: ASSERTIONS_SELF_REGISTERED,
        };
        // An assertion is signed by the client's key: nobody else spends for it, so no
        // caller network is counted.
        let payer = Payer::new(client, None);
        budget.spend(&payer, &*self.attempts, now).await
    }
}

fn into_error(error: AssertionError) -> OAuthError {
    OAuthError::invalid_client(error.to_string())
}

fn refused(why: &'static str) -> OAuthError {
    OAuthError::invalid_client(why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn with_claims(claims: serde_json::Value) -> String {
        let part = |value: &serde_json::Value| URL_SAFE_NO_PAD.encode(value.to_string());
        format!(
            "{}.{}.sig",
            part(&serde_json::json!({ "alg": "ES256" })),
            part(&claims)
        )
    }

    #[test]
    fn under_fapi2_the_audience_is_a_string_not_an_array() {
        let issuer = "https://as.example";
        assert!(audience_is_a_string(&with_claims(
            serde_json::json!({ "aud": issuer })
        )));
        let listed = serde_json::json!({ "aud": [issuer, "https://other.example"] });
        assert!(!audience_is_a_string(&with_claims(listed)));
        assert!(!audience_is_a_string(&with_claims(
            serde_json::json!({ "aud": [issuer] })
        )));
        assert!(!audience_is_a_string(&with_claims(serde_json::json!({}))));
        assert!(!audience_is_a_string("not a jws"));
    }
}
