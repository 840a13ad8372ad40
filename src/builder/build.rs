//! [`AuthorizationServerBuilder::build`]: every setting checked, then the server assembled.

use std::sync::Arc;

use super::check::{check_issuer, check_path};
use super::{AuthorizationServerBuilder, ConfigError};
use crate::endpoint::Rendered;
use crate::grant::client_auth::SecretCache;
use crate::grant::signin::SealKeys;
use crate::memory::MemoryStore;
use crate::server::{AuthorizationServer, Inner};
use crate::settings::{
    FAPI2_REFRESH_GRACE, Lifetimes, Limits, MAX_CODE_LIFETIME, MAX_REFRESH_GRACE, PkcePolicy,
    Profile, Resources, Settings,
};
use crate::store::client_cache::{ClientCache, ForgetfulRegistry};
use crate::store::metered::Metering;
use crate::store::seam::{ClientsInPlace, TokensInPlace};
use crate::store::{
    Admin, AttemptCounter, ClearKeys, ConsentStore, EncryptedKeys, KeyStore, SessionStore,
    SingleUseStore, UserSessionStore,
};
use crate::throttle::Turns;

/// The longest a code may live under FAPI 2.0 (Security Profile §5.3.2.1: at most 60 seconds).
const FAPI2_MAX_CODE_LIFETIME: std::time::Duration = std::time::Duration::from_secs(60);

impl AuthorizationServerBuilder {
    /// The settings a FAPI 2.0 profile needs: codes of at most 60 seconds, assertions or
    /// mutual TLS to authenticate clients by, something to constrain tokens with, and request
    /// objects under Message Signing. Pushed requests become required of every client.
    fn check_fapi2(&mut self) -> Result<(), ConfigError> {
        if self.code_lifetime > FAPI2_MAX_CODE_LIFETIME {
            return Err(ConfigError::Fapi2CodeLifetime);
        }
        if self.features.client_assertion_algs().is_none() {
            return Err(ConfigError::Fapi2Unsupported(
                "private_key_jwt client authentication (feature private-key-jwt)",
            ));
        }
        if self.features.dpop_algorithms().is_none() && !self.certificate_bound_tokens {
            return Err(ConfigError::Fapi2Unsupported(
                "sender-constrained tokens: DPoP (.dpop(..), feature dpop) or \
                 .certificate_bound_tokens(true)",
            ));
        }
        if self.profile == Profile::Fapi2MessageSigning
            && self.features.request_object_algs().is_none()
        {
            return Err(ConfigError::Fapi2Unsupported(
                "signed request objects (feature private-key-jwt)",
            ));
        }
        let pushed = self.pushed_requests.take().unwrap_or_default();
        self.pushed_requests = Some(pushed.required(true));
        Ok(())
    }

