//! Issuing tokens, the step every grant ends with: what it needs ([`Issuer`]), the secrets
//! minted and the record the store keeps, and what the client is handed once ([`Issued`]).

use std::future::Future;
use std::pin::Pin;

use super::id_token;
use super::proof::Possession;
use crate::client::{ClientTier, GrantType};
use crate::clock::UnixTime;
use crate::error::{OAuthError, StoreError};
use crate::events::{Event, EventKind};
use crate::mint;
use crate::mtls::ClientCertificate;
use crate::scope::Scope;
use crate::secret::{AccessToken, RefreshToken, SecretDigest};
use crate::settings::{Lifetimes, Resources};
use crate::store::seam::TokenSeam;
use crate::store::{
    Actor, Authorization, Family, FamilyId, Jti, NewRefreshToken, NewTokens, TokenBinding,
};
use crate::token_format::{AccessClaims, AccessTokenFormat};

/// `token_type` as the spec writes it.
pub(crate) const TOKEN_TYPE: &str = "bearer";

/// `token_type` of a token bound to a DPoP key (RFC 9449 §5).
pub(crate) const DPOP_TOKEN_TYPE: &str = "DPoP";

/// `token_type` of what token exchange issues that is no access token (RFC 8693 §2.2.1).
pub(crate) const NOT_APPLICABLE_TOKEN_TYPE: &str = "N_A";

/// What issuing tokens needs: where they are kept and how long they live.
#[derive(Clone, Copy)]
pub(crate) struct Issuer<'a> {
    pub(crate) store: TokenSeam<'a>,
    pub(crate) lifetimes: &'a Lifetimes,
    /// What tokens may be aimed at (RFC 8707).
    pub(crate) resources: &'a Resources,
    /// The issuer identifier, the `iss` of JWT access tokens.
    pub(crate) issuer_id: &'a str,
    /// Set when access tokens are self-contained (JWTs, RFC 9068).
    pub(crate) format: Option<&'a dyn AccessTokenFormat>,
    /// The request's DPoP proof, whose key the tokens are bound to (RFC 9449).
    pub(crate) possession: Option<&'a dyn Possession>,
    /// The client certificate the request came with: a refresh token bound to one is used
    /// only with it (RFC 8705 §4).
    pub(crate) certificate: Option<&'a ClientCertificate>,
    /// Whether the tokens are bound to that certificate when the request sent no DPoP proof
    /// (RFC 8705 §3): the server's setting.
    pub(crate) bind_certificates: bool,
    /// Whether refresh tokens are bound to that key or certificate too: a public client's are
    /// (RFC 9449 §5, RFC 8705 §4).
    pub(crate) bind_refresh: bool,
    /// The client's tier, whose budget a DPoP proof spends.
    pub(crate) tier: ClientTier,
    /// Who acts for the user of the access tokens minted (RFC 8693 §4.1): set by token
    /// exchange alone.
    pub(crate) actor: Option<&'a Actor>,
    /// Where events go.
    pub(crate) events: &'a dyn crate::events::Events,
    /// Set when the server is an OpenID Connect provider.
    pub(crate) id_tokens: Option<id_token::IdTokens<'a>>,
}

/// Tokens just minted, in the clear, to hand to the client once (RFC 6749 §5.1, with the spec's
/// `jti`): the token endpoint renders them as JSON, the implicit grant into a fragment. The
/// secrets are plain text here (their digests went to the store), which keeps this value, and
/// every future that holds it, small; its `Debug` shows neither.
pub(crate) struct Issued {
    access_token: String,
    /// `bearer` (a certificate-bound token's too, RFC 8705 §3), or `DPoP` for a token bound
    /// to a key.
    pub(crate) token_type: &'static str,
    pub(crate) expires_in: u64,
    pub(crate) jti: Jti,
    pub(crate) scope: Scope,
    refresh_token: Option<String>,
    /// RFC 8693 §2.2.1 `issued_token_type`: set by token exchange alone.
    pub(crate) issued_token_type: Option<&'static str>,
    /// The ID token of an OpenID Connect grant (OIDC Core §3.1.3.3). Never log it: it carries
    /// the user's claims.
    pub(crate) id_token: Option<String>,
    /// The family the tokens are in; `None` for an ID-JAG, which is no token of this server.
    pub(crate) family: Option<FamilyId>,
}

impl Issued {
    /// The access token. Never log it.
    pub(crate) fn access_token(&self) -> &str {
        &self.access_token
    }

