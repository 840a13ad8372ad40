//! [`ClientBuilder`]: a client's registration, checked as a whole when built.

use super::uris::{check_audience, check_redirect_uri, has_safe_transport};
use super::{
    Approval, Client, ClientError, ClientId, ClientKeys, ClientTier, GrantType, OpenIdClient,
    SecretVerifier,
};
use crate::clock::UnixTime;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::signing::SigningAlgorithm;

/// Builds a [`Client`]; [`ClientBuilder::build`] checks the registration is coherent.
#[derive(Debug)]
#[must_use = "call .build() to get the client"]
pub struct ClientBuilder {
    id: String,
    name: Option<String>,
    secret: Option<SecretVerifier>,
    redirect_uris: Vec<String>,
    grant_types: Vec<GrantType>,
    scopes: String,
    default_scope: Option<String>,
    approval: Approval,
    audiences: Vec<String>,
    resources: Vec<String>,
    registration_access_token: Option<SecretDigest>,
    dpop_bound: bool,
    par_required: bool,
    retiring: Option<(SecretVerifier, UnixTime)>,
    keys: Option<ClientKeys>,
    insecure_redirects: bool,
    openid: OpenIdClient,
    from_document: bool,
}

impl ClientBuilder {
    pub(super) fn new(id: &str, secret: Option<SecretVerifier>) -> Self {
        Self {
            id: id.to_owned(),
            name: None,
            secret,
            redirect_uris: Vec::new(),
            grant_types: Vec::new(),
            scopes: String::new(),
            default_scope: None,
            approval: Approval::Required,
            audiences: Vec::new(),
            resources: Vec::new(),
            registration_access_token: None,
            dpop_bound: false,
            par_required: false,
            retiring: None,
            keys: None,
            insecure_redirects: false,
            openid: OpenIdClient::default(),
            from_document: false,
        }
    }

    /// The name shown to users (defaults to the client id).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Registers a redirect URI: absolute, without a fragment (RFC 6749 §3.1.2), in printable
    /// ASCII (percent-encode anything else).
    pub fn redirect_uri(mut self, uri: impl Into<String>) -> Self {
        self.redirect_uris.push(uri.into());
        self
    }

    /// The grant types agreed with the client.
    pub fn grant_types(mut self, grants: impl IntoIterator<Item = GrantType>) -> Self {
        self.grant_types.extend(grants);
        self
    }

    /// Every scope the client may be granted, space-delimited.
    pub fn scopes(mut self, scopes: impl Into<String>) -> Self {
        self.scopes = scopes.into();
        self
    }

    /// The scope granted when a request names none (defaults to all of [`ClientBuilder::scopes`]).
    pub fn default_scope(mut self, scope: impl Into<String>) -> Self {
        self.default_scope = Some(scope.into());
        self
    }

