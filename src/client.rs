//! Registered clients (RFC 6749 §2): identity, credentials verifier, redirect URIs, agreed
//! grants and scopes.

use std::borrow::Cow;

use crate::audience::canonical;
use crate::clock::UnixTime;
use crate::error::StoreError;
pub use crate::error::{ClientError, SecretRotationError};
pub use crate::id::ClientId;
use crate::id::UserId;
use crate::scope::Scope;
pub use crate::secret::ClientSecret;
use crate::secret::SecretDigest;
use crate::subject::PairwiseSecret;

mod builder;
pub(crate) mod keys;
mod openid;
pub(crate) mod tls;
mod uris;
mod verifier;

pub use builder::ClientBuilder;
pub use keys::{ClientKeys, MAX_CLIENT_KEYS, MAX_JWKS_BYTES};
pub(crate) use openid::OpenIdClient;
pub use tls::{MAX_TLS_SUBJECT_BYTES, TlsClientAuth};
pub(crate) use uris::is_self_registrable_redirect_uri;
use uris::same_loopback_but_port;
pub use verifier::SecretVerifier;
pub(crate) use verifier::Verifier;

/// A grant type an administrator can agree with a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GrantType {
    /// `authorization_code` (RFC 6749 §4.1), `response_type=code` at the authorization endpoint.
    AuthorizationCode,
    /// The implicit grant (RFC 6749 §4.2), `response_type=token`.
    Implicit,
    /// `password` (RFC 6749 §4.3).
    Password,
    /// `refresh_token` (RFC 6749 §6). Agreeing it is what makes grantor issue the client
    /// refresh tokens.
    RefreshToken,
    /// `client_credentials` (RFC 6749 §4.4); confidential clients only.
    ClientCredentials,
    /// `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4): the device
    /// authorization grant, for devices without a browser.
    DeviceCode,
    /// Token exchange (RFC 8693 §2.1), `urn:ietf:params:oauth:grant-type:token-exchange`;
    /// confidential clients only, and only under the server's
    /// [`ExchangePolicy`](crate::exchange::ExchangePolicy).
    TokenExchange,
    /// The JWT-bearer grant (RFC 7523 §2.1), `urn:ietf:params:oauth:grant-type:jwt-bearer`: an
    /// assertion a trusted issuer signed about a user, an Identity Assertion JWT Authorization
    /// Grant among them, traded for an access token (feature `private-key-jwt`, with
    /// `AuthorizationServerBuilder::trust_issuer`).
    JwtBearer,
}

impl GrantType {
    /// Every grant type, in a fixed order.
    pub const ALL: [GrantType; 8] = [
        Self::AuthorizationCode,
        Self::Implicit,
        Self::Password,
        Self::RefreshToken,
        Self::ClientCredentials,
        Self::DeviceCode,
        Self::TokenExchange,
        Self::JwtBearer,
    ];

    /// The name used in `grant_type` and in client metadata (RFC 7591 §2).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::Implicit => "implicit",
            Self::Password => "password",
            Self::RefreshToken => "refresh_token",
            Self::ClientCredentials => "client_credentials",
            Self::DeviceCode => "urn:ietf:params:oauth:grant-type:device_code",
            Self::TokenExchange => "urn:ietf:params:oauth:grant-type:token-exchange",
            Self::JwtBearer => "urn:ietf:params:oauth:grant-type:jwt-bearer",
        }
    }

    pub(super) fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Who vouched for a client, and so which budgets its requests spend (pushed requests,
/// client assertions, device flows, DPoP proofs): each tier but the first shares pools of its
/// own, so that clients anyone can make never spend what an administrator's clients need.
///
/// The tier is set by how the client came to be, never guessed from a side fact: a client a
/// host builds is [`Administered`](Self::Administered); dynamic registration makes
/// [`SelfRegistered`](Self::SelfRegistered) ones and client ID metadata documents
/// [`MetadataDocument`](Self::MetadataDocument) ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientTier {
    /// Registered by an administrator or built by the host: budgets of its own only.
    Administered,
    /// Registered by anyone through dynamic client registration (RFC 7591): its own budgets,
    /// and the pools all self-registered clients share.
    SelfRegistered,
    /// Read from a client ID metadata document: anyone can name a new one with every request,
    /// so its own budgets bound little; the pools all document clients share bound them.
    MetadataDocument,
}

