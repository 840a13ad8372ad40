//! [`AuthorizationServer`]: the configured server, whose methods are the endpoints.

use std::fmt;
use std::sync::Arc;

use http::{HeaderMap, Request, Response};

use crate::endpoint::bearer::BearerRefusal;
use crate::endpoint::{authorize, bearer, introspect, metadata, registration, revoke, span, token};
use crate::grant::pending::{Decision, PendingAuthorization};
use crate::scope::Scope;
use crate::settings::Settings;
use crate::step_up::StepUp;
use crate::store::{AccessGrant, UserId};
use authorize::Authorize;

mod cookies;
mod flows;
mod health;
pub(crate) use health::Readiness;
mod inner;
mod openid;
mod secrets;
mod signin;
mod steps;
mod users;

pub(crate) use inner::Inner;
pub use steps::{ApprovalPage, LogoutPage, SecondFactorPage, SignInPage, Step};

/// The authorization server: hand it requests, get responses.
///
/// Cheap to clone (an `Arc` inside); share one between a host's handlers.
#[derive(Clone)]
pub struct AuthorizationServer {
    inner: Arc<Inner>,
}

impl AuthorizationServer {
    /// The authorization endpoint (RFC 6749 §3.1), `GET` with a query or `POST` with a form.
    ///
    /// Validates the request and answers one of: [`Authorize::SignIn`] with a pending
    /// authorization for the host's sign-in page; [`Authorize::Redirect`], an error the client
    /// receives at its redirect URI; [`Authorize::Reject`], an error the host shows without
    /// redirecting (unknown client, bad or unregistered redirect URI, or a `state` that is not
    /// 1 to 2,048 printable ASCII characters: everything a request carries is kept until the
    /// user decides, so each part is bounded in bytes and characters).
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let request = http::Request::get(
    ///     "/api/oauth/authorize?response_type=code&client_id=app\
    ///      &redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=xyz",
    /// )
    /// .body("")
    /// .unwrap();
    /// match server.authorize(&request).await {
    ///     Authorize::SignIn(pending) => assert_eq!(pending.client().id().as_str(), "app"),
    ///     Authorize::Redirect(redirect) => panic!("an error for the client: {redirect:?}"),
    ///     Authorize::Reject(error) => panic!("an error page: {error}"),
    /// }
    /// # }
    /// ```
    pub async fn authorize<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Authorize {
        let authorization = self.inner.authorization();
        let wire = self.inner.wire();
        let call = || authorize::authorize(&wire, &authorization, request);
        span::traced_authorize(call).await
    }

    /// Completes a pending authorization after the host's sign-in (and approval page, when
    /// [`PendingAuthorization::needs_approval`]) with the signed-in user and their decision:
    /// the redirect to the client with a `code`, the implicit grant's token in the fragment, or
    /// an error such as `access_denied`.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// # let request = http::Request::get("/api/oauth/authorize?response_type=code&client_id=app&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=xyz").body("").unwrap();
    /// let Authorize::SignIn(pending) = server.authorize(&request).await else { panic!() };
    /// // The host's sign-in page signed Alice in, and she approved.
    /// let response = server.decide(pending, alice.id(), Decision::Approve).await;
    /// assert_eq!(response.status(), 303);
    /// let location = response.headers()["location"].to_str().unwrap();
    /// assert!(location.starts_with("https://app.example/cb?code="));
    /// # }
    /// ```
    pub async fn decide(
        &self,
        pending: PendingAuthorization,
        user: &UserId,
        decision: Decision,
    ) -> Response<String> {
        let decider = self.inner.decider();
        let wire = self.inner.wire();
        let call = || authorize::decide(&wire, &decider, pending, user, decision);
        span::traced("decide", call).await
    }

    /// The token endpoint (RFC 6749 §3.2): every grant, always a ready response (token JSON or
    /// an RFC 6749 §5.2 error).
    ///
    /// The body of a successful answer holds the tokens, and `http::Response`'s `Debug` prints
    /// bodies: log its status, never the response itself. (Redirects from the other endpoints
    /// mark their `Location` sensitive, which `Debug` hides.)
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let request = http::Request::post("/api/oauth/token")
    ///     .header("authorization", basic)
    ///     .header("content-type", "application/x-www-form-urlencoded")
    ///     .body("grant_type=client_credentials")
    ///     .unwrap();
    /// let response = server.token(&request).await;
    /// assert_eq!(response.status(), 200);
    /// assert!(response.body().contains("\"token_type\":\"bearer\""));
    /// # }
    /// ```
    pub async fn token<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let mut endpoint = self.inner.token_endpoint();
        endpoint.grants.clients = endpoint.grants.clients.of_request(request);
        let wire = self.inner.wire();
        let call = || token::token(&wire, &endpoint, request);
        span::traced("token", call).await
    }

