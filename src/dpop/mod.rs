//! DPoP (RFC 9449), feature `dpop`: access tokens bound to a key the client proves it holds,
//! so a stolen token is useless without the key.
//!
//! With [`AuthorizationServerBuilder::dpop`](crate::AuthorizationServerBuilder::dpop), a token
//! request carrying a valid `DPoP` proof gets `token_type: DPoP` and an access token bound to
//! the proof's key (its SHA-256 thumbprint, `cnf.jkt` in introspection and in JWT access
//! tokens); a public client's refresh token is bound to the same key (RFC 9449 §5). A client
//! may be required to send proofs ([`ClientBuilder::require_dpop`](crate::client::ClientBuilder::require_dpop)),
//! or every client ([`Dpop::required`]).
//!
//! Codes are bound too (RFC 9449 §10): `dpop_jkt` on the authorization request, or a proof
//! sent with the pushed authorization request (§10.1; a `dpop_jkt` beside it must name the
//! proof's key), binds the code to that key, and only a token request with a proof of the
//! same key redeems it (`invalid_grant` otherwise).
//!
//! At a resource, [`AuthorizationServer::bearer`](crate::AuthorizationServer::bearer) accepts
//! `Authorization: DPoP <token>` with a fresh proof for the request's method and URI whose
//! `ath` is the token's hash, and refuses a bound token presented as a bearer token. Refusals
//! carry RFC 9449 §7.1's `WWW-Authenticate: DPoP` challenges.
//!
//! What a proof is checked for: its size ([`MAX_PROOF_BYTES`]), `typ: dpop+jwt`, an
//! asymmetric `alg` of [`ALGORITHMS`], a public `jwk` of that algorithm (no private members,
//! RSA of 2048 to 4096 bits), the signature, `htm` and `htu` against the request, `iat` within
//! [`Dpop::proof_window`] of now, `ath` at a resource, the server's nonce when
//! [`Dpop::nonces`] is on, and its `jti` once: proof ids are kept in the
//! [`SingleUseStore`], so every node sharing it refuses a replay. A proof id is kept only once
//! the request it came with has passed every other check (a grant about to be issued, a live
//! token bound to the proof's key), so an unauthenticated client cannot fill that store, and each
//! key spends at most [`PROOFS_PER_KEY_PER_SECOND`] proofs a second of the proof window
//! ([`Dpop::proofs_per_key_per_second`]; counted
//! through the [`AttemptCounter`], shared by every node; past it,
//! 429 `temporarily_unavailable` before anything is kept), so one holder of a bound token
//! cannot either: a key keeps at most twice that many proof ids live. Keys are free to make, so
//! proofs are also counted by who spends them: at the token and
//! PAR endpoints, all self-registered clients together and all clients read from metadata
//! documents together spend at most [`PROOFS_PER_POOL`] per window each; at a resource, every
//! key of one account's tokens together at most [`PROOFS_PER_ACCOUNT_PER_KEY_LIMIT`] times one
//! key's limit. Proof ids are kept under a kind per tier and one for resources, which a store
//! bounds apart (for the in-memory one, [`MAX_SINGLE_USE`](crate::MemoryStore::MAX_SINGLE_USE)
//! each), so a flood through clients anyone can make refuses none of an administrator's
//! clients' proofs, nor a resource's.
//!
//! Signatures and RFC 7638 thumbprints are the `jsonwebtoken` crate's on its `aws-lc-rs` backend.

mod nonce;
mod proof;

use std::sync::Arc;
use std::time::Duration;

pub use proof::{
    ALGORITHMS, MAX_HEADER_BYTES, MAX_JTI_BYTES, MAX_PROOF_BYTES, PROOF_TYP, ProofContext,
    ProofError, VerifiedProof, verify_proof,
};

use http::{HeaderMap, Uri};

use crate::budget::{Budget, Spending};
use crate::client::ClientTier;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError, StoreError};
use crate::grant::bearer::Refusal;
use crate::grant::proof::Possession;
use crate::grant::proof::{AtResource, ProofOfPossession};
use crate::settings::KnownResource;
use crate::store::{AttemptCounter, JwkThumbprint, KeyStore, SingleUseStore, namespace};
use crate::throttle::{Counted, Quota};
use nonce::Nonces;

