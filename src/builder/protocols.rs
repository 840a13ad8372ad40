//! The builder's setters for the protocols a server may offer beyond the core grants:
//! self-registration, JWT access tokens, DPoP, certificate-bound tokens, `private_key_jwt` key
//! resolution, pushed requests, the device flow and token exchange; and [`Features`], what the
//! features were given and how each is wired into the server. Outside its own module, a
//! feature is named only here (and where `lib.rs` declares it).

use std::sync::Arc;

use super::{AuthorizationServerBuilder, ConfigError};
use crate::exchange::ExchangePolicy;
use crate::grant::client_auth::ClientAssertions;
use crate::grant::jwt_bearer::GrantAssertions;
use crate::grant::proof::ProofOfPossession;
use crate::grant::request_object::RequestObjectVerifier;
use crate::oidc::IdTokenSigner;
use crate::registration::RegistrationPolicy;
use crate::settings::DeviceFlow;
use crate::settings::PushedRequests;
use crate::settings::Settings;
use crate::store::{AttemptCounter, KeyStore, SingleUseStore};
use crate::token_format::AccessTokenFormat;

/// What the features were given: each feature's settings, present only when it is compiled in.
#[derive(Default)]
pub(super) struct Features {
    #[cfg(feature = "jwt")]
    jwt: Option<crate::jwt::JwtAccessTokens>,
    /// The threads slow signatures (RS256) are made on, for access and ID tokens alike.
    #[cfg(feature = "jwt")]
    signing: crate::jwt::SigningPool,
    #[cfg(feature = "dpop")]
    dpop: Option<crate::dpop::Dpop>,
    #[cfg(feature = "private-key-jwt")]
    client_keys: Option<Arc<dyn crate::client_assertion::ClientKeyResolver>>,
    #[cfg(feature = "oidc")]
    openid: Option<crate::settings::OpenIdConnect>,
    /// The issuers whose assertions the JWT-bearer grant takes, and the host's mapping of
    /// their claims to users.
    #[cfg(feature = "private-key-jwt")]
    trusted: Vec<crate::trust::TrustedIssuer>,
    #[cfg(feature = "private-key-jwt")]
    assertion_users: Option<Arc<dyn crate::trust::AssertionUsers>>,
    /// Where issuers' key sets are fetched, for the JWT-bearer grant.
    #[cfg(feature = "private-key-jwt")]
    outbound: Option<Arc<dyn crate::outbound::Outbound>>,
    /// Mutual TLS client authentication, as the host set it.
    #[cfg(feature = "mtls")]
    mutual_tls: Option<crate::mtls::MutualTls>,
    /// Its CAs once checked ([`Features::mutual_tls_offer`]).
    #[cfg(feature = "mtls")]
    client_cas: Option<Arc<dyn crate::mtls::CertificateAuthority>>,
}

/// What the features give the server: the implementations of the core seams they provide.
pub(super) struct Wired {
    pub(super) access_tokens: Option<Arc<dyn AccessTokenFormat>>,
    pub(super) proofs: Option<Arc<dyn ProofOfPossession>>,
    pub(super) client_assertions: Option<Arc<dyn ClientAssertions>>,
    /// Request objects' verification (RFC 9101), with the client assertions' JWS checks.
    pub(super) request_objects: Option<Arc<dyn RequestObjectVerifier>>,
    pub(super) id_tokens: Option<Arc<dyn IdTokenSigner>>,
    /// Trusted issuers' assertions (the JWT-bearer grant, RFC 7523).
    pub(super) grant_assertions: Option<Arc<dyn GrantAssertions>>,
    /// The client CAs, when clients may authenticate with certificates (RFC 8705 §2).
    pub(super) client_cas: Option<Arc<dyn crate::mtls::CertificateAuthority>>,
}

impl Features {
    /// Whether access tokens are JWTs (feature `jwt`).
    pub(super) fn jwt_access_tokens(&self) -> bool {
        #[cfg(feature = "jwt")]
        return self.jwt.is_some();
        #[cfg(not(feature = "jwt"))]
        false
    }

