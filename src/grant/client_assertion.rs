//! `private_key_jwt` at every endpoint that authenticates clients (RFC 7523 §2.2): the client's
//! keys found (registered, or through the host's resolver), the assertion verified against
//! them and the endpoint, then its `jti` spent once.

use crate::client::{Client, ClientKeys};
use crate::client_assertion::{
    AssertionContext, AssertionError, ClientKeyResolver, verify_assertion,
};
use crate::error::OAuthError;
use crate::request::Assertion;
use crate::store::{SingleUseStore, namespace};

/// What checking assertions needs.
#[derive(Clone, Copy)]
pub(crate) struct Assertions<'a> {
    pub(crate) single_use: &'a dyn SingleUseStore,
    pub(crate) resolver: Option<&'a dyn ClientKeyResolver>,
    /// The issuer identifier, always an acceptable `aud`.
    pub(crate) issuer: &'a str,
    /// The token endpoint's path, whose URL is acceptable at every endpoint.
    pub(crate) token_path: &'a str,
    /// The path of the endpoint being called.
    pub(crate) endpoint_path: &'a str,
}

impl Assertions<'_> {
    /// Verifies `assertion` for `client` at `now` and spends its `jti`; every refusal is
    /// `invalid_client` (401), a store or resolver failure `server_error`.
    pub(super) async fn check(
        &self,
        client: &Client,
        assertion: Assertion<'_>,
        now: crate::clock::UnixTime,
    ) -> Result<(), OAuthError> {
        let settings = self;
        let resolved;
        let jwks = match client.keys() {
            Some(ClientKeys::Jwks(jwks)) => &**jwks,
            Some(ClientKeys::JwksUri(uri)) => match settings.resolver {
                Some(resolver) => {
                    resolved = resolver.resolve(client.id(), uri).await?;
                    resolved.as_str()
                }
                None => return Err(refused("this client's jwks_uri cannot be resolved here")),
            },
            None => {
                return Err(refused(
                    "this client does not authenticate with a client assertion",
                ));
            }
        };
        let base = settings.issuer.trim_end_matches('/');
        let token_url = format!("{base}{}", settings.token_path);
        let endpoint_url = format!("{base}{}", settings.endpoint_path);
        let audiences = [settings.issuer, token_url.as_str(), endpoint_url.as_str()];
        let context = AssertionContext {
            client_id: client.id().as_str(),
            audiences: &audiences,
            now,
        };
        let verified = verify_assertion(assertion.0, jwks, &context).map_err(into_error)?;
        let key = namespace::client_assertion(client.id(), &verified.jti);
        // Only now, every check passed: nobody without the client's key adds entries.
        if settings
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

fn into_error(error: AssertionError) -> OAuthError {
    OAuthError::invalid_client(error.to_string())
}

fn refused(why: &'static str) -> OAuthError {
    OAuthError::invalid_client(why)
}