    /// Token revocation (RFC 7009), `POST`: a client revokes its own access or refresh token.
    /// Revoking a refresh token revokes its family and the access tokens issued from it.
    /// Unknown tokens, and other clients' tokens, answer 200 and are left alone.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let request = http::Request::post("/api/oauth/revoke")
    ///     .header("authorization", basic)
    ///     .header("content-type", "application/x-www-form-urlencoded")
    ///     .body("token=an-unknown-token")
    ///     .unwrap();
    /// assert_eq!(server.revoke(&request).await.status(), 200);
    /// # }
    /// ```
    pub async fn revoke<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let revocation = self.inner.revocation();
        let wire = self.inner.wire();
        let call = || revoke::revoke(&wire, &revocation, request);
        span::traced("revoke", call).await
    }

    /// Token introspection (RFC 7662), `POST`, client authentication required: an active
    /// token's `scope`, `client_id`, `username`, `token_type`, `exp`, `iat`, `sub`, `jti`;
    /// anything else is exactly `{"active":false}`.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let request = http::Request::post("/api/oauth/introspect")
    ///     .header("authorization", basic)
    ///     .header("content-type", "application/x-www-form-urlencoded")
    ///     .body("token=an-unknown-token")
    ///     .unwrap();
    /// assert_eq!(server.introspect(&request).await.body(), r#"{"active":false}"#);
    /// # }
    /// ```
    pub async fn introspect<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let introspection = self.inner.introspection();
        let wire = self.inner.wire();
        let call = || introspect::introspect(&wire, &introspection, request);
        span::traced("introspect", call).await
    }

    /// The client registration endpoint (RFC 7591 §3), `POST {registration path}` (default
    /// `/api/oauth/register`) with a JSON client metadata document, under the builder's
    /// [`RegistrationPolicy`](crate::settings::RegistrationPolicy).
    ///
    /// Answers 201 with the new client's id, its secret for `client_secret_basic` (shown this
    /// once; only its verifier is kept), its `registration_access_token` (likewise) and
    /// `registration_client_uri` for [`client_configuration`](Self::client_configuration), and
    /// the registered metadata; or 400 `invalid_redirect_uri` / `invalid_client_metadata`
    /// (RFC 7591 §3.2.2), 400 `invalid_request` for a `Content-Type` other than
    /// `application/json`, 401 `invalid_token` without the policy's initial access token, 405,
    /// 413 over [`max_body_bytes`](Self::max_body_bytes), 429 `temporarily_unavailable` past
    /// the policy's rate limit. Members grantor does not understand are ignored (RFC 7591 §2).
    /// Without a registration policy: 404.
    ///
    /// The body holds secrets: log the status, never the response.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # use grantor::settings::RegistrationPolicy;
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .scopes_supported(&Scope::parse("profile email admin").unwrap())
    ///     .registration(RegistrationPolicy::new().scope(&Scope::parse("profile email").unwrap()))
    ///     .build()
    ///     .unwrap();
    /// let request = http::Request::post("/api/oauth/register")
    ///     .header("content-type", "application/json")
    ///     .body(r#"{"redirect_uris":["https://app.example/cb"],"client_name":"App"}"#)
    ///     .unwrap();
    /// let response = server.register(&request).await;
    /// assert_eq!(response.status(), 201);
    /// let client: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    /// assert_eq!(client["token_endpoint_auth_method"], "client_secret_basic");
    /// assert!(client["client_secret"].is_string());
    /// assert_eq!(client["scope"], "email profile");
    /// # }
    /// ```
    pub async fn register<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let wire = self.inner.wire();
        let call = || registration::register(&wire, self.inner.registrar(), request);
        span::traced("register", call).await
    }

    /// The client configuration endpoint (RFC 7592 §2): `GET`, `PUT` or `DELETE` on
    /// `{registration path}/{client_id}` (the `registration_client_uri` of
    /// [`register`](Self::register)'s answer; the client id is read from the request's path),
    /// with `Authorization: Bearer <registration_access_token>`.
    ///
    /// `GET` answers 200 with the client's metadata; `PUT` replaces it with a full metadata
    /// document checked as a registration is (it must carry the `client_id`, and a
    /// `client_secret` only if it is the current one; omitted members take their defaults;
    /// the authentication method cannot change; the secret is re-issued only when the document
    /// carries `"rotate_client_secret": true`, the previous one then working for the policy's
    /// [overlap](crate::settings::RegistrationPolicy::secret_rotation_overlap)) and answers
    /// 200; `DELETE` removes the client and answers 204. A missing or wrong token, or an
    /// unknown client, or one an administrator registered, is the same 401 `invalid_token`
    /// with a `WWW-Authenticate: Bearer` challenge; other methods 405 with `Allow`. Without a
    /// registration policy: 404.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let server = AuthorizationServer::builder().issuer("https://auth.example")
    /// #     .store(MemoryStore::new()).registration(grantor::settings::RegistrationPolicy::new()).build().unwrap();
    /// let request = http::Request::get("/api/oauth/register/some-client")
    ///     .header("authorization", "Bearer not-its-token")
    ///     .body("")
    ///     .unwrap();
    /// let response = server.client_configuration(&request).await;
    /// assert_eq!(response.status(), 401);
    /// assert!(response.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    /// # }
    /// ```
    pub async fn client_configuration<B: AsRef<[u8]>>(
        &self,
        request: &Request<B>,
    ) -> Response<String> {
        let wire = self.inner.wire();
        let call = || registration::configuration(&wire, self.inner.registrar(), request);
        span::traced("client_configuration", call).await
    }

    /// Bearer token validation for resource servers (RFC 6750): the grant behind the request's
    /// `Authorization: Bearer` token, checked to be meant for the server's
    /// [default audience](crate::AuthorizationServerBuilder::default_audience) (RFC 8707; see
    /// [`bearer_for_audience`](Self::bearer_for_audience) for another) and to carry every token
    /// of `required` scope, or the [refusal](BearerRefusal), its reason typed and its answer
    /// ready ([`BearerRefusal::into_response`]): 401 with a bare
    /// `WWW-Authenticate: Bearer realm=".."` challenge without credentials, 401
    /// `invalid_token` for a bad, expired or revoked token or one of another audience, 403
    /// `insufficient_scope` (with the `scope` needed), 400 `invalid_request` for a malformed
    /// header.
    ///
    /// With DPoP on (`AuthorizationServerBuilder::dpop`, feature `dpop`) it also takes
    /// `Authorization: DPoP <token>` with a `DPoP` proof of the token's key for this request's
    /// method and URI (RFC 9449 §7.1; an origin-form URI is read against the issuer's origin),
    /// and refuses a bound token presented as a bearer token; those refusals carry
    /// `WWW-Authenticate: DPoP` challenges, and a missing server nonce a `DPoP-Nonce`.
    ///
    /// A token bound to a client certificate (RFC 8705 §3; see
    /// [`certificate_bound_tokens`](crate::AuthorizationServerBuilder::certificate_bound_tokens))
    /// is honoured only when the request's extensions hold a
    /// [`ClientCertificate`](crate::mtls::ClientCertificate) of the same thumbprint; otherwise
    /// 401 `invalid_token`.
    ///
    /// Every challenge names the resource's metadata document (RFC 9728 §5.1,
    /// `resource_metadata`; see [`protected_resource_metadata`](Self::protected_resource_metadata)),
    /// so a client that meets the resource first finds its authorization server there.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let request = http::Request::get("/api/me").body(()).unwrap();
    /// let required = Scope::parse("profile").unwrap();
    /// let refusal = server.bearer(&request, Some(&required)).await.unwrap_err();
    /// assert_eq!(refusal.status(), 401);
    /// assert_eq!(
    ///     refusal.headers()["www-authenticate"],
    ///     "Bearer realm=\"https://auth.example\", \
    ///      resource_metadata=\"https://auth.example/.well-known/oauth-protected-resource\""
    /// );
    /// # }
    /// ```
    pub async fn bearer<B>(
        &self,
        request: &Request<B>,
        required: Option<&Scope>,
    ) -> Result<AccessGrant, BearerRefusal> {
        // The check's future is made here, not in a nested async call that would be moved
        // into this one whole (the hottest call a resource server makes).
        let inner = &*self.inner;
        let wire = inner.wire();
        let request = bearer::Presented::of(request);
        let required = bearer::Required::scope(required);
        bearer::check(&wire, inner.validation(), request, None, required).await
    }

    /// [`AuthorizationServer::bearer`] for a resource that also demands a stronger or more
    /// recent sign-in (RFC 9470): the token's sign-in must satisfy `step_up` (an authentication
    /// context class among its `acr_values`, a sign-in within its `max_age`). A token that
    /// falls short (no user sign-in, another class, too long ago) is refused with 401
    /// `insufficient_user_authentication` and a challenge naming what is demanded, so its
    /// client can have the user sign in again with those `acr_values` and `max_age` (in the
    /// `DPoP` scheme for a DPoP-bound token, naming the resource's metadata as every challenge
    /// does). The scope is checked first, as [`bearer`](Self::bearer) does. For a resource of
    /// another audience, `RequireBearer::audience` and `RequireBearer::step_up` (feature
    /// `tower`) together.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// use std::time::Duration;
    ///
    /// // A client's own token: no user signed in for it.
    /// let request = http::Request::post("/api/oauth/token")
    ///     .header("authorization", basic)
    ///     .header("content-type", "application/x-www-form-urlencoded")
    ///     .body("grant_type=client_credentials")
    ///     .unwrap();
    /// let tokens: serde_json::Value =
    ///     serde_json::from_str(server.token(&request).await.body()).unwrap();
    /// let token = tokens["access_token"].as_str().unwrap();
    ///
    /// let strong = StepUp::new()
    ///     .acr_values(["urn:grantor:acr:mfa"])
    ///     .unwrap()
    ///     .max_age(Duration::from_secs(300));
    /// let request = http::Request::get("/api/me/strong")
    ///     .header("authorization", format!("Bearer {token}"))
    ///     .body(())
    ///     .unwrap();
    /// let refusal = server.bearer_step_up(&request, None, &strong).await.unwrap_err();
    /// assert_eq!(refusal.reason(), BearerRefusalReason::InsufficientUserAuthentication);
    /// assert_eq!(refusal.status(), 401);
    /// assert_eq!(
    ///     refusal.headers()["www-authenticate"],
    ///     "Bearer realm=\"https://auth.example\", error=\"insufficient_user_authentication\", \
    ///      error_description=\"the access token was not issued for a user's sign-in\", \
    ///      acr_values=\"urn:grantor:acr:mfa\", max_age=300, \
    ///      resource_metadata=\"https://auth.example/.well-known/oauth-protected-resource\""
    /// );
    /// # }
    /// ```
    pub async fn bearer_step_up<B>(
        &self,
        request: &Request<B>,
        required: Option<&Scope>,
        step_up: &StepUp,
    ) -> Result<AccessGrant, BearerRefusal> {
        let presented = bearer::Presented::of(request);
        let required = bearer::Required {
            scope: required,
            step_up: Some(step_up),
        };
        self.check_bearer(presented, None, required).await
    }

    /// [`AuthorizationServer::bearer`] on headers alone. Without the request's method and URI
    /// a DPoP proof (RFC 9449) cannot be checked, nor without its extensions a client
    /// certificate (RFC 8705), so a bound token is refused here: use
    /// [`AuthorizationServer::bearer`] where tokens may be bound.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let mut headers = http::HeaderMap::new();
    /// headers.insert("authorization", "Bearer not-a-live-token".parse().unwrap());
    /// let refusal = server.bearer_headers(&headers, None).await.unwrap_err();
    /// assert_eq!(refusal.status(), 401);
    /// # }
    /// ```
    pub async fn bearer_headers(
        &self,
        headers: &HeaderMap,
        required: Option<&Scope>,
    ) -> Result<AccessGrant, BearerRefusal> {
        let request = bearer::Presented {
            target: None,
            headers,
            certificate: None,
        };
        let required = bearer::Required::scope(required);
        self.check_bearer(request, None, required).await
    }

    /// [`AuthorizationServer::bearer`] for a resource server of another `audience` than the
    /// server's default (one of its [`resources`](crate::AuthorizationServerBuilder::resources)): a
    /// token not meant for `audience` is refused with 401 `invalid_token` (RFC 8707).
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let server = AuthorizationServer::builder().issuer("https://auth.example")
    /// #     .resources(["https://files.example/"]).store(MemoryStore::new()).build().unwrap();
    /// let request = http::Request::get("/files/report")
    ///     .header("authorization", "Bearer not-a-live-token")
    ///     .body(())
    ///     .unwrap();
    /// let refusal = server
    ///     .bearer_for_audience(&request, "https://files.example/", None)
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(refusal.status(), 401);
    /// # }
    /// ```
    pub async fn bearer_for_audience<B>(
        &self,
        request: &Request<B>,
        audience: &str,
        required: Option<&Scope>,
    ) -> Result<AccessGrant, BearerRefusal> {
        let presented = bearer::Presented::of(request);
        let required = bearer::Required::scope(required);
        self.check_bearer(presented, Some(audience), required).await
    }

    /// The authorization server metadata (RFC 8414) as `application/json`, for
    /// `GET /.well-known/oauth-authorization-server` (followed by the issuer's path when it
    /// has one, RFC 8414 §3.1: `/.well-known/oauth-authorization-server/tenant` for the issuer
    /// `https://host/tenant`).
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let metadata: serde_json::Value = serde_json::from_str(server.metadata().body()).unwrap();
    /// assert_eq!(metadata["token_endpoint"], "https://auth.example/api/oauth/token");
    /// # }
    /// ```
    pub fn metadata(&self) -> Response<String> {
        metadata::document(&self.inner.config)
    }

    /// The JWKS document (RFC 7517 §5) of the access-token and ID-token signing keys, for
    /// `GET` at `jwks_uri` (`/.well-known/jwks.json` by default): for each, the current key,
    /// those whose tokens may still be live and the next. `application/json`, cacheable for
    /// five minutes, so a relying party or resource server sees a new key before it signs.
    /// 404 when the server signs nothing (neither JWT access tokens, feature `jwt`, nor
    /// OpenID Connect, feature `oidc`).
    pub async fn jwks(&self) -> Response<String> {
        let wire = self.inner.wire();
        let format = self.inner.access_tokens.as_deref();
        let id_tokens = self.inner.id_tokens.as_deref();
        crate::endpoint::jwks(&wire, format, id_tokens).await
    }

    /// The metadata of the protected resource `resource` (RFC 9728 §2, §3.2), one the server
    /// [knows](crate::AuthorizationServerBuilder::resources): `resource`, this server as its
    /// only `authorization_servers`, `scopes_supported` (the server's, then those a
    /// self-registered client may be granted, so a client that registered itself finds a scope
    /// of the host's own), `bearer_methods_supported`
    /// (`header`) and, with DPoP on, `dpop_signing_alg_values_supported`. It is served at the
    /// URL [`resource_metadata_url`](Self::resource_metadata_url) answers, which both glues
    /// and the `RequireBearer` layer (feature `tower`) route; 404 for a resource
    /// the server does not know.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// // The server's default audience, here its issuer.
    /// let document = server.protected_resource_metadata("https://auth.example");
    /// let document: serde_json::Value = serde_json::from_str(document.body()).unwrap();
    /// assert_eq!(document["authorization_servers"][0], "https://auth.example");
    /// assert_eq!(
    ///     server.resource_metadata_url("https://auth.example"),
    ///     Some("https://auth.example/.well-known/oauth-protected-resource")
    /// );
    /// # }
    /// ```
    pub fn protected_resource_metadata(&self, resource: &str) -> Response<String> {
        match self.inner.rendered.resource_documents.of(resource) {
            Some(document) => document.response(),
            None => crate::endpoint::render::not_found(),
        }
    }

    /// Where the metadata of `resource` is served (RFC 9728 §3.1: its origin,
    /// `/.well-known/oauth-protected-resource`, then its path), if the server knows it and it
    /// is an `http`/`https` URL without a query.
    pub fn resource_metadata_url(&self, resource: &str) -> Option<&str> {
        let document = self.inner.rendered.resource_documents.of(resource)?;
        Some(&document.url)
    }

    /// The document served at the well-known `path`, for the glues.
    #[cfg(any(feature = "axum", feature = "actix"))]
    pub(crate) fn resource_metadata_at(&self, path: &str) -> Option<Response<String>> {
        let documents = &self.inner.rendered.resource_documents;
        documents.at_path(path).map(|d| d.response())
    }

    /// Every well-known path on the issuer's origin a resource's metadata is served at, for
    /// the glues' routes.
    #[cfg(any(feature = "axum", feature = "actix"))]
    pub(crate) fn resource_metadata_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        for document in self.inner.rendered.resource_documents.iter() {
            if document.local && !paths.contains(&document.path) {
                paths.push(document.path.clone());
            }
        }
        paths
    }

    /// The largest request body the endpoints accept. A host that stops reading a body at this
    /// size answers with [`AuthorizationServer::payload_too_large`].
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// assert_eq!(server.max_body_bytes(), 16 * 1024);
    /// # }
    /// ```
    pub fn max_body_bytes(&self) -> usize {
        self.inner.config.limits.max_input
    }

    /// The 413 `invalid_request` answer for a body over [`AuthorizationServer::max_body_bytes`],
    /// for hosts that cap the body while reading it. It carries `Connection: close`: the rest of
    /// the body is unread, so the client must send its next request on a new connection.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let response = server.payload_too_large();
    /// assert_eq!(response.status(), 413);
    /// assert_eq!(response.headers()["connection"], "close");
    /// assert!(response.body().contains("invalid_request"));
    /// # }
    /// ```
    pub fn payload_too_large(&self) -> Response<String> {
        crate::endpoint::payload_too_large(&self.inner.rendered)
    }

    /// The issuer identifier this server was built with.
    ///
    /// ```
    /// # use grantor::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let (server, alice) = grantor::doc_fixture::server().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// assert_eq!(server.issuer(), "https://auth.example");
    /// # }
    /// ```
    pub fn issuer(&self) -> &str {
        &self.inner.config.issuer
    }
}

impl AuthorizationServer {
    /// The server the builder assembled.
    pub(crate) fn assembled(inner: Inner) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Whether the token and client seams are grantor's memory store, called in place.
    #[cfg(test)]
    pub(crate) fn calls_memory_in_place(&self) -> (bool, bool) {
        (
            self.inner.tokens_in_place.is_some(),
            self.inner.clients_in_place.is_some(),
        )
    }

    /// The settings it was built with, for the pages and the glue above it.
    pub(crate) fn settings(&self) -> &Settings {
        &self.inner.config
    }

    /// Bearer validation of what a request presented, for `audience` (the default when
    /// `None`), with what the resource `required`: the one path every public bearer method but
    /// [`bearer`](Self::bearer) and the glue's extractors take.
    pub(crate) async fn check_bearer(
        &self,
        presented: bearer::Presented<'_>,
        audience: Option<&str>,
        required: bearer::Required<'_>,
    ) -> Result<AccessGrant, BearerRefusal> {
        let inner = &*self.inner;
        let wire = inner.wire();
        bearer::check(&wire, inner.validation(), presented, audience, required).await
    }
}

impl fmt::Debug for AuthorizationServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationServer")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}
