//! Trusted assertion issuers for the JWT-bearer grant (RFC 7523 §2.1, §3): the identity
//! providers whose signed assertions a confidential client may trade for an access token for
//! one of this server's users, without a browser. MCP's enterprise-managed authorization
//! sends an Identity Assertion JWT Authorization Grant (ID-JAG, `typ` `oauth-id-jag+jwt`) this
//! way: an enterprise's identity provider issues it by token exchange, and this server redeems
//! it. Feature `private-key-jwt`.
//!
//! ```
//! use grantor::client::{Client, ClientCredentials, GrantType};
//! use grantor::trust::TrustedIssuer;
//! use grantor::{AuthorizationServer, MemoryStore};
//!
//! // The enterprise's identity provider and its public key (a JWK Set, or a `jwks_uri`
//! // fetched through the outbound seam with `TrustedIssuer::jwks_uri`).
//! let idp = TrustedIssuer::jwks(
//!     "https://idp.example",
//!     r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"idp-1",
//!         "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#,
//! )
//! .unwrap()
//! .clients(["mcp-agent"]);
//! let server = AuthorizationServer::builder()
//!     .issuer("https://mcp.example")
//!     .store(MemoryStore::new())
//!     .trust_issuer(idp)
//!     .build()
//!     .unwrap();
//! // The client that presents the enterprise's assertions is agreed the grant.
//! let agent = Client::confidential("mcp-agent", ClientCredentials::generate().unwrap().verifier)
//!     .grant_types([GrantType::JwtBearer])
//!     .build()
//!     .unwrap();
//! # let _ = (server, agent);
//! ```
//!
//! What is checked of an assertion: its size (at most [`MAX_GRANT_ASSERTION_BYTES`]); a
//! signature by a key of the issuer its `iss` names, with an algorithm the issuer is trusted
//! for (the key its `kid` names; a `kid` the kept key set lacks fetches the issuer's
//! `jwks_uri` again, at most every ten seconds); `aud` naming this server's issuer identifier
//! or token endpoint; `exp` not past and at most [`MAX_GRANT_ASSERTION_LIFETIME`] after `iat`
//! (or after now, without `iat`); `nbf` and `iat` not ahead (30 s of clock skew); a `sub`; and a
//! `jti` never presented before, spent through the one-time seam. Each issuer's `jti`s count
//! against a budget of their own ([`TrustedIssuer::assertions_per_window`], at most
//! [`MAX_ASSERTIONS_PER_WINDOW`] per [`ASSERTION_WINDOW`]), so that an issuer flooding the
//! grant denies no other issuer nor any other grant; past it, `429 temporarily_unavailable`.
//! At most [`MAX_TRUSTED_ISSUERS`] issuers are trusted: their one-time values together stay
//! well within a store's bound for the kind. Every other refusal is `invalid_grant`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::client::{ClientError, ClientId, ClientKeys};
use crate::client_assertion::{
    FetchedKeys, MAX_HEADER_BYTES, MAX_JTI_BYTES, SignatureError, seconds, signed_claims,
};
use crate::clock::UnixTime;
use crate::error::{OAuthError, StoreError};
use crate::grant::jwt_bearer::{GrantAssertion, GrantAssertions};
use crate::id::UserId;
use crate::id_jag::ID_JAG_TYP;
use crate::request::Assertion;
use crate::signing::ClientSigningAlgorithm;
use crate::store::{AttemptCounter, SingleUseStore, UserStore};
use crate::throttle::{Counted, Quota};

/// The most issuers a server trusts.
pub const MAX_TRUSTED_ISSUERS: usize = 16;

/// The longest assertion taken, in bytes (the form's parameter bound applies first).
pub const MAX_GRANT_ASSERTION_BYTES: usize = 8 * 1024;

/// The longest an assertion may live: `exp` at most this after `iat`.
pub const MAX_GRANT_ASSERTION_LIFETIME: Duration = Duration::from_secs(300);

/// The window over which each issuer's spent `jti`s are counted: longer than an assertion
/// lives, so one window's count bounds the `jti`s kept at once.
pub const ASSERTION_WINDOW: Duration = Duration::from_secs(360);

/// The most `jti`s one issuer may spend in a window: with [`MAX_TRUSTED_ISSUERS`] issuers,
/// 80,000 one-time values at most, within the 100,000 a store keeps of one kind.
pub const MAX_ASSERTIONS_PER_WINDOW: u32 = 5_000;

/// The clock skew allowed on `exp`, `nbf` and `iat`.
const CLOCK_SKEW: Duration = Duration::from_secs(30);

