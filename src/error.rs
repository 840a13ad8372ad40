//! One error type for every endpoint: an RFC error code, an ASCII description, and, for store
//! failures, the cause for the host's logs (never for the wire).

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;

use http::StatusCode;

/// The error codes of RFC 6749 §4.1.2.1, §4.2.2.1 and §5.2, RFC 6750 §3.1, RFC 7591 §3.2.2
/// RFC 8628 §3.5, RFC 9101 §6.2, RFC 9449 §12.2 and RFC 9470 §3 that grantor sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The request is missing a parameter, repeats one, or is otherwise malformed.
    InvalidRequest,
    /// Client authentication failed (unknown client, no or unsupported authentication, wrong
    /// secret). Sent with 401 and a `WWW-Authenticate: Basic` challenge.
    InvalidClient,
    /// The authorization code, refresh token or resource owner credentials are invalid, expired,
    /// revoked, or were issued to another client or redirect URI.
    InvalidGrant,
    /// The client is not agreed for this grant or response type.
    UnauthorizedClient,
    /// The `grant_type` is not one grantor knows.
    UnsupportedGrantType,
    /// The `response_type` is not one grantor knows.
    UnsupportedResponseType,
    /// The requested scope is malformed, unknown, or exceeds what the client (or the grant) may
    /// have.
    InvalidScope,
    /// The resource owner denied the request.
    AccessDenied,
    /// Something failed on the server (for instance a store); details go to the host's logs only.
    ServerError,
    /// The server cannot handle the request now (a store is unreachable, or it is overloaded).
    TemporarilyUnavailable,
    /// RFC 6750 §3.1: the bearer token is unknown, expired, revoked or malformed. Sent with 401.
    InvalidToken,
    /// RFC 6750 §3.1: the bearer token lacks the scope the resource needs. Sent with 403.
    InsufficientScope,
    /// RFC 9470 §3: the sign-in behind the bearer token is not what the resource demands (no
    /// user sign-in, another authentication context class, or too long ago). Sent with 401 and
    /// a challenge naming the `acr_values` and `max_age` the resource wants.
    InsufficientUserAuthentication,
    /// RFC 8707 §2: a `resource` is malformed, unknown to the server, not allowed to the
    /// client, or wider than what was granted.
    InvalidTarget,
    /// RFC 7591 §3.2.2: a redirect URI of a client registration is invalid (not `https` nor
    /// loopback `http`, a fragment, missing, too many). Sent with 400.
    InvalidRedirectUri,
    /// RFC 7591 §3.2.2: a client metadata field is invalid (a grant the registration policy
    /// does not allow, a scope outside it, a member of the wrong JSON type). Sent with 400.
    InvalidClientMetadata,
    /// RFC 9449 §5, §7.1: the `DPoP` proof is missing where required, malformed, badly
    /// signed, for another method or URI, stale or replayed. 400 at the token endpoint, 401
    /// with a `WWW-Authenticate: DPoP` challenge at a resource.
    InvalidDpopProof,
    /// RFC 9449 §8, §9: the proof must carry the server's current nonce, sent with the error
    /// in the `DPoP-Nonce` header. 400 at the token endpoint, 401 at a resource.
    UseDpopNonce,
    /// RFC 9101 §6.2 (for RFC 9126 §4): the `request_uri` is unknown, expired, already used or
    /// pushed by another client. Shown by the host, never redirected.
    InvalidRequestUri,
    /// RFC 8628 §3.5: the user has not answered the device's request yet; poll again after the
    /// interval.
    AuthorizationPending,
    /// RFC 8628 §3.5: the device polls faster than its interval; the interval grows by 5
    /// seconds for this and every later poll.
    SlowDown,
    /// RFC 8628 §3.5: the device code expired before the user answered; start again.
    ExpiredToken,
    /// OIDC Core §3.1.2.6: `prompt=none`, and the user would have to sign in.
    LoginRequired,
    /// OIDC Core §3.1.2.6: `prompt=none`, and the user would have to approve.
    ConsentRequired,
    /// OIDC Core §3.1.2.6: `prompt=none`, and the user would have to be asked something else.
    InteractionRequired,
    /// OIDC Core §6.1, §3.1.2.6: the request carries a request object (`request`), which
    /// this server does not take (built without feature `private-key-jwt`:
    /// `request_parameter_supported: false`).
    RequestNotSupported,
    /// RFC 9101 §6.2: the request object (`request`) is unsigned, badly signed, for another
    /// audience or issuer, expired, too long-lived, replayed or malformed.
    InvalidRequestObject,
    /// RFC 9101 §6.2: `request_uri` names something other than a pushed request (RFC 9126),
    /// which is all grantor takes by reference (`request_uri_parameter_supported: false`).
    RequestUriNotSupported,
}