    /// How often JWT signing keys rotate, when they rotate on a schedule (feature `jwt`).
    pub(super) fn key_rotation_period(&self) -> Option<std::time::Duration> {
        #[cfg(feature = "jwt")]
        return self.jwt.as_ref().and_then(|jwt| jwt.rotation_period());
        #[cfg(not(feature = "jwt"))]
        None
    }

    /// The OpenID Connect settings, when feature `oidc` serves it.
    pub(super) fn openid(&self) -> Option<crate::settings::OpenIdConnect> {
        #[cfg(feature = "oidc")]
        return self.openid.clone();
        #[cfg(not(feature = "oidc"))]
        None
    }

    /// The algorithms DPoP proofs are verified with, when feature `dpop` accepts them.
    pub(super) fn dpop_algorithms(&self) -> Option<&'static [&'static str]> {
        #[cfg(feature = "dpop")]
        return self.dpop.map(|_| &crate::dpop::ALGORITHMS[..]);
        #[cfg(not(feature = "dpop"))]
        None
    }

    /// The algorithms client assertions are verified with, when feature `private-key-jwt`
    /// accepts them.
    pub(super) fn client_assertion_algs(&self) -> Option<&'static [&'static str]> {
        #[cfg(feature = "private-key-jwt")]
        return Some(&crate::client_assertion::ALGORITHMS);
        #[cfg(not(feature = "private-key-jwt"))]
        None
    }

    /// The algorithms request objects are verified with, when feature `private-key-jwt`
    /// verifies them (RFC 9101).
    pub(super) fn request_object_algs(&self) -> Option<&'static [&'static str]> {
        #[cfg(feature = "private-key-jwt")]
        return Some(&crate::request_object::ALGORITHMS);
        #[cfg(not(feature = "private-key-jwt"))]
        None
    }

    /// Resolves clients' `jwks_uri`s through `outbound` when the host set no resolver of its
    /// own (feature `private-key-jwt`).
    pub(super) fn resolve_keys_through(
        &mut self,
        outbound: Option<&Arc<dyn crate::outbound::Outbound>>,
    ) {
        #[cfg(feature = "private-key-jwt")]
        {
            self.outbound = outbound.cloned();
        }
        #[cfg(feature = "private-key-jwt")]
        if self.client_keys.is_none()
            && let Some(outbound) = outbound
        {
            self.client_keys = Some(Arc::new(crate::client_assertion::FetchedKeys::new(
                Arc::clone(outbound),
            )));
        }
        #[cfg(not(feature = "private-key-jwt"))]
        let _ = outbound;
    }

    /// Whether issuers are trusted (the JWT-bearer grant is served), once checked: at most
    /// [`MAX_TRUSTED_ISSUERS`](crate::trust::MAX_TRUSTED_ISSUERS), each once, and an outbound
    /// seam to fetch the keys of those that give a `jwks_uri`.
    pub(super) fn check_trusted_issuers(&self, outbound: bool) -> Result<bool, ConfigError> {
        #[cfg(feature = "private-key-jwt")]
        {
            let trusted = &self.trusted;
            let mut issuers: Vec<&str> = trusted.iter().map(|t| t.issuer()).collect();
            issuers.sort_unstable();
            issuers.dedup();
            if trusted.len() > crate::trust::MAX_TRUSTED_ISSUERS || issuers.len() < trusted.len() {
                return Err(ConfigError::TrustedIssuers);
            }
            if !outbound && trusted.iter().any(|t| t.fetches_keys()) {
                return Err(ConfigError::Missing("outbound"));
            }
            Ok(!trusted.is_empty())
        }
        #[cfg(not(feature = "private-key-jwt"))]
        {
            let _ = outbound;
            Ok(false)
        }
    }

    /// What the server offers of mutual TLS client authentication (feature `mtls`), its CAs
    /// and alias URL checked: a bad one is the builder's [`ConfigError::MutualTls`].
    pub(super) fn mutual_tls_offer(
        &mut self,
    ) -> Result<Option<crate::settings::MutualTlsOffer>, ConfigError> {
        #[cfg(feature = "mtls")]
        {
            let Some(settings) = &self.mutual_tls else {
                return Ok(None);
            };
            let aliases = settings.aliases().map_err(ConfigError::MutualTls)?;
            let cas = settings.authority().map_err(ConfigError::MutualTls)?;
            let offer = crate::settings::MutualTlsOffer {
                tls_client_auth: cas.any(),
                aliases: aliases.map(str::to_owned),
            };
            self.client_cas = Some(Arc::new(cas));
            Ok(Some(offer))
        }
        #[cfg(not(feature = "mtls"))]
        Ok(None)
    }

    /// Whether clients' `jwks_uri`s can be resolved (feature `private-key-jwt`, a resolver).
    pub(super) fn jwks_uri_resolvable(&self) -> bool {
        #[cfg(feature = "private-key-jwt")]
        return self.client_keys.is_some();
        #[cfg(not(feature = "private-key-jwt"))]
        false
    }

    /// Each feature's implementation of its core seam, over the server's settings, single-use
    /// values, key material and attempt counters.
    pub(super) fn wire(
        self,
        config: &Settings,
        single_use: &Arc<dyn SingleUseStore>,
        keys: &Arc<dyn KeyStore>,
        attempts: &Arc<dyn AttemptCounter>,
    ) -> Wired {
        let _ = (config, single_use, keys, attempts);
        #[cfg(feature = "jwt")]
        let signatures = Arc::new(crate::jwt::Signatures::new(self.signing));
        #[cfg(feature = "jwt")]
        let access_tokens = self.jwt.map(|jwt| jwt.wired(keys, &signatures));
        #[cfg(not(feature = "jwt"))]
        let access_tokens = None;
        #[cfg(feature = "dpop")]
        let proofs = self.dpop.map(|settings| {
            let token_url = config.absolute_url(&config.endpoints.token);
            let par_url = config.absolute_url(&config.endpoints.pushed_requests);
            Arc::new(crate::dpop::Checker::new(
                settings,
                Arc::clone(single_use),
                Arc::clone(attempts),
                Arc::clone(keys),
                (token_url, par_url),
                &config.issuer,
                &config.resources.known,
            )) as Arc<dyn ProofOfPossession>
        });
        #[cfg(not(feature = "dpop"))]
        let proofs = None;
        #[cfg(feature = "private-key-jwt")]
        let request_objects = Some(Arc::new(crate::request_object::Verifier {
            resolver: self.client_keys.clone(),
            issuer: config.issuer.clone(),
            fapi2: config.profile.is_fapi2(),
        }) as Arc<dyn RequestObjectVerifier>);
        #[cfg(not(feature = "private-key-jwt"))]
        let request_objects = None;
        #[cfg(feature = "private-key-jwt")]
        let client_assertions = Some(Arc::new(crate::client_assertion::Checker {
            single_use: Arc::clone(single_use),
            attempts: Arc::clone(attempts),
            resolver: self.client_keys,
            issuer: config.issuer.clone(),
            token_url: config.absolute_url(&config.endpoints.token),
            fapi2: config.profile.is_fapi2(),
        }) as Arc<dyn ClientAssertions>);
        #[cfg(not(feature = "private-key-jwt"))]
        let client_assertions = None;
        #[cfg(feature = "oidc")]
        let id_tokens = self.openid.map(|openid| {
            let period = crate::jwt::RotatingKeys::period_secs(openid.key_rotation);
            // FAPI 2.0 never signs RS256, whoever built the client.
            let default = if config.profile.is_fapi2() {
                crate::signing::SigningAlgorithm::ES256
            } else {
                crate::signing::SigningAlgorithm::RS256
            };
            Arc::new(crate::jwt::IdTokenKeys::new(
                std::time::Duration::from_secs(period),
                keys,
                Arc::clone(&signatures),
                default,
            )) as Arc<dyn IdTokenSigner>
        });
        #[cfg(not(feature = "oidc"))]
        let id_tokens = None;
        #[cfg(feature = "private-key-jwt")]
        let grant_assertions = (!self.trusted.is_empty()).then(|| {
            let fetched = self.outbound.map(crate::client_assertion::FetchedKeys::new);
            Arc::new(crate::trust::Issuers {
                trusted: self.trusted,
                users: self.assertion_users,
                fetched,
                single_use: Arc::clone(single_use),
                attempts: Arc::clone(attempts),
                audiences: [
                    config.issuer.clone(),
                    config.absolute_url(&config.endpoints.token),
                ],
            }) as Arc<dyn GrantAssertions>
        });
        #[cfg(not(feature = "private-key-jwt"))]
        let grant_assertions = None;
        #[cfg(feature = "mtls")]
        let client_cas = self.client_cas;
        #[cfg(not(feature = "mtls"))]
        let client_cas = None;
        Wired {
            client_cas,
            access_tokens,
            proofs,
            client_assertions,
            request_objects,
            id_tokens,
            grant_assertions,
        }
    }
}

