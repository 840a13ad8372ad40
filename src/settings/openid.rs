//! OpenID Connect's settings (feature `oidc`).

use std::time::Duration;

use crate::subject::PairwiseSecret;

/// How the server acts as an OpenID Connect provider: hand it to
/// `AuthorizationServerBuilder::openid_connect` (feature `oidc`).
///
/// With it, an authorization request whose scope holds `openid` is an OpenID Connect one: the
/// code's exchange answers an ID token beside the access token (OIDC Core §3.1.3.3), the
/// implicit grant answers `id_token` and `id_token token` (§3.2), userinfo answers the user's
/// claims by the token's scopes (§5.3), and `/.well-known/openid-configuration` describes it
/// all (OIDC Discovery §4). ID tokens are signed with RS256 unless a client registered another
/// `id_token_signed_response_alg` (ES256 or EdDSA), by keys that rotate through the server's
/// key seam every [`key_rotation`](Self::key_rotation) and are published at `jwks_uri`.
///
/// ```
/// use std::time::Duration;
/// use grantor::settings::OpenIdConnect;
///
/// let oidc = OpenIdConnect::default()
///     .id_token_lifetime(Duration::from_secs(600))
///     .scope_claims("groups", ["groups"]);
/// assert_eq!(oidc.lifetime(), Duration::from_secs(600));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenIdConnect {
    pub(crate) id_token_lifetime: Duration,
    pub(crate) key_rotation: Duration,
    /// The host's scopes and the claims of its own each releases.
    pub(crate) scope_claims: Vec<(String, Vec<String>)>,
    /// The key of pairwise subject identifiers; `None`: only public ones are offered.
    pub(crate) pairwise_secret: Option<PairwiseSecret>,
}

impl Default for OpenIdConnect {
    fn default() -> Self {
        Self {
            id_token_lifetime: Duration::from_secs(3_600),
            key_rotation: Duration::from_secs(86_400),
            scope_claims: Vec::new(),
            pairwise_secret: None,
        }
    }
}

impl OpenIdConnect {
    /// How long an ID token is valid (`exp - iat`; default an hour, at most the key rotation
    /// period, so that its key is still published while it lives).
    pub fn id_token_lifetime(mut self, lifetime: Duration) -> Self {
        self.id_token_lifetime = lifetime;
        self
    }

    /// How often each algorithm's signing key changes (default a day, at least a minute). A
    /// key is published a period before it signs and a period after.
    pub fn key_rotation(mut self, period: Duration) -> Self {
        self.key_rotation = period;
        self
    }

    /// Makes the scope `scope` release the user's claims `claims` (claims of the host's own,
    /// set with [`UserClaims::with`](crate::store::UserClaims::with)), beside the standard
    /// scopes of OIDC Core §5.4 (`profile`, `email`, `address`, `phone`).
    pub fn scope_claims<I, S>(mut self, scope: impl Into<String>, claims: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scope_claims
            .push((scope.into(), claims.into_iter().map(Into::into).collect()));
        self
    }

    /// Offers pairwise subject identifiers (OIDC Core §8.1) under `secret`: a client that
    /// registers `subject_type: pairwise` (or that an administrator built with
    /// [`ClientBuilder::pairwise_subjects`](crate::client::ClientBuilder::pairwise_subjects))
    /// knows each user by a `sub` of its sector alone, HMAC-SHA-256 of the sector and the user
    /// id under this secret. It is never kept: every node computes it, so every node and every
    /// restart must have the same secret. Discovery then lists `subject_types_supported`
    /// `["public", "pairwise"]`.
    ///
    /// The pairwise `sub` is what the client sees: in ID tokens, userinfo and logout tokens,
    /// and what an `id_token_hint` it sends back is compared with. Access tokens are for
    /// resource servers, not for the client: a JWT access token's `sub`, introspection's `sub`
    /// and the bearer grant a resource reads keep the user's id.
    ///
    /// Without a secret (the default) registration refuses `subject_type: pairwise`, and a
    /// pairwise client built by the host gets no ID token or userinfo (`server_error`) rather
    /// than a `sub` that would change on restart.
    ///
    /// Migrating: turning this on changes no client's `sub`; clients registered public keep
    /// the user id. Switching a client to pairwise gives it new subjects for every user, which
    /// it sees as new users: do it before it has any, or map its users over. Changing the
    /// secret changes every pairwise `sub` at once, and relying parties see new users: treat
    /// it as a long-lived key (generate it once with
    /// [`PairwiseSecret::generate_base64`], keep it with the host's secrets) and never rotate
    /// it casually.
    pub fn pairwise_secret(mut self, secret: PairwiseSecret) -> Self {
        self.pairwise_secret = Some(secret);
        self
    }

    /// Whether pairwise subject identifiers are offered: a [secret](Self::pairwise_secret) is
    /// set.
    pub fn offers_pairwise(&self) -> bool {
        self.pairwise_secret.is_some()
    }

    /// The ID-token lifetime.
    pub fn lifetime(&self) -> Duration {
        self.id_token_lifetime
    }
}
