//! Dynamic client registration (RFC 7591 §3) and client management (RFC 7592 §2): what a
//! client metadata document may register under the host's [`RegistrationPolicy`], what is
//! minted for it, and who may read, replace or delete it.
//!
//! A client that registers itself gets a generated id, a generated 256-bit secret for
//! `client_secret_basic` (shown once, only its SHA-256 verifier kept) and a 256-bit
//! registration access token (only its digest kept on the client record). Only such clients
//! (those with a registration token digest) can be managed; an administrator's clients cannot.

use std::sync::Arc;

use crate::client::{
    Client, ClientError, ClientKeys, GrantType, SecretVerifier, TlsClientAuth, Verifier,
};
use crate::client::{ClientBuilder, is_self_registrable_redirect_uri};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::events::{Event, EventKind};
use crate::mint;
use crate::oidc::OPENID;
use crate::registration::RegistrationPolicy;
use crate::request::{ApplicationType, AuthMethod, ClientMetadata};
use crate::secret::{AccessToken, ClientSecret};
use crate::settings::Profile;
use crate::store::seam::ClientSeam;
use crate::store::{Admin, AdminError, AttemptCounter, namespace};

mod credentials;
mod sector;

use credentials::keyed;

/// Why a registration request is refused, for the endpoint to render.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// 401 `invalid_token` (RFC 6750 §3.1): no, or the wrong, initial or registration access
    /// token, or no such client (RFC 7592 §2.1 gives no hint which); `sent` says whether a
    /// token came at all.
    Unauthorized { sent: bool },
    /// 429: past the policy's rate limit, for this many seconds more.
    TooMany { retry_after: u64 },
    /// Any other error: the metadata, a malformed header, a store failure.
    Error(OAuthError),
}

impl From<OAuthError> for Refusal {
    fn from(error: OAuthError) -> Self {
        Self::Error(error)
    }
}

impl From<crate::error::StoreError> for Refusal {
    fn from(error: crate::error::StoreError) -> Self {
        Self::Error(error.into())
    }
}

/// A client just registered or replaced, and what is shown to it once.
#[derive(Debug)]
pub(crate) struct Registered {
    pub(crate) client: Client,
    /// The generated secret, in the clear: only in the registration answer.
    pub(crate) client_secret: Option<ClientSecret>,
    /// The registration access token: minted at registration, else the one presented.
    pub(crate) registration_access_token: AccessToken,
    /// When the client was registered; `None` when it is read or replaced (not kept).
    pub(crate) issued_at: Option<UnixTime>,
}

/// What registration needs: the policy, where clients are looked up and kept, and the
/// attempt counter that holds the rate limit.
#[derive(Clone, Copy)]
pub(crate) struct Registrar<'a> {
    pub(crate) policy: &'a RegistrationPolicy,
    pub(crate) profile: Profile,
    pub(crate) registry: &'a dyn Admin,
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) attempts: &'a dyn AttemptCounter,
    /// Where the tokens of a deleted client are revoked.
    pub(crate) tokens: crate::store::seam::TokenSeam<'a>,
    /// Whether the host resolves `jwks_uri`s (a `ClientKeyResolver` is set).
    pub(crate) jwks_uri: bool,
    /// Whether client assertions are accepted (`private_key_jwt`).
    pub(crate) assertions: bool,
    /// Set when clients may authenticate with TLS client certificates (RFC 8705 §2).
    pub(crate) mutual_tls: Option<&'a crate::settings::MutualTlsOffer>,
    /// Whether the server is an OpenID Connect provider: every client may then ask for
    /// `openid`, so a registration may name it whatever the policy's scope.
    pub(crate) openid: bool,
    /// Where registrations are reported.
    pub(crate) events: &'a dyn crate::events::Events,
    /// Whether pairwise subjects are offered (OIDC Core §8.1: a pairwise secret is set).
    pub(crate) pairwise: bool,
    /// Where `sector_identifier_uri` documents are fetched; `None`: they are not.
    pub(crate) outbound: Option<&'a dyn crate::outbound::Outbound>,
    /// Set when self-registered clients expire: a registration starts the client's clock.
    pub(crate) idle: Option<super::idle::IdleClients<'a>>,
}