impl ClientTier {
    /// A short name, as logs and pool keys show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Administered => "administered",
            Self::SelfRegistered => "self-registered",
            Self::MetadataDocument => "metadata-document",
        }
    }
}

/// Whether the user is shown an approval (consent) page for a client after signing in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Approval {
    /// The user approves or denies each authorization request of this client.
    Required,
    /// A first-party client: signing in is approval.
    NotRequired,
}

/// A registered client application.
#[derive(Debug, Clone)]
pub struct Client {
    id: ClientId,
    name: String,
    secret: Option<SecretVerifier>,
    redirect_uris: Vec<String>,
    grant_types: u8,
    scopes: Scope,
    default_scope: Scope,
    approval: Approval,
    audiences: Vec<String>,
    resources: Vec<String>,
    registration_access_token: Option<SecretDigest>,
    dpop_bound: bool,
    par_required: bool,
    /// The previous secret's verifier after a rotation, and until when it still works.
    retiring: Option<(SecretVerifier, UnixTime)>,
    /// The public keys of a `private_key_jwt` client (RFC 7523 §2.2).
    keys: Option<ClientKeys>,
    /// Its OpenID Connect members.
    openid: OpenIdClient,
    /// Who vouched for it: what decides the budgets its requests spend.
    tier: ClientTier,
}

impl Client {
    /// Starts a confidential client (RFC 6749 §2.1): it authenticates with HTTP Basic.
    pub fn confidential(id: impl AsRef<str>, secret: SecretVerifier) -> ClientBuilder {
        ClientBuilder::new(id.as_ref(), Some(secret))
    }

    /// Starts a confidential client that authenticates with a JWT it signs with one of its
    /// private keys (`private_key_jwt`, RFC 7523 §2.2, RFC 7521 §4.2): `keys` are the public
    /// halves. Verified with feature `private-key-jwt`; without it such a client cannot
    /// authenticate.
    pub fn private_key_jwt(id: impl AsRef<str>, keys: ClientKeys) -> ClientBuilder {
        ClientBuilder::new(id.as_ref(), None).keys(keys)
    }

    /// Starts a confidential client that authenticates with a TLS client certificate from a
    /// CA the server trusts, naming `subject` (`tls_client_auth`, RFC 8705 §2.1): it sends
    /// `client_id` in the body of its requests, over a connection on which it presented the
    /// certificate. Verified with feature `mtls` on a server that trusts client CAs; without
    /// it such a client cannot authenticate. One that registers itself (RFC 7591) with a
    /// `jwks` keeps those keys to verify its request objects only (as FAPI 2.0 Message Signing
    /// needs), never its authentication.
    pub fn tls_client_auth(id: impl AsRef<str>, subject: TlsClientAuth) -> ClientBuilder {
        ClientBuilder::new(id.as_ref(), None).certificate(tls::CertificateAuth::Tls(subject))
    }

    /// Starts a confidential client that authenticates with a self-signed TLS client
    /// certificate (`self_signed_tls_client_auth`, RFC 8705 §2.2): one of the certificates in
    /// the `x5c` members of `keys`, which must be a `jwks` (a `jwks_uri` is refused:
    /// [`ClientError::MissingCertificate`]). It sends `client_id` in the body of its requests.
    /// Verified with feature `mtls` on a server that accepts mutual TLS.
    pub fn self_signed_tls_client_auth(id: impl AsRef<str>, keys: ClientKeys) -> ClientBuilder {
        ClientBuilder::new(id.as_ref(), None)
            .keys(keys)
            .certificate(tls::CertificateAuth::SelfSigned)
    }

    /// Starts a public client: no secret; it sends `client_id` in the request and must use PKCE.
    pub fn public(id: impl AsRef<str>) -> ClientBuilder {
        ClientBuilder::new(id.as_ref(), None)
    }