/// Proofs one key may spend per second of the proof window by default, on average over the
/// window (6,000 in the default 60-second window).
pub const PROOFS_PER_KEY_PER_SECOND: u32 = 100;

/// DPoP proofs all self-registered clients together, and apart from them all clients read
/// from metadata documents together, may spend at the token and PAR endpoints per proof
/// window.
pub const PROOFS_PER_POOL: u32 = 20_000;

/// How many keys' worth of proofs one account's tokens may spend at resources per proof
/// window, every key of its together: a user with tokens on two devices calls at full speed
/// from both, and making more keys gains nothing.
pub const PROOFS_PER_ACCOUNT_PER_KEY_LIMIT: u32 = 2;

/// The widest proof window [`Dpop::proof_window`] accepts.
pub const MAX_PROOF_WINDOW: Duration = Duration::from_secs(300);

/// The server's DPoP settings.
///
/// ```
/// use std::time::Duration;
/// use grantor::dpop::Dpop;
///
/// let dpop = Dpop::new().proof_window(Duration::from_secs(30)).nonces(true);
/// assert_eq!(dpop.window(), Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dpop {
    window: Duration,
    nonces: bool,
    required: bool,
    per_key: u32,
}

impl Default for Dpop {
    fn default() -> Self {
        Self::new()
    }
}

impl Dpop {
    /// DPoP accepted from every client that sends proofs: a 60-second proof window, no server
    /// nonces, proofs optional unless a client requires them.
    pub fn new() -> Self {
        Self {
            window: Duration::from_secs(60),
            nonces: false,
            required: false,
            per_key: PROOFS_PER_KEY_PER_SECOND,
        }
    }

    /// How many proofs one key may spend per second of the proof window, on average over the
    /// window (default [`PROOFS_PER_KEY_PER_SECOND`], at least 1): what bounds the proof ids one
    /// holder of a bound token makes the server keep. Raise it for a client that calls
    /// resources faster with one key.
    pub fn proofs_per_key_per_second(mut self, limit: u32) -> Self {
        self.per_key = limit.max(1);
        self
    }

    /// How far a proof's `iat` may be from the server's clock, either way (default 60 s,
    /// from 1 s to [`MAX_PROOF_WINDOW`]). A proof id is remembered this long past its `iat`.
    pub fn proof_window(mut self, window: Duration) -> Self {
        self.window = window.clamp(Duration::from_secs(1), MAX_PROOF_WINDOW);
        self
    }

    /// Whether proofs must carry a nonce the server chose (RFC 9449 §8, §9; default off). A
    /// proof without the current nonce is answered `use_dpop_nonce` with the nonce in the
    /// `DPoP-Nonce` header, and successful token responses carry it too. Nonces change every
    /// five minutes and the previous one stays good; every node shares them through the key
    /// seam ([`AuthorizationServerBuilder::keys`](crate::AuthorizationServerBuilder::keys)).
    pub fn nonces(mut self, on: bool) -> Self {
        self.nonces = on;
        self
    }

    /// Whether every client must send a proof with every token request (default: only
    /// clients that [require it](crate::client::ClientBuilder::require_dpop)).
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// The proof window.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Whether every client must send proofs.
    pub fn is_required(&self) -> bool {
        self.required
    }
}

/// Why a proof was refused: the proof itself, a nonce the client must use, or the store.
#[derive(Debug)]
pub(crate) enum Refused {
    Proof(ProofError),
    /// The key signed more proofs than its budget allows: 429.
    TooMany(OAuthError),
    /// The proof lacks the current nonce, which is this.
    Nonce(String),
    Store(StoreError),
}