/// What a metadata document settles under the policy, before anything is minted.
struct Settled {
    redirect_uris: Vec<String>,
    grant_types: Vec<GrantType>,
    auth_method: AuthMethod,
    scope: crate::scope::Scope,
    client_name: Option<String>,
    dpop_bound: bool,
    par_required: bool,
    keys: Option<ClientKeys>,
    /// A `tls_client_auth` client's subject (RFC 8705 §2.1.2).
    tls_subject: Option<TlsClientAuth>,
    id_token_alg: Option<crate::signing::SigningAlgorithm>,
    userinfo_alg: Option<crate::signing::SigningAlgorithm>,
    authorization_alg: Option<crate::signing::SigningAlgorithm>,
    introspection_alg: Option<crate::signing::SigningAlgorithm>,
    request_object_alg: Option<crate::signing::ClientSigningAlgorithm>,
    post_logout_redirect_uris: Vec<String>,
    backchannel_logout_uri: Option<String>,
    application_type: Option<ApplicationType>,
    default_max_age: Option<u64>,
    require_auth_time: bool,
    /// Pairwise subjects' sector (OIDC Core §8.1); `None`: public subjects.
    sector: Option<sector::Sector>,
}

impl Registrar<'_> {
    /// RFC 7591 §3: the initial access token, when the policy requires one, compared as a
    /// digest in constant time.
    pub(crate) fn check_initial_token(
        &self,
        presented: Option<&AccessToken>,
    ) -> Result<(), Refusal> {
        let Some(expected) = self.policy.initial_access_token_digest() else {
            return Ok(());
        };
        match presented {
            Some(token) if expected.ct_eq(&token.digest()) => Ok(()),
            Some(_) => Err(Refusal::Unauthorized { sent: true }),
            None => Err(Refusal::Unauthorized { sent: false }),
        }
    }

    /// RFC 7591 §3.1, §3.2: settles the metadata, counts the registration against the rate
    /// limit, mints the credentials and keeps the client.
    pub(crate) async fn register(
        &self,
        metadata: ClientMetadata,
        now: UnixTime,
    ) -> Result<Registered, Refusal> {
        let settled = self.settle(metadata)?;
        self.count(now).await?;
        self.verify_sector(&settled).await?;
        let minted = mint::registration()?;
        let (builder, client_secret) = match settled.auth_method {
            AuthMethod::ClientSecretBasic | AuthMethod::ClientSecretPost => {
                let verifier = SecretVerifier::digest(&minted.client_secret)
                    .map_err(|_| OAuthError::new(ErrorCode::ServerError, "minting failed"))?;
                let builder = Client::confidential(&minted.client_id, verifier)
                    .secret_in_body(settled.auth_method == AuthMethod::ClientSecretPost);
                (builder, Some(minted.client_secret))
            }
            AuthMethod::None => (Client::public(&minted.client_id), None),
            AuthMethod::PrivateKeyJwt
            | AuthMethod::TlsClientAuth
            | AuthMethod::SelfSignedTlsClientAuth => (keyed(&minted.client_id, &settled)?, None),
        };
        let token = minted.registration_access_token;
        let client = self.build(builder.registration_access_token(token.digest()), settled)?;
        match self.registry.register_client(&client).await {
            Ok(()) => {
                self.events
                    .record(&Event::new(EventKind::ClientRegistered, now).client(client.id()));
                if let Some(idle) = self.idle {
                    idle.registered(&client, now).await?;
                }
            }
            Err(AdminError::Store(error)) => return Err(error.into()),
            // A 128-bit id already taken, or a store that refuses: nothing the client can fix.
            Err(_) => {
                return Err(OAuthError::new(
                    ErrorCode::ServerError,
                    "the client could not be registered",
                )
                .into());
            }
        }
        Ok(Registered {
            client,
            client_secret,
            registration_access_token: token,
            issued_at: Some(now),
        })
    }

    /// Counts a registration (or an update that fetches a sector document) against the
    /// policy's rate limit: past it, 429.
    async fn count(&self, now: UnixTime) -> Result<(), Refusal> {
        let (max, window) = self.policy.limit();
        let counted = self
            .attempts
            .record_attempt(namespace::REGISTRATIONS, window, now)
            .await?;
        if counted.count > max {
            let retry_after = now.seconds_until(counted.resets_at).max(1);
            return Err(Refusal::TooMany { retry_after });
        }
        Ok(())
    }

    /// OIDC Registration §5: a `sector_identifier_uri`'s document lists every redirect URI.
    /// Fetched only after the request was counted, so the rate limit bounds the fetches.
    async fn verify_sector(&self, settled: &Settled) -> Result<(), OAuthError> {
        match &settled.sector {
            Some(sector) => sector::verify(self.outbound, sector, &settled.redirect_uris).await,
            None => Ok(()),
        }
    }

    /// RFC 7592 §2.1: the self-registered client `client_id` whose registration access token
    /// is `token`; anything else is the same 401, so nobody learns which clients exist.
    pub(crate) async fn find(
        &self,
        client_id: &str,
        token: &AccessToken,
    ) -> Result<Arc<Client>, Refusal> {
        let presented = token.digest();
        let client = self.clients.find_client(client_id).await?;
        match client {
            Some(client)
                if client
                    .registration_access_token()
                    .is_some_and(|expected| expected.ct_eq(&presented)) =>
            {
                Ok(client)
            }
            _ => Err(Refusal::Unauthorized { sent: true }),
        }
    }

    /// RFC 7592 §2.2: replaces `current`'s registration with `metadata`, settled exactly as a
    /// registration is; omitted members take their defaults. The id, the secret's verifier and
    /// the registration access token stay; the authentication method cannot change. With
    /// `rotate_client_secret`, a confidential client gets a new secret (answered once) and its
    /// current one retires at `now` plus the policy's overlap, in the same write.
    pub(crate) async fn replace(
        &self,
        current: &Client,
        metadata: ClientMetadata,
        now: UnixTime,
    ) -> Result<(Client, Option<ClientSecret>), Refusal> {
        if metadata.client_id.as_deref() != Some(current.id().as_str()) {
            return Err(OAuthError::invalid_client_metadata(
                "client_id must be sent and be this client's id",
            )
            .into());
        }
        if let Some(secret) = &metadata.client_secret {
            let matches = match current.secret().map(SecretVerifier::inner) {
                Some(Verifier::Digest(expected)) => expected.ct_eq(&secret.digest()),
                _ => false,
            };
            if !matches {
                return Err(OAuthError::invalid_client_metadata(
                    "client_secret is not this client's secret",
                )
                .into());
            }
        }
        let rotate = metadata.rotate_secret;
        if rotate && current.is_public() {
            return Err(OAuthError::invalid_client_metadata(
                "a public client has no secret to rotate",
            )
            .into());
        }
        let settled = self.settle(metadata)?;
        if settled.auth_method != AuthMethod::of(current) {
            return Err(OAuthError::invalid_client_metadata(
                "token_endpoint_auth_method cannot change; register a new client instead",
            )
            .into());
        }
        if settled.sector.as_ref().is_some_and(|s| s.uri.is_some()) {
            self.count(now).await?;
            self.verify_sector(&settled).await?;
        }
        let mut new_secret = None;
        let builder = match (current.secret(), rotate) {
            (Some(verifier), true) => {
                let (secret, new_verifier) = crate::grant::secrets::new_secret()?;
                new_secret = Some(secret);
                let until = now.plus(self.policy.rotation_overlap());
                Client::confidential(current.id().as_str(), new_verifier)
                    .retiring_secret(verifier.clone(), until)
            }
            (Some(verifier), false) => {
                let builder = Client::confidential(current.id().as_str(), verifier.clone());
                match current.retiring_secret() {
                    Some((retiring, until)) => builder.retiring_secret(retiring.clone(), until),
                    None => builder,
                }
            }
            (None, _) if current.is_public() => Client::public(current.id().as_str()),
            // A `private_key_jwt` or certificate client's keys (or subject) are replaced with
            // the document's.
            (None, _) => keyed(current.id().as_str(), &settled)?,
        };
        let builder = match current.registration_access_token() {
            Some(digest) => builder.registration_access_token(*digest),
            None => return Err(Refusal::Unauthorized { sent: true }),
        };
        let client = self.build(builder, settled)?;
        if self.registry.replace_client(&client).await? {
            Ok((client, new_secret))
        } else {
            // Deleted meanwhile.
            Err(Refusal::Unauthorized { sent: true })
        }
    }

    /// RFC 7592 §2.3: removes the client and invalidates what was issued to it (the section's
    /// SHOULD): every family of the client is revoked, so its access tokens are refused at
    /// resources and introspection and its refresh tokens and codes at the token endpoint.
    pub(crate) async fn delete(&self, client: &Client) -> Result<(), Refusal> {
        let id = client.id().as_str();
        if !self.registry.remove_client(id).await? {
            return Err(Refusal::Unauthorized { sent: true });
        }
        // After the removal, so no token can be issued to it in between.
        self.tokens.revoke_client(id).await?;
        Ok(())
    }

    /// What `metadata` registers under the policy (RFC 7591 §2, §2.1, §3.2.2).
    fn settle(&self, metadata: ClientMetadata) -> Result<Settled, OAuthError> {
        let auth_method = metadata
            .auth_method
            .unwrap_or(AuthMethod::ClientSecretBasic);
        if auth_method == AuthMethod::None && !self.policy.allows_public_clients() {
            return Err(OAuthError::invalid_client_metadata(
                "public clients (token_endpoint_auth_method none) may not register here",
            ));
        }
        let grant_types = grant_types(metadata.grant_types, metadata.response_types)?;
        for grant in &grant_types {
            let refused_by_profile = self.profile.is_oauth21()
                && matches!(grant, GrantType::Implicit | GrantType::Password);
            if refused_by_profile || !self.policy.allows(*grant) {
                return Err(OAuthError::invalid_client_metadata(format!(
                    "the {} grant needs an administrator's agreement",
                    grant.as_str()
                )));
            }
        }
        let tls_subject = self.tls_subject(auth_method, metadata.tls_subject)?;
        let keys = self.keys(auth_method, metadata.keys)?;
        let redirect_uris = redirect_uris(metadata.redirect_uris, &grant_types)?;
        application_type_allows(metadata.application_type, &redirect_uris, &grant_types)?;
        // RP-Initiated Logout 1.0 §3.1: the browser is sent there as to a redirect URI, so the
        // same rules hold (no `file:`, no scheme nobody vouches for, no plain `http` off the
        // device).
        let post_logout_redirect_uris = post_logout_redirect_uris(
            metadata.post_logout_redirect_uris,
            metadata.application_type,
            &grant_types,
        )?;
        let allowed = self.policy.allowed_scope();
        let granted = |token: &str| (self.openid && token == OPENID) || allowed.contains(token);
        let scope = match metadata.scope {
            Some(scope) if !scope.iter().all(granted) => {
                return Err(OAuthError::invalid_client_metadata(
                    "scope asks for more than self-registered clients may be granted",
                ));
            }
            Some(scope) => scope,
            None => allowed,
        };
        if metadata
            .client_name
            .as_deref()
            .is_some_and(|name| self.policy.reserves(name))
        {
            return Err(OAuthError::invalid_client_metadata(
                "client_name is, or looks like, the name of a client this server's \
                 administrator registered; choose another",
            ));
        }
        let offered = sector::Offered {
            pairwise: self.pairwise,
            fetches: self.outbound.is_some(),
        };
        let sector = sector::settle(
            offered,
            metadata.pairwise,
            metadata.sector_identifier_uri,
            &redirect_uris,
        )?;
        Ok(Settled {
            sector,
            redirect_uris,
            grant_types,
            auth_method,
            scope,
            client_name: metadata.client_name,
            dpop_bound: metadata.dpop_bound,
            par_required: metadata.par_required,
            keys,
            tls_subject,
            id_token_alg: metadata.id_token_alg,
            userinfo_alg: metadata.userinfo_alg,
            authorization_alg: metadata.authorization_alg,
            introspection_alg: metadata.introspection_alg,
            request_object_alg: metadata.request_object_alg,
            post_logout_redirect_uris,
            backchannel_logout_uri: metadata.backchannel_logout_uri,
            application_type: metadata.application_type,
            default_max_age: metadata.default_max_age,
            require_auth_time: metadata.require_auth_time,
        })
    }

    fn build(&self, builder: ClientBuilder, settled: Settled) -> Result<Client, OAuthError> {
        let settled = self.fapi2_algorithms(settled)?;
        let builder = settled
            .redirect_uris
            .into_iter()
            .fold(builder, ClientBuilder::redirect_uri)
            .grant_types(settled.grant_types)
            .scopes(settled.scope.as_str())
            .approval(self.policy.approval_of_clients())
            .require_dpop(settled.dpop_bound)
            .require_pushed_requests(settled.par_required);
        let builder = match settled.client_name {
            Some(name) => builder.name(name),
            None => builder,
        };
        let builder = match settled.id_token_alg {
            Some(alg) => builder.id_token_signing_algorithm(alg),
            None => builder,
        };
        let builder = match settled.userinfo_alg {
            Some(alg) => builder.userinfo_signing_algorithm(alg),
            None => builder,
        };
        let builder = match settled.authorization_alg {
            Some(alg) => builder.authorization_signing_algorithm(alg),
            None => builder,
        };
        let builder = match settled.introspection_alg {
            Some(alg) => builder.introspection_signing_algorithm(alg),
            None => builder,
        };
        let builder = match settled.request_object_alg {
            Some(alg) => builder.request_object_signing_algorithm(alg),
            None => builder,
        };
        let builder = settled
            .post_logout_redirect_uris
            .into_iter()
            .fold(builder, ClientBuilder::post_logout_redirect_uri);
        let builder = match settled.backchannel_logout_uri {
            Some(uri) => builder.backchannel_logout_uri(uri),
            None => builder,
        };
        let builder = builder
            .native_application(settled.application_type == Some(ApplicationType::Native))
            .require_auth_time(settled.require_auth_time);
        let builder = match settled.default_max_age {
            Some(age) => builder.default_max_age(std::time::Duration::from_secs(age)),
            None => builder,
        };
        let builder = match settled.sector {
            Some(sector) => builder
                .pairwise_subjects(sector.host)
                .sector_identifier_uri(sector.uri),
            None => builder,
        };
        builder.build().map_err(|e| match e {
            ClientError::InvalidRedirectUri
            | ClientError::InsecureRedirectUri
            | ClientError::MissingRedirectUri => OAuthError::invalid_redirect_uri(e.to_string()),
            ClientError::PublicClientCredentials => OAuthError::invalid_client_metadata(
                "a public client cannot use the client_credentials grant",
            ),
            other => OAuthError::invalid_client_metadata(other.to_string()),
        })
    }
}