/// An identity provider whose assertions this server takes: its issuer identifier, its keys
/// (a `jwks_uri` fetched through the server's outbound seam, or a JWK Set given here), the
/// algorithms it signs with, and the clients that may present its assertions.
#[derive(Clone)]
pub struct TrustedIssuer {
    pub(crate) issuer: String,
    pub(crate) keys: IssuerKeys,
    pub(crate) algorithms: Vec<ClientSigningAlgorithm>,
    pub(crate) clients: Option<Vec<String>>,
    pub(crate) per_window: u32,
}

/// Where a trusted issuer's keys come from.
#[derive(Clone)]
pub(crate) enum IssuerKeys {
    /// A JWK Set given with the issuer (JSON text, checked).
    Jwks(Arc<str>),
    /// Fetched from this URL through the outbound seam, kept a while.
    JwksUri(String),
}

impl TrustedIssuer {
    /// The issuer `issuer` (its `iss`, compared exactly), its keys fetched from `jwks_uri`
    /// through the server's [outbound seam](crate::AuthorizationServerBuilder::outbound) when
    /// first needed (an unreachable URL never stops the server from starting), kept five
    /// minutes.
    pub fn jwks_uri(issuer: impl Into<String>, jwks_uri: impl Into<String>) -> Self {
        Self::with(issuer.into(), IssuerKeys::JwksUri(jwks_uri.into()))
    }

    /// The issuer `issuer`, its public keys the JWK Set `jwks` (JSON text, as a client's
    /// `jwks`): refused if it is not one.
    pub fn jwks(issuer: impl Into<String>, jwks: &str) -> Result<Self, ClientError> {
        ClientKeys::jwks(jwks)?;
        Ok(Self::with(issuer.into(), IssuerKeys::Jwks(Arc::from(jwks))))
    }

    fn with(issuer: String, keys: IssuerKeys) -> Self {
        Self {
            issuer,
            keys,
            algorithms: ClientSigningAlgorithm::ALL.to_vec(),
            clients: None,
            per_window: MAX_ASSERTIONS_PER_WINDOW,
        }
    }

    /// The algorithms its assertions may be signed with (default: RS256, PS256, ES256 and
    /// EdDSA).
    pub fn algorithms(
        mut self,
        algorithms: impl IntoIterator<Item = ClientSigningAlgorithm>,
    ) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// The only clients that may present its assertions (default: any client agreed the
    /// JWT-bearer grant); another gets `unauthorized_client`.
    pub fn clients<I, S>(mut self, clients: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.clients = Some(clients.into_iter().map(Into::into).collect());
        self
    }

    /// How many of its assertions may be spent per [`ASSERTION_WINDOW`] (default and at most
    /// [`MAX_ASSERTIONS_PER_WINDOW`]).
    pub fn assertions_per_window(mut self, limit: u32) -> Self {
        self.per_window = limit.min(MAX_ASSERTIONS_PER_WINDOW);
        self
    }

    /// Its issuer identifier.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Whether its keys are fetched from a `jwks_uri`.
    pub(crate) fn fetches_keys(&self) -> bool {
        matches!(self.keys, IssuerKeys::JwksUri(_))
    }
}

impl std::fmt::Debug for TrustedIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustedIssuer")
            .field("issuer", &self.issuer)
            .field("algorithms", &self.algorithms)
            .field("clients", &self.clients)
            .finish_non_exhaustive()
    }
}

/// Which of the host's users an assertion is about: the host's mapping of an issuer's claims
/// to its accounts. Without one, the account whose username is the assertion's `email`, else
/// its `sub` ([`UserStore::find_account`]).
#[async_trait]
pub trait AssertionUsers: Send + Sync {
    /// The user the assertion `claims` of `issuer` (verified) are about; `None` when there is
    /// none (the grant is refused with `invalid_grant`).
    async fn user(
        &self,
        issuer: &str,
        claims: &Map<String, Value>,
    ) -> Result<Option<UserId>, StoreError>;
}

/// The trusted issuers, as the grant checks their assertions.
pub(crate) struct Issuers {
    pub(crate) trusted: Vec<TrustedIssuer>,
    pub(crate) users: Option<Arc<dyn AssertionUsers>>,
    pub(crate) fetched: Option<FetchedKeys>,
    pub(crate) single_use: Arc<dyn SingleUseStore>,
    pub(crate) attempts: Arc<dyn AttemptCounter>,
    /// This server's issuer identifier and token endpoint: what `aud` may name.
    pub(crate) audiences: [String; 2],
}