impl ErrorCode {
    /// The code as it appears on the wire (`"invalid_request"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant => "invalid_grant",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidScope => "invalid_scope",
            Self::AccessDenied => "access_denied",
            Self::ServerError => "server_error",
            Self::TemporarilyUnavailable => "temporarily_unavailable",
            Self::InvalidToken => "invalid_token",
            Self::InsufficientScope => "insufficient_scope",
            Self::InsufficientUserAuthentication => "insufficient_user_authentication",
            Self::InvalidTarget => "invalid_target",
            Self::InvalidRedirectUri => "invalid_redirect_uri",
            Self::InvalidClientMetadata => "invalid_client_metadata",
            Self::InvalidDpopProof => "invalid_dpop_proof",
            Self::UseDpopNonce => "use_dpop_nonce",
            Self::InvalidRequestUri => "invalid_request_uri",
            Self::AuthorizationPending => "authorization_pending",
            Self::SlowDown => "slow_down",
            Self::ExpiredToken => "expired_token",
            Self::LoginRequired => "login_required",
            Self::ConsentRequired => "consent_required",
            Self::InteractionRequired => "interaction_required",
            Self::RequestNotSupported => "request_not_supported",
            Self::InvalidRequestObject => "invalid_request_object",
            Self::RequestUriNotSupported => "request_uri_not_supported",
        }
    }

    /// The HTTP status this code is sent with when it is answered directly (not redirected).
    pub fn status(self) -> StatusCode {
        match self {
            Self::InvalidClient | Self::InvalidToken | Self::InsufficientUserAuthentication => {
                StatusCode::UNAUTHORIZED
            }
            Self::InsufficientScope => StatusCode::FORBIDDEN,
            Self::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
            Self::TemporarilyUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An OAuth 2.0 error: what goes on the wire (`code`, `description`) and, for server-side
/// failures, the cause that only the host's logs see.
///
/// Descriptions are fixed ASCII text written by grantor; they never echo a request's values, so
/// they can never carry a secret.
#[derive(Debug)]
pub struct OAuthError {
    code: ErrorCode,
    description: Cow<'static, str>,
    status: Option<StatusCode>,
    source: Option<StoreError>,
}

impl OAuthError {
    /// An error with a code and a description (ASCII; characters RFC 6749 §5.2 forbids in
    /// `error_description` are replaced by `?`).
    pub fn new(code: ErrorCode, description: impl Into<Cow<'static, str>>) -> Self {
        let description = sanitize(description.into());
        Self {
            code,
            description,
            status: None,
            source: None,
        }
    }

    /// The HTTP status the error is answered with when not redirected: the code's own
    /// ([`ErrorCode::status`]) unless the endpoint needs another (405, 413).
    pub fn status(&self) -> StatusCode {
        self.status.unwrap_or(self.code.status())
    }

    pub(crate) fn with_status(mut self, status: StatusCode) -> Self {
        self.status = Some(status);
        self
    }

    /// The RFC error code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The human-readable `error_description`.
    pub fn description(&self) -> &str {
        &self.description
    }

    pub(crate) fn invalid_request(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidRequest, description)
    }

    pub(crate) fn invalid_client(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidClient, description)
    }

    pub(crate) fn invalid_grant(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidGrant, description)
    }

    pub(crate) fn invalid_scope(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidScope, description)
    }

    pub(crate) fn invalid_client_metadata(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidClientMetadata, description)
    }

    pub(crate) fn invalid_redirect_uri(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidRedirectUri, description)
    }

    pub(crate) fn unauthorized_client(description: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::UnauthorizedClient, description)
    }
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.description)
    }
}

