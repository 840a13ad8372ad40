//! Client authentication at the token endpoint (RFC 6749 §2.3): HTTP Basic for confidential
//! clients (or the secret in the body, for those registered so), a client assertion (RFC 7523
//! §2.2), a TLS client certificate (RFC 8705 §2), `client_id` alone for public clients. The
//! client's registered method decides which credential counts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hmac::{Hmac, Mac as _};
use sha2::Sha256;
use subtle::{Choice, ConstantTimeEq as _};

use crate::budget::CallerAddress;
use crate::client::{Client, ClientId, Verifier};
use crate::clock::{Clock, UnixTime};
use crate::error::{ErrorCode, OAuthError};
use crate::events::{Event, EventKind, Events};
use crate::hash::Hashing;
use crate::mtls::{CertificateAuthority, ClientCertificate};
use crate::request::{Assertion, ClientAuth};
use crate::secret::{SecretDigest, random_bytes};
use crate::store::seam::ClientSeam;
use crate::store::{AttemptCounter, namespace};
use crate::throttle::{SignInThrottle, Turns};

/// What client authentication needs: the registered clients, the cache of verified secrets,
/// and what throttles failed Argon2id checks per client id.
#[derive(Clone, Copy)]
pub(crate) struct Authenticator<'a> {
    pub(crate) clients: ClientSeam<'a>,
    /// Where Argon2id-verified secrets are checked: the server's client lane.
    pub(crate) hashing: &'a Hashing,
    pub(crate) cache: &'a SecretCache,
    pub(crate) throttle: &'a SignInThrottle,
    pub(crate) attempts: &'a dyn AttemptCounter,
    pub(crate) turns: &'a Turns,
    pub(crate) clock: &'a dyn Clock,
    /// Where a refusal is reported ([`EventKind::ClientAuthenticationFailed`]).
    pub(crate) events: &'a dyn Events,
    /// Set when client assertions are accepted (`private_key_jwt`).
    pub(crate) assertions: Option<&'a dyn ClientAssertions>,
    /// Set when clients may authenticate with TLS client certificates (RFC 8705 §2).
    pub(crate) client_cas: Option<&'a dyn CertificateAuthority>,
    /// The certificate the request came with, when the host handed one over.
    pub(crate) certificate: Option<&'a ClientCertificate>,
    /// The path of the endpoint being called, whose URL an assertion's `aud` may name.
    pub(crate) endpoint_path: &'a str,
    /// Where the request came from, when the host said: failed secrets count per client and
    /// caller network.
    pub(crate) caller: Option<CallerAddress>,
    /// Set when self-registered clients expire: each authenticated request is a use, and an
    /// idle client's is refused.
    pub(crate) idle: Option<super::idle::IdleClients<'a>>,
}

impl<'a> Authenticator<'a> {
    /// The same, for `request`: its caller and its client certificate, as the host handed
    /// them over in its extensions.
    pub(crate) fn of_request<B>(self, request: &'a http::Request<B>) -> Self {
        Self {
            caller: CallerAddress::of(request),
            certificate: request.extensions().get::<ClientCertificate>(),
            ..self
        }
    }
}