    /// The client id.
    pub fn id(&self) -> &ClientId {
        &self.id
    }

    /// The name shown to users on the approval page.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The secret verifier, or `None` for a public client.
    pub fn secret(&self) -> Option<&SecretVerifier> {
        self.secret.as_ref()
    }

    /// Whether the client is public: it has neither a secret, nor keys, nor a certificate to
    /// authenticate with.
    pub fn is_public(&self) -> bool {
        self.secret.is_none() && self.keys.is_none() && self.openid.certificate.is_none()
    }

    /// Whether the client authenticates with a key it holds rather than a shared secret:
    /// `private_key_jwt` or mutual TLS, as FAPI 2.0 demands.
    pub(crate) fn authenticates_by_key(&self) -> bool {
        self.secret.is_none() && (self.keys.is_some() || self.tls_subject().is_some())
    }

    /// The public keys of a `private_key_jwt` client (RFC 7523 §2.2), or those of a
    /// `self_signed_tls_client_auth` client holding its certificates; `None` for any other.
    pub fn keys(&self) -> Option<&ClientKeys> {
        self.keys.as_ref()
    }

    /// The subject a `tls_client_auth` client's certificate names (RFC 8705 §2.1); `None`
    /// for any other client.
    pub fn tls_subject(&self) -> Option<&TlsClientAuth> {
        match &self.openid.certificate {
            Some(tls::CertificateAuth::Tls(subject)) => Some(subject),
            _ => None,
        }
    }

    /// Whether it authenticates with a self-signed certificate from its keys
    /// (`self_signed_tls_client_auth`, RFC 8705 §2.2).
    pub fn uses_self_signed_certificate(&self) -> bool {
        self.openid.certificate == Some(tls::CertificateAuth::SelfSigned)
    }

    /// Whether it authenticates with a TLS client certificate, either way (RFC 8705 §2).
    pub(crate) fn uses_certificate(&self) -> bool {
        self.openid.certificate.is_some()
    }

    /// The registered redirect URIs, matched exactly.
    pub fn redirect_uris(&self) -> &[String] {
        &self.redirect_uris
    }

    /// Whether `uri` is registered, by exact string comparison (RFC 9700 §4.1.3), except that
    /// a registered loopback URI (`http` on `127.0.0.1`, `[::1]` or `localhost`) matches with
    /// any port, as native apps listen on whatever port is free (RFC 8252 §7.3).
    pub fn has_redirect_uri(&self, uri: &str) -> bool {
        self.redirect_uris
            .iter()
            .any(|r| r == uri || same_loopback_but_port(r, uri))
    }

    /// Whether the administrator agreed `grant` with this client.
    pub fn allows(&self, grant: GrantType) -> bool {
        self.grant_types & grant.bit() != 0
    }

    /// Whether the client is issued refresh tokens (it is agreed for the `refresh_token` grant).
    pub fn issues_refresh_tokens(&self) -> bool {
        self.allows(GrantType::RefreshToken)
    }

    /// Every scope token the client may be granted.
    pub fn scopes(&self) -> &Scope {
        &self.scopes
    }

    /// The scope granted when a request names none.
    pub fn default_scope(&self) -> &Scope {
        &self.default_scope
    }

    /// Whether users approve this client's requests on an approval page.
    pub fn approval(&self) -> Approval {
        self.approval
    }

    /// The audiences this client serves as a resource server (RFC 7662 §4): it may introspect
    /// any token whose audience is one of them. Empty for an ordinary client.
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// Whether this client serves `audience` as a resource server.
    pub fn serves(&self, audience: &str) -> bool {
        self.audiences.iter().any(|a| a == audience)
    }

    /// The resources this client may ask tokens for (RFC 8707), the first its default; empty
    /// when it may ask for any the server knows.
    pub fn resources(&self) -> &[String] {
        &self.resources
    }