    /// The refresh token, if one was issued. Never log it.
    pub(crate) fn refresh_token(&self) -> Option<&str> {
        self.refresh_token.as_deref()
    }

    /// A signed assertion for another authorization server, answered in `access_token` as
    /// RFC 8693 §2.2.1 has it: `token_type` `N_A`, the assertion's `jti` and lifetime, its
    /// `issued_token_type`, and neither refresh token nor family.
    pub(crate) fn assertion(
        assertion: String,
        issued_token_type: &'static str,
        jti: Jti,
        scope: Scope,
        expires_in: u64,
    ) -> Self {
        Self {
            access_token: assertion,
            token_type: NOT_APPLICABLE_TOKEN_TYPE,
            expires_in,
            jti,
            scope,
            refresh_token: None,
            issued_token_type: Some(issued_token_type),
            id_token: None,
            family: None,
        }
    }
}

impl std::fmt::Debug for Issued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issued")
            .field("access_token", &"<redacted>")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("jti", &self.jti)
            .field("scope", &self.scope)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("issued_token_type", &self.issued_token_type)
            .field("id_token", &self.id_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Tokens being minted: the random secrets, their family, `jti` and expiry, before the access
/// token's text is settled (the minted one, or a JWT carrying its `jti`).
struct Minting {
    access: AccessToken,
    refresh: Option<RefreshToken>,
    family: Family,
    jti: Jti,
    now: UnixTime,
    access_expires_at: UnixTime,
}

impl Minting {
    fn new(
        issuer: &Issuer<'_>,
        family: Option<FamilyId>,
        with_refresh: bool,
        now: UnixTime,
    ) -> Result<Self, OAuthError> {
        let minted = mint::tokens(with_refresh, family.is_none())?;
        let family = match (family, minted.family) {
            (Some(id), _) => Family::Existing(id),
            (None, Some(id)) => Family::New(id),
            // `tokens` mints a family id whenever it is told the family is new.
            (None, None) => return Err(StoreError::failed("no family id was minted").into()),
        };
        let jti = mint::jti(&minted.access.digest());
        Ok(Self {
            access: minted.access,
            refresh: minted.refresh,
            family,
            jti,
            now,
            access_expires_at: now.plus(issuer.lifetimes.access_token),
        })
    }

    /// What the client gets and what the store keeps: the access token is the minted one, or
    /// `signed` (a JWT's text and digest), bound to `binding`.
    fn finish(
        self,
        issuer: &Issuer<'_>,
        signed: Option<(String, SecretDigest)>,
        authorization: Authorization,
        binding: Option<TokenBinding>,
        family_end: Option<UnixTime>,
    ) -> (Issued, NewTokens) {
        let Self {
            access,
            refresh,
            family,
            jti,
            now,
            access_expires_at,
        } = self;
        let (access_text, access_digest) = match signed {
            Some(signed) => signed,
            None => {
                let digest = access.digest();
                (access.into_secret(), digest)
            }
        };
        let family_id = match family {
            Family::New(id) | Family::Existing(id) => id,
        };
        let scope = authorization.scope.clone();
        let mut record = NewTokens::new(
            family,
            authorization,
            now,
            access_digest,
            jti.clone(),
            access_expires_at,
        )
        .bound_to(binding)
        .acting(issuer.actor.cloned());
        if let Some(refresh) = &refresh {
            let family_end = family_end.unwrap_or_else(|| now.plus(issuer.lifetimes.family));
            let expires_at = now.plus(issuer.lifetimes.refresh_token).min(family_end);
            let refresh_binding = binding.filter(|_| issuer.bind_refresh);
            record = record
                .with_refresh_token(
                    NewRefreshToken::new(refresh.digest(), expires_at).bound_to(refresh_binding),
                )
                .with_family_end(family_end);
        }
        let issued = Issued {
            access_token: access_text,
            token_type: token_type(binding),
            expires_in: now.seconds_until(access_expires_at),
            jti,
            scope,
            refresh_token: refresh.map(RefreshToken::into_secret),
            issued_token_type: None,
            id_token: None,
            family: Some(family_id),
        };
        (issued, record)
    }
}

/// `token_type` of an access token bound to `binding`: `DPoP` for a key (RFC 9449 §5);
/// `bearer` for a certificate-bound token, whose binding the TLS connection proves (RFC 8705
/// §3 keeps the type).
pub(crate) fn token_type(binding: Option<TokenBinding>) -> &'static str {
    match binding {
        Some(TokenBinding::Dpop(_)) => DPOP_TOKEN_TYPE,
        Some(TokenBinding::Certificate(_)) | None => TOKEN_TYPE,
    }
}