impl Authenticator<'_> {
    /// The client the request authenticates as, its credentials checked: HTTP Basic (or the
    /// body) for clients with a secret, an assertion for `private_key_jwt` ones, `client_id`
    /// and the request's certificate for certificate clients, `client_id` alone for public
    /// ones. A refusal (`invalid_client`) is reported as an event with the client id presented,
    /// if it is a well-formed one.
    pub(crate) async fn authenticate(
        &self,
        auth: &ClientAuth<'_>,
    ) -> Result<Arc<Client>, OAuthError> {
        let mut answer = self.check(auth).await;
        if let (Ok(client), Some(idle)) = (&answer, self.idle)
            && let Err(error) = idle.used(client, self.clock.now()).await
        {
            answer = Err(error);
        }
        if let Ok(client) = &answer {
            // The endpoint call's span (see `endpoint::span`), if there is one.
            tracing::Span::current().record("client_id", client.id().as_str());
        }
        if let Err(error) = &answer
            && error.code() == ErrorCode::InvalidClient
        {
            let presented = match auth {
                ClientAuth::Basic(credentials) | ClientAuth::Post(credentials) => {
                    Some(credentials.client_id())
                }
                ClientAuth::ClientId(client_id) => Some(*client_id),
                ClientAuth::Assertion { client_id, .. } => Some(client_id.as_str()),
                ClientAuth::Anonymous => None,
            };
            let mut event = Event::new(EventKind::ClientAuthenticationFailed, self.clock.now());
            event.client_id = presented.and_then(|id| ClientId::new(id).ok());
            self.events.record(&event);
        }
        answer
    }

    async fn check(&self, auth: &ClientAuth<'_>) -> Result<Arc<Client>, OAuthError> {
        match *auth {
            ClientAuth::Basic(ref credentials) | ClientAuth::Post(ref credentials) => {
                let client = self.find(credentials.client_id()).await?;
                if client.uses_certificate() {
                    return Err(certificate_client());
                }
                // Each client one way (RFC 6749 §2.3.1: the body is NOT RECOMMENDED, so only
                // for those registered to use it).
                let in_body = matches!(auth, ClientAuth::Post(_));
                if in_body != client.sends_secret_in_body() {
                    return Err(OAuthError::invalid_client(if in_body {
                        "client_secret in the request body is not accepted for this client; use HTTP Basic"
                    } else {
                        "this client sends its secret in the request body (client_secret_post)"
                    }));
                }
                let secret = credentials.secret();
                let verified = match client.secret() {
                    // A public client has no secret; Basic with an empty one only names it.
                    None => client.is_public() && secret.is_empty(),
                    Some(verifier) => {
                        self.verify(&client, verifier.inner(), secret).await?
                            || self.verify_retiring(&client, secret).await?
                    }
                };
                if !verified {
                    return Err(failed());
                }
                Ok(client)
            }
            ClientAuth::ClientId(client_id) => {
                let client = self.find(client_id).await?;
                if client.uses_certificate() {
                    self.check_certificate(&client).await?;
                    return Ok(client);
                }
                if !client.is_public() {
                    return Err(OAuthError::invalid_client(
                        "this client must authenticate (HTTP Basic or a client assertion)",
                    ));
                }
                Ok(client)
            }
            ClientAuth::Assertion {
                ref client_id,
                assertion,
            } => {
                let client = self.find(client_id).await?;
                if client.uses_certificate() {
                    return Err(certificate_client());
                }
                self.check_assertion(&client, assertion).await?;
                Ok(client)
            }
            ClientAuth::Anonymous => Err(OAuthError::invalid_client(
                "client authentication is required",
            )),
        }
    }

    async fn find(&self, client_id: &str) -> Result<Arc<Client>, OAuthError> {
        self.clients
            .find_client(client_id)
            .await?
            .ok_or_else(failed)
    }

    /// After a rotation, the previous secret, strictly before its deadline on the server's
    /// clock; checked only once the current secret failed, with the same cache and throttle.
    async fn verify_retiring(&self, client: &Client, secret: &str) -> Result<bool, OAuthError> {
        match client.retiring_secret() {
            Some((verifier, until)) if self.clock.now() < until => {
                self.verify(client, verifier.inner(), secret).await
            }
            _ => Ok(false),
        }
    }

    async fn verify(
        &self,
        client: &Client,
        verifier: &Verifier,
        secret: &str,
    ) -> Result<bool, OAuthError> {
        match verifier {
            Verifier::Digest(expected) => Ok(expected.ct_eq(&SecretDigest::of(secret))),
            Verifier::Argon2id(phc) => {
                if self.cache.recalls(client.id(), phc, secret) {
                    return Ok(true);
                }
                self.verify_argon2id(client, phc, secret).await
            }
        }
    }

    /// An Argon2id check, throttled per client id and caller network: checks of one client
    /// take turns on this node (so a burst of requests with a cold cache hashes once, and a
    /// flood of wrong secrets holds at most one hashing thread), and each is counted through
    /// the attempt counter before it runs, per client and caller network when the host handed
    /// the caller's address over ([`CallerAddress`]); past the limit, that network's uncached
    /// secrets for the client are refused unchecked until the window ends, while the client's
    /// own network still gets its secret checked. A success clears the count. A client id is
    /// public, so without the caller's address a flood of wrong secrets refuses the right one
    /// for a window on every node that has not verified it yet. Secrets grantor generates (SHA-256
    /// verifiers, 256 bits) cost nothing to check and cannot be guessed, so they are not
    /// throttled.
    async fn verify_argon2id(
        &self,
        client: &Client,
        phc: &Arc<str>,
        secret: &str,
    ) -> Result<bool, OAuthError> {
        let turn = namespace::client_failures(client.id(), None);
        let network = self.caller.map(|caller| caller.network());
        let key = namespace::client_failures(client.id(), network.as_deref());
        let _turn = self.turns.take(&turn).await;
        // Whoever held the turn may have verified this very secret meanwhile.
        if self.cache.recalls(client.id(), phc, secret) {
            return Ok(true);
        }
        let now = self.clock.now();
        let window = self.throttle.window();
        let reserved = self.attempts.record_attempt(&key, window, now).await?;
        if self.throttle.wait(reserved, now).is_some() {
            return Err(OAuthError::invalid_client(
                "too many failed authentications for this client; try again later",
            ));
        }
        let ok = self.hashing.verify_client_secret(phc, secret).await?;
        if ok {
            self.cache.remember(client.id(), phc, secret);
            self.attempts.clear_attempts(&key).await?;
        }
        Ok(ok)
    }
}