impl StdError for OAuthError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_ref().map(|e| e as &(dyn StdError + 'static))
    }
}

impl From<StoreError> for OAuthError {
    fn from(error: StoreError) -> Self {
        let (code, description) = match error.kind {
            StoreErrorKind::Unavailable => (
                ErrorCode::TemporarilyUnavailable,
                "the service is temporarily unavailable; try again later",
            ),
            StoreErrorKind::Failed => (
                ErrorCode::ServerError,
                "the server failed to handle the request",
            ),
        };
        Self {
            code,
            description: Cow::Borrowed(description),
            status: None,
            source: Some(error),
        }
    }
}

/// Which way a store failed: decides between `temporarily_unavailable` (503) and `server_error`
/// (500) on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The store cannot answer now but may soon (database down, pool exhausted, overloaded).
    Unavailable,
    /// The store failed in a way retrying will not fix.
    Failed,
}

/// A failure inside a host's store. The client sees only `server_error` or
/// `temporarily_unavailable`; the cause is logged through `tracing` and kept as the
/// [`std::error::Error::source`] of the [`OAuthError`].
#[derive(Debug, thiserror::Error)]
#[error("store {kind_name}: {source}")]
pub struct StoreError {
    kind: StoreErrorKind,
    kind_name: &'static str,
    #[source]
    source: Box<dyn StdError + Send + Sync>,
}

impl StoreError {
    /// The store is unreachable or overloaded; answered as 503 `temporarily_unavailable`.
    pub fn unavailable(source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self {
            kind: StoreErrorKind::Unavailable,
            kind_name: "unavailable",
            source: source.into(),
        }
    }

    /// The store failed; answered as 500 `server_error`.
    pub fn failed(source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self {
            kind: StoreErrorKind::Failed,
            kind_name: "failed",
            source: source.into(),
        }
    }

    /// Which way the store failed.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }
}

