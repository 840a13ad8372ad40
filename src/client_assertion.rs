//! `private_key_jwt` client authentication (RFC 7523 §2.2, RFC 7521 §4.2), feature
//! `private-key-jwt`: a client registered with its public keys
//! ([`Client::private_key_jwt`](crate::client::Client::private_key_jwt)) authenticates at the token,
//! revocation and introspection endpoints with
//! `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer` and
//! `client_assertion=<JWS>` in the form body, instead of HTTP Basic.
//!
//! What an assertion is checked for (RFC 7523 §3): at most [`MAX_ASSERTION_BYTES`]; an
//! asymmetric `alg` of [`ALGORITHMS`] (never `none` or HMAC); a signature by one of the
//! client's keys (the key named by `kid`; without `kid`, the one key suiting the `alg`, and a
//! client with several such keys must send `kid`: an assertion costs at most one signature
//! check);
//! `iss` and `sub` both the client id (and `client_id` in the body, if sent, the same); `aud`
//! naming the issuer identifier, the token endpoint's URL or the URL of the endpoint called;
//! `exp` present, not past, and at most [`MAX_ASSERTION_LIFETIME`] ahead; `nbf` and `iat`, if
//! present, not in the future; all within [`CLOCK_SKEW`]; a `jti` of at most [`MAX_JTI_BYTES`],
//! accepted once.
//!
//! **What it makes the server keep**: a spent `jti` goes to the
//! [`SingleUseStore`](crate::store::SingleUseStore) under a fixed-length key (a SHA-256 digest
//! of client id and `jti`) until the assertion's `exp`, so every node sharing the store
//! refuses a replay. It is kept only once the signature and every claim check out, so only a
//! holder of a registered client's private key can add entries, each for at most
//! [`MAX_ASSERTION_LIFETIME`] plus [`CLOCK_SKEW`]. Each client spends at most
//! [`ASSERTIONS_PER_CLIENT`] `jti`s per [`ASSERTION_WINDOW`], and all self-registered clients
//! together at most [`ASSERTIONS_SELF_REGISTERED`] (counted through the
//! [`AttemptCounter`](crate::store::AttemptCounter), so every node shares the limits); past
//! them the assertion is refused with 429 `temporarily_unavailable` before anything is kept.
//! A client thus keeps at most twice its limit of `jti`s live (one window's and what is left of
//! the one before), the self-registered ones together twice theirs, and a client an
//! administrator registered is never refused for what self-registered ones spent. The store's
//! own bound (for the in-memory one, [`MAX_SINGLE_USE`](crate::MemoryStore::MAX_SINGLE_USE) for
//! assertions alone) holds beyond that.
//!
//! A client may instead register a `jwks_uri`: the host fetches (and caches) its key set
//! through a [`ClientKeyResolver`] set with
//! [`AuthorizationServerBuilder::client_key_resolver`](crate::AuthorizationServerBuilder::client_key_resolver),
//! or, without one, grantor fetches it through the server's
//! [outbound seam](crate::AuthorizationServerBuilder::outbound) and keeps it a while (at most
//! [`MAX_KEPT_SETS`] sets, each for [`KEYS_KEPT`]); with neither, self-registration refuses
//! `jwks_uri` with `invalid_client_metadata`.

mod checker;
mod fetched;
mod verify;

use std::time::Duration;

use async_trait::async_trait;

use crate::client::ClientId;
use crate::error::StoreError;

pub(crate) use checker::{Checker, MissingKeys, client_jwks, holds_kid, named_kid};
pub(crate) use fetched::FetchedKeys;
pub use fetched::{FAILURE_KEPT, KEY_FETCH_TIMEOUT, KEYS_KEPT, MAX_KEPT_SETS, MAX_KEY_FETCHES};
pub use verify::{AssertionContext, VerifiedAssertion, verify_assertion};
pub(crate) use verify::{SignatureError, seconds, signed_claims};

/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The `token_endpoint_auth_method` (RFC 7591 §2) of these clients.
pub const AUTH_METHOD: &str = "private_key_jwt";

/// The algorithms verified (asymmetric only, as for DPoP proofs): what the metadata lists as
/// `token_endpoint_auth_signing_alg_values_supported`.
pub const ALGORITHMS: [&str; 4] = crate::jose::ALGORITHMS;

/// The longest assertion accepted, in bytes: an RSA-4096 signature fits with room.
pub const MAX_ASSERTION_BYTES: usize = 4096;

/// The longest JOSE header accepted, decoded, in bytes.
pub const MAX_HEADER_BYTES: usize = 1024;

/// The longest `jti` accepted, in bytes.
pub const MAX_JTI_BYTES: usize = 256;