impl Authenticator<'_> {
    /// A client assertion (`private_key_jwt`, RFC 7523 §2.2): verified and its `jti` spent by
    /// the server's [`ClientAssertions`], if it takes assertions.
    async fn check_assertion(
        &self,
        client: &Client,
        assertion: Assertion<'_>,
    ) -> Result<(), OAuthError> {
        let Some(assertions) = self.assertions else {
            return Err(OAuthError::invalid_client(
                "this server does not accept client assertions (private_key_jwt)",
            ));
        };
        // No lockout after failed assertions: a client id is no secret, so anyone could lock
        // a client out with a few forged ones. Each assertion costs at most one signature
        // check instead (a `kid`, or the only key suiting the `alg`), and only the client's
        // key can spend its budget of `jti`s.
        let now = self.clock.now();
        assertions
            .check(client, assertion, self.endpoint_path, now)
            .await
    }
}

impl Authenticator<'_> {
    /// RFC 8705 §2: the request's certificate is the client's, from a CA the host trusts and
    /// naming its registered subject (`tls_client_auth`), or one of those in its `jwks`
    /// (`self_signed_tls_client_auth`).
    async fn check_certificate(&self, client: &Client) -> Result<(), OAuthError> {
        let Some(client_cas) = self.client_cas else {
            return Err(OAuthError::invalid_client(
                "this server does not accept TLS client certificates (RFC 8705)",
            ));
        };
        let Some(certificate) = self.certificate else {
            return Err(OAuthError::invalid_client(
                "this client authenticates with a TLS client certificate, and none was presented",
            ));
        };
        let verdict = match client.tls_subject() {
            Some(subject) => client_cas.verify(certificate, subject, self.clock.now()),
            None => self_signed(client, certificate),
        };
        match verdict {
            Ok(()) => Ok(()),
            Err(why) => Err(self.count_failed_certificate(client, why).await),
        }
    }

    /// A refused certificate counts against the client's failure budget per caller network,
    /// as a wrong secret does: past it, the refusal says so. A certificate cannot be guessed,
    /// and checking one is bounded work (a chain of at most
    /// [`MAX_CHAIN_LEN`](crate::mtls::MAX_CHAIN_LEN)), so a good one is never refused unchecked
    /// and costs no count.
    async fn count_failed_certificate(&self, client: &Client, why: &'static str) -> OAuthError {
        let network = self.caller.map(|caller| caller.network());
        let key = namespace::client_failures(client.id(), network.as_deref());
        let now = self.clock.now();
        match self
            .attempts
            .record_attempt(&key, self.throttle.window(), now)
            .await
        {
            Err(error) => error.into(),
            Ok(reserved) if self.throttle.wait(reserved, now).is_some() => {
                OAuthError::invalid_client(
                    "too many failed authentications for this client; try again later",
                )
            }
            Ok(_) => OAuthError::invalid_client(why),
        }
    }
}