    /// Whether this client may ask a token for `resource` (one the server knows): it may have
    /// every resource when none is [allowed](ClientBuilder::resource), else those allowed,
    /// compared as the server compares resources (equal after RFC 3986 §6.2.2 and §6.2.3
    /// normalisation: see [`AuthorizationServerBuilder::resources`]).
    ///
    /// ```
    /// use grantor::client::{Client, GrantType};
    ///
    /// let client = Client::public("app")
    ///     .redirect_uri("https://app.example/cb")
    ///     .grant_types([GrantType::AuthorizationCode])
    ///     .resource("https://files.example")
    ///     .build()
    ///     .unwrap();
    /// assert!(client.may_target("HTTPS://FILES.example:443/"));
    /// assert!(!client.may_target("https://files.example/reports"));
    /// ```
    ///
    /// [`AuthorizationServerBuilder::resources`]: crate::AuthorizationServerBuilder::resources
    pub fn may_target(&self, resource: &str) -> bool {
        if self.resources.is_empty() || self.resources.iter().any(|r| r == resource) {
            return true;
        }
        // Only on a byte mismatch: the allowed resources are few, normalised one by one.
        let Some(wanted) = canonical(resource) else {
            return false;
        };
        self.resources
            .iter()
            .any(|r| canonical(r).is_some_and(|allowed| allowed == wanted))
    }

    /// The SHA-256 digest of the client's registration access token (RFC 7592 §1.1), for a
    /// client that registered itself (RFC 7591): what authorizes reading, replacing and
    /// deleting its registration. `None` for a client an administrator registered, which
    /// cannot be managed that way.
    pub fn registration_access_token(&self) -> Option<&SecretDigest> {
        self.registration_access_token.as_ref()
    }

    /// Whether the client must prove possession of a DPoP key at the token endpoint, so that
    /// every access token it gets is sender-constrained (RFC 9449 §5.2,
    /// `dpop_bound_access_tokens`): a token request without a proof is refused.
    pub fn requires_dpop(&self) -> bool {
        self.dpop_bound
    }

    /// Whether the client must push its authorization requests (RFC 9126 §6,
    /// `require_pushed_authorization_requests`): the authorization endpoint refuses its
    /// requests that do not carry a `request_uri`.
    pub fn requires_pushed_requests(&self) -> bool {
        self.par_required
    }

    /// How its ID tokens are signed (`id_token_signed_response_alg`, OIDC Registration §2);
    /// `None`: the server's default, RS256 (ES256 under a FAPI 2.0 profile).
    pub fn id_token_signing_algorithm(&self) -> Option<crate::signing::SigningAlgorithm> {
        self.openid.id_token_alg
    }

    /// How its userinfo answers are signed (`userinfo_signed_response_alg`, OIDC Registration
    /// §2); `None`: they are JSON.
    pub fn userinfo_signing_algorithm(&self) -> Option<crate::signing::SigningAlgorithm> {
        self.openid.userinfo_alg
    }

    /// How its JWT-secured authorization responses are signed
    /// (`authorization_signed_response_alg`, JARM §3); `None`: RS256 (ES256 under FAPI 2.0).
    pub fn authorization_signing_algorithm(&self) -> Option<crate::signing::SigningAlgorithm> {
        self.openid.authorization_alg
    }

    /// How the introspection answers it asks for as JWTs are signed
    /// (`introspection_signed_response_alg`, RFC 9701 §6); `None`: RS256 (ES256 under FAPI 2.0).
    pub fn introspection_signing_algorithm(&self) -> Option<crate::signing::SigningAlgorithm> {
        self.openid.introspection_alg
    }

    /// The one algorithm its request objects may be signed with (`request_object_signing_alg`,
    /// RFC 9101 §10.2); `None`: any of those the server verifies.
    pub fn request_object_signing_algorithm(
        &self,
    ) -> Option<crate::signing::ClientSigningAlgorithm> {
        self.openid.request_object_alg
    }

    /// Where a logout it asks for may send the browser back (`post_logout_redirect_uris`,
    /// RP-Initiated Logout 1.0 §3.1), matched exactly.
    pub fn post_logout_redirect_uris(&self) -> &[String] {
        &self.openid.post_logout_redirect_uris
    }