impl AuthorizationServerBuilder {
    /// Serves dynamic client registration (RFC 7591) and client management (RFC 7592) under
    /// `policy`, at the [registration path](crate::settings::EndpointPaths::registration), and lists it as
    /// `registration_endpoint` in the metadata. Without it (the default),
    /// [`register`](crate::AuthorizationServer::register) and
    /// [`client_configuration`](crate::AuthorizationServer::client_configuration) answer 404.
    pub fn registration(mut self, policy: RegistrationPolicy) -> Self {
        self.registration = Some(policy);
        self
    }

    /// Issues access tokens as JWTs (RFC 9068) signed by `settings`' keys, publishes those
    /// keys ([`AuthorizationServer::jwks`](crate::AuthorizationServer::jwks), `jwks_uri` in the metadata), and validates bearer
    /// JWTs by their signature and claims. The keys' rotation period must be at least the
    /// access-token lifetime. Feature `jwt`; see [`crate::jwt`].
    #[cfg(feature = "jwt")]
    pub fn jwt_access_tokens(mut self, settings: crate::jwt::JwtAccessTokens) -> Self {
        self.features.jwt = Some(settings);
        self
    }

    /// How many threads this server makes its RS256 signatures on (JWT access tokens, ID
    /// tokens, logout tokens, signed userinfo), and how many may wait for them (default
    /// [`SigningPool::default`](crate::jwt::SigningPool::default): half the cores, 256 waiting
    /// per thread). An RS256 signature takes about half a millisecond of one core, so it is
    /// made off the host's executor, where a burst of them would hold every other request back;
    /// EdDSA and ES256 signatures are made in place. The threads start at the server's first
    /// RS256 signature and end when it is dropped; two servers in one process share none.
    ///
    /// ```
    /// use grantor::jwt::SigningPool;
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// let mut pool = SigningPool::default();
    /// pool.threads = 1;
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .signing_pool(pool)
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    #[cfg(feature = "jwt")]
    pub fn signing_pool(mut self, pool: crate::jwt::SigningPool) -> Self {
        self.features.signing = pool;
        self
    }