/// RFC 8705 §2.2: the presented certificate is one of those in the client's `jwks`, compared by
/// SHA-256 thumbprint in constant time, every registered one looked at.
fn self_signed(client: &Client, certificate: &ClientCertificate) -> Result<(), &'static str> {
    let presented = certificate.thumbprint();
    let registered = client
        .keys()
        .map(crate::client::tls::certificate_thumbprints)
        .unwrap_or_default();
    let found = registered
        .iter()
        .fold(Choice::from(0), |found, thumbprint| {
            found | thumbprint.ct_eq(presented.as_bytes())
        });
    if bool::from(found) {
        Ok(())
    } else {
        Err("the client certificate is not one of the certificates in the client's jwks")
    }
}

/// A certificate client (RFC 8705 §2) sent a secret or an assertion: only its certificate
/// counts, with `client_id` in the body.
fn certificate_client() -> OAuthError {
    OAuthError::invalid_client(
        "this client authenticates with its TLS client certificate (RFC 8705 section 2): \
         send client_id in the body and no other credentials",
    )
}

/// Client assertions (`private_key_jwt`, RFC 7523 §2.2): the seam feature `private-key-jwt`
/// implements and the builder wires in.
#[async_trait]
pub(crate) trait ClientAssertions: Send + Sync {
    /// Verifies `assertion` for `client` at the endpoint at `endpoint_path` (an acceptable
    /// `aud`, RFC 7523 §3) and spends its `jti`; every refusal is `invalid_client`.
    async fn check(
        &self,
        client: &Client,
        assertion: Assertion<'_>,
        endpoint_path: &str,
        now: UnixTime,
    ) -> Result<(), OAuthError>;
}

/// One answer for every failed authentication, so it does not tell unknown clients from wrong
/// secrets.
fn failed() -> OAuthError {
    OAuthError::invalid_client("client authentication failed")
}

/// Recently verified (client, secret) pairs for Argon2id verifiers, so a client that
/// authenticates on every request pays for Argon2 once per [`CACHE_TTL`].
///
/// Entries hold an HMAC of the secret under a per-process random key: unlike a plain digest, a
/// copy of this memory does not let anyone test guesses of a low-entropy secret offline. An
/// entry applies only while the client's verifier is unchanged.
pub(crate) struct SecretCache {
    /// `None` if the OS gave no randomness; the cache then stays empty.
    key: Option<[u8; 32]>,
    entries: Mutex<HashMap<ClientId, CacheEntry>>,
}

struct CacheEntry {
    verifier: Arc<str>,
    mac: [u8; 32],
    verified_at: Instant,
}

const CACHE_TTL: Duration = Duration::from_secs(600);
const CACHE_CAPACITY: usize = 4096;

impl SecretCache {
    pub(crate) fn new() -> Self {
        Self {
            key: random_bytes::<32>().ok(),
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn mac(&self, client: &ClientId, secret: &str) -> Option<[u8; 32]> {
        let mut mac = Hmac::<Sha256>::new_from_slice(self.key.as_ref()?).ok()?;
        mac.update(client.as_str().as_bytes());
        mac.update(&[0]);
        mac.update(secret.as_bytes());
        Some(mac.finalize().into_bytes().into())
    }

    fn recalls(&self, client: &ClientId, verifier: &Arc<str>, secret: &str) -> bool {
        let Some(mac) = self.mac(client, secret) else {
            return false;
        };
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(client).is_some_and(|e| {
            e.verifier == *verifier
                && e.verified_at.elapsed() < CACHE_TTL
                && bool::from(e.mac.ct_eq(&mac))
        })
    }

    fn remember(&self, client: &ClientId, verifier: &Arc<str>, secret: &str) {
        let Some(mac) = self.mac(client, secret) else {
            return;
        };
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= CACHE_CAPACITY {
            entries.retain(|_, e| e.verified_at.elapsed() < CACHE_TTL);
            if entries.len() >= CACHE_CAPACITY {
                entries.clear();
            }
        }
        let entry = CacheEntry {
            verifier: Arc::clone(verifier),
            mac,
            verified_at: Instant::now(),
        };
        entries.insert(client.clone(), entry);
    }
}