    /// Checks the configuration and builds the server.
    pub fn build(mut self) -> Result<AuthorizationServer, ConfigError> {
        self.outbound = self.outbound.map(crate::outbound::MeteredOutbound::around);
        self.features.resolve_keys_through(self.outbound.as_ref());
        if self.profile.is_fapi2() {
            self.check_fapi2()?;
        }
        let jwt_access_tokens = self.features.jwt_access_tokens();
        let dpop = self.features.dpop_algorithms();
        let jwks_uri = self.features.jwks_uri_resolvable();
        let client_assertion_algs = self.features.client_assertion_algs();
        let request_object_algs = self.features.request_object_algs();
        let mutual_tls = self.features.mutual_tls_offer()?;
        let jwt_bearer = self
            .features
            .check_trusted_issuers(self.outbound.is_some())?;
        let issuer = self.issuer.ok_or(ConfigError::Missing("issuer"))?;
        check_issuer(&issuer, self.insecure_http_issuer)?;
        let realm = self.realm.unwrap_or_else(|| issuer.clone());
        if self.code_lifetime.is_zero() || self.code_lifetime > MAX_CODE_LIFETIME {
            return Err(ConfigError::CodeLifetime);
        }
        let lifetimes = [
            self.access_token_lifetime,
            self.refresh_token_lifetime,
            self.authorization_request_lifetime,
            self.family_lifetime,
        ];
        if lifetimes.iter().any(|l| l.as_secs() == 0) {
            return Err(ConfigError::ZeroLifetime);
        }
        // A JWT must stay verifiable while it lives, and only the previous period's key stays
        // published after a rotation.
        if self
            .features
            .key_rotation_period()
            .is_some_and(|period| period < self.access_token_lifetime)
        {
            return Err(ConfigError::KeyRotationPeriod);
        }
        let openid = self.features.openid();
        if openid.as_ref().is_some_and(|openid| {
            openid.id_token_lifetime.is_zero()
                || openid.id_token_lifetime.as_secs() > openid.key_rotation.as_secs().max(60)
        }) {
            return Err(ConfigError::IdTokenLifetime);
        }
        // An ID-JAG is the ID token's user, asserted by the keys that sign ID tokens.
        if self.id_jag.is_some() && openid.is_none() {
            return Err(ConfigError::IdJagWithoutOpenId);
        }
        if self.max_param == 0 || self.max_body < self.max_param {
            return Err(ConfigError::Limits);
        }
        let refresh_grace = self.refresh_grace.unwrap_or(if self.profile.is_fapi2() {
            FAPI2_REFRESH_GRACE
        } else {
            std::time::Duration::ZERO
        });
        if refresh_grace > MAX_REFRESH_GRACE {
            return Err(ConfigError::RefreshGrace);
        }
        let pkce = match (self.profile.is_oauth21(), self.pkce) {
            (true, None | Some(PkcePolicy::AllClients)) => PkcePolicy::AllClients,
            (true, Some(PkcePolicy::PlainAllowed)) => {
                return Err(ConfigError::PlainPkceInOAuth21);
            }
            (true, Some(_)) => return Err(ConfigError::PkceUnderOAuth21),
            (false, policy) => policy.unwrap_or_default(),
        };

        let audience = self.audience.unwrap_or_else(|| issuer.clone());
        let resources = Resources::new(audience, self.resources).ok_or(ConfigError::Audience)?;

        let paths = &self.endpoints;
        let all_paths = [
            &paths.authorization,
            &paths.token,
            &paths.revocation,
            &paths.introspection,
            &paths.jwks,
            &paths.registration,
            &paths.pushed_requests,
            &paths.device_authorization,
            &paths.userinfo,
            &paths.end_session,
        ];
        if !all_paths.iter().all(|p| check_path(p)) {
            return Err(ConfigError::EndpointPath);
        }
        if self.pushed_requests.is_some_and(|p| !p.is_valid()) {
            return Err(ConfigError::PushedRequests);
        }
        if let Some(device) = &self.device {
            device.check().map_err(ConfigError::DeviceFlow)?;
        }
        if !self.acr.is_valid() {
            return Err(ConfigError::AcrLevels);
        }
        if self.second_factor.is_some() && self.acr.by_second_factor().is_none() {
            return Err(ConfigError::SecondFactorUnreachable);
        }
        if self.registration.is_some() && self.registry.is_none() {
            return Err(ConfigError::NoClientRegistry);
        }
        let expires = (self.registration.as_ref()).is_some_and(|p| p.idle().is_some());
        if expires && self.activity.is_none() {
            return Err(ConfigError::NoClientActivity);
        }
        let registration = self.registration;
        let config = Settings {
            issuer,
            realm,
            endpoints: self.endpoints,
            scopes_supported: self.scopes_supported,
            lifetimes: Lifetimes {
                code: self.code_lifetime,
                access_token: self.access_token_lifetime,
                refresh_token: self.refresh_token_lifetime,
                authorization_request: self.authorization_request_lifetime,
                refresh_grace,
                family: self.family_lifetime,
            },
            limits: Limits {
                max_input: self.max_body,
                max_param: self.max_param,
            },
            pkce,
            throttle: self.throttle,
            usernames: self.usernames,
            acr: self.acr,
            client_throttle: self.client_throttle,
            profile: self.profile,
            resources,
            jwt_access_tokens,
            dpop,
            certificate_bound_tokens: self.certificate_bound_tokens,
            registration,
            pushed_requests: self.pushed_requests,
            device: self.device,
            token_exchange: self.exchange.is_some(),
            id_jag_issuance: self.id_jag.is_some(),
            jwt_bearer,
            jwks_uri,
            client_assertion_algs,
            request_object_algs,
            openid,
            session_ttl: self.session_ttl,
            consent_ttl: self.consent_ttl,
            backchannel_logout: self.outbound.is_some(),
            client_documents: self.client_documents.is_some(),
            mutual_tls,
        };
        let clients = self.clients.ok_or(ConfigError::Missing("clients"))?;
        let users = self.users.ok_or(ConfigError::Missing("users"))?;
        let tokens = self.tokens.ok_or(ConfigError::Missing("tokens"))?;
        // State every node must share lives in this process's memory only when the host said
        // there is one node: silently, a second node would see none of it.
        let local = Arc::new(MemoryStore::new());
        let single_node = self.single_node;
        let shared = |name: &'static str, given: bool| -> Result<(), ConfigError> {
            if given || single_node {
                Ok(())
            } else {
                Err(ConfigError::SharedState(name))
            }
        };
        shared("sessions", self.sessions.is_some())?;
        shared("attempt_counter", self.attempts.is_some())?;
        shared("single_use", self.single_use.is_some())?;
        shared("keys", self.keys.is_some())?;
        shared("user_sessions", self.user_sessions.is_some())?;
        shared("consents", self.consents.is_some())?;
        let sessions: Arc<dyn SessionStore> = self.sessions.unwrap_or_else(|| local.clone());
        let single_use: Arc<dyn SingleUseStore> = self.single_use.unwrap_or_else(|| local.clone());
        let keys: Arc<dyn KeyStore> = self.keys.unwrap_or_else(|| local.clone());
        let user_sessions: Arc<dyn UserSessionStore> =
            self.user_sessions.unwrap_or_else(|| local.clone());
        let consents: Arc<dyn ConsentStore> = self.consents.unwrap_or_else(|| local.clone());
        let attempts: Arc<dyn AttemptCounter> = self.attempts.unwrap_or(local);
        // Each seam's calls are timed (with the `metrics` feature), except grantor's memory
        // store as the client or token seam: the server calls it in place.
        let memory = self.memory.as_ref();
        let clients = match memory.is_some_and(|memory| is_store(&clients, memory)) {
            true => clients,
            false => clients.metered(),
        };
        let tokens = match memory.is_some_and(|memory| is_store(&tokens, memory)) {
            true => tokens,
            false => tokens.metered(),
        };
        let users = users.metered();
        let sessions = sessions.metered();
        let single_use = single_use.metered();
        let keys = keys.metered();
        let user_sessions = user_sessions.metered();
        let consents = consents.metered();
        let attempts = attempts.metered();
        // Key material is sealed under the host's key before any seam sees it; a durable store
        // keeps it in the clear only when the host said so.
        let keys: Arc<dyn KeyStore> = match (&self.key_encryption, self.keys_in_clear) {
            (Some(_), true) => return Err(ConfigError::KeysAtRestTwice),
            (Some(key), false) => Arc::new(EncryptedKeys::new(keys, key)),
            (None, false) if keys.is_durable() => return Err(ConfigError::KeysAtRest),
            (None, _) => Arc::new(ClearKeys(keys)),
        };
        let mut clients = clients;
        let mut registry = self.registry;
        if let Some(ttl) = self.client_cache {
            let cache = Arc::new(ClientCache::new(clients, ttl));
            registry = registry.map(|registry| -> Arc<dyn Admin> {
                Arc::new(ForgetfulRegistry {
                    registry,
                    cache: Arc::clone(&cache),
                })
            });
            clients = cache;
        }
        // Clients whose id is a document URL are fetched, beside those the stores keep.
        let documents = match (self.client_documents, &self.outbound) {
            (None, _) => None,
            (Some(_), None) => return Err(ConfigError::Missing("outbound")),
            (Some(settings), Some(outbound)) => {
                // What a self-registered client may be granted, and never more: a document
                // is anyone's to write.
                let scope = config
                    .registration
                    .as_ref()
                    .map(|policy| policy.allowed_scope().as_str().to_owned())
                    .unwrap_or_default();
                let pairwise = (config.openid.as_ref()).is_some_and(|o| o.offers_pairwise());
                let documents = crate::client_documents::Documents::new(
                    settings,
                    Arc::clone(outbound),
                    scope,
                    pairwise,
                );
                Some(Arc::new(documents))
            }
        };
        if let Some(documents) = &documents {
            clients = Arc::new(crate::client_documents::DocumentClients {
                inner: clients,
                documents: Arc::clone(documents),
                clock: Arc::clone(&self.clock),
            });
        }
        let rendered = Rendered::new(&config).ok_or(ConfigError::Realm)?;
        // The features' implementations of the core seams.
        let wired = self.features.wire(&config, &single_use, &keys, &attempts);
        // grantor's own memory store, where it is the token or client seam, is called in
        // place rather than through a boxed future per call.
        let memory = self.memory;
        let tokens_in_place = memory
            .clone()
            .filter(|m| is_store(&tokens, m))
            .map(|m| m as Arc<dyn TokensInPlace>);
        let clients_in_place = memory
            .filter(|m| is_store(&clients, m))
            .map(|m| m as Arc<dyn ClientsInPlace>);
        Ok(AuthorizationServer::assembled(Inner {
            tokens_in_place,
            clients_in_place,
            config,
            rendered,
            clients,
            registry,
            activity: self.activity,
            recent_uses: crate::grant::idle::RecentUses::default(),
            readiness: crate::server::Readiness::default(),
            events: self
                .events
                .unwrap_or_else(|| Arc::new(crate::events::TracingEvents)),
            users,
            user_admin: self.user_admin,
            password_verifier: self
                .password_verifier
                .unwrap_or_else(|| Arc::new(crate::store::KnownHashes)),
            rehash_passwords: self.rehash_passwords,
            second_factor: self.second_factor,
            tokens,
            sessions,
            attempts,
            single_use,
            keys: Arc::clone(&keys),
            seal_keys: SealKeys::default(),
            turns: Turns::default(),
            clock: self.clock,
            hashing: crate::hash::Hashing::new(self.hashing),
            secret_cache: SecretCache::new(),
            access_tokens: wired.access_tokens,
            proofs: wired.proofs,
            exchange: self.exchange,
            id_jag: self.id_jag,
            client_assertions: wired.client_assertions,
            client_cas: wired.client_cas,
            request_objects: wired.request_objects,
            id_tokens: wired.id_tokens,
            grant_assertions: wired.grant_assertions,
            user_sessions,
            consents,
            outbound: self.outbound,
            documents,
        }))
    }
}

/// Whether the seam `seam` is the memory store `memory` (the same allocation).
fn is_store<T: ?Sized>(seam: &Arc<T>, memory: &Arc<MemoryStore>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(seam), Arc::as_ptr(memory))
}