/// RFC 7591 §2.1: `grant_types` and `response_types` agree (`code` with `authorization_code`,
/// `token` with `implicit`). One omitted follows from the other; both omitted is the RFC's
/// default, the authorization code grant. Repeats are dropped.
fn grant_types(
    grant_types: Option<Vec<GrantType>>,
    response_types: Option<Vec<GrantType>>,
) -> Result<Vec<GrantType>, OAuthError> {
    let mut grants = match (grant_types, response_types) {
        (Some(grants), Some(responses)) => {
            let agree = [GrantType::AuthorizationCode, GrantType::Implicit]
                .iter()
                .all(|g| grants.contains(g) == responses.contains(g));
            if !agree {
                return Err(OAuthError::invalid_client_metadata(
                    "grant_types and response_types disagree (RFC 7591 section 2.1)",
                ));
            }
            grants
        }
        (Some(grants), None) => grants,
        (None, Some(responses)) => responses,
        (None, None) => vec![GrantType::AuthorizationCode],
    };
    let mut seen = Vec::with_capacity(grants.len());
    grants.retain(|g| {
        let first = !seen.contains(g);
        seen.push(*g);
        first
    });
    if grants.iter().all(|g| *g == GrantType::RefreshToken) {
        return Err(OAuthError::invalid_client_metadata(
            "grant_types must name a grant that issues tokens",
        ));
    }
    Ok(grants)
}