    /// Accepts DPoP proofs (RFC 9449) with `settings`: bound access tokens (`token_type: DPoP`),
    /// bound refresh tokens for public clients, `Authorization: DPoP` at
    /// [`bearer`](crate::AuthorizationServer::bearer), and
    /// `dpop_signing_alg_values_supported` in the metadata. Without it a `DPoP` header is
    /// ignored (RFC 9449 §5). Proof ids are spent in the single-use store, so nodes sharing it
    /// refuse each other's replays. Feature `dpop`; see [`crate::dpop`].
    #[cfg(feature = "dpop")]
    pub fn dpop(mut self, settings: crate::dpop::Dpop) -> Self {
        self.features.dpop = Some(settings);
        self
    }

    /// Binds access tokens to the client certificate of the token request's mutual-TLS
    /// connection (RFC 8705 §3; default off): the request's
    /// [`ClientCertificate`](crate::mtls::ClientCertificate), put in its extensions by the host
    /// or the glue, is the one every grant binds the access token it issues to (`cnf` with
    /// `x5t#S256` in introspection and in JWT access tokens), and
    /// [`bearer`](crate::AuthorizationServer::bearer), the glue's extractors, the tower layer
    /// and userinfo honour such a token only on a request with the same certificate. The token
    /// type stays `bearer`. A DPoP proof sent with the same request wins: the token is bound to
    /// its key instead. A public client's refresh token is bound to the certificate too, and a
    /// refresh must come with it (RFC 8705 §4); a confidential client's is not, its
    /// authentication protecting it, and each refresh binds the new access token to the
    /// certificate the refresh came with. The metadata then says
    /// `tls_client_certificate_bound_access_tokens: true`. Off, a presented certificate binds
    /// nothing (tokens bound before are still checked against theirs).
    ///
    /// ```
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .certificate_bound_tokens(true)
    ///     .build()
    ///     .unwrap();
    /// let metadata: serde_json::Value = serde_json::from_str(server.metadata().body()).unwrap();
    /// assert_eq!(metadata["tls_client_certificate_bound_access_tokens"], true);
    /// ```
    pub fn certificate_bound_tokens(mut self, bind: bool) -> Self {
        self.certificate_bound_tokens = bind;
        self
    }

