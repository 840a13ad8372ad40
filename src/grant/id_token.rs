//! ID tokens (OpenID Connect Core §2): what the code's exchange and the implicit grant add to
//! their answer for an OpenID Connect request, signed with the client's algorithm.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::oidc::{ID_TOKEN_TYP, IdTokenClaims, IdTokenSigner, OPENID, half_hash};
use crate::scope::Scope;
use crate::settings::OpenIdConnect;
use crate::signing::SigningAlgorithm;
use crate::store::{SignInFacts, UserClaims, UserId, UserStore};

/// What signing ID tokens needs: the signature seam and the settings.
#[derive(Clone, Copy)]
pub(crate) struct IdTokens<'a> {
    pub(crate) signer: &'a dyn IdTokenSigner,
    pub(crate) settings: &'a OpenIdConnect,
    /// The issuer identifier, the tokens' `iss`.
    pub(crate) issuer_id: &'a str,
    /// Where the users' claims come from.
    pub(crate) users: &'a dyn UserStore,
}

/// Who an ID token is about and for.
pub(crate) struct Subject<'a> {
    pub(crate) client: &'a Client,
    pub(crate) user: &'a UserId,
    pub(crate) facts: &'a SignInFacts,
}

/// What an ID token is issued beside.
#[derive(Default)]
pub(crate) struct Beside<'a> {
    /// The access token issued with it: `at_hash` (§3.1.3.6, §3.2.2.10).
    pub(crate) access_token: Option<&'a str>,
    /// The code issued with it: `c_hash` (§3.3.2.11).
    pub(crate) code: Option<&'a str>,
}

impl IdTokens<'_> {
    /// The algorithm `client`'s ID tokens are signed with: its registered one, else the
    /// signer's default (RS256, OIDC Registration §2; ES256 under FAPI 2.0).
    pub(crate) fn algorithm(&self, client: &Client) -> SigningAlgorithm {
        client
            .id_token_signing_algorithm()
            .unwrap_or_else(|| self.signer.default_algorithm())
    }

    /// The `sub` `client` knows `user` by (OIDC Core §8): every `sub` grantor writes for a
    /// client (ID tokens, userinfo, logout tokens) comes from here. A pairwise client on a
    /// server without a pairwise secret gets `server_error`: a `sub` that changed on restart,
    /// or the public one in its place, would be worse than none.
    pub(crate) fn subject<'u>(
        &self,
        client: &Client,
        user: &'u UserId,
    ) -> Result<Cow<'u, str>, OAuthError> {
        let secret = self.settings.pairwise_secret.as_ref();
        client.subject_for(user, secret).ok_or_else(|| {
            tracing::error!(
                client_id = client.id().as_str(),
                "a pairwise client, and no pairwise secret is set (OpenIdConnect::pairwise_secret)"
            );
            OAuthError::new(
                ErrorCode::ServerError,
                "this client's subject identifiers are pairwise, and this server has no \
                 pairwise secret",
            )
        })
    }

    /// Whether `sub` (from an `id_token_hint` the client sent back) is the `sub` `client` knows
    /// `user` by; never a lookup of a user by a pairwise `sub`.
    pub(crate) fn names(&self, sub: &str, client: &Client, user: &UserId) -> bool {
        self.subject(client, user).is_ok_and(|known| known == sub)
    }

    /// The signed ID token for `subject`, holding `claims` (the user's, when no access token
    /// lets the client fetch them, §5.4).
    pub(crate) async fn sign(
        &self,
        subject: Subject<'_>,
        beside: Beside<'_>,
        claims: Map<String, Value>,
        now: UnixTime,
    ) -> Result<String, OAuthError> {
        let algorithm = self.algorithm(subject.client);
        let client_id = subject.client.id().as_str();
        let sub = self.subject(subject.client, subject.user)?;
        let body = IdTokenClaims {
            iss: self.issuer_id,
            sub: &sub,
            aud: client_id,
            exp: now.plus(self.settings.id_token_lifetime).as_secs(),
            iat: now.as_secs(),
            auth_time: subject.facts.auth_time.as_secs(),
            nonce: subject.facts.nonce.as_deref(),
            amr: &subject.facts.amr,
            acr: subject.facts.acr.as_deref(),
            azp: client_id,
            at_hash: beside.access_token.map(|t| half_hash(algorithm, t)),
            c_hash: beside.code.map(|c| half_hash(algorithm, c)),
            sid: subject.facts.sid.as_deref(),
            claims,
        };
        let body = serde_json::to_value(&body).map_err(crate::error::StoreError::failed)?;
        Ok(self
            .signer
            .sign(&body, ID_TOKEN_TYP, algorithm, now)
            .await?)
    }

    /// The claims of `user` that `scope` releases (OIDC Core §5.4; none: no scope releases
    /// any, as beside an access token that fetches them at userinfo), with those the `claims`
    /// parameter `named` (§5.5), from the user seam.
    pub(crate) async fn released(
        &self,
        user: &UserId,
        scope: Option<&Scope>,
        named: &[String],
    ) -> Result<Map<String, Value>, OAuthError> {
        if scope.is_none() && named.is_empty() {
            return Ok(Map::new());
        }
        let claims = self
            .users
            .claims(user)
            .await?
            .unwrap_or_else(UserClaims::new);
        let extra = &self.settings.scope_claims;
        let mut released = scope.map_or_else(Map::new, |scope| claims.released(scope, extra));
        released.extend(claims.named(named, extra));
        Ok(released)
    }
}

/// Whether a grant of `scope` whose code carried `facts` answers an ID token.
pub(crate) fn asked(scope: &Scope, facts: Option<&SignInFacts>) -> bool {
    facts.is_some() && scope.contains(OPENID)
}
