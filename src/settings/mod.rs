//! The settings of a built server as plain data: what the builder checked, read by the grants,
//! the endpoints and the pages alike. Nothing here renders HTTP or reaches a store; the builder
//! fills it, and every layer above reads it.

use std::time::Duration;

use crate::audience::Audience;

mod acr;
mod client_documents;
mod device_flow;
mod openid;
mod paths;
mod pushed_requests;

pub use crate::oidc::Prompt;
pub use crate::registration::{
    DEFAULT_IDLE_LIFETIME, DEFAULT_SECRET_ROTATION_OVERLAP, MAX_CLIENT_NAME_BYTES,
    MAX_REDIRECT_URIS, MAX_SECTOR_DOCUMENT_BYTES, RegistrationPolicy,
};
pub use crate::signing::ClientSigningAlgorithm;
pub use crate::signing::SigningAlgorithm;
pub use crate::subject::{PairwiseSecret, PairwiseSecretError};
pub use crate::throttle::SignInThrottle;
pub use crate::usernames::{MAX_USERNAME_BYTES, Usernames};
pub use acr::AcrLevels;
pub use client_documents::ClientIdDocuments;
pub(crate) use client_documents::normal_host;
pub use device_flow::DeviceFlow;
pub use openid::OpenIdConnect;
pub use paths::EndpointPaths;
pub use pushed_requests::PushedRequests;

/// PKCE at the authorization endpoint (RFC 7636), one setting: which clients must use it and
/// which methods are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PkcePolicy {
    /// Public clients must use PKCE with `S256`; confidential clients may (the default under
    /// [`Profile::OAuth2`]).
    #[default]
    PublicClients,
    /// Every client must use PKCE with `S256` and `response_type=code` (RFC 9700 §2.1.1
    /// recommends it; [`Profile::OAuth21`] requires it).
    AllClients,
    /// As [`PublicClients`](Self::PublicClients), and `code_challenge_method=plain` (or none)
    /// is taken too (RFC 7636 §4.2), for clients that cannot hash. `plain` protects nothing
    /// once the authorization request leaks; [`Profile::OAuth21`] refuses it.
    PlainAllowed,
}

impl PkcePolicy {
    /// Whether every client must use PKCE.
    pub(crate) fn required_of_all(self) -> bool {
        self == Self::AllClients
    }

    /// Whether `code_challenge_method=plain` is taken.
    pub(crate) fn allows_plain(self) -> bool {
        self == Self::PlainAllowed
    }
}

/// Which OAuth the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Profile {
    /// OAuth 2.0 (RFC 6749) hardened by RFC 9700 (the default): the implicit and password
    /// grants only for clients agreed for them; PKCE as [`PkcePolicy`] says.
    #[default]
    OAuth2,
    /// OAuth 2.1 (draft-ietf-oauth-v2-1): the implicit and password grants are refused for
    /// every client, and every client must use PKCE with `S256` (§4.1.1, §10.1): the PKCE
    /// policy is [`PkcePolicy::AllClients`], and setting another is a configuration error.
    OAuth21,
    /// The FAPI 2.0 Security Profile, on top of OAuth 2.1's rules: authorization requests only
    /// through pushed authorization requests (RFC 9126), `response_type=code` only, PKCE with
    /// `S256`; only confidential clients, authenticated by `private_key_jwt` (its `aud` exactly
    /// the issuer, signed PS256, ES256 or EdDSA, never RS256) or mutual TLS (RFC 8705); every
    /// access token sender-constrained, so a token request with neither a DPoP proof nor a
    /// client certificate is refused; codes live at most 60 seconds.
    ///
    /// `build()` refuses a setting that contradicts it: a longer code lifetime, a PKCE policy
    /// other than [`PkcePolicy::AllClients`], pushed requests not served, or neither DPoP nor
    /// certificate-bound tokens to constrain tokens with.
    ///
    /// Refresh tokens still rotate, but the one a rotation replaced is taken back as a retry for
    /// [`FAPI2_REFRESH_GRACE`] unless the host sets another
    /// [`refresh_grace`](crate::AuthorizationServerBuilder::refresh_grace).
    Fapi2,
    /// [`Profile::Fapi2`] and FAPI 2.0 Message Signing: every pushed request is also a signed
    /// request object (RFC 9101). JWT-secured authorization responses and signed introspection
    /// answers are offered in every profile; under this one the client asks for them.
    Fapi2MessageSigning,
}