impl From<StoreError> for Refused {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

impl From<ProofError> for Refused {
    fn from(error: ProofError) -> Self {
        Self::Proof(error)
    }
}

/// The server's DPoP checks: the settings, the shared state they need, and the URLs proofs
/// name, worked out once.
pub(crate) struct Checker {
    pub(crate) settings: Dpop,
    single_use: Arc<dyn SingleUseStore>,
    /// Where each key's spent proofs are counted.
    attempts: Arc<dyn AttemptCounter>,
    nonces: Option<Nonces>,
    /// The token endpoint's absolute URL, a token request's `htu`.
    token_url: String,
    /// The PAR endpoint's absolute URL, a pushed request's `htu` (RFC 9449 §10.1).
    par_url: String,
    /// The issuer's origin: a resource's `htu` when the resource served is not configured.
    pub(crate) origin: String,
    /// Every origin the server's resources are configured at (the issuer's first): the only
    /// origins a resource's `htu` may name, the served resource's.
    origins: Vec<String>,
}

impl Checker {
    pub(crate) fn new(
        settings: Dpop,
        single_use: Arc<dyn SingleUseStore>,
        attempts: Arc<dyn AttemptCounter>,
        keys: Arc<dyn KeyStore>,
        (token_url, par_url): (String, String),
        issuer: &str,
        resources: &[KnownResource],
    ) -> Self {
        let nonces = settings.nonces.then(|| Nonces::new(keys));
        let origin_of = |url: &str| {
            url::Url::parse(url)
                .ok()
                .map(|url| url.origin())
                .filter(url::Origin::is_tuple)
                .map(|origin| origin.ascii_serialization())
        };
        let origin = origin_of(issuer).unwrap_or_default();
        let mut origins = vec![origin.clone()];
        for resource in resources.iter().filter_map(|r| origin_of(&r.registered)) {
            if !origins.contains(&resource) {
                origins.push(resource);
            }
        }
        Self {
            settings,
            single_use,
            attempts,
            nonces,
            token_url,
            par_url,
            origin,
            origins,
        }
    }

    /// Checks `proof` (the one `DPoP` header's value) against the request, and its nonce.
    /// The proof's `jti` is not spent yet: see [`Checker::spend`].
    pub(crate) async fn check(
        &self,
        proof: &str,
        context: ProofContext<'_>,
    ) -> Result<VerifiedProof, Refused> {
        let context = ProofContext {
            window: self.settings.window,
            ..context
        };
        let verified = verify_proof(proof, &context)?;
        if let Some(nonces) = &self.nonces {
            let now = context.now;
            let fresh = match verified.nonce.as_deref() {
                Some(nonce) => nonces.accepts(nonce, now).await?,
                None => false,
            };
            if !fresh {
                return Err(Refused::Nonce(nonces.current(now).await?));
            }
        }
        Ok(verified)
    }

    /// Spends the proof's `jti`: of every use of one proof, on any node sharing the store, one
    /// is accepted and the others are [`ProofError::Replayed`]. Each key spends at most
    /// [`Dpop::proofs_per_key_per_second`] times the proof window's seconds per window, and
    /// then `spender`'s budget: a client tier's pool at the token and PAR endpoints, an
    /// account's at a resource. Past a limit, 429 before anything is kept.
    pub(crate) async fn spend(
        &self,
        proof: &VerifiedProof,
        spender: Spender<'_>,
        now: UnixTime,
    ) -> Result<(), Refused> {
        let window = self.settings.window;
        let per_key = (self.settings.per_key).saturating_mul(window.as_secs().max(1) as u32);
        let budget = Quota {
            key: &namespace::key_proofs(&proof.jkt),
            window,
            limit: per_key,
            refusal: "this DPoP key signed too many proofs; try again later",
            counted: Counted {
                kind: "dpop-key",
                tier: "key",
            },
        };
        budget
            .count(&*self.attempts, now)
            .await
            .map_err(Refused::TooMany)?;
        let tier = match spender {
            Spender::Client(tier) => {
                let pool = Budget {
                    spending: Spending::DpopProofs,
                    window,
                    per_client: None,
                    per_tier: PROOFS_PER_POOL,
                };
                pool.spend_for_tier(tier, &*self.attempts, now)
                    .await
                    .map_err(Refused::TooMany)?;
                Some(tier)
            }
            Spender::Account(account) => {
                let quota = Quota {
                    key: &namespace::account_proofs(account),
                    window,
                    limit: per_key.saturating_mul(PROOFS_PER_ACCOUNT_PER_KEY_LIMIT),
                    refusal: "this account's DPoP keys signed too many proofs; try again later",
                    counted: Counted {
                        kind: "dpop-account",
                        tier: "account",
                    },
                };
                quota
                    .count(&*self.attempts, now)
                    .await
                    .map_err(Refused::TooMany)?;
                None
            }
        };
        let key = namespace::dpop_proof(tier, &proof.jkt, &proof.jti);
        let until = proof.usable_until(self.settings.window);
        if self.single_use.insert_once(&key, b"", until, now).await? {
            Ok(())
        } else {
            Err(Refused::Proof(ProofError::Replayed))
        }
    }
}

/// Who spends a DPoP proof: a client of a tier at the token or PAR endpoint, or at a
/// resource the account the token serves (its user, or for a token without one its client).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Spender<'a> {
    Client(ClientTier),
    Account(&'a str),
}

impl Checker {
    /// The proof of a `POST` to `url` (an endpoint of the server's), if the request sent one:
    /// checked, not spent.
    async fn posted<'a>(
        &'a self,
        headers: &HeaderMap,
        url: &str,
        now: UnixTime,
    ) -> Result<Option<Box<dyn Possession + 'a>>, OAuthError> {
        let proof = match proof_header(headers) {
            Ok(Some(proof)) => proof,
            Ok(None) => return Ok(None),
            Err(error) => return Err(Refused::Proof(error).into_error()),
        };
        let context = ProofContext {
            method: "POST",
            uri: url,
            access_token: None,
            now,
            window: self.settings.window,
        };
        let proof = self
            .check(proof, context)
            .await
            .map_err(Refused::into_error)?;
        Ok(Some(Box::new(Presented {
            checker: self,
            proof,
        })))
    }
}