/// RFC 6749 §5.2: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E.
fn sanitize(description: Cow<'static, str>) -> Cow<'static, str> {
    let allowed = |c: char| matches!(c, ' '..='!' | '#'..='[' | ']'..='~');
    if description.chars().all(allowed) {
        return description;
    }
    let mut ascii = String::with_capacity(description.len());
    for c in description.chars() {
        match c {
            c if allowed(c) => ascii.push(c),
            // "RFC 6750 §3" reads as "RFC 6750 section 3", not "RFC 6750 ?3".
            '§' => ascii.push_str("section "),
            _ => ascii.push('?'),
        }
    }
    Cow::Owned(ascii)
}

/// A registration that grantor refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The client id is empty or holds characters outside printable ASCII.
    #[error("the client id must be non-empty printable ASCII")]
    InvalidClientId,
    /// A redirect URI is not an absolute URI in printable ASCII, or carries a fragment.
    #[error("a redirect URI must be an absolute URI in printable ASCII without a fragment")]
    InvalidRedirectUri,
    /// A redirect URI is `http` on a host other than a loopback one, or carries user
    /// information (`user@`) or a backslash: the codes sent to it could be read on the way or
    /// sent elsewhere (RFC 9700 §2.1, §4.1.1). Self-registration refuses the same URIs;
    /// [`ClientBuilder::allow_insecure_redirect_uris`](crate::client::ClientBuilder::allow_insecure_redirect_uris)
    /// accepts them for a client its administrator vouches for.
    #[error(
        "a redirect URI must be https, http on a loopback host, or another scheme, without user information or a backslash"
    )]
    InsecureRedirectUri,
    /// A resource server's audience, or a resource the client may ask for, is not an absolute
    /// URI without a fragment in printable ASCII (RFC 8707 §2).
    #[error(
        "an audience or resource must be an absolute URI in printable ASCII without a fragment"
    )]
    InvalidAudience,
    /// A public client was registered as a resource server: it could not authenticate to
    /// introspect.
    #[error("only a confidential client may be a resource server")]
    PublicResourceServer,
    /// The authorization code or implicit grant was agreed without a redirect URI.
    #[error("the authorization code and implicit grants need at least one redirect URI")]
    MissingRedirectUri,
    /// A public client cannot use the client credentials grant (RFC 6749 §4.4).
    #[error("a public client cannot be agreed for client_credentials")]
    PublicClientCredentials,
    /// The scopes or the default scope break RFC 6749 §3.3 syntax.
    #[error("the client's scopes are malformed")]
    InvalidScope,
    /// The default scope holds a token the client may not be granted.
    #[error("the default scope must be a subset of the client's scopes")]
    DefaultScopeNotAllowed,
    /// A digest verifier was asked for a secret too short to resist guessing.
    #[error("a SHA-256 verifier needs a high-entropy secret of at least 32 characters")]
    WeakSecretForDigest,
    /// A public client was given a retiring secret: it has no secret to rotate.
    #[error("a public client cannot have a retiring secret")]
    PublicRetiringSecret,
    /// A client without a secret was told to send it in the body (`client_secret_post`).
    #[error("only a client with a secret can send it in the request body")]
    SecretInBodyWithoutSecret,
    /// A `jwks` is not a JWK Set of public keys within the limits, or a `jwks_uri` is not an
    /// `https` URL without a fragment (RFC 7591 §2).
    #[error("the client's keys must be a JWK Set of public keys or an https jwks_uri")]
    InvalidKeys,
    /// A `tls_client_auth` client's subject is malformed (RFC 8705 §2.1.2): a subject DN that
    /// is no RFC 4514 string, an IP address that does not parse, or a DNS name, URI or e-mail
    /// address that is empty, too long or not printable ASCII.
    #[error("the client's TLS certificate subject is malformed")]
    InvalidTlsClientAuth,
    /// A `self_signed_tls_client_auth` client's keys are not a `jwks` with a certificate in
    /// an `x5c` member (RFC 8705 §2.2).
    #[error("a self-signed TLS client needs its certificate in the x5c of a jwks")]
    MissingCertificate,
    /// A pairwise client's sector is not a host name: printable ASCII without `/` or spaces,
    /// at most 255 bytes (OIDC Core §8.1).
    #[error("a pairwise client's sector must be a host name")]
    InvalidSector,
    /// A stored verifier is neither `sha256:` nor an Argon2id PHC string.
    #[error("the stored secret verifier is malformed")]
    MalformedVerifier,
}

/// Why a client's secret was not rotated
/// ([`AuthorizationServer::rotate_client_secret`](crate::AuthorizationServer::rotate_client_secret)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretRotationError {
    /// No client is registered under this id.
    #[error("no client is registered under this id")]
    UnknownClient,
    /// The client has no secret to rotate: a public client (RFC 6749 §2.1), or one that
    /// authenticates with `private_key_jwt`.
    #[error("a public client has no secret to rotate")]
    PublicClient,
    /// The server was built without a [client registry](crate::AuthorizationServerBuilder::client_registry).
    #[error("the server has no client registry to keep the new secret in")]
    NoRegistry,
    /// The store failed, or the OS gave no randomness.
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_restricted_to_the_rfc_character_set() {
        let error = OAuthError::invalid_request("bad \"quote\" \\ and é\n");
        assert_eq!(error.description(), "bad ?quote? ? and ??");
        let error = OAuthError::invalid_request("see RFC 6750 §3.1");
        assert_eq!(error.description(), "see RFC 6750 section 3.1");
    }

    #[test]
    fn store_failures_never_put_their_cause_on_the_wire() {
        let error = OAuthError::from(StoreError::failed("password=hunter2 in connection string"));
        assert_eq!(error.code(), ErrorCode::ServerError);
        assert!(!error.description().contains("hunter2"));
        assert!(error.source().is_some());
        let error = OAuthError::from(StoreError::unavailable("pool timed out"));
        assert_eq!(error.code(), ErrorCode::TemporarilyUnavailable);
        assert_eq!(error.code().status(), StatusCode::SERVICE_UNAVAILABLE);
    }
}