/// The claims checked, as read.
#[derive(serde::Deserialize)]
struct Claims {
    iss: Option<String>,
    sub: Option<String>,
    aud: Option<Value>,
    exp: Option<f64>,
    nbf: Option<f64>,
    iat: Option<f64>,
    auth_time: Option<f64>,
    jti: Option<String>,
    client_id: Option<String>,
    resource: Option<Value>,
    scope: Option<String>,
}

#[derive(serde::Deserialize)]
struct Header {
    typ: Option<String>,
}

fn refused(why: &'static str) -> OAuthError {
    OAuthError::invalid_grant(why)
}

impl Issuers {
    /// The issuer an assertion's (unverified) `iss` names, if it is trusted.
    fn named(&self, assertion: &str) -> Result<&TrustedIssuer, OAuthError> {
        #[derive(serde::Deserialize)]
        struct Iss {
            iss: Option<String>,
        }
        let [_, payload, _] =
            crate::jose::parts(assertion).ok_or_else(|| refused("the assertion is not a JWS"))?;
        let iss = crate::jose::decode_part::<Iss>(payload, MAX_GRANT_ASSERTION_BYTES)
            .and_then(|claims| claims.iss)
            .ok_or_else(|| refused("the assertion names no issuer (iss)"))?;
        self.trusted
            .iter()
            .find(|trusted| trusted.issuer == iss)
            .ok_or_else(|| refused("the assertion's issuer is not trusted here"))
    }

    /// The JWK Set of `trusted`, fetched anew when the assertion names a `kid` it lacks.
    async fn keys(
        &self,
        trusted: &TrustedIssuer,
        kid: Option<&str>,
    ) -> Result<Arc<str>, OAuthError> {
        let uri = match &trusted.keys {
            IssuerKeys::Jwks(jwks) => return Ok(Arc::clone(jwks)),
            IssuerKeys::JwksUri(uri) => uri,
        };
        let fetched = self
            .fetched
            .as_ref()
            .ok_or_else(|| refused("this issuer's keys cannot be fetched here"))?;
        let set = fetched.set(uri).await.map_err(|error| {
            tracing::warn!(issuer = %trusted.issuer, %error, "a trusted issuer's keys could not be fetched");
            refused("the issuer's keys could not be fetched")
        })?;
        if let Some(kid) = kid
            && !crate::client_assertion::holds_kid(&set, kid)
            && let Some(fresh) = fetched.set_again(uri).await?
        {
            return Ok(Arc::from(fresh));
        }
        Ok(Arc::from(set))
    }
}