impl Issuer<'_> {
    /// Mints an access token for `authorization`, with a refresh token when `with_refresh`, and
    /// hands the store their digests: in a new family, or in `family` (a redeemed code's).
    /// `grant` names the grant in the [`EventKind::TokenIssued`] event.
    pub(crate) async fn issue(
        &self,
        grant: GrantType,
        authorization: Authorization,
        family: Option<FamilyId>,
        with_refresh: bool,
        now: UnixTime,
    ) -> Result<Issued, OAuthError> {
        let (issued, record) = self
            .mint(family, None, authorization, with_refresh, now)
            .await?;
        let event = Event::new(EventKind::TokenIssued(grant), now).about(&record);
        self.store.insert_tokens(record).await?;
        self.events.record(&event);
        Ok(issued)
    }

    /// Mints an access token (and a refresh token when asked) for `authorization`, in a new
    /// family or in `family`: what the client gets and what the store keeps. A refresh token
    /// never outlives its family's end: `family_end`, or for a family without one yet, the
    /// absolute family lifetime from now.
    ///
    /// Opaque tokens without a DPoP proof (the usual case) are minted without waiting for
    /// anything, so this future holds only its arguments; a proof to spend or a JWT to sign
    /// waits in a boxed future of its own.
    pub(crate) async fn mint(
        &self,
        family: Option<FamilyId>,
        family_end: Option<UnixTime>,
        authorization: Authorization,
        with_refresh: bool,
        now: UnixTime,
    ) -> Result<(Issued, NewTokens), OAuthError> {
        if self.possession.is_none() && self.format.is_none() {
            let minted = Minting::new(self, family, with_refresh, now)?;
            let binding = self.certificate_binding();
            return Ok(minted.finish(self, None, authorization, binding, family_end));
        }
        Box::pin(self.mint_bound_or_signed(family, family_end, authorization, with_refresh, now))
            .await
    }

    /// [`Issuer::mint`] with a DPoP proof to spend or a JWT access token to sign.
    async fn mint_bound_or_signed(
        &self,
        family: Option<FamilyId>,
        family_end: Option<UnixTime>,
        authorization: Authorization,
        with_refresh: bool,
        now: UnixTime,
    ) -> Result<(Issued, NewTokens), OAuthError> {
        // A DPoP proof wins over a client certificate on the same request: the client asked
        // for a key-bound token by sending it.
        let binding = match self.possession {
            Some(possession) => {
                possession.spend(self.tier, now).await?;
                Some(TokenBinding::Dpop(possession.jkt()))
            }
            None => self.certificate_binding(),
        };
        let minted = Minting::new(self, family, with_refresh, now)?;
        let signed = match self.format {
            Some(format) => {
                let claims = AccessClaims {
                    issuer: self.issuer_id,
                    authorization: &authorization,
                    jti: &minted.jti,
                    binding,
                    actor: self.actor,
                    issued_at: now,
                    expires_at: minted.access_expires_at,
                };
                // A JWT access token (RFC 9068) whose `jti` is the minted token's (random and
                // unique as ever); the store keeps the JWT's digest.
                let token = format.encode(&claims).await?;
                let digest = SecretDigest::of(&token);
                Some((token, digest))
            }
            None => None,
        };
        Ok(minted.finish(self, signed, authorization, binding, family_end))
    }

    /// The binding to the request's client certificate, when the server binds tokens to
    /// certificates and the request came with one (RFC 8705 §3).
    fn certificate_binding(&self) -> Option<TokenBinding> {
        self.certificate
            .filter(|_| self.bind_certificates)
            .map(|certificate| TokenBinding::Certificate(certificate.thumbprint()))
    }

    /// Revokes `family` after a replayed code or a reused refresh token (RFC 6749 §4.1.2,
    /// RFC 9700 §4.14.2): the one place grantor does, so no store decides it. `event` says
    /// which ([`EventKind::CodeReplayed`] or [`EventKind::RefreshReuseDetected`]) and is
    /// recorded once the family is revoked.
    ///
    /// Boxed: the grants' futures, which await it only on a replay, do not carry its event.
    pub(crate) fn revoke_after_replay(
        &self,
        family: FamilyId,
        event: Event,
    ) -> Pin<Box<dyn Future<Output = Result<(), OAuthError>> + Send + '_>> {
        Box::pin(async move {
            self.store.revoke_family(family).await?;
            self.events.record(&event.family(family));
            Ok(())
        })
    }
}