/// OIDC Registration §2 `application_type`: a native application is redirected to loopback
/// `http` (the custom schemes it may also use are not taken here); one that names itself `web`
/// and uses the implicit grant only to `https` on another host than `localhost`. A client that
/// names no type (an RFC 7591 client) keeps the redirect rules every client has.
fn application_type_allows(
    application_type: Option<ApplicationType>,
    redirect_uris: &[String],
    grants: &[GrantType],
) -> Result<(), OAuthError> {
    if application_type == Some(ApplicationType::Native)
        && !redirect_uris.iter().all(|uri| uri.starts_with("http://"))
    {
        return Err(OAuthError::invalid_redirect_uri(
            "a native application registers loopback http redirect URIs (OIDC Registration section 2)",
        ));
    }
    let implicit = grants.contains(&GrantType::Implicit);
    let web_safe = |uri: &String| {
        url::Url::parse(uri)
            .is_ok_and(|u| u.scheme() == "https" && u.host_str() != Some("localhost"))
    };
    if application_type == Some(ApplicationType::Web)
        && implicit
        && !redirect_uris.iter().all(web_safe)
    {
        return Err(OAuthError::invalid_redirect_uri(
            "a web application using the implicit grant registers https redirect URIs, \
             not localhost (OIDC Registration section 2)",
        ));
    }
    Ok(())
}