    /// Trusts `issuer`'s signed assertions for the JWT-bearer grant (RFC 7523 §2.1,
    /// `urn:ietf:params:oauth:grant-type:jwt-bearer`), Identity Assertion JWT Authorization
    /// Grants among them (MCP's enterprise-managed authorization): a client agreed
    /// [`GrantType::JwtBearer`](crate::client::GrantType::JwtBearer) trades one for an access
    /// token for the user it names. Repeat for several issuers (at most
    /// [`MAX_TRUSTED_ISSUERS`](crate::trust::MAX_TRUSTED_ISSUERS)); an issuer whose keys are at
    /// a `jwks_uri` needs the [outbound seam](Self::outbound). Feature `private-key-jwt`; see
    /// [`crate::trust`].
    #[cfg(feature = "private-key-jwt")]
    pub fn trust_issuer(mut self, issuer: crate::trust::TrustedIssuer) -> Self {
        self.features.trusted.push(issuer);
        self
    }

    /// How a trusted issuer's assertion names one of the host's users (default: the account
    /// whose username is its `email`, else its `sub`). Feature `private-key-jwt`.
    #[cfg(feature = "private-key-jwt")]
    pub fn assertion_users(mut self, users: Arc<dyn crate::trust::AssertionUsers>) -> Self {
        self.features.assertion_users = Some(users);
        self
    }

    /// Resolves `jwks_uri`s of `private_key_jwt` clients (default: fetched through the
    /// [outbound seam](Self::outbound) when one is set, else none, so such clients must
    /// register their `jwks` itself).
    #[cfg(feature = "private-key-jwt")]
    pub fn client_key_resolver(
        mut self,
        resolver: Arc<dyn crate::client_assertion::ClientKeyResolver>,
    ) -> Self {
        self.features.client_keys = Some(resolver);
        self
    }

    /// Lets clients authenticate with the TLS client certificate of their request (RFC 8705
    /// §2): `self_signed_tls_client_auth` clients, and `tls_client_auth` ones when `settings`
    /// trust a client CA; the metadata then lists those methods, and `mtls_endpoint_aliases`
    /// when `settings` name an alias base URL. The host hands each request's certificate over
    /// as a [`ClientCertificate`](crate::mtls::ClientCertificate) in its extensions. A CA that
    /// is not a PEM certificate, or a bad alias URL, is refused by [`build`](Self::build)
    /// ([`ConfigError::MutualTls`](crate::ConfigError::MutualTls)). Feature `mtls`; see
    /// [`MutualTls`](crate::mtls::MutualTls).
    #[cfg(feature = "mtls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mtls")))]
    pub fn mutual_tls(mut self, settings: crate::mtls::MutualTls) -> Self {
        self.features.mutual_tls = Some(settings);
        self
    }