/// A token request's proof, checked, with what spends it: the grants' [`Possession`].
pub(crate) struct Presented<'a> {
    checker: &'a Checker,
    proof: VerifiedProof,
}

#[async_trait::async_trait]
impl Possession for Presented<'_> {
    fn jkt(&self) -> JwkThumbprint {
        self.proof.jkt
    }

    async fn spend(&self, tier: ClientTier, now: UnixTime) -> Result<(), OAuthError> {
        self.checker
            .spend(&self.proof, Spender::Client(tier), now)
            .await
            .map_err(Refused::into_error)
    }
}

impl Refused {
    /// The refusal as the token endpoint answers it (400, RFC 9449 §5, §8).
    pub(crate) fn into_error(self) -> OAuthError {
        match self {
            Self::Proof(error) => OAuthError::new(ErrorCode::InvalidDpopProof, error.to_string()),
            Self::Nonce(_) => OAuthError::new(
                ErrorCode::UseDpopNonce,
                "the DPoP proof must carry the nonce of the DPoP-Nonce header",
            ),
            Self::Store(error) => error.into(),
            Self::TooMany(error) => error,
        }
    }
}

/// The value of the request's one `DPoP` header, if it sent one.
pub(crate) fn proof_header(headers: &HeaderMap) -> Result<Option<&str>, ProofError> {
    let mut values = headers.get_all(DPOP).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ProofError::Repeated);
    }
    value.to_str().map(Some).map_err(|_| ProofError::Malformed)
}

/// The `DPoP` request header (RFC 9449 §4.1).
pub(crate) const DPOP: &str = crate::grant::proof::PROOF_HEADER;

#[async_trait::async_trait]
impl ProofOfPossession for Checker {
    fn required(&self) -> bool {
        self.settings.required
    }

