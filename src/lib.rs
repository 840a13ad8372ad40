//! # grantor
//!
//! The grant logic of an OAuth 2.0 authorization server (RFC 6749, with RFC 7636 PKCE and the
//! RFC 9700 security practices) and OpenID Connect provider (feature `oidc`) as a
//! framework-agnostic library. The host owns the web server,
//! the sign-in page and the storage; grantor owns the protocol: what a request means, whether it
//! is allowed, what is issued, and what goes back on the wire.
//!
//! Handlers take an [`http::Request`] with any byte body and return a ready
//! [`http::Response`]: a redirect, token JSON, or an RFC error. The host plugs in its stores
//! through the async seams of [`store`] ([`ClientStore`](store::ClientStore),
//! [`UserStore`](store::UserStore), [`TokenIssuer`](store::TokenIssuer), and the sign-in
//! sessions and attempt counters every node shares), or uses [`MemoryStore`] or the SQL stores.
//!
//! ## Where to start
//!
//! - [The guide](guide), from its first chapter, [getting started](guide::getting_started), then
//!   [hosting](guide::hosting): a complete host in one screen, and a chapter per topic (users,
//!   clients, tokens, OpenID Connect, stores, deployment, security, the admin command, events).
//! - [`AuthorizationServer::builder`]: the [`AuthorizationServerBuilder`], where every setting
//!   and every seam is given, with the defaults it documents.
//! - [`store`]: the seams a host implements (its users first: [`UserStore`](store::UserStore)),
//!   each with an example.
//!
//! ## The modules
//!
//! Modules import downward only. At the bottom are the leaves: `id` (every public identifier),
//! [`Scope`], PKCE, [`audience`], [`clock`], the secret types, the errors and `mint` (every code,
//! token, `jti` and session id, from one CSPRNG function). Above them `settings`: the checked
//! settings as plain data. Then [`store`]: the seams a store implements, their records and, with
//! feature `test-util`, the contract suite a store of your own can run ([`MemoryStore`] and `sql`,
//! features `sqlite` and `postgres`, implement them). Then `grant` (private): every decision,
//! one file per grant, signing in included, each taking a context that names the seams it uses.
//! Then `endpoint` (private): the wire, parsing requests and rendering outcomes, each endpoint
//! taking the settings and the grant contexts it uses. Then [`AuthorizationServer`], the
//! façade whose methods are the endpoints and the sign-in steps, its state private to it. Then
//! [`signin`]: [`Site`](signin::Site) serves the sign-in, approval and device pages as HTTP with
//! the host's [`Pages`](signin::Pages). With feature `axum` or `actix`, `grantor::axum` and `grantor::actix` mount every
//! endpoint and the pages in one call and give handlers the bearer-validated grant as an
//! extractor. On top, [`AuthorizationServerBuilder`] is the one place that wires them all.
//!
//! A [`RegistrationPolicy`](settings::RegistrationPolicy) on the builder opens dynamic client registration (RFC 7591) and
//! client management (RFC 7592): [`AuthorizationServer::register`] and
//! [`AuthorizationServer::client_configuration`]. An [`ExchangePolicy`](exchange::ExchangePolicy) on the builder offers
//! token exchange (RFC 8693) at the token endpoint. With feature `jwt`, `jwt` issues RFC 9068
//! access tokens and publishes their keys; with feature `dpop`, `dpop` binds tokens to a key
//! the client proves it holds (RFC 9449).
//!
//! ## The authorization code flow
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use std::sync::Arc;
//! use base64::Engine as _;
//! use grantor::client::{Approval, Client, ClientCredentials, GrantType};
//! use grantor::store::Admin as _;
//! use grantor::*;
//!
//! // Registration: a confidential client through the admin API every store has, then a user
//! // through the server, which mints the id and hashes the password on its own threads.
//! let store = MemoryStore::new();
//! let creds = ClientCredentials::generate().unwrap();
//! let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
//!     .redirect_uri("https://app.example/callback")
//!     .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
//!     .scopes("profile email")
//!     .approval(Approval::NotRequired)
//!     .build()
//!     .unwrap();
//! store.register_client(&client).await.unwrap();
//!
//! let server = AuthorizationServer::builder()
//!     .issuer("https://auth.example")
//!     .store(store)
//!     .build()
//!     .unwrap();
//! let alice = server.add_user("alice@example.com", &Password::new("alice-password-1")).await.unwrap();
//!
//! // 1. The browser arrives at the authorization endpoint.
//! let uri = format!(
//!     "/api/oauth/authorize?response_type=code&client_id={}&state=xyz\
//!      &redirect_uri=https%3A%2F%2Fapp.example%2Fcallback&scope=profile",
//!     creds.client_id
//! );
//! let request = http::Request::get(uri).body(Vec::new()).unwrap();
//! let Authorize::SignIn(pending) = server.authorize(&request).await else {
//!     panic!("the request is valid");
//! };
//!
//! // 2. The host's sign-in page signs Alice in; this client needs no approval page.
//! assert!(!pending.needs_approval());
//! let redirect = server.decide(pending, alice.id(), Decision::Approve).await;
//! assert_eq!(redirect.status(), 303);
//! let location = url::Url::parse(redirect.headers()["location"].to_str().unwrap()).unwrap();
//! let code = location.query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
//!
//! // 3. The client exchanges the code, authenticating with HTTP Basic.
//! let basic = base64::engine::general_purpose::STANDARD
//!     .encode(format!("{}:{}", creds.client_id, creds.secret.expose_secret()));
//! let request = http::Request::post("/api/oauth/token")
//!     .header("authorization", format!("Basic {basic}"))
//!     .header("content-type", "application/x-www-form-urlencoded")
//!     .body(format!(
//!         "grant_type=authorization_code&code={code}\
//!          &redirect_uri=https%3A%2F%2Fapp.example%2Fcallback"
//!     ))
//!     .unwrap();
//! let response = server.token(&request).await;
//! assert_eq!(response.status(), 200);
//! let body: serde_json::Value = serde_json::from_str(response.body()).unwrap();
//! assert_eq!(body["token_type"], "bearer");
//! assert_eq!(body["scope"], "profile");
//! assert!(body["refresh_token"].is_string());
//! # }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc), each feature-gated item shows the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, unreachable_pub)]