impl Profile {
    /// Whether this is a FAPI 2.0 profile ([`Profile::Fapi2`] or
    /// [`Profile::Fapi2MessageSigning`]).
    pub fn is_fapi2(self) -> bool {
        matches!(self, Self::Fapi2 | Self::Fapi2MessageSigning)
    }

    /// Whether OAuth 2.1's rules hold: no implicit or password grant, PKCE `S256` of every
    /// client (every FAPI 2.0 profile keeps them too).
    pub(crate) fn is_oauth21(self) -> bool {
        self != Self::OAuth2
    }
}

/// Every setting of a built server, checked by the builder: plain data that every layer reads
/// and none renders.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) issuer: String,
    pub(crate) realm: String,
    pub(crate) endpoints: EndpointPaths,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) lifetimes: Lifetimes,
    pub(crate) limits: Limits,
    pub(crate) pkce: PkcePolicy,
    pub(crate) throttle: SignInThrottle,
    /// Which usernames accounts have.
    pub(crate) usernames: Usernames,
    /// The authentication context classes, and which grantor's own steps reach.
    pub(crate) acr: AcrLevels,
    pub(crate) client_throttle: SignInThrottle,
    pub(crate) profile: Profile,
    /// The resources tokens may be aimed at and the default audience (RFC 8707).
    pub(crate) resources: Resources,
    /// Whether access tokens are JWTs, whose keys the JWKS document publishes.
    pub(crate) jwt_access_tokens: bool,
    /// The algorithms DPoP proofs are verified with, when proofs are accepted (RFC 9449).
    pub(crate) dpop: Option<&'static [&'static str]>,
    /// Whether access tokens are bound to the client certificate a token request came with
    /// (RFC 8705 §3).
    pub(crate) certificate_bound_tokens: bool,
    /// What self-registered clients may get, its scope resolved; `None`: no registration.
    pub(crate) registration: Option<RegistrationPolicy>,
    /// Set when pushed authorization requests are taken (RFC 9126).
    pub(crate) pushed_requests: Option<PushedRequests>,
    /// Set when the device authorization grant is served (RFC 8628).
    pub(crate) device: Option<DeviceFlow>,
    /// Whether token exchange is offered (RFC 8693): the builder was given a policy.
    pub(crate) token_exchange: bool,
    /// Whether ID-JAGs are issued by token exchange: the builder was given their policy.
    pub(crate) id_jag_issuance: bool,
    /// Whether assertion issuers are trusted: the JWT-bearer grant is served (RFC 7523).
    pub(crate) jwt_bearer: bool,
    /// Whether `jwks_uri` can be resolved (a `ClientKeyResolver` is set).
    pub(crate) jwks_uri: bool,
    /// The algorithms of client assertions, when `private_key_jwt` is accepted (RFC 7523).
    pub(crate) client_assertion_algs: Option<&'static [&'static str]>,
    /// The algorithms of request objects, when they are taken (RFC 9101).
    pub(crate) request_object_algs: Option<&'static [&'static str]>,
    /// Set when the server is an OpenID Connect provider.
    pub(crate) openid: Option<OpenIdConnect>,
    /// How long a browser stays signed in (zero: no single sign-on).
    pub(crate) session_ttl: Duration,
    /// How long an approval is remembered (zero: never).
    pub(crate) consent_ttl: Duration,
    /// Whether logout tokens are sent (an outbound HTTP seam was given).
    pub(crate) backchannel_logout: bool,
    /// Whether client ID metadata documents are taken.
    pub(crate) client_documents: bool,
    /// Set when clients may authenticate with TLS client certificates (RFC 8705 §2).
    pub(crate) mutual_tls: Option<MutualTlsOffer>,
}

/// What the server offers of mutual TLS client authentication (RFC 8705 §2): what discovery
/// lists and registration accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MutualTlsOffer {
    /// Whether a client CA is trusted, so `tls_client_auth` clients can authenticate
    /// (`self_signed_tls_client_auth` ones always can).
    pub(crate) tls_client_auth: bool,
    /// The base URL of the endpoints' aliases (RFC 8705 §5), without a trailing `/`.
    pub(crate) aliases: Option<String>,
}

impl Settings {
    /// The absolute URL of the endpoint at `path`: the issuer, then `path`.
    pub(crate) fn absolute_url(&self, path: &str) -> String {
        format!("{}{path}", self.issuer.trim_end_matches('/'))
    }