    /// Whether users approve this client's requests (default: required).
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approval = approval;
        self
    }

    /// Registers the client as a resource server for `audience` (an absolute URI, such as the
    /// server's [default audience](crate::AuthorizationServerBuilder::default_audience)): it may
    /// introspect every token of that audience (RFC 7662 §4). Only confidential clients may
    /// serve an audience; call it once per audience.
    pub fn resource_server(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Allows the client tokens for `resource` (RFC 8707), an absolute URI without a fragment
    /// that the server [knows](crate::AuthorizationServerBuilder::resources). Once any is
    /// allowed, the client may ask for those alone, and the first is its default audience;
    /// with none (the default) it may ask for any resource the server knows and gets the
    /// server's default audience. Call it once per resource. It is compared with what a
    /// request names after normalisation, as the server compares resources
    /// ([`resources`](crate::AuthorizationServerBuilder::resources)).
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resources.push(resource.into());
        self
    }

    /// Keeps the digest of the client's registration access token (RFC 7592 §1.1): the client
    /// registered itself and may read, replace and delete its registration with that token.
    /// grantor's registration endpoint sets it; a store keeps it as it keeps the secret's
    /// verifier.
    pub fn registration_access_token(mut self, digest: SecretDigest) -> Self {
        self.registration_access_token = Some(digest);
        self
    }

    /// Requires the client to send a DPoP proof with every token request, so its access tokens
    /// are all bound to its key (RFC 9449 §5.2, `dpop_bound_access_tokens`; default: proofs are
    /// optional). Meaningful with DPoP enabled on the server (feature `dpop`).
    pub fn require_dpop(mut self, required: bool) -> Self {
        self.dpop_bound = required;
        self
    }

    /// Requires the client to push every authorization request first (RFC 9126 §6,
    /// `require_pushed_authorization_requests`; default: pushing is optional): the
    /// authorization endpoint then accepts only a `request_uri`. Meaningful with pushed
    /// requests enabled on the server ([`PushedRequests`](crate::settings::PushedRequests)).
    pub fn require_pushed_requests(mut self, required: bool) -> Self {
        self.par_required = required;
        self
    }

    /// Keeps the verifier of the client's previous secret, accepted strictly before `until`
    /// besides the current one: what a secret rotation leaves
    /// ([`AuthorizationServer::rotate_client_secret`](crate::AuthorizationServer::rotate_client_secret)).
    /// A store restores it with this; only a confidential client may have one.
    pub fn retiring_secret(mut self, verifier: SecretVerifier, until: UnixTime) -> Self {
        self.retiring = Some((verifier, until));
        self
    }

    /// The keys of a `private_key_jwt` client ([`Client::private_key_jwt`]), of a
    /// `self_signed_tls_client_auth` one, or those a `tls_client_auth` client registered to
    /// sign its request objects with.
    pub(crate) fn keys(mut self, keys: ClientKeys) -> Self {
        self.keys = Some(keys);
        self
    }

    /// How a certificate client authenticates ([`Client::tls_client_auth`],
    /// [`Client::self_signed_tls_client_auth`]).
    pub(super) fn certificate(mut self, certificate: super::tls::CertificateAuth) -> Self {
        self.openid.certificate = Some(certificate);
        self
    }

    /// Accepts redirect URIs that are `http` on a host other than a loopback one, or that carry
    /// user information or a backslash ([`ClientError::InsecureRedirectUri`] without it).
    /// Codes sent over plain `http` can be read on the way: only for a client whose
    /// administrator knows its network (a test rig, a closed network), never one that
    /// registers itself.
    pub fn allow_insecure_redirect_uris(mut self) -> Self {
        self.insecure_redirects = true;
        self
    }

    /// Signs this client's ID tokens with `algorithm` (`id_token_signed_response_alg`, OIDC
    /// Registration §2; default: the server's, RS256).
    pub fn id_token_signing_algorithm(mut self, algorithm: SigningAlgorithm) -> Self {
        self.openid.id_token_alg = Some(algorithm);
        self
    }

    /// Answers this client's userinfo requests with a JWT signed with `algorithm`
    /// (`userinfo_signed_response_alg`, OIDC Registration §2, OIDC Core §5.3.2) instead of
    /// JSON: `Content-Type: application/jwt`, with `iss` and `aud` beside the claims.
    pub fn userinfo_signing_algorithm(mut self, algorithm: SigningAlgorithm) -> Self {
        self.openid.userinfo_alg = Some(algorithm);
        self
    }

    /// Signs this client's JWT-secured authorization responses (JARM: `response_mode` `jwt`,
    /// `query.jwt`, `fragment.jwt`, `form_post.jwt`) with `algorithm`
    /// (`authorization_signed_response_alg`, JARM §3; default RS256).
    pub fn authorization_signing_algorithm(mut self, algorithm: SigningAlgorithm) -> Self {
        self.openid.authorization_alg = Some(algorithm);
        self
    }

    /// Signs the introspection answers this client asks for as JWTs (RFC 9701, `Accept:
    /// application/token-introspection+jwt`) with `algorithm`
    /// (`introspection_signed_response_alg`, RFC 9701 §6; default RS256).
    pub fn introspection_signing_algorithm(mut self, algorithm: SigningAlgorithm) -> Self {
        self.openid.introspection_alg = Some(algorithm);
        self
    }

    /// Accepts this client's request objects (RFC 9101) signed with `algorithm` only
    /// (`request_object_signing_alg`; default: any the server verifies).
    pub fn request_object_signing_algorithm(
        mut self,
        algorithm: crate::signing::ClientSigningAlgorithm,
    ) -> Self {
        self.openid.request_object_alg = Some(algorithm);
        self
    }

    /// Registers a URI a logout may send the browser back to (`post_logout_redirect_uris`,
    /// RP-Initiated Logout 1.0 §3.1): absolute, without a fragment, `https` or loopback `http`
    /// as for redirect URIs.
    pub fn post_logout_redirect_uri(mut self, uri: impl Into<String>) -> Self {
        self.openid.post_logout_redirect_uris.push(uri.into());
        self
    }

    /// Where grantor posts a logout token (Back-Channel Logout 1.0 §2.2) when a session the
    /// client was issued tokens in ends: `https`, or `http` on a loopback host; no fragment.
    pub fn backchannel_logout_uri(mut self, uri: impl Into<String>) -> Self {
        self.openid.backchannel_logout_uri = Some(uri.into());
        self
    }

    /// A confidential client that sends its secret in the token request's body
    /// (`client_secret_post`, RFC 6749 §2.3.1: "NOT RECOMMENDED", for clients that cannot use
    /// HTTP Basic) instead of HTTP Basic, which it is then refused. Default: HTTP Basic.
    pub fn secret_in_body(mut self, in_body: bool) -> Self {
        self.openid.secret_in_body = in_body;
        self
    }

    /// The most seconds since the user's sign-in this client accepts when its request sends
    /// no `max_age` (`default_max_age`, OIDC Registration §2): an older sign-in is asked again.
    pub fn default_max_age(mut self, max_age: std::time::Duration) -> Self {
        self.openid.default_max_age = Some(max_age.as_secs());
        self
    }

    /// Whether the client requires `auth_time` in its ID tokens (`require_auth_time`, OIDC
    /// Registration §2). grantor's ID tokens always carry it; the registration answers it back.
    pub fn require_auth_time(mut self, required: bool) -> Self {
        self.openid.require_auth_time = required;
        self
    }

    /// A native application (`application_type: native`, OIDC Registration §2) rather than a
    /// web one (the default).
    pub fn native_application(mut self, native: bool) -> Self {
        self.openid.native = native;
        self
    }

    /// Gives the client pairwise subject identifiers (`subject_type: pairwise`, OIDC Core
    /// §8.1) in `sector`: the host name of its redirect URIs (or of the `sector_identifier_uri`
    /// its owner keeps), compared without case. Every client of one sector knows a user by the
    /// same `sub`, and no client of another sector does. Needs the server's
    /// [pairwise secret](crate::settings::OpenIdConnect::pairwise_secret). Default: public
    /// subjects, the user id.
    pub fn pairwise_subjects(mut self, sector: impl Into<String>) -> Self {
        self.openid.sector = Some(sector.into());
        self
    }

    /// The `sector_identifier_uri` a registration read the sector from, if any.
    pub(crate) fn sector_identifier_uri(mut self, uri: Option<String>) -> Self {
        self.openid.sector_identifier_uri = uri;
        self
    }

    /// A client read from a client ID metadata document.
    pub(crate) fn read_from_document(mut self) -> Self {
        self.from_document = true;
        self
    }

    /// The OpenID Connect members as a store kept them.
    #[cfg_attr(
        not(any(feature = "sqlite", feature = "postgres")),
        allow(dead_code, reason = "called by the SQL stores")
    )]
    pub(crate) fn openid(mut self, openid: OpenIdClient) -> Self {
        self.openid = openid;
        self
    }

    /// A certificate client's subject is well formed, a self-signed one's `jwks` holds a
    /// certificate, and neither has a secret. A `tls_client_auth` client may have keys: they
    /// verify its request objects (FAPI 2.0 Message Signing), never its authentication.
    fn check_certificate(&self) -> Result<(), ClientError> {
        use super::tls::CertificateAuth;
        match &self.openid.certificate {
            None => Ok(()),
            Some(_) if self.secret.is_some() => Err(ClientError::InvalidTlsClientAuth),
            Some(CertificateAuth::Tls(subject)) => subject.check(),
            Some(CertificateAuth::SelfSigned) => match &self.keys {
                Some(keys) if !super::tls::certificate_thumbprints(keys).is_empty() => Ok(()),
                _ => Err(ClientError::MissingCertificate),
            },
        }
    }

    /// Checks and builds the client.
    pub fn build(self) -> Result<Client, ClientError> {
        let id = ClientId::new(&self.id)?;
        for uri in &self.redirect_uris {
            check_redirect_uri(uri)?;
            if !self.insecure_redirects && !has_safe_transport(uri) {
                return Err(ClientError::InsecureRedirectUri);
            }
        }
        let logout_uris = self.openid.post_logout_redirect_uris.iter();
        for uri in logout_uris.chain(&self.openid.backchannel_logout_uri) {
            check_redirect_uri(uri)?;
            if !self.insecure_redirects && !has_safe_transport(uri) {
                return Err(ClientError::InsecureRedirectUri);
            }
        }
        let grant_types = self.grant_types.iter().fold(0u8, |bits, g| bits | g.bit());
        let has = |g: GrantType| grant_types & g.bit() != 0;
        let public =
            self.secret.is_none() && self.keys.is_none() && self.openid.certificate.is_none();
        if public && has(GrantType::ClientCredentials) {
            return Err(ClientError::PublicClientCredentials);
        }
        if (has(GrantType::AuthorizationCode) || has(GrantType::Implicit))
            && self.redirect_uris.is_empty()
        {
            return Err(ClientError::MissingRedirectUri);
        }
        let scopes = Scope::parse(&self.scopes).map_err(|_| ClientError::InvalidScope)?;
        let default_scope = match &self.default_scope {
            Some(s) => Scope::parse(s).map_err(|_| ClientError::InvalidScope)?,
            None => scopes.clone(),
        };
        if !default_scope.is_subset_of(&scopes) {
            return Err(ClientError::DefaultScopeNotAllowed);
        }
        if self.openid.secret_in_body && self.secret.is_none() {
            return Err(ClientError::SecretInBodyWithoutSecret);
        }
        if self.retiring.is_some() && self.secret.is_none() {
            return Err(ClientError::PublicRetiringSecret);
        }
        if !self.audiences.is_empty() && public {
            return Err(ClientError::PublicResourceServer);
        }
        for audience in self.audiences.iter().chain(&self.resources) {
            check_audience(audience)?;
        }
        self.check_certificate()?;
        let mut openid = self.openid;
        if let Some(sector) = &mut openid.sector {
            sector.make_ascii_lowercase();
            if !crate::subject::is_sector(sector) {
                return Err(ClientError::InvalidSector);
            }
        }
        Ok(Client {
            name: self.name.unwrap_or_else(|| self.id.clone()),
            id,
            secret: self.secret,
            redirect_uris: self.redirect_uris,
            grant_types,
            scopes,
            default_scope,
            approval: self.approval,
            audiences: self.audiences,
            resources: self.resources,
            registration_access_token: self.registration_access_token,
            dpop_bound: self.dpop_bound,
            par_required: self.par_required,
            retiring: self.retiring,
            keys: self.keys,
            openid,
            tier: if self.from_document {
                ClientTier::MetadataDocument
            } else if self.registration_access_token.is_some() {
                ClientTier::SelfRegistered
            } else {
                ClientTier::Administered
            },
        })
    }
}