/// Every redirect URI `https`, or `http` on a loopback host; required for the grants that
/// redirect. Repeats are dropped.
fn redirect_uris(
    uris: Option<Vec<String>>,
    grants: &[GrantType],
) -> Result<Vec<String>, OAuthError> {
    let uris = uris.unwrap_or_default();
    let redirects = grants
        .iter()
        .any(|g| matches!(g, GrantType::AuthorizationCode | GrantType::Implicit));
    if redirects && uris.is_empty() {
        return Err(OAuthError::invalid_redirect_uri(
            "redirect_uris is required for the authorization_code and implicit grants",
        ));
    }
    if !uris.iter().all(|uri| is_self_registrable_redirect_uri(uri)) {
        return Err(OAuthError::invalid_redirect_uri(
            "each redirect URI must be https, or http on a loopback host, without a fragment",
        ));
    }
    Ok(deduplicated(uris))
}

/// `post_logout_redirect_uris` (RP-Initiated Logout 1.0 §3.1) under the rules of redirect URIs:
/// each one [`is_self_registrable_redirect_uri`], and what the `application_type` allows.
/// Optional. Repeats are dropped.
fn post_logout_redirect_uris(
    uris: Vec<String>,
    application_type: Option<ApplicationType>,
    grants: &[GrantType],
) -> Result<Vec<String>, OAuthError> {
    if !uris.iter().all(|uri| is_self_registrable_redirect_uri(uri)) {
        return Err(OAuthError::invalid_client_metadata(
            "each post_logout_redirect_uri must be https, or http on a loopback host, \
             without a fragment",
        ));
    }
    application_type_allows(application_type, &uris, grants)
        .map_err(|refused| OAuthError::invalid_client_metadata(refused.description().to_owned()))?;
    Ok(deduplicated(uris))
}