    /// The path an endpoint at `path` is served at, the path of its
    /// [`absolute_url`](Self::absolute_url): the issuer's own path (none for an issuer that
    /// is an origin), then `path`.
    pub(crate) fn served_path(&self, path: &str) -> String {
        format!("{}{path}", issuer_path(&self.issuer))
    }

    /// Where the metadata document is served (RFC 8414 §3.1): the well-known name, then the
    /// issuer's own path (`/.well-known/oauth-authorization-server/tenant` for the issuer
    /// `https://host/tenant`). For the framework glue.
    #[cfg(any(feature = "axum", feature = "actix"))]
    pub(crate) fn metadata_path(&self) -> String {
        format!(
            "/.well-known/oauth-authorization-server{}",
            issuer_path(&self.issuer)
        )
    }
}

/// How long what grantor issues lives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lifetimes {
    pub(crate) code: Duration,
    pub(crate) access_token: Duration,
    pub(crate) refresh_token: Duration,
    pub(crate) authorization_request: Duration,
    /// How long after a rotation the replaced refresh token may retry it (zero: never).
    pub(crate) refresh_grace: Duration,
    /// How long a family lives at most, from its first refresh token.
    pub(crate) family: Duration,
}

/// Size limits for a form or query string.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Largest encoded input, in bytes.
    pub(crate) max_input: usize,
    /// Largest decoded parameter value, in bytes.
    pub(crate) max_param: usize,
}

/// The resources the server knows and its default audience: tokens may be aimed at these alone.
///
/// A requested resource names a known one when the two are equal after RFC 3986 §6.2.2 and
/// §6.2.3 normalisation ([`canonical`](crate::audience::canonical): scheme and host lowercased,
/// default port dropped, an empty `http(s)` path made `/`, percent-encoding and dot segments
/// normalised; paths and queries otherwise kept as they are). Tokens carry the known resource
/// as registered, never the request's spelling.
#[derive(Debug, Clone)]
pub(crate) struct Resources {
    /// The audience of a request that names no resource (itself a known resource).
    pub(crate) default: Audience,
    /// Every resource the server knows, the default's first, one per canonical form.
    pub(crate) known: Vec<KnownResource>,
}

/// A resource the server knows: as the host registered it, and the form it is compared by.
#[derive(Debug, Clone)]
pub(crate) struct KnownResource {
    /// What tokens for it carry in `aud`.
    pub(crate) registered: String,
    /// Its [`canonical`](crate::audience::canonical) form.
    pub(crate) canonical: String,
}

/// The refresh retry window under a FAPI 2.0 profile unless the host sets another
/// ([`refresh_grace`](crate::AuthorizationServerBuilder::refresh_grace)). FAPI 2.0 asks servers
/// not to rotate refresh tokens, so that a client that lost a refresh's answer is not left
/// without a grant; grantor rotates (reuse detection is how a stolen refresh token shows), and
/// instead takes the replaced token back as a retry for this long. Under the profile every
/// client authenticates by key or certificate, so a thief holding only the replaced token
/// still cannot use it.
pub const FAPI2_REFRESH_GRACE: Duration = Duration::from_secs(60);

/// The longest refresh retry window accepted: enough for any lost answer, short enough that
/// reuse detection (RFC 9700 §4.14.2) still means something.
pub const MAX_REFRESH_GRACE: Duration = Duration::from_secs(600);

/// The longest code lifetime RFC 6749 §4.1.2 allows ("a maximum lifetime of 10 minutes is
/// RECOMMENDED"); the builder refuses more.
pub const MAX_CODE_LIFETIME: Duration = Duration::from_secs(600);

/// The path of an issuer (checked at build: a URL with no query or fragment), without its
/// trailing `/`: empty for `https://host` and `https://host/`.
fn issuer_path(issuer: &str) -> &str {
    let after_scheme = issuer.split_once("://").map_or(issuer, |(_, rest)| rest);
    after_scheme
        .find('/')
        .map_or("", |start| after_scheme[start..].trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::issuer_path;

    #[test]
    fn an_issuers_path_is_what_follows_its_authority_without_the_trailing_slash() {
        assert_eq!(issuer_path("https://auth.example"), "");
        assert_eq!(issuer_path("https://auth.example/"), "");
        assert_eq!(issuer_path("http://127.0.0.1:8080"), "");
        assert_eq!(issuer_path("https://host/tenant"), "/tenant");
        assert_eq!(issuer_path("https://host:8443/realms/one/"), "/realms/one");
    }
}