    /// Serves OpenID Connect (Core 1.0, Discovery 1.0) as `settings` say: ID tokens for
    /// requests with the scope `openid`, userinfo
    /// ([`AuthorizationServer::userinfo`](crate::AuthorizationServer::userinfo)) and the
    /// discovery document ([`AuthorizationServer::openid_configuration`](crate::AuthorizationServer::openid_configuration)).
    /// ID-token keys rotate through the server's key seam and are published at `jwks_uri`.
    /// Feature `oidc`; see [`OpenIdConnect`](crate::settings::OpenIdConnect).
    #[cfg(feature = "oidc")]
    pub fn openid_connect(mut self, settings: crate::settings::OpenIdConnect) -> Self {
        self.features.openid = Some(settings);
        self
    }

    /// Takes pushed authorization requests (RFC 9126) at
    /// [`EndpointPaths::pushed_requests`](crate::settings::EndpointPaths::pushed_requests), and
    /// `request_uri` at the authorization endpoint. Off by default.
    pub fn pushed_requests(mut self, settings: PushedRequests) -> Self {
        self.pushed_requests = Some(settings);
        self
    }

    /// Serves the device authorization grant (RFC 8628): the device authorization endpoint at
    /// [`EndpointPaths::device_authorization`](crate::settings::EndpointPaths::device_authorization),
    /// its grant at the token endpoint, and the user's verification through
    /// [`AuthorizationServer::enter_user_code`](crate::AuthorizationServer::enter_user_code). Off by default.
    pub fn device_flow(mut self, settings: DeviceFlow) -> Self {
        self.device = Some(settings);
        self
    }

    /// Offers token exchange (RFC 8693) at the token endpoint under `policy`, and lists
    /// `urn:ietf:params:oauth:grant-type:token-exchange` in the metadata's
    /// `grant_types_supported`. A confidential client agreed the grant type
    /// ([`GrantType::TokenExchange`](crate::client::GrantType::TokenExchange)) may then trade an active
    /// access token grantor issued for another one, for a resource the server knows, with at
    /// most the subject token's scope, when `policy` allows it. Without a policy (the default)
    /// every exchange is answered `unsupported_grant_type`.
    pub fn token_exchange(mut self, policy: Arc<dyn ExchangePolicy>) -> Self {
        self.exchange = Some(policy);
        self
    }

    /// Issues Identity Assertion JWT Authorization Grants (ID-JAGs,
    /// draft-ietf-oauth-identity-assertion-authz-grant) by token exchange under `policy`: a
    /// confidential client agreed the token exchange grant type trades an ID token this server
    /// issued to it (`requested_token_type` `urn:ietf:params:oauth:token-type:id-jag`) for an
    /// assertion another authorization server redeems, signed with the ID-token keys (RS256)
    /// and living at most [`ID_JAG_LIFETIME`](crate::id_jag::ID_JAG_LIFETIME); see
    /// [`crate::id_jag`]. The metadata then lists the token exchange grant type and
    /// `identity_chaining_requested_token_types_supported`. Needs OpenID Connect:
    /// [`build`](Self::build) refuses it without
    /// ([`ConfigError::IdJagWithoutOpenId`](crate::ConfigError::IdJagWithoutOpenId)). Without
    /// it (the default) that `requested_token_type` is `invalid_request`.
    pub fn id_jag_issuance(mut self, policy: Arc<dyn crate::id_jag::IdJagPolicy>) -> Self {
        self.id_jag = Some(policy);
        self
    }
}