/// How far ahead `exp` may be: an assertion is made for one request, so it need not live
/// long, and its `jti` is remembered until `exp`.
pub const MAX_ASSERTION_LIFETIME: Duration = Duration::from_secs(300);

/// The window [`ASSERTIONS_PER_CLIENT`] and [`ASSERTIONS_SELF_REGISTERED`] count in: as long
/// as a spent `jti` can be kept.
pub const ASSERTION_WINDOW: Duration =
    Duration::from_secs(MAX_ASSERTION_LIFETIME.as_secs() + 2 * CLOCK_SKEW.as_secs());

/// Assertions one client may spend per [`ASSERTION_WINDOW`] (six minutes): about 27 a second
/// on average, far past what a client that caches its tokens sends.
pub const ASSERTIONS_PER_CLIENT: u32 = 10_000;

/// Assertions all self-registered clients together may spend per [`ASSERTION_WINDOW`], and
/// apart from them, all clients read from metadata documents together.
pub const ASSERTIONS_SELF_REGISTERED: u32 = 20_000;

/// How far the client's clock may be from the server's, either way, for `exp`, `nbf` and
/// `iat` (RFC 7519 §4.1.4 allows "some small leeway").
pub const CLOCK_SKEW: Duration = Duration::from_secs(30);

/// Why an assertion was refused: each variant is its own `error_description` of an
/// `invalid_client` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssertionError {
    /// Not a compact JWS of reasonable size with a JSON header and claims.
    #[error("the client assertion is not a well-formed JWT")]
    Malformed,
    /// `alg` is `none`, symmetric, or not one grantor verifies.
    #[error("the client assertion's alg is not an asymmetric algorithm this server verifies")]
    UnsupportedAlgorithm,
    /// No registered key of the client verifies the signature.
    #[error("the client assertion is not signed by a key of this client")]
    BadSignature,
    /// No `kid`, and the client has more than one key for the `alg`: each assertion is
    /// checked against one key, never tried against every key.
    #[error(
        "the client assertion must name its key with kid: this client has several keys for its alg"
    )]
    KidNeeded,
    /// `iss` or `sub` is missing or not the client id (RFC 7523 §3 items 1, 2).
    #[error("the client assertion's iss and sub must both be the client id")]
    WrongIssuer,
    /// `aud` names neither the issuer, the token endpoint, nor this endpoint (§3 item 3).
    #[error("the client assertion's aud does not name this server")]
    WrongAudience,
    /// `exp` is missing (§3 item 4).
    #[error("the client assertion has no exp")]
    MissingExpiry,
    /// `exp` is past.
    #[error("the client assertion has expired")]
    Expired,
    /// `exp` is further ahead than [`MAX_ASSERTION_LIFETIME`].
    #[error("the client assertion's exp is too far in the future")]
    TooLong,
    /// `nbf` or `iat` is in the future (§3 items 5, 6).
    #[error("the client assertion is not valid yet")]
    NotYetValid,
    /// `jti` is missing, empty or longer than [`MAX_JTI_BYTES`] (§3 item 7).
    #[error("the client assertion needs a jti of at most 256 bytes")]
    MissingJti,
    /// The assertion's `jti` was used before.
    #[error("the client assertion was used before")]
    Replayed,
}

/// Resolves a client's `jwks_uri` into its JWK Set: the host's seam, as it owns outbound HTTP
/// (timeouts, allowed hosts, caching; RFC 7591 §2 asks for keys fetched over TLS).
///
/// Called on every assertion of such a client, before its signature is checked: cache the set
/// (and refetch on a `kid` it lacks, as a client adds keys), and never let a request wait on a
/// slow host for long.
#[async_trait]
pub trait ClientKeyResolver: Send + Sync {
    /// The JWK Set (RFC 7517 §5) at `jwks_uri`, as JSON text. An error is a store failure:
    /// the client is answered `server_error`, not refused.
    async fn resolve(&self, client_id: &ClientId, jwks_uri: &str) -> Result<String, StoreError>;

    /// The JWK Set at `jwks_uri` fetched anew, when a JWS the client signed names a `kid` the
    /// resolved set lacks (the client rotated its keys, OIDC Core §10.1.1); `None` when the
    /// resolver keeps no copy to refresh, or refreshed it too recently to fetch again. By
    /// default `None`: a resolver that fetches on every call has nothing to refresh.
    async fn refresh(
        &self,
        client_id: &ClientId,
        jwks_uri: &str,
    ) -> Result<Option<String>, StoreError> {
        let _ = (client_id, jwks_uri);
        Ok(None)
    }
}
