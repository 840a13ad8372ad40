//! What every endpoint of the server shares: its configuration and seams, and the parts of
//! them each step of the protocol takes.

use std::sync::Arc;

use crate::clock::{Clock, UnixTime};
use crate::endpoint::authorize::Authorization;
use crate::endpoint::bearer::Validation;
use crate::endpoint::introspect::Introspection;
use crate::endpoint::revoke::Revocation;
use crate::endpoint::token::TokenEndpoint;
use crate::endpoint::{Rendered, Wire};
use crate::events::Events;
use crate::grant::authorize::Rules;
use crate::grant::client_auth::{Authenticator, ClientAssertions, SecretCache};
use crate::grant::decide::Decide;
use crate::grant::id_jag::IdJags;
use crate::grant::id_token::IdTokens;
use crate::grant::idle::IdleClients;
use crate::grant::issue::Issuer;
use crate::grant::logout::Logout;
use crate::grant::password::SignIn;
use crate::grant::proof::ProofOfPossession;
use crate::grant::registration::Registrar;
use crate::grant::request_object::{RequestObjectVerifier, RequestObjects};
use crate::grant::signin::{Levels, SealKeys, SignInForms, SignOn};
use crate::grant::token::TokenGrants;
use crate::hash::Hashing;
use crate::oidc::IdTokenSigner;
use crate::settings::Settings;
use crate::store::seam::{ClientSeam, ClientsInPlace, Seam, TokenSeam, TokensInPlace};
use crate::store::{
    Admin, AttemptCounter, ClientStore, ConsentStore, KeyStore, SessionStore, SingleUseStore,
    TokenIssuer, UserAdmin, UserSessionStore, UserStore,
};
use crate::throttle::Turns;
use crate::token_format::AccessTokenFormat;

/// The server's state behind its `Arc`.
pub(crate) struct Inner {
    pub(crate) config: Settings,
    /// What the endpoints send that depends only on the settings, rendered once.
    pub(crate) rendered: Rendered,
    pub(crate) clients: Arc<dyn ClientStore>,
    /// Where self-registered clients are kept (RFC 7591, RFC 7592).
    pub(crate) registry: Option<Arc<dyn Admin>>,
    /// The trusted issuers' assertions, for the JWT-bearer grant (RFC 7523).
    pub(crate) grant_assertions: Option<Arc<dyn crate::grant::jwt_bearer::GrantAssertions>>,
    /// Where uses of self-registered clients are recorded, when they expire.
    pub(crate) activity: Option<Arc<dyn crate::store::ClientActivity>>,
    /// The self-registered clients this node recorded a use of lately.
    pub(crate) recent_uses: crate::grant::idle::RecentUses,
    /// The last readiness answer, reused for a while (see [`super::health`]).
    pub(crate) readiness: super::health::Readiness,
    pub(crate) users: Arc<dyn UserStore>,
    /// Where the administrator's calls keep accounts: the users' store-only side.
    pub(crate) user_admin: Option<Arc<dyn UserAdmin>>,
    /// Checks passwords against what the user store keeps.
    pub(crate) password_verifier: Arc<dyn crate::store::PasswordVerifier>,
    /// Whether a right password kept in an older scheme goes back rehashed.
    pub(crate) rehash_passwords: bool,
    /// The host's second factor, if its users have one.
    pub(crate) second_factor: Option<Arc<dyn crate::store::SecondFactor>>,
    pub(crate) tokens: Arc<dyn TokenIssuer>,
    /// The token seam again, when it answers in place: called so.
    pub(crate) tokens_in_place: Option<Arc<dyn TokensInPlace>>,
    /// The client seam again, when it answers in place: called so.
    pub(crate) clients_in_place: Option<Arc<dyn ClientsInPlace>>,
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) attempts: Arc<dyn AttemptCounter>,
    pub(crate) single_use: Arc<dyn SingleUseStore>,
    /// Key material, already encrypting when the host gave a key-encryption key.
    pub(crate) keys: Arc<dyn KeyStore>,
    pub(crate) seal_keys: SealKeys,
    /// Password checks of one account, one at a time on this node.
    pub(crate) turns: Turns,
    pub(crate) clock: Arc<dyn Clock>,
    /// The threads passwords and Argon2id client secrets are verified on.
    pub(crate) hashing: Hashing,
    pub(crate) secret_cache: SecretCache,
    /// Where events go (an audit trail).
    pub(crate) events: Arc<dyn Events>,
    /// Set when access tokens are self-contained (JWTs, RFC 9068).
    pub(crate) access_tokens: Option<Arc<dyn AccessTokenFormat>>,
    /// Set when DPoP proofs are accepted (RFC 9449).
    pub(crate) proofs: Option<Arc<dyn ProofOfPossession>>,
    /// Set when token exchange is offered (RFC 8693).
    pub(crate) exchange: Option<Arc<dyn crate::exchange::ExchangePolicy>>,
    /// Set when ID-JAGs are issued by token exchange.
    pub(crate) id_jag: Option<Arc<dyn crate::id_jag::IdJagPolicy>>,
    /// Set when client assertions are accepted (`private_key_jwt`, RFC 7523).
    pub(crate) client_assertions: Option<Arc<dyn ClientAssertions>>,
    /// Set when clients may authenticate with TLS client certificates (RFC 8705 §2).
    pub(crate) client_cas: Option<Arc<dyn crate::mtls::CertificateAuthority>>,
    /// Set when request objects are taken (RFC 9101).
    pub(crate) request_objects: Option<Arc<dyn RequestObjectVerifier>>,
    /// Set when the server is an OpenID Connect provider: ID tokens' signatures.
    pub(crate) id_tokens: Option<Arc<dyn IdTokenSigner>>,
    /// Set when client ID metadata documents are taken.
    pub(crate) documents: Option<Arc<crate::client_documents::Documents>>,
    /// Signed-in browsers (single sign-on).
    pub(crate) user_sessions: Arc<dyn UserSessionStore>,
    /// Remembered approvals.
    pub(crate) consents: Arc<dyn ConsentStore>,
    /// Where outbound requests go (back-channel logout); `None`: none are made.
    pub(crate) outbound: Option<Arc<dyn crate::outbound::Outbound>>,
}