#[async_trait]
impl GrantAssertions for Issuers {
    async fn verify(
        &self,
        assertion: Assertion<'_>,
        now: UnixTime,
    ) -> Result<GrantAssertion, OAuthError> {
        let jws = assertion.0;
        if jws.len() > MAX_GRANT_ASSERTION_BYTES {
            return Err(refused("the assertion is too long"));
        }
        let trusted = self.named(jws)?;
        let kid = crate::client_assertion::named_kid(jws);
        let jwks = self.keys(trusted, kid.as_deref()).await?;
        let (algorithm, claims) =
            signed_claims::<Map<String, Value>>(jws, &jwks, MAX_GRANT_ASSERTION_BYTES).map_err(
                |error| match error {
                    SignatureError::UnsupportedAlgorithm => {
                        refused("the assertion's alg is not one this server verifies")
                    }
                    SignatureError::KidNeeded => {
                        refused("the assertion names no kid, and its issuer has several keys")
                    }
                    _ => refused("the assertion is not signed by a key of its issuer"),
                },
            )?;
        let alg = crate::jose::name(algorithm);
        if !trusted.algorithms.iter().any(|a| a.as_str() == alg) {
            return Err(refused(
                "the assertion's alg is not one its issuer is trusted for",
            ));
        }
        let checked: Claims = serde_json::from_value(Value::Object(claims.clone()))
            .map_err(|_| refused("the assertion's claims are malformed"))?;
        let header = crate::jose::parts(jws).and_then(|[header, _, _]| {
            crate::jose::decode_part::<Header>(header, MAX_HEADER_BYTES)
        });
        let id_jag = header
            .and_then(|h| h.typ)
            .is_some_and(|typ| typ.eq_ignore_ascii_case(ID_JAG_TYP));
        let (jti, expires_at) = self.check(trusted, &checked, now)?;
        // Only now, every check passed: nobody without the issuer's key spends its budget.
        let key = crate::store::namespace::issuer_assertions(&trusted.issuer);
        Quota {
            key: &key,
            window: ASSERTION_WINDOW,
            limit: trusted.per_window,
            refusal: "too many assertions from this issuer; try again later",
            counted: Counted {
                kind: "issuer-assertion",
                tier: "issuer",
            },
        }
        .count(&*self.attempts, now)
        .await?;
        let spent = crate::store::namespace::grant_assertion(&trusted.issuer, &jti);
        if !self
            .single_use
            .insert_once(&spent, b"", expires_at, now)
            .await?
        {
            return Err(refused("the assertion was presented before (its jti)"));
        }
        let resources = match &checked.resource {
            None => Vec::new(),
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Array(many)) => many
                .iter()
                .map(|r| r.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| refused("the assertion's resource is malformed"))?,
            Some(_) => return Err(refused("the assertion's resource is malformed")),
        };
        let signed_in_at = checked.auth_time.or(checked.iat).and_then(seconds);
        Ok(GrantAssertion {
            issuer: trusted.issuer.clone(),
            id_jag,
            client_id: checked.client_id,
            resources,
            scope: checked.scope,
            signed_in_at,
            claims,
        })
    }

    fn presentable_by(&self, issuer: &str, client: &ClientId) -> bool {
        self.trusted
            .iter()
            .find(|trusted| trusted.issuer == issuer)
            .is_some_and(|trusted| {
                trusted
                    .clients
                    .as_ref()
                    .is_none_or(|clients| clients.iter().any(|c| c == client.as_str()))
            })
    }

    async fn user(
        &self,
        assertion: &GrantAssertion,
        users: &dyn UserStore,
    ) -> Result<Option<UserId>, StoreError> {
        if let Some(mapping) = &self.users {
            return mapping.user(&assertion.issuer, &assertion.claims).await;
        }
        let named = |claim: &str| assertion.claims.get(claim).and_then(Value::as_str);
        for username in [named("email"), named("sub")].into_iter().flatten() {
            if let Some(account) = users.find_account(username).await? {
                return Ok(Some(account.user().id().clone()));
            }
        }
        Ok(None)
    }
}

impl Issuers {
    /// RFC 7523 §3's checks of the verified claims: `iss` (matched when the issuer was picked),
    /// `sub`, `aud`, `exp` and the lifetime, `nbf`, `iat`, and the `jti`'s shape; answers the
    /// `jti` and how long it must be remembered.
    fn check(
        &self,
        trusted: &TrustedIssuer,
        claims: &Claims,
        now: UnixTime,
    ) -> Result<(String, UnixTime), OAuthError> {
        if claims.iss.as_deref() != Some(trusted.issuer.as_str()) {
            return Err(refused("the assertion's issuer is not trusted here"));
        }
        if claims
            .sub
            .as_deref()
            .is_none_or(|sub| sub.is_empty() || sub.len() > 255)
        {
            return Err(refused("the assertion names no subject (sub)"));
        }
        let names = |aud: &str| self.audiences.iter().any(|a| a == aud);
        let audience_ok = match &claims.aud {
            Some(Value::String(aud)) => names(aud),
            Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).any(names),
            _ => false,
        };
        if !audience_ok {
            return Err(refused("the assertion is not for this server (aud)"));
        }
        let exp = claims
            .exp
            .and_then(seconds)
            .ok_or_else(|| refused("the assertion has no valid expiry (exp)"))?;
        if exp.plus(CLOCK_SKEW) <= now {
            return Err(refused("the assertion expired"));
        }
        let iat = claims
            .iat
            .map(|iat| seconds(iat).ok_or_else(|| refused("the assertion's iat is malformed")))
            .transpose()?;
        let latest = iat
            .unwrap_or(now)
            .plus(MAX_GRANT_ASSERTION_LIFETIME)
            .plus(CLOCK_SKEW);
        if exp > latest {
            return Err(refused("the assertion lives longer than five minutes"));
        }
        let ahead = |time: Option<f64>| {
            time.is_some_and(|t| seconds(t).is_none_or(|t| t > now.plus(CLOCK_SKEW)))
        };
        if ahead(claims.nbf) || ahead(claims.iat) {
            return Err(refused("the assertion is not valid yet (nbf or iat)"));
        }
        match &claims.jti {
            Some(jti) if !jti.is_empty() && jti.len() <= MAX_JTI_BYTES => {
                Ok((jti.clone(), exp.plus(CLOCK_SKEW)))
            }
            _ => Err(refused("the assertion has no jti of at most 256 bytes")),
        }
    }
}