pub mod audience;
mod budget;
mod builder;
#[cfg(feature = "cli")]
pub mod cli;
pub mod client;
#[cfg(feature = "private-key-jwt")]
pub mod client_assertion;
mod client_documents;
mod client_metadata;
pub mod clock;
pub mod device;
#[doc(hidden)]
pub mod doc_fixture;
#[cfg(feature = "dpop")]
pub mod dpop;
mod endpoint;
mod error;
pub mod events;
pub mod exchange;
#[cfg(any(feature = "axum", feature = "actix"))]
mod glue;
mod grant;
pub mod guide;
pub mod hash;
mod id;
pub mod id_jag;
#[cfg(any(feature = "dpop", feature = "private-key-jwt"))]
mod jose;
#[cfg(feature = "jwt")]
pub mod jwt;
mod lane;
#[cfg(feature = "tower")]
pub mod layer;
mod memory;
pub mod metrics;
mod mint;
pub mod mtls;
mod oidc;
pub mod outbound;
mod pkce;
mod registration;
mod request;
#[cfg(feature = "private-key-jwt")]
pub mod request_object;
mod scope;
mod secret;
mod server;
pub mod settings;
pub mod signin;
mod signing;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod sql;
mod step_up;
pub mod store;
mod subject;
mod throttle;
#[cfg(feature = "tls")]
pub mod tls;
mod token_format;
#[cfg(feature = "private-key-jwt")]
pub mod trust;
mod usernames;

/// The README's examples run as doc tests. Between them they use the features below, so they
/// run when every one of them is on (`cargo test --all-features`, as CI runs them).
#[cfg(all(
    doctest,
    feature = "axum",
    feature = "actix",
    feature = "tower",
    feature = "sqlite",
    feature = "jwt",
    feature = "dpop",
    feature = "oidc",
    feature = "cli",
    feature = "test-util"
))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use async_trait::async_trait;
pub use budget::CallerAddress;
pub use builder::{AuthorizationServerBuilder, ConfigError};
pub use endpoint::authorize::{Authorize, ErrorRedirect};
pub use endpoint::bearer::{BearerRefusal, BearerRefusalReason};
pub use error::{ErrorCode, OAuthError};
#[cfg(feature = "actix")]
pub use glue::actix;
#[cfg(feature = "axum")]
pub use glue::axum;
#[cfg(any(feature = "axum", feature = "actix"))]
pub use glue::{RequiredAuthentication, RequiredScope};
pub use grant::authorize::ResponseType;
pub use grant::pending::{Decision, PendingAuthorization};
pub use memory::MemoryStore;
pub use scope::{Scope, ScopeError};
pub use secret::Password;
pub use server::AuthorizationServer;
pub use step_up::{StepUp, StepUpError};