impl Inner {
    /// The token seam as the grants call it.
    pub(crate) fn token_seam(&self) -> TokenSeam<'_> {
        Seam::of(&*self.tokens, self.tokens_in_place.as_deref())
    }

    /// The client seam as the grants call it.
    pub(crate) fn client_seam(&self) -> ClientSeam<'_> {
        Seam::of(&*self.clients, self.clients_in_place.as_deref())
    }

    /// The time now, by the server's clock.
    pub(crate) fn now(&self) -> UnixTime {
        self.clock.now()
    }

    /// What an endpoint reads and renders with, for a request served now.
    pub(crate) fn wire(&self) -> Wire<'_> {
        Wire {
            settings: &self.config,
            rendered: &self.rendered,
            now: self.now(),
        }
    }

    /// What the signed-in user's decision on a pending authorization needs.
    pub(crate) fn decider(&self) -> Decide<'_> {
        Decide {
            clients: self.client_seam(),
            users: &*self.users,
            user_sessions: &*self.user_sessions,
            issuer: self.issuer(),
            devices: self.devices(),
            single_use: &*self.single_use,
        }
    }

    /// What the sign-in steps of the host's pages need.
    pub(crate) fn sign_in_forms(&self) -> SignInForms<'_> {
        SignInForms {
            seal_keys: &self.seal_keys,
            keys: &*self.keys,
            single_use: &*self.single_use,
            sessions: &*self.sessions,
            clients: self.client_seam(),
            password: self.sign_in(),
            users: &*self.users,
            attempts: &*self.attempts,
            form_lifetime: self.config.lifetimes.authorization_request,
            sign_on: self.sign_on(),
        }
    }

    /// What logout needs, when the server is an OpenID Connect provider.
    pub(crate) fn logout(&self) -> Option<Logout<'_>> {
        Some(Logout {
            clients: self.client_seam(),
            sessions: &*self.user_sessions,
            tokens: self.token_seam(),
            id_tokens: self.id_tokens()?,
            outbound: self.outbound.clone(),
            events: Arc::clone(&self.events),
            seal_keys: &self.seal_keys,
            keys: &*self.keys,
        })
    }

    /// What single sign-on needs.
    pub(crate) fn sign_on(&self) -> SignOn<'_> {
        SignOn {
            sessions: &*self.user_sessions,
            consents: &*self.consents,
            users: &*self.users,
            session_ttl: self.config.session_ttl,
            consent_ttl: self.config.consent_ttl,
            default_audience: &self.config.resources.default,
            levels: Levels {
                acr: &self.config.acr,
                second_factor: self.second_factor.as_deref(),
            },
        }
    }

    /// What issuing tokens needs.
    pub(crate) fn issuer(&self) -> Issuer<'_> {
        Issuer {
            store: self.token_seam(),
            lifetimes: &self.config.lifetimes,
            resources: &self.config.resources,
            issuer_id: &self.config.issuer,
            format: self.access_tokens.as_deref(),
            possession: None,
            certificate: None,
            bind_certificates: self.config.certificate_bound_tokens,
            bind_refresh: false,
            // Set from the client before any proof is spent; until then, the strictest tier.
            tier: crate::client::ClientTier::MetadataDocument,
            actor: None,
            events: &*self.events,
            id_tokens: self.id_tokens(),
        }
    }

    /// What signing ID tokens needs, when the server is an OpenID Connect provider.
    pub(crate) fn id_tokens(&self) -> Option<IdTokens<'_>> {
        Some(IdTokens {
            signer: self.id_tokens.as_deref()?,
            settings: self.config.openid.as_ref()?,
            issuer_id: &self.config.issuer,
            users: &*self.users,
        })
    }

    /// What client authentication at the endpoint at `endpoint_path` needs (a client
    /// assertion's `aud` may name that endpoint's URL, RFC 7523 §3).
    pub(crate) fn authenticator<'a>(&'a self, endpoint_path: &'a str) -> Authenticator<'a> {
        Authenticator {
            idle: self.idle_clients(),
            assertions: self.client_assertions.as_deref(),
            client_cas: self.client_cas.as_deref(),
            certificate: None,
            endpoint_path,
            caller: None,
            clients: self.client_seam(),
            hashing: &self.hashing,
            cache: &self.secret_cache,
            throttle: &self.config.client_throttle,
            attempts: &*self.attempts,
            turns: &self.turns,
            clock: &*self.clock,
            events: &*self.events,
        }
    }

    /// What checking a password needs.
    pub(crate) fn sign_in(&self) -> SignIn<'_> {
        SignIn {
            users: &*self.users,
            verifier: &self.password_verifier,
            rehash: self.user_admin.as_deref().filter(|_| self.rehash_passwords),
            hashing: &self.hashing,
            throttle: &self.config.throttle,
            usernames: &self.config.usernames,
            password_acr: self.config.acr.by_password(),
            attempts: &*self.attempts,
            turns: &self.turns,
            events: &*self.events,
        }
    }

    /// What the token endpoint's grants need.
    pub(crate) fn token_grants(&self) -> TokenGrants<'_> {
        TokenGrants {
            clients: self.authenticator(&self.config.endpoints.token),
            issuer: self.issuer(),
            sign_in: self.sign_in(),
            profile: self.config.profile,
            dpop_required: self.dpop_required(),
            devices: self.devices(),
            users: &*self.users,
            exchange: self.exchange.as_deref(),
            id_jags: self.id_jags(),
            trust: self.grant_assertions.as_deref().map(|assertions| {
                crate::grant::jwt_bearer::Trust {
                    assertions,
                    users: &*self.users,
                }
            }),
        }
    }

    /// What issuing ID-JAGs needs, when they are issued.
    fn id_jags(&self) -> Option<IdJags<'_>> {
        Some(IdJags {
            policy: self.id_jag.as_deref()?,
            id_tokens: self.id_tokens()?,
            clients: self.client_seam(),
            events: &*self.events,
        })
    }

    /// Whether every client must send DPoP proofs.
    fn dpop_required(&self) -> bool {
        self.proofs.as_ref().is_some_and(|proofs| proofs.required())
    }

    /// The server's rules for authorization requests.
    pub(crate) fn authorize_rules(&self) -> Rules<'_> {
        Rules {
            policy: self.config.pkce,
            profile: self.config.profile,
            resources: &self.config.resources,
            require_pushed: self
                .config
                .pushed_requests
                .as_ref()
                .is_some_and(|p| p.is_required()),
            pushed: false,
            openid: self.id_tokens.is_some(),
            jwt_responses: self.id_tokens.is_some(),
            sign_on: !self.config.session_ttl.is_zero(),
            dpop: self.proofs.is_some(),
            documents: self.documents.as_deref(),
            idle: self.idle_clients(),
            objects: self
                .request_objects
                .as_deref()
                .map(|verifier| RequestObjects {
                    verifier,
                    single_use: &*self.single_use,
                    attempts: &*self.attempts,
                }),
        }
    }

    /// What the device authorization grant needs (RFC 8628), when it is served.
    pub(crate) fn devices(&self) -> Option<crate::grant::device::Devices<'_>> {
        let settings = self.config.device.as_ref()?;
        Some(crate::grant::device::Devices {
            settings,
            single_use: &*self.single_use,
            attempts: &*self.attempts,
            clients: self.client_seam(),
            resources: &self.config.resources,
        })
    }

    /// What pushing authorization requests needs (RFC 9126), when they are taken.
    pub(crate) fn pushed_requests(&self) -> Option<crate::grant::pushed::Pushes<'_>> {
        let settings = self.config.pushed_requests.as_ref()?;
        Some(crate::grant::pushed::Pushes {
            settings,
            clients: self.client_seam(),
            rules: self.authorize_rules(),
            single_use: &*self.single_use,
            attempts: &*self.attempts,
            proofs: self.proofs.as_deref(),
            sign_in_window: self.config.lifetimes.authorization_request,
        })
    }

    /// What bearer validation needs (RFC 6750, and RFC 9449 with DPoP on).
    pub(crate) fn validation(&self) -> Validation<'_> {
        Validation {
            tokens: self.token_seam(),
            users: &*self.users,
            format: self.access_tokens.as_deref(),
            proofs: self.proofs.as_deref(),
        }
    }

    /// What dynamic registration and client management need (RFC 7591, RFC 7592), when the
    /// builder was given a policy.
    /// What expiring idle self-registered clients needs, when the registration policy expires
    /// them.
    pub(crate) fn idle_clients(&self) -> Option<IdleClients<'_>> {
        Some(IdleClients {
            lifetime: self.config.registration.as_ref()?.idle()?,
            activity: self.activity.as_deref()?,
            registry: self.registry.as_deref()?,
            tokens: self.token_seam(),
            events: &*self.events,
            recent: &self.recent_uses,
        })
    }

    pub(crate) fn registrar(&self) -> Option<Registrar<'_>> {
        Some(Registrar {
            idle: self.idle_clients(),
            policy: self.config.registration.as_ref()?,
            profile: self.config.profile,
            registry: self.registry.as_deref()?,
            clients: self.client_seam(),
            attempts: &*self.attempts,
            tokens: self.token_seam(),
            jwks_uri: self.config.jwks_uri,
            assertions: self.client_assertions.is_some(),
            mutual_tls: self.config.mutual_tls.as_ref(),
            openid: self.id_tokens.is_some(),
            events: &*self.events,
            pairwise: self.id_tokens.is_some()
                && (self.config.openid.as_ref()).is_some_and(|o| o.offers_pairwise()),
            outbound: self.outbound.as_deref(),
        })
    }

    /// What the authorization endpoint decides with.
    pub(crate) fn authorization(&self) -> Authorization<'_> {
        Authorization {
            clients: self.client_seam(),
            rules: self.authorize_rules(),
            pushes: self.pushed_requests(),
            signer: self.id_tokens.as_deref(),
        }
    }

    /// What the token endpoint needs beyond the wire.
    pub(crate) fn token_endpoint(&self) -> TokenEndpoint<'_> {
        TokenEndpoint {
            grants: self.token_grants(),
            proofs: self.proofs.as_deref(),
        }
    }

    /// What revocation needs (RFC 7009).
    pub(crate) fn revocation(&self) -> Revocation<'_> {
        Revocation {
            clients: self.authenticator(&self.config.endpoints.revocation),
            tokens: self.token_seam(),
            format: self.access_tokens.as_deref(),
            events: &*self.events,
        }
    }

    /// What introspection needs (RFC 7662).
    pub(crate) fn introspection(&self) -> Introspection<'_> {
        Introspection {
            clients: self.authenticator(&self.config.endpoints.introspection),
            tokens: self.token_seam(),
            format: self.access_tokens.as_deref(),
            signer: self.id_tokens.as_deref(),
        }
    }
}