    /// Where grantor posts a logout token when a session it was issued tokens in ends
    /// (`backchannel_logout_uri`, Back-Channel Logout 1.0 §2.2).
    pub fn backchannel_logout_uri(&self) -> Option<&str> {
        self.openid.backchannel_logout_uri.as_deref()
    }

    /// Whether it sends its secret in the token request's body (`client_secret_post`, RFC
    /// 6749 §2.3.1) rather than with HTTP Basic; the other way is refused to it.
    pub fn sends_secret_in_body(&self) -> bool {
        self.openid.secret_in_body
    }

    /// Whether it was read from a client ID metadata document (its id is the document's URL)
    /// rather than registered: no one vouched for it, so its approval page always asks and
    /// marks it unverified.
    pub fn is_from_metadata_document(&self) -> bool {
        self.tier == ClientTier::MetadataDocument
    }

    /// Who vouched for the client: an administrator, nobody but its registrant, or nobody at
    /// all (a metadata document anyone can name). Every budget of what a client's requests
    /// make the server keep is chosen by this tier.
    pub fn tier(&self) -> ClientTier {
        self.tier
    }

    /// The most seconds since the user's sign-in it accepts when its request sends no
    /// `max_age` (`default_max_age`, OIDC Registration §2).
    pub fn default_max_age(&self) -> Option<u64> {
        self.openid.default_max_age
    }

    /// Whether it registered `require_auth_time` (OIDC Registration §2); its ID tokens carry
    /// `auth_time` either way.
    pub fn requires_auth_time(&self) -> bool {
        self.openid.require_auth_time
    }

    /// Whether it registered as a native application (`application_type: native`, OIDC
    /// Registration §2) rather than a web one.
    pub fn is_native_application(&self) -> bool {
        self.openid.native
    }

    /// The sector of a client with pairwise subject identifiers (`subject_type: pairwise`,
    /// OIDC Core §8.1): the host its `sub` values are computed for, shared by every client of
    /// that sector. `None`: public subjects, the user id.
    pub fn pairwise_sector(&self) -> Option<&str> {
        self.openid.sector.as_deref()
    }

    /// The `sector_identifier_uri` it registered (OIDC Registration §2), whose host is its
    /// sector.
    pub fn sector_identifier_uri(&self) -> Option<&str> {
        self.openid.sector_identifier_uri.as_deref()
    }

    /// The `sub` this client knows `user` by (OIDC Core §8): the user id for a public client;
    /// for a pairwise one, the value of its sector under `secret`, and `None` without one
    /// (never the user id in its place, which would tie the client's users to every other's).
    pub(crate) fn subject_for<'u>(
        &self,
        user: &'u UserId,
        secret: Option<&PairwiseSecret>,
    ) -> Option<Cow<'u, str>> {
        match self.pairwise_sector() {
            None => Some(Cow::Borrowed(user.as_str())),
            Some(sector) => Some(Cow::Owned(secret?.subject(sector, user))),
        }
    }

    /// Its OpenID Connect members, as stores keep them.
    #[cfg_attr(
        not(any(feature = "sqlite", feature = "postgres")),
        allow(dead_code, reason = "read by the SQL stores")
    )]
    pub(crate) fn openid(&self) -> &OpenIdClient {
        &self.openid
    }

    /// After a secret rotation, the previous secret's verifier and the instant it stops
    /// working: client authentication accepts it strictly before then, so a client's
    /// deployments can move to the new secret one by one. `None` for a client never rotated
    /// (or a public one).
    pub fn retiring_secret(&self) -> Option<(&SecretVerifier, UnixTime)> {
        self.retiring.as_ref().map(|(v, until)| (v, *until))
    }

    /// This client with `secret` as its verifier and its current one retiring until `until`
    /// (replacing any earlier retiring one); `None` for a public client, which has no secret
    /// to rotate.
    pub(crate) fn with_rotated_secret(
        &self,
        secret: SecretVerifier,
        until: UnixTime,
    ) -> Option<Self> {
        let previous = self.secret.clone()?;
        Some(Self {
            secret: Some(secret),
            retiring: Some((previous, until)),
            ..self.clone()
        })
    }
}