/// `uris` in their order, each once.
fn deduplicated(mut uris: Vec<String>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::with_capacity(uris.len());
    uris.retain(|uri| {
        let first = !seen.contains(uri);
        if first {
            seen.push(uri.clone());
        }
        first
    });
    uris
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omitted_types_follow_from_each_other_and_must_agree() {
        use GrantType::*;
        assert_eq!(grant_types(None, None).unwrap(), [AuthorizationCode]);
        assert_eq!(
            grant_types(None, Some(vec![AuthorizationCode])).unwrap(),
            [AuthorizationCode]
        );
        assert_eq!(
            grant_types(
                Some(vec![AuthorizationCode, RefreshToken, RefreshToken]),
                None
            )
            .unwrap(),
            [AuthorizationCode, RefreshToken]
        );
        let disagree = grant_types(Some(vec![AuthorizationCode]), Some(vec![Implicit]));
        assert_eq!(
            disagree.unwrap_err().code(),
            ErrorCode::InvalidClientMetadata
        );
        let refresh_only = grant_types(Some(vec![RefreshToken]), Some(vec![]));
        assert_eq!(
            refresh_only.unwrap_err().code(),
            ErrorCode::InvalidClientMetadata
        );
    }

    #[test]
    fn redirect_uris_are_required_for_the_code_grant_and_deduplicated() {
        let code = [GrantType::AuthorizationCode];
        let missing = redirect_uris(None, &code).unwrap_err();
        assert_eq!(missing.code(), ErrorCode::InvalidRedirectUri);
        let twice = vec!["https://a.example/cb".to_owned(); 2];
        assert_eq!(redirect_uris(Some(twice), &code).unwrap().len(), 1);
        let plain_http = vec!["http://a.example/cb".to_owned()];
        let refused = redirect_uris(Some(plain_http), &code).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::InvalidRedirectUri);
    }

    #[test]
    fn post_logout_redirect_uris_follow_the_redirect_uri_rules() {
        let code = [GrantType::AuthorizationCode];
        let one = |uri: &str| post_logout_redirect_uris(vec![uri.to_owned()], None, &code);
        for refused in [
            "file:///etc/passwd",
            "com.example.app:/bye",
            "javascript:alert(1)",
            "http://app.example/bye",
            "https://app.example/bye#frag",
            "https://user@app.example/bye",
            "",
        ] {
            let error = one(refused).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidClientMetadata, "{refused}");
        }
        for accepted in [
            "https://app.example/bye",
            "http://127.0.0.1:8081/logged-out",
        ] {
            assert_eq!(one(accepted).unwrap(), [accepted]);
        }
        let native = Some(ApplicationType::Native);
        let https = vec!["https://app.example/bye".to_owned()];
        let refused = post_logout_redirect_uris(https, native, &code).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::InvalidClientMetadata);
        let twice = vec!["https://a.example/bye".to_owned(); 2];
        assert_eq!(
            post_logout_redirect_uris(twice, None, &code).unwrap().len(),
            1
        );
    }
}