    async fn at_token_endpoint<'a>(
        &'a self,
        headers: &HeaderMap,
        now: UnixTime,
    ) -> Result<Option<Box<dyn Possession + 'a>>, OAuthError> {
        self.posted(headers, &self.token_url, now).await
    }

    async fn at_pushed_endpoint<'a>(
        &'a self,
        headers: &HeaderMap,
        now: UnixTime,
    ) -> Result<Option<Box<dyn Possession + 'a>>, OAuthError> {
        self.posted(headers, &self.par_url, now).await
    }

    async fn at_resource(
        &self,
        headers: &HeaderMap,
        call: AtResource<'_>,
        now: UnixTime,
    ) -> Result<(), Refusal> {
        let AtResource {
            target,
            resource,
            token,
            bound,
            account,
        } = call;
        let proof = match proof_header(headers) {
            Ok(Some(proof)) => proof,
            Ok(None) => return Err(invalid_proof(ProofError::Missing)),
            Err(error) => return Err(invalid_proof(error)),
        };
        let Some((method, uri)) = target else {
            // The host passed headers alone: no method or URI to check `htm` and `htu` against.
            return Err(Refusal::Error(
                OAuthError::new(
                    ErrorCode::InvalidDpopProof,
                    "this resource cannot check DPoP proofs",
                )
                .with_status(http::StatusCode::UNAUTHORIZED),
            ));
        };
        let uri = htu(&self.origin, &self.origins, resource, uri);
        let context = ProofContext {
            method: method.as_str(),
            uri: &uri,
            access_token: Some(token),
            now,
            window: self.settings.window(),
        };
        let verified = self.check(proof, context).await.map_err(resource_refusal)?;
        if verified.jkt != bound {
            return Err(invalid_proof(ProofError::WrongKey));
        }
        self.spend(&verified, Spender::Account(account), now)
            .await
            .map_err(resource_refusal)
    }

    fn offers_nonces(&self) -> bool {
        self.nonces.is_some()
    }

    async fn current_nonce(&self, now: UnixTime) -> Result<Option<String>, StoreError> {
        match &self.nonces {
            Some(nonces) => Ok(Some(nonces.current(now).await?)),
            None => Ok(None),
        }
    }
}

/// The `htu` a proof for this request must name (RFC 9449 §4.3: without query and fragment):
/// the origin of `resource`, the resource served, when it is one of the configured `origins`
/// (the issuer's and the resources'), else the issuer's `origin`; then the request's path.
/// Nothing of the request's authority counts: a request sent as `GET
/// https://resource.example/api/me` (absolute form) or with another `Host` cannot make a proof
/// made for another resource's URL acceptable here (RFC 9449 §7.1, §11.1).
fn htu(origin: &str, origins: &[String], resource: &str, uri: &Uri) -> String {
    let served = url::Url::parse(resource)
        .ok()
        .map(|url| url.origin())
        .filter(url::Origin::is_tuple)
        .map(|origin| origin.ascii_serialization());
    match served.and_then(|served| origins.iter().find(|known| **known == served)) {
        Some(known) => format!("{known}{}", uri.path()),
        None => format!("{origin}{}", uri.path()),
    }
}

/// A proof refused at a resource: 401 `invalid_dpop_proof` (RFC 9449 §7.1).
fn invalid_proof(error: ProofError) -> Refusal {
    Refusal::Error(
        OAuthError::new(ErrorCode::InvalidDpopProof, error.to_string())
            .with_status(http::StatusCode::UNAUTHORIZED),
    )
}

fn resource_refusal(refused: Refused) -> Refusal {
    match refused {
        Refused::Proof(error) => invalid_proof(error),
        Refused::Nonce(nonce) => Refusal::DpopNonce(nonce),
        Refused::Store(error) => Refusal::Error(error.into()),
        Refused::TooMany(error) => Refusal::Error(error),
    }
}

#[cfg(test)]
mod tests {
    use super::htu;

    #[test]
    fn htu_is_the_served_resources_origin_whatever_the_request_names() {
        let origins = [
            "https://auth.example".to_owned(),
            "https://files.example".to_owned(),
        ];
        let at = |resource: &str, target: &str| {
            htu(&origins[0], &origins, resource, &target.parse().unwrap())
        };
        let api = "https://auth.example/api";
        assert_eq!(at(api, "/api/me?x=1"), "https://auth.example/api/me");
        assert_eq!(
            at("https://FILES.example:443/", "/doc"),
            "https://files.example/doc"
        );
        // Another origin as the request target, even a configured resource's, names nothing
        // of it in the htu.
        for target in [
            "https://files.example/api/me",
            "https://other.example/api/me",
            "http://auth.example/api/me",
        ] {
            assert_eq!(at(api, target), "https://auth.example/api/me", "{target}");
        }
        // A resource that is not configured, or not a URL, is read at the issuer's origin.
        assert_eq!(
            at("https://unknown.example/", "/x"),
            "https://auth.example/x"
        );
        assert_eq!(at("urn:example:api", "/x"), "https://auth.example/x");
    }
}