/// Fresh credentials for a new confidential client: a random id, a 256-bit secret to show the
/// client's owner once, and the verifier to keep.
///
/// ```
/// use grantor::client::ClientCredentials;
///
/// let creds = ClientCredentials::generate().unwrap();
/// assert_eq!(creds.secret.expose_secret().len(), 43);
/// assert!(!format!("{creds:?}").contains(creds.secret.expose_secret()));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct ClientCredentials {
    /// A random client id (128 bits, base64url).
    pub client_id: ClientId,
    /// The secret, in the clear: hand it to the client's owner once and drop it.
    pub secret: ClientSecret,
    /// What to register: a SHA-256 digest of the secret.
    pub verifier: SecretVerifier,
}

impl ClientCredentials {
    /// Generates credentials from the OS CSPRNG.
    pub fn generate() -> Result<Self, StoreError> {
        let (client_id, secret) = crate::mint::client_credentials()?;
        let client_id = ClientId::new(client_id).map_err(StoreError::failed)?;
        let secret = ClientSecret::new(secret);
        let verifier = SecretVerifier(Verifier::Digest(secret.digest()));
        Ok(Self {
            client_id,
            secret,
            verifier,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest() -> SecretVerifier {
        ClientCredentials::generate().unwrap().verifier
    }

    #[test]
    fn registration_rules_are_enforced() {
        let public_cc = Client::public("p")
            .grant_types([GrantType::ClientCredentials])
            .build();
        assert_eq!(public_cc.unwrap_err(), ClientError::PublicClientCredentials);
        let no_redirect = Client::confidential("c", digest())
            .grant_types([GrantType::AuthorizationCode])
            .build();
        assert_eq!(no_redirect.unwrap_err(), ClientError::MissingRedirectUri);
        let fragment = Client::confidential("c", digest())
            .redirect_uri("https://app.example/cb#x")
            .build();
        assert_eq!(fragment.unwrap_err(), ClientError::InvalidRedirectUri);
        let relative = Client::confidential("c", digest())
            .redirect_uri("/cb")
            .build();
        assert_eq!(relative.unwrap_err(), ClientError::InvalidRedirectUri);
        for insecure in [
            "http://app.example/cb",
            "https://user@app.example/cb",
            "https://app.example\\@evil.example/cb",
        ] {
            let refused = Client::confidential("c", digest())
                .redirect_uri(insecure)
                .build();
            assert_eq!(
                refused.unwrap_err(),
                ClientError::InsecureRedirectUri,
                "{insecure}"
            );
        }
        let allowed = Client::confidential("c", digest())
            .redirect_uri("http://app.example/cb")
            .allow_insecure_redirect_uris()
            .build();
        assert!(allowed.is_ok());
        for fine in [
            "https://app.example/cb",
            "http://127.0.0.1:8081/cb",
            "http://localhost/cb",
            "http://[::1]:9/cb",
            "com.example.app:/oauth2redirect",
        ] {
            let built = Client::confidential("c", digest())
                .redirect_uri(fine)
                .build();
            assert!(built.is_ok(), "{fine}");
        }
        let wide_default = Client::confidential("c", digest())
            .scopes("a")
            .default_scope("a b")
            .build();
        assert_eq!(
            wide_default.unwrap_err(),
            ClientError::DefaultScopeNotAllowed
        );
        assert_eq!(ClientId::new("").unwrap_err(), ClientError::InvalidClientId);
    }

    #[test]
    fn verifiers_round_trip_through_storage() {
        let v = digest();
        assert_eq!(SecretVerifier::from_stored(&v.to_stored()).unwrap(), v);
        assert!(SecretVerifier::from_stored("sha256:abc").is_err());
        assert!(SecretVerifier::from_stored("plaintext").is_err());
        assert!(SecretVerifier::digest(&ClientSecret::new("short")).is_err());
    }

    #[test]
    fn refresh_tokens_follow_the_agreed_grant() {
        let client = Client::confidential("c", digest())
            .grant_types([GrantType::Password, GrantType::RefreshToken])
            .build()
            .unwrap();
        assert!(client.issues_refresh_tokens());
        assert!(!client.allows(GrantType::Implicit));
    }
}
