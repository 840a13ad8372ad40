//! grantor beside oxide-auth 0.6, the Rust crate users compare it with: one criterion group per
//! flow both crates serve, each with a `grantor` and an `oxide_auth` function, run side by side in
//! this process. See `benches/README.md`.
//!
//! | group | measures (both crates) |
//! |---|---|
//! | `peer_authorize` | `GET /authorize?response_type=code&client_id=…&redirect_uri=…&state=xyz&scope=profile` for the confidential client, the owner approving at once → the redirect carrying `code` and `state`. |
//! | `peer_authorize_pkce` | The same for the public client with an S256 `code_challenge`. |
//! | `peer_exchange_confidential` | `grant_type=authorization_code` with HTTP Basic and a fresh code → token JSON with a refresh token. |
//! | `peer_exchange_public_pkce` | The same for the public client: `client_id` and `code_verifier` in the body. |
//! | `peer_refresh_confidential` | `grant_type=refresh_token` with HTTP Basic and a fresh refresh token → a new access and refresh token. |
//! | `peer_refresh_public` | The same for the public client (`client_id` in the body). |
//! | `peer_client_credentials` | `grant_type=client_credentials&scope=profile` with HTTP Basic → token JSON, no refresh token. |
//! | `peer_bearer_valid` | A resource request with `Authorization: Bearer …` for a live token needing scope `profile` → the grant; goes round 16,384 distinct live tokens from the whole code flow. |
//! | `peer_bearer_reject` | The same with unknown tokens → the 401 and its `WWW-Authenticate` challenge. |
//!
//! **grantor** runs as `benches/flows.rs` runs it, through `benches/common`: the in-memory store,
//! a confidential client with generated credentials (SHA-256 digest verifier), a public client,
//! access tokens of 1 h, codes of 10 min, every async call inside one `block_on` of a tokio
//! current-thread runtime.
//!
//! **oxide-auth** runs in its fastest configuration: its in-memory primitives (`ClientMap`,
//! `AuthMap` and `TokenMap`, both with `RandomGenerator::new(16)`), its `Generic` endpoint from
//! `frontends::simple`, extended with an `AddonList` holding `Pkce::optional()` (one endpoint for
//! both clients, as a server serving both needs), and client secrets stored as SHA-256 digests
//! compared in constant time (`Sha256Secrets`, set with `ClientMap::set_password_policy`) instead
//! of its default Argon2. `TokenMap::valid_for(1 h)` gives its tokens grantor's access-token
//! lifetime; its codes live 10 min (fixed). The primitives sit behind one `std::sync::Mutex`,
//! locked once per request, as a server sharing them between threads must (grantor's store
//! locks inside). The owner solicitor approves at once (for Alice; for client credentials the
//! client owns its grant). Its glue: `OxRequest` implements `WebRequest` (the query and the
//! form body decoded into owned pairs, the `Authorization` header borrowed), `OxResponse`
//! implements `WebResponse` (status, location, `WWW-Authenticate`, body). oxide-auth has no token
//! endpoint of its own, so the glue picks the flow by `grant_type` as its users' token routes do.
//!
//! **What a host pays, on both sides.** Both crates get the same requests (made untimed by
//! `benches/common`'s builders: same redirect URI, scope `profile`, state, PKCE pair), kept as
//! they arrive: method, target, `Authorization` header and body. Each timed iteration is what
//! a host pays per request from there: the `http::Request` assembled from those parts (as the
//! server's HTTP parser does; it is then as fresh in the cache as a request just read), the
//! crate's call with all its parsing (grantor inside `authorize`/`token`/`bearer`, oxide-auth's
//! glue before its flow), the answer written out as HTTP/1.1 bytes into a reused buffer
//! (oxide-auth's first turned into an `http` response with the headers its flow set, as its web
//! frontends do), and the request and the answer dropped. Everything an iteration consumes
//! (codes, refresh tokens) is made beforehand, untimed, through each crate's own endpoints, one
//! batch per criterion sample, with a fresh server per sample for the flows that mint. The
//! first answer of every flow is checked in full for both crates (status, redirect target,
//! `code`, `state`, token JSON fields, the grant behind a bearer token, the 401 challenge) and
//! every timed answer's status is asserted.
//!
//! **The floor** (`floor/mod.rs`), a third function in every group: the least a token server
//! can do for the same request, timed in the same harness from the same arrivals (oxide-auth's
//! requests, the same clients). It keeps tokens as themselves in sharded maps, keeps no family,
//! `jti`, event or trace, and answers errors without descriptions. oxide-auth's median over the
//! floor's is the most any crate could be faster than oxide-auth on that flow here (the assembly
//! of the request, writing the answer and the map lookups are paid by every crate); grantor's
//! over the floor's is what grantor spends beyond the least.
//!
//! **What differs** (see also `benches/README.md`): grantor's answers are whole
//! `http::Response`s with their headers (`Cache-Control: no-store`, `Content-Type`) and carry
//! more (`iss` in the redirect, RFC 9207; `jti` in token JSON); oxide-auth's are the glue's plain
//! struct. grantor's codes are 32 random bytes (base64url, 43 characters) and its tokens their
//! issue time and 27 random bytes (44 characters), from a user-space ChaCha12 seeded by the
//! OS; oxide-auth's are 16 (standard base64 with padding, 24 characters) from `OsRng`, one
//! `getrandom` system call each. Both rotate refresh tokens: oxide-auth's
//! `TokenMap` replaces the pair and forgets the old refresh token (a replay is merely refused);
//! grantor keeps it to detect reuse and revoke the family. oxide-auth's refresh tokens expire
//! with their access token (1 h), grantor's after 30 days. `Pkce::optional()` lets a public
//! client skip PKCE; grantor requires S256 from public clients. oxide-auth's `TokenMap` also
//! mints and stores a refresh token for client credentials, only leaving it out of the answer.
//! oxide-auth answers a spent code with `invalid_request` and an unknown bearer token with
//! `error="invalid_request"` (RFC 6749 and 6750 say `invalid_grant`, `invalid_token`).
//!
//! `cargo bench -p grantor-benches --bench peer` runs it and prints a Markdown table of the medians and their ratio;
//! `cargo test -p grantor-benches --benches` runs each function once as a test (no timing is asserted).

mod common;
mod floor;

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use criterion::Criterion;
use grantor::Scope as GrantorScope;
use http::Request;
use oxide_auth::endpoint::{
    AccessTokenFlow, AuthorizationFlow, ClientCredentialsFlow, OwnerConsent, OwnerSolicitor,
    QueryParameter, Solicitation, WebRequest, WebResponse,
};
use oxide_auth::frontends::simple::endpoint::{Generic, Vacant};
use oxide_auth::frontends::simple::extensions::{AddonList, Extended, Pkce};
use oxide_auth::frontends::simple::request::NoError;
use oxide_auth::primitives::authorizer::AuthMap;
use oxide_auth::primitives::generator::RandomGenerator;
use oxide_auth::primitives::grant::Grant;
use oxide_auth::primitives::issuer::TokenMap;
use oxide_auth::primitives::registrar::{
    Client, ClientMap, ExactUrl, PasswordPolicy, RegisteredUrl, RegistrarError,
};
use oxide_auth::primitives::scope::Scope;
use rand::RngCore as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use url::Url;

use common::*;
use floor::Floor;

// ---------------------------------------------------------------------------------------------
// oxide-auth: the password policy, the request and response glue, the solicitors

/// Client secrets stored as their SHA-256 digest and compared in constant time: oxide-auth's
/// fastest sound choice for generated, high-entropy secrets (grantor's digest verifier does the
/// same), instead of its default Argon2.
struct Sha256Secrets;

impl PasswordPolicy for Sha256Secrets {
    fn store(&self, _client_id: &str, passphrase: &[u8]) -> Vec<u8> {
        Sha256::digest(passphrase).to_vec()
    }

    fn check(
        &self,
        _client_id: &str,
        passphrase: &[u8],
        stored: &[u8],
    ) -> Result<(), RegistrarError> {
        if bool::from(Sha256::digest(passphrase).as_slice().ct_eq(stored)) {
            Ok(())
        } else {
            Err(RegistrarError::Unspecified)
        }
    }
}

/// An HTTP request as oxide-auth reads it: the query and the form body decoded into owned pairs
/// (oxide-auth wants `'static` parameters), the `Authorization` header borrowed from the request.
///
/// The pairs are a `Vec<(String, String)>`, the cheapest parameter type oxide-auth implements
/// `QueryParameter` for that still refuses a repeated key (RFC 6749 §3.1); its web frontends
/// (oxide-auth-axum, -actix) deserialize into `NormalizedParameter`, a `HashMap`, which measured
/// 0.13–0.2 µs more per token request here.
struct OxRequest<'a> {
    query: Vec<(String, String)>,
    body: Vec<(String, String)>,
    authorization: Option<&'a str>,
}

impl<'a> OxRequest<'a> {
    fn new<B>(request: &'a Request<B>, body: &str) -> Self {
        Self {
            query: form(request.uri().query().unwrap_or("")),
            body: form(body),
            authorization: request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok()),
        }
    }
}

/// `application/x-www-form-urlencoded` pairs, decoded.
fn form(encoded: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(encoded.as_bytes())
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect()
}

impl WebRequest for OxRequest<'_> {
    type Error = NoError;
    type Response = OxResponse;

    fn query(&mut self) -> Result<Cow<'_, dyn QueryParameter + 'static>, NoError> {
        Ok(Cow::Borrowed(&self.query))
    }

    fn urlbody(&mut self) -> Result<Cow<'_, dyn QueryParameter + 'static>, NoError> {
        Ok(Cow::Borrowed(&self.body))
    }

    fn authheader(&mut self) -> Result<Option<Cow<'_, str>>, NoError> {
        Ok(self.authorization.map(Cow::Borrowed))
    }
}

/// oxide-auth's answer: what a web frontend turns into its HTTP response.
#[derive(Debug)]
struct OxResponse {
    status: u16,
    location: Option<Url>,
    www_authenticate: Option<String>,
    body: Option<String>,
}

impl Default for OxResponse {
    /// oxide-auth sets no status for a successful token answer: 200 unless told otherwise.
    fn default() -> Self {
        Self {
            status: 200,
            location: None,
            www_authenticate: None,
            body: None,
        }
    }
}

impl WebResponse for OxResponse {
    type Error = NoError;

    fn ok(&mut self) -> Result<(), NoError> {
        self.status = 200;
        Ok(())
    }

    fn redirect(&mut self, url: Url) -> Result<(), NoError> {
        self.status = 302;
        self.location = Some(url);
        Ok(())
    }

    fn client_error(&mut self) -> Result<(), NoError> {
        self.status = 400;
        Ok(())
    }

    fn unauthorized(&mut self, header_value: &str) -> Result<(), NoError> {
        self.status = 401;
        self.www_authenticate = Some(header_value.to_owned());
        Ok(())
    }

    fn body_text(&mut self, text: &str) -> Result<(), NoError> {
        self.body = Some(text.to_owned());
        Ok(())
    }

    fn body_json(&mut self, data: &str) -> Result<(), NoError> {
        self.body = Some(data.to_owned());
        Ok(())
    }
}

/// The owner id oxide-auth's grants carry for Alice.
const OX_OWNER: &str = "alice";

/// Alice is signed in and approves at once (grantor's clients need no approval page either).
struct AliceApproves;

impl<'a> OwnerSolicitor<OxRequest<'a>> for AliceApproves {
    fn check_consent(
        &mut self,
        _: &mut OxRequest<'a>,
        _: Solicitation<'_>,
    ) -> OwnerConsent<OxResponse> {
        OwnerConsent::Authorized(OX_OWNER.to_owned())
    }
}

/// Client credentials: the client is the owner of its own grant.
struct ClientOwns;

impl<'a> OwnerSolicitor<OxRequest<'a>> for ClientOwns {
    fn check_consent(
        &mut self,
        _: &mut OxRequest<'a>,
        solicitation: Solicitation<'_>,
    ) -> OwnerConsent<OxResponse> {
        OwnerConsent::Authorized(solicitation.pre_grant().client_id.clone())
    }
}

/// The answer of a flow that hit no primitive error (none is expected here).
fn answered<T, E>(result: Result<T, E>, flow: &str) -> T {
    match result {
        Ok(answer) => answer,
        Err(_) => panic!("oxide-auth's {flow} flow failed"),
    }
}

// ---------------------------------------------------------------------------------------------
// oxide-auth: the server

/// oxide-auth's primitives, as one server holds them.
struct OxState {
    registrar: ClientMap,
    authorizer: AuthMap<RandomGenerator>,
    issuer: TokenMap<RandomGenerator>,
    addons: AddonList,
    /// What a resource demands: scope `profile`.
    scopes: Vec<Scope>,
}

/// An oxide-auth server with a confidential client (generated credentials, SHA-256) and a
/// public client, the same redirect URI and scope as grantor's.
struct Oxide {
    state: Mutex<OxState>,
    conf_id: String,
    /// `Basic base64(id:secret)` of the confidential client.
    conf_basic: String,
    /// The confidential client's secret (the floor registers the same client).
    conf_secret: String,
}

impl Oxide {
    fn new() -> Self {
        let mut registrar = ClientMap::new();
        registrar.set_password_policy(Sha256Secrets);
        let redirect = RegisteredUrl::Exact(REDIRECT.parse::<ExactUrl>().expect("a URL"));
        let profile: Scope = "profile".parse().expect("a scope");
        // The same shape of credentials as grantor's confidential client.
        let creds = grantor::client::ClientCredentials::generate().expect("credentials");
        let conf_id = creds.client_id.to_string();
        let secret = creds.secret.expose_secret();
        registrar.register_client(Client::confidential(
            &conf_id,
            redirect.clone(),
            profile.clone(),
            secret.as_bytes(),
        ));
        registrar.register_client(Client::public(PUBLIC_ID, redirect, profile.clone()));
        let mut issuer = TokenMap::new(RandomGenerator::new(16));
        issuer.valid_for(chrono::Duration::hours(1));
        let mut addons = AddonList::new();
        addons.push_code(Pkce::optional());
        Self {
            state: Mutex::new(OxState {
                registrar,
                authorizer: AuthMap::new(RandomGenerator::new(16)),
                issuer,
                addons,
                scopes: vec![profile],
            }),
            conf_basic: basic(&conf_id, secret),
            conf_secret: secret.to_owned(),
            conf_id,
        }
    }

    /// The authorization endpoint, Alice approving at once: the redirect.
    fn authorize(&self, request: &Request<String>) -> OxResponse {
        let ox_request = OxRequest::new(request, request.body());
        let mut state = self.state.lock().expect("unpoisoned");
        let OxState {
            registrar,
            authorizer,
            addons,
            ..
        } = &mut *state;
        let endpoint = Generic {
            registrar: &*registrar,
            authorizer,
            issuer: Vacant,
            solicitor: AliceApproves,
            scopes: Vacant,
            response: Vacant,
        };
        let mut flow = answered(
            AuthorizationFlow::prepare(Extended::extend_with(endpoint, addons)),
            "authorization",
        );
        answered(flow.execute(ox_request), "authorization")
    }

    /// The token endpoint: the flow its `grant_type` names.
    fn token(&self, request: &Request<String>) -> OxResponse {
        let ox_request = OxRequest::new(request, request.body());
        let mut state = self.state.lock().expect("unpoisoned");
        let OxState {
            registrar,
            authorizer,
            issuer,
            addons,
            ..
        } = &mut *state;
        let grant_type = match ox_request.body.unique_value("grant_type").as_deref() {
            Some("authorization_code") => "authorization_code",
            Some("refresh_token") => "refresh_token",
            Some("client_credentials") => "client_credentials",
            _ => panic!("a grant type this benchmark sends"),
        };
        match grant_type {
            "authorization_code" => {
                let endpoint = Generic {
                    registrar: &*registrar,
                    authorizer,
                    issuer,
                    solicitor: Vacant,
                    scopes: Vacant,
                    response: Vacant,
                };
                let mut flow = answered(
                    AccessTokenFlow::prepare(Extended::extend_with(endpoint, addons)),
                    "access token",
                );
                answered(flow.execute(ox_request), "access token")
            }
            "refresh_token" => {
                let endpoint = Generic {
                    registrar: &*registrar,
                    authorizer: Vacant,
                    issuer,
                    solicitor: Vacant,
                    scopes: Vacant,
                    response: Vacant,
                };
                answered(endpoint.refresh_flow().execute(ox_request), "refresh")
            }
            _ => {
                let endpoint = Generic {
                    registrar: &*registrar,
                    authorizer: Vacant,
                    issuer,
                    solicitor: ClientOwns,
                    scopes: Vacant,
                    response: Vacant,
                };
                let mut flow = answered(
                    ClientCredentialsFlow::prepare(endpoint),
                    "client credentials",
                );
                answered(flow.execute(ox_request), "client credentials")
            }
        }
    }

    /// A resource request needing scope `profile`: the grant, or the refusal.
    #[expect(
        clippy::result_large_err,
        reason = "oxide-auth's resource flow answers so; boxing would add an allocation"
    )]
    fn bearer<B>(&self, request: &Request<B>) -> Result<Grant, OxResponse> {
        let ox_request = OxRequest::new(request, "");
        let mut state = self.state.lock().expect("unpoisoned");
        let OxState { issuer, scopes, .. } = &mut *state;
        let endpoint = Generic {
            registrar: Vacant,
            authorizer: Vacant,
            issuer,
            solicitor: Vacant,
            scopes: scopes.as_slice(),
            response: Vacant,
        };
        endpoint
            .resource_flow()
            .execute(ox_request)
            .map_err(|refusal| answered(refusal, "resource"))
    }

    fn authorize_code_request(&self) -> Request<String> {
        authorize_request(&format!(
            "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}&state=xyz\
             &scope=profile",
            self.conf_id
        ))
    }

    fn authorize_pkce_request(&self) -> Request<String> {
        authorize_request(&format!(
            "response_type=code&client_id={PUBLIC_ID}&redirect_uri={REDIRECT_ENCODED}&state=xyz\
             &scope=profile&code_challenge={CHALLENGE}&code_challenge_method=S256"
        ))
    }

    /// Its codes and tokens are standard base64 (`+`, `/`, `=`): a client form-encodes them.
    fn exchange_confidential_request(&self, code: &str) -> Request<String> {
        token_request(
            Some(&self.conf_basic),
            format!(
                "grant_type=authorization_code&code={}&redirect_uri={REDIRECT_ENCODED}",
                encoded(code)
            ),
        )
    }

    fn exchange_public_request(&self, code: &str) -> Request<String> {
        token_request(
            None,
            format!(
                "grant_type=authorization_code&code={}&redirect_uri={REDIRECT_ENCODED}\
                 &client_id={PUBLIC_ID}&code_verifier={VERIFIER}",
                encoded(code)
            ),
        )
    }

    fn refresh_confidential_request(&self, refresh_token: &str) -> Request<String> {
        token_request(
            Some(&self.conf_basic),
            format!(
                "grant_type=refresh_token&refresh_token={}",
                encoded(refresh_token)
            ),
        )
    }

    fn refresh_public_request(&self, refresh_token: &str) -> Request<String> {
        token_request(
            None,
            format!(
                "grant_type=refresh_token&refresh_token={}&client_id={PUBLIC_ID}",
                encoded(refresh_token)
            ),
        )
    }

    fn client_credentials_request(&self) -> Request<String> {
        token_request(
            Some(&self.conf_basic),
            "grant_type=client_credentials&scope=profile".to_owned(),
        )
    }

    fn code(&self) -> String {
        ox_code_of(&self.authorize(&self.authorize_code_request()))
    }

    fn pkce_code(&self) -> String {
        ox_code_of(&self.authorize(&self.authorize_pkce_request()))
    }

    /// Tokens from the whole code flow of the confidential client.
    fn confidential_tokens(&self) -> serde_json::Value {
        let code = self.code();
        ox_check_token_json(
            &self.token(&self.exchange_confidential_request(&code)),
            true,
        )
    }

    /// Tokens from the whole code flow of the public client (PKCE).
    fn public_tokens(&self) -> serde_json::Value {
        let code = self.pkce_code();
        ox_check_token_json(&self.token(&self.exchange_public_request(&code)), true)
    }
}

fn encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// Checks oxide-auth's approval redirect: to the registered URI, with a fresh code and the
/// state; returns the code.
fn ox_code_of(response: &OxResponse) -> String {
    assert_eq!(response.status, 302, "expected a redirect: {response:?}");
    let location = response.location.as_ref().expect("a location");
    let base = format!(
        "{}://{}{}",
        location.scheme(),
        location.host_str().unwrap_or(""),
        location.path()
    );
    assert_eq!(base, REDIRECT, "redirected to the registered URI");
    assert!(location.fragment().is_none());
    let params: Vec<(String, String)> = location.query_pairs().into_owned().collect();
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert!(param("error").is_none(), "{params:?}");
    assert_eq!(param("state"), Some("xyz"));
    let code = param("code").expect("a code");
    assert_eq!(code.len(), 24, "128 bits in padded base64");
    code.to_owned()
}

/// Checks an oxide-auth token answer (RFC 6749 §5.1) and returns its JSON.
fn ox_check_token_json(response: &OxResponse, with_refresh: bool) -> serde_json::Value {
    assert_eq!(response.status, 200, "{response:?}");
    let body: serde_json::Value =
        serde_json::from_str(response.body.as_deref().expect("a body")).expect("JSON");
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["access_token"].as_str().map(str::len), Some(24));
    let expires_in = body["expires_in"].as_i64().expect("expires_in");
    // oxide-auth rounds the time left down: 3599 once a nanosecond has passed.
    assert!((3598..=3600).contains(&expires_in), "{body}");
    assert_eq!(body["scope"], "profile");
    assert_eq!(body["refresh_token"].is_string(), with_refresh, "{body}");
    body
}

// ---------------------------------------------------------------------------------------------
// Timing: what a host pays per request

/// A request as it arrives, before the server's HTTP parser assembles it: its target, its
/// `Authorization` header and its body, made untimed. The timed span assembles the
/// `http::Request` from them (as the parser does: the URI parsed, the header values checked
/// and kept, the body handed over), so every request is as fresh in the cache as one just
/// read, and a host's parsing costs the same beside both crates.
#[derive(Clone)]
struct Arrival {
    method: http::Method,
    target: String,
    authorization: Option<String>,
    body: String,
}

impl Arrival {
    /// The parts of a request built by `benches/common`'s builders.
    fn of(request: &Request<String>) -> Self {
        Self {
            method: request.method().clone(),
            target: request.uri().to_string(),
            authorization: request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned),
            body: request.body().clone(),
        }
    }

    /// A resource request carrying `Authorization: Bearer {token}`.
    fn bearer(token: &str) -> Self {
        Self {
            method: http::Method::GET,
            target: "/api/me".to_owned(),
            authorization: Some(format!("Bearer {token}")),
            body: String::new(),
        }
    }

    /// The `http::Request`, as the server's parser hands it to the handler.
    fn assemble(self) -> Request<String> {
        let mut builder = Request::builder().method(self.method).uri(self.target);
        if !self.body.is_empty() {
            builder = builder.header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            );
        }
        if let Some(authorization) = self.authorization {
            builder = builder.header(http::header::AUTHORIZATION, authorization);
        }
        builder.body(self.body).expect("a request")
    }
}

/// `iters` arrivals made one after another, going round `pool`.
fn arrivals_round<T>(pool: &[T], iters: u64, make: impl Fn(&T) -> Arrival) -> Vec<Arrival> {
    pool.iter().cycle().take(iters as usize).map(make).collect()
}

/// Writes an answer as an HTTP/1.1 server does into its (reused) write buffer: the status
/// line, the headers, `content-length`, the body.
fn write_answer(
    out: &mut Vec<u8>,
    status: http::StatusCode,
    headers: &http::HeaderMap,
    body: &str,
) {
    out.clear();
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"content-length: ");
    out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body.as_bytes());
}

/// Writes grantor's answer.
fn write_grantor(out: &mut Vec<u8>, response: &http::Response<String>) {
    write_answer(out, response.status(), response.headers(), response.body());
}

/// Writes oxide-auth's answer as its web frontends make it: an `http` response with the
/// headers the flow asked for (oxide-auth-axum's `OAuthResponse` keeps a `HeaderMap` and sets
/// `Location`, `WWW-Authenticate` and, for a JSON body, `Content-Type`), then written out.
fn write_oxide(out: &mut Vec<u8>, response: &OxResponse) {
    let mut headers = http::HeaderMap::new();
    if let Some(location) = &response.location {
        let value = http::HeaderValue::from_str(location.as_str()).expect("a header value");
        headers.insert(http::header::LOCATION, value);
    }
    if let Some(challenge) = &response.www_authenticate {
        let value = http::HeaderValue::from_str(challenge).expect("a header value");
        headers.insert(http::header::WWW_AUTHENTICATE, value);
    }
    if response.body.is_some() {
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
    }
    let status = http::StatusCode::from_u16(response.status).expect("a status");
    write_answer(
        out,
        status,
        &headers,
        response.body.as_deref().unwrap_or(""),
    );
}

/// Times `work` on each arrival in turn, inside one `block_on`: assembling the request, the
/// call, writing the answer into a reused buffer, and dropping the request and the answer, all
/// inside the span (the arrivals were made before it).
fn time_host<R>(
    rt: &tokio::runtime::Runtime,
    arrivals: Vec<Arrival>,
    mut work: impl AsyncFnMut(Request<String>, &mut Vec<u8>) -> R,
) -> Duration {
    let mut out = Vec::with_capacity(1024);
    rt.block_on(async {
        let start = Instant::now();
        for arrival in arrivals {
            std::hint::black_box(work(arrival.assemble(), &mut out).await);
        }
        start.elapsed()
    })
}

/// [`time_host`] for oxide-auth's synchronous calls.
fn time_host_sync<R>(
    arrivals: Vec<Arrival>,
    mut work: impl FnMut(Request<String>, &mut Vec<u8>) -> R,
) -> Duration {
    let mut out = Vec::with_capacity(1024);
    let start = Instant::now();
    for arrival in arrivals {
        std::hint::black_box(work(arrival.assemble(), &mut out));
    }
    start.elapsed()
}

/// How many distinct live tokens bearer validation goes round (as `flows` does).
fn token_pool() -> u64 {
    if measuring() { 16 * 1024 } else { 16 }
}

const GRANTOR: &str = "grantor";
const OXIDE: &str = "oxide_auth";
/// The least a token server can do (`floor/mod.rs`).
const FLOOR: &str = "floor";

// ---------------------------------------------------------------------------------------------
// The authorization endpoint

fn authorize(c: &mut Criterion) {
    let rt = runtime();
    type Grantor = fn(&Bench) -> Request<String>;
    type Ox = fn(&Oxide) -> Request<String>;
    let flows: [(&str, Grantor, Ox); 2] = [
        (
            "peer_authorize",
            Bench::authorize_code_request,
            Oxide::authorize_code_request,
        ),
        (
            "peer_authorize_pkce",
            Bench::authorize_pkce_request,
            Oxide::authorize_pkce_request,
        ),
    ];
    for (name, grantor_request, ox_request) in flows {
        let bench = Bench::new();
        code_of(&rt.block_on(bench.authorize_and_approve(&grantor_request(&bench))));
        let oxide = Oxide::new();
        ox_code_of(&oxide.authorize(&ox_request(&oxide)));

        let mut g = group(c, name);
        g.bench_function(GRANTOR, |b| {
            b.iter_custom(|iters| {
                let bench = Bench::new();
                let arrival = Arrival::of(&grantor_request(&bench));
                let arrivals = vec![arrival; iters as usize];
                let elapsed = time_host(&rt, arrivals, async |request, out| {
                    let response = bench.authorize_and_approve(&request).await;
                    assert_eq!(response.status(), 303);
                    write_grantor(out, &response);
                });
                assert_eq!(
                    bench.tokens.token_counts().2,
                    iters as usize,
                    "one code each"
                );
                elapsed
            })
        });
        g.bench_function(OXIDE, |b| {
            b.iter_custom(|iters| {
                let oxide = Oxide::new();
                let arrival = Arrival::of(&ox_request(&oxide));
                let arrivals = vec![arrival; iters as usize];
                time_host_sync(arrivals, |request, out| {
                    let response = oxide.authorize(&request);
                    assert_eq!(response.status, 302);
                    write_oxide(out, &response);
                })
            })
        });
        let requests = Oxide::new();
        let alice = floor_alice();
        floor_code_of(&floor_of(&requests).authorize(&ox_request(&requests), &alice));
        g.bench_function(FLOOR, |b| {
            b.iter_custom(|iters| {
                let least = floor_of(&requests);
                let arrival = Arrival::of(&ox_request(&requests));
                let arrivals = vec![arrival; iters as usize];
                time_host_sync(arrivals, |request, out| {
                    let response = least.authorize(&request, &alice);
                    assert_eq!(response.status(), 302);
                    write_grantor(out, &response);
                })
            })
        });
        g.finish();
    }
}

// ---------------------------------------------------------------------------------------------
// The token endpoint

/// Times grantor's token requests, one per arrival, that each mint one access token, and
/// checks they all did.
fn grantor_token_batch(
    rt: &tokio::runtime::Runtime,
    bench: &Bench,
    arrivals: Vec<Arrival>,
) -> Duration {
    let iters = arrivals.len();
    let (access, _, _) = bench.tokens.token_counts();
    let elapsed = time_host(rt, arrivals, async |request, out| {
        let response = bench.server.token(&request).await;
        assert_eq!(response.status(), 200);
        write_grantor(out, &response);
    });
    let (access_after, _, _) = bench.tokens.token_counts();
    assert_eq!(access_after, access + iters, "one token each");
    elapsed
}

/// Times oxide-auth's token requests, one per arrival, each answered 200.
fn ox_token_batch(oxide: &Oxide, arrivals: Vec<Arrival>) -> Duration {
    time_host_sync(arrivals, |request, out| {
        let response = oxide.token(&request);
        assert_eq!(response.status, 200);
        write_oxide(out, &response);
    })
}

/// Times oxide-auth's token requests that each spend a code or refresh token, then checks the
/// first one is spent (oxide-auth keeps no count to check).
fn ox_spending_batch(oxide: &Oxide, arrivals: Vec<Arrival>) -> Duration {
    let first = arrivals[0].clone().assemble();
    let elapsed = ox_token_batch(oxide, arrivals);
    ox_spent(oxide, &first);
    elapsed
}

/// After a batch: a code or refresh token it used is spent (oxide-auth keeps no count to check).
fn ox_spent(oxide: &Oxide, request: &Request<String>) {
    let again = oxide.token(request);
    assert_eq!(again.status, 400, "{again:?}");
    // oxide-auth names an unknown code `invalid_request`, an unknown refresh token
    // `invalid_grant`.
    let body = again.body.as_deref().unwrap_or("");
    assert!(body.contains(r#""error":"invalid_"#), "{body}");
}

/// A floor (`floor/mod.rs`) with `oxide`'s clients (the same ids and secret), so that it
/// answers `oxide`'s requests.
fn floor_of(oxide: &Oxide) -> Floor {
    Floor::new(
        (&oxide.conf_id, &oxide.conf_secret),
        PUBLIC_ID,
        REDIRECT,
        "profile",
    )
}

/// Checks the floor's approval redirect (to the registered URI, with a code and the state)
/// and returns the code.
fn floor_code_of(response: &http::Response<String>) -> String {
    assert_eq!(response.status(), 302, "{response:?}");
    let location = response.headers()["location"].to_str().expect("ASCII");
    let location = Url::parse(location).expect("a URL");
    assert!(location.as_str().starts_with(REDIRECT), "{location}");
    let params: Vec<(String, String)> = location.query_pairs().into_owned().collect();
    assert_eq!(params[1], ("state".to_owned(), "xyz".to_owned()));
    assert_eq!(params[0].0, "code");
    assert_eq!(params[0].1.len(), 43, "256 bits in base64url");
    params[0].1.clone()
}

/// Checks a floor's token answer (RFC 6749 §5.1) and returns its JSON.
fn floor_check_token_json(
    response: &http::Response<String>,
    with_refresh: bool,
) -> serde_json::Value {
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: serde_json::Value = serde_json::from_str(response.body()).expect("JSON");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["access_token"].as_str().map(str::len), Some(43));
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "profile");
    assert_eq!(body["refresh_token"].is_string(), with_refresh, "{body}");
    body
}

/// The owner the floor's grants carry for Alice.
fn floor_alice() -> Arc<str> {
    Arc::from(OX_OWNER)
}

/// A code from the floor, for `oxide`'s confidential client or (`pkce`) its public client.
fn floor_code(least: &Floor, oxide: &Oxide, pkce: bool) -> String {
    let request = if pkce {
        oxide.authorize_pkce_request()
    } else {
        oxide.authorize_code_request()
    };
    floor_code_of(&least.authorize(&request, &floor_alice()))
}

/// Tokens from the floor's whole code flow, for the confidential or (`public`) public client.
fn floor_tokens(least: &Floor, oxide: &Oxide, public: bool) -> serde_json::Value {
    let code = floor_code(least, oxide, public);
    let request = if public {
        oxide.exchange_public_request(&code)
    } else {
        oxide.exchange_confidential_request(&code)
    };
    floor_check_token_json(&least.token(&request), true)
}

/// Times the floor's token requests, one per arrival, each minting one access token; checks
/// they all did and, for a spending flow, that the first code or refresh token is spent.
fn floor_token_batch(least: &Floor, arrivals: Vec<Arrival>, spending: bool) -> Duration {
    let iters = arrivals.len();
    let first = arrivals[0].clone().assemble();
    let access = least.live_tokens();
    let elapsed = time_host_sync(arrivals, |request, out| {
        let response = least.token(&request);
        assert_eq!(response.status(), 200);
        write_grantor(out, &response);
    });
    assert_eq!(least.live_tokens(), access + iters, "one token each");
    if spending {
        assert_eq!(least.token(&first).status(), 400, "spent");
    }
    elapsed
}

/// Times the floor's code exchanges, for the confidential or (`public`) the public client, on
/// a fresh floor with `iters` codes made beforehand.
fn floor_exchange_batch(requests: &Oxide, iters: u64, public: bool) -> Duration {
    let least = floor_of(requests);
    let codes: Vec<String> = (0..iters)
        .map(|_| floor_code(&least, requests, public))
        .collect();
    let arrivals = arrivals_round(&codes, iters, |code| {
        Arrival::of(&if public {
            requests.exchange_public_request(code)
        } else {
            requests.exchange_confidential_request(code)
        })
    });
    floor_token_batch(&least, arrivals, true)
}

fn exchange(c: &mut Criterion) {
    let rt = runtime();

    let bench = Bench::new();
    let code = rt.block_on(bench.code());
    check_token_json(
        &rt.block_on(
            bench
                .server
                .token(&bench.exchange_confidential_request(&code)),
        ),
        true,
    );
    let oxide = Oxide::new();
    let code = oxide.code();
    ox_check_token_json(
        &oxide.token(&oxide.exchange_confidential_request(&code)),
        true,
    );
    ox_spent(&oxide, &oxide.exchange_confidential_request(&code));
    let mut g = group(c, "peer_exchange_confidential");
    g.bench_function(GRANTOR, |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let codes = prepare(&rt, iters, async || bench.code().await);
            let arrivals = arrivals_round(&codes, iters, |c| {
                Arrival::of(&bench.exchange_confidential_request(c))
            });
            grantor_token_batch(&rt, &bench, arrivals)
        })
    });
    g.bench_function(OXIDE, |b| {
        b.iter_custom(|iters| {
            let oxide = Oxide::new();
            let codes: Vec<String> = (0..iters).map(|_| oxide.code()).collect();
            let arrivals = arrivals_round(&codes, iters, |c| {
                Arrival::of(&oxide.exchange_confidential_request(c))
            });
            ox_spending_batch(&oxide, arrivals)
        })
    });
    let requests = Oxide::new();
    floor_tokens(&floor_of(&requests), &requests, false);
    g.bench_function(FLOOR, |b| {
        b.iter_custom(|iters| floor_exchange_batch(&requests, iters, false))
    });
    g.finish();

    let bench = Bench::new();
    let code = rt.block_on(bench.pkce_code());
    check_token_json(
        &rt.block_on(bench.server.token(&bench.exchange_public_request(&code))),
        true,
    );
    let oxide = Oxide::new();
    let code = oxide.pkce_code();
    ox_check_token_json(&oxide.token(&oxide.exchange_public_request(&code)), true);
    // The verifier is checked: a wrong one is refused.
    let code = oxide.pkce_code();
    let wrong = oxide.exchange_public_request(&code);
    let wrong = token_request(
        None,
        wrong.body().replace(VERIFIER, &VERIFIER.to_lowercase()),
    );
    assert_eq!(oxide.token(&wrong).status, 400, "a wrong code_verifier");
    let mut g = group(c, "peer_exchange_public_pkce");
    g.bench_function(GRANTOR, |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let codes = prepare(&rt, iters, async || bench.pkce_code().await);
            let arrivals = arrivals_round(&codes, iters, |c| {
                Arrival::of(&bench.exchange_public_request(c))
            });
            grantor_token_batch(&rt, &bench, arrivals)
        })
    });
    g.bench_function(OXIDE, |b| {
        b.iter_custom(|iters| {
            let oxide = Oxide::new();
            let codes: Vec<String> = (0..iters).map(|_| oxide.pkce_code()).collect();
            let arrivals = arrivals_round(&codes, iters, |c| {
                Arrival::of(&oxide.exchange_public_request(c))
            });
            ox_spending_batch(&oxide, arrivals)
        })
    });
    let requests = Oxide::new();
    let least = floor_of(&requests);
    floor_tokens(&least, &requests, true);
    let code = floor_code(&least, &requests, true);
    let wrong = requests.exchange_public_request(&code);
    let wrong = token_request(
        None,
        wrong.body().replace(VERIFIER, &VERIFIER.to_lowercase()),
    );
    assert_eq!(least.token(&wrong).status(), 400, "a wrong code_verifier");
    g.bench_function(FLOOR, |b| {
        b.iter_custom(|iters| floor_exchange_batch(&requests, iters, true))
    });
    g.finish();
}

fn refresh(c: &mut Criterion) {
    let rt = runtime();
    for (name, public) in [
        ("peer_refresh_confidential", false),
        ("peer_refresh_public", true),
    ] {
        // Refresh tokens from the whole code flow of the confidential or the public client.
        let grantor_tokens = async |bench: &Bench| {
            if public {
                bench.public_tokens().await
            } else {
                bench.confidential_tokens().await
            }
        };
        let grantor_request = |bench: &Bench, token: &str| {
            if public {
                bench.refresh_public_request(token)
            } else {
                bench.refresh_confidential_request(token)
            }
        };
        let ox_tokens = |oxide: &Oxide| {
            if public {
                oxide.public_tokens()
            } else {
                oxide.confidential_tokens()
            }
        };
        let ox_request = |oxide: &Oxide, token: &str| {
            if public {
                oxide.refresh_public_request(token)
            } else {
                oxide.refresh_confidential_request(token)
            }
        };

        let bench = Bench::new();
        let tokens = rt.block_on(grantor_tokens(&bench));
        let request = grantor_request(&bench, &refresh_token(&tokens));
        let rotated = check_token_json(&rt.block_on(bench.server.token(&request)), true);
        assert_ne!(refresh_token(&rotated), refresh_token(&tokens), "rotation");

        let oxide = Oxide::new();
        let tokens = ox_tokens(&oxide);
        let request = ox_request(&oxide, &refresh_token(&tokens));
        let rotated = ox_check_token_json(&oxide.token(&request), true);
        assert_ne!(refresh_token(&rotated), refresh_token(&tokens), "rotation");
        // oxide-auth forgets the rotated token: it is refused, but detects no reuse.
        ox_spent(&oxide, &request);

        let mut g = group(c, name);
        g.bench_function(GRANTOR, |b| {
            b.iter_custom(|iters| {
                let bench = Bench::new();
                let tokens = prepare(&rt, iters, async || {
                    refresh_token(&grantor_tokens(&bench).await)
                });
                let arrivals =
                    arrivals_round(&tokens, iters, |t| Arrival::of(&grantor_request(&bench, t)));
                grantor_token_batch(&rt, &bench, arrivals)
            })
        });
        g.bench_function(OXIDE, |b| {
            b.iter_custom(|iters| {
                let oxide = Oxide::new();
                let tokens: Vec<String> = (0..iters)
                    .map(|_| refresh_token(&ox_tokens(&oxide)))
                    .collect();
                let arrivals =
                    arrivals_round(&tokens, iters, |t| Arrival::of(&ox_request(&oxide, t)));
                ox_spending_batch(&oxide, arrivals)
            })
        });
        let requests = Oxide::new();
        let least = floor_of(&requests);
        let tokens = floor_tokens(&least, &requests, public);
        let request = ox_request(&requests, &refresh_token(&tokens));
        let rotated = floor_check_token_json(&least.token(&request), true);
        assert_ne!(refresh_token(&rotated), refresh_token(&tokens), "rotation");
        assert_eq!(least.token(&request).status(), 400, "spent");
        g.bench_function(FLOOR, |b| {
            b.iter_custom(|iters| {
                let least = floor_of(&requests);
                let tokens: Vec<String> = (0..iters)
                    .map(|_| refresh_token(&floor_tokens(&least, &requests, public)))
                    .collect();
                let arrivals =
                    arrivals_round(&tokens, iters, |t| Arrival::of(&ox_request(&requests, t)));
                floor_token_batch(&least, arrivals, true)
            })
        });
        g.finish();
    }
}

fn client_credentials(c: &mut Criterion) {
    let rt = runtime();
    let bench = Bench::new();
    let request = bench.client_credentials_request(&bench.conf_basic);
    check_token_json(&rt.block_on(bench.server.token(&request)), false);
    let oxide = Oxide::new();
    ox_check_token_json(&oxide.token(&oxide.client_credentials_request()), false);
    let wrong = token_request(
        Some(&basic(&oxide.conf_id, "not-the-secret")),
        "grant_type=client_credentials&scope=profile".to_owned(),
    );
    assert_eq!(oxide.token(&wrong).status, 401, "a wrong secret");
    let least = floor_of(&oxide);
    floor_check_token_json(&least.token(&oxide.client_credentials_request()), false);
    assert_eq!(least.token(&wrong).status(), 401, "a wrong secret");

    let mut g = group(c, "peer_client_credentials");
    g.bench_function(GRANTOR, |b| {
        b.iter_custom(|iters| {
            let bench = Bench::new();
            let arrival = Arrival::of(&bench.client_credentials_request(&bench.conf_basic));
            grantor_token_batch(&rt, &bench, vec![arrival; iters as usize])
        })
    });
    g.bench_function(OXIDE, |b| {
        b.iter_custom(|iters| {
            let oxide = Oxide::new();
            let arrival = Arrival::of(&oxide.client_credentials_request());
            ox_token_batch(&oxide, vec![arrival; iters as usize])
        })
    });
    g.bench_function(FLOOR, |b| {
        b.iter_custom(|iters| {
            let least = floor_of(&oxide);
            let arrival = Arrival::of(&oxide.client_credentials_request());
            floor_token_batch(&least, vec![arrival; iters as usize], false)
        })
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// Resource servers

fn bearer(c: &mut Criterion) {
    let rt = runtime();
    let required = GrantorScope::parse("profile").expect("scope");

    let bench = Bench::new();
    let good: Vec<String> = prepare(&rt, token_pool(), async || {
        access_token(&bench.confidential_tokens().await)
    });
    let grant = rt
        .block_on(
            bench
                .server
                .bearer(&bearer_request(&good[0]), Some(&required)),
        )
        .expect("a valid token");
    assert_eq!(grant.authorization.client_id.as_str(), bench.conf_id);
    assert_eq!(grant.authorization.user.as_ref(), Some(&bench.alice));
    assert_eq!(grant.authorization.scope, required);

    let oxide = Oxide::new();
    let ox_good: Vec<String> = (0..token_pool())
        .map(|_| access_token(&oxide.confidential_tokens()))
        .collect();
    let grant = oxide
        .bearer(&bearer_request(&ox_good[0]))
        .expect("a valid token");
    assert_eq!(grant.client_id, oxide.conf_id);
    assert_eq!(grant.owner_id, OX_OWNER);
    assert_eq!(grant.scope.to_string(), "profile");

    let least = floor_of(&oxide);
    let floor_good: Vec<String> = (0..token_pool())
        .map(|_| access_token(&floor_tokens(&least, &oxide, false)))
        .collect();
    let grant = least
        .bearer(&bearer_request(&floor_good[0]), "profile")
        .expect("a valid token");
    assert_eq!(&*grant.client_id, oxide.conf_id);
    assert_eq!(&*grant.owner, OX_OWNER);
    assert_eq!(&*grant.scope, "profile");

    // A valid token: the host goes on to serve the resource with the grant, which it drops
    // once done (inside the span). Requests carry `()` bodies in a host too; here the empty
    // `String` of `Arrival`, which allocates nothing.
    let mut g = group(c, "peer_bearer_valid");
    g.bench_function(GRANTOR, |b| {
        b.iter_custom(|iters| {
            let arrivals = arrivals_round(&good, iters, |t| Arrival::bearer(t));
            time_host(&rt, arrivals, async |request, _| {
                let grant = bench.server.bearer(&request, Some(&required)).await;
                assert!(grant.is_ok());
                grant.is_ok()
            })
        })
    });
    g.bench_function(OXIDE, |b| {
        b.iter_custom(|iters| {
            let arrivals = arrivals_round(&ox_good, iters, |t| Arrival::bearer(t));
            time_host_sync(arrivals, |request, _| {
                let grant = oxide.bearer(&request);
                assert!(grant.is_ok());
                grant.is_ok()
            })
        })
    });
    g.bench_function(FLOOR, |b| {
        b.iter_custom(|iters| {
            let arrivals = arrivals_round(&floor_good, iters, |t| Arrival::bearer(t));
            time_host_sync(arrivals, |request, _| {
                let grant = least.bearer(&request, "profile");
                assert!(grant.is_ok());
                grant.is_ok()
            })
        })
    });
    g.finish();

    // Unknown tokens, each crate's own shape: 32 bytes base64url, 16 bytes padded base64.
    let unknown = |engine: &dyn Fn(&[u8]) -> String, len: usize| -> Vec<String> {
        (0..token_pool())
            .map(|_| {
                let mut bytes = vec![0u8; len];
                rand::rng().fill_bytes(&mut bytes);
                engine(&bytes)
            })
            .collect()
    };
    let grantor_unknown = unknown(&|b| URL_SAFE_NO_PAD.encode(b), 32);
    let refusal = rt
        .block_on(
            bench
                .server
                .bearer(&bearer_request(&grantor_unknown[0]), Some(&required)),
        )
        .expect_err("an unknown token");
    assert_eq!(refusal.status(), 401);
    let challenge = refusal.headers()["www-authenticate"]
        .to_str()
        .expect("ASCII");
    assert!(challenge.starts_with("Bearer realm="), "{challenge}");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");

    let ox_unknown = unknown(&|b| STANDARD.encode(b), 16);
    let refusal = oxide
        .bearer(&bearer_request(&ox_unknown[0]))
        .expect_err("an unknown token");
    assert_eq!(refusal.status, 401);
    let challenge = refusal.www_authenticate.as_deref().expect("a challenge");
    // oxide-auth names an unknown token `invalid_request` (RFC 6750 would say invalid_token).
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains("error=\""), "{challenge}");
    let refusal = least
        .bearer(&bearer_request(&grantor_unknown[0]), "profile")
        .expect_err("an unknown token");
    assert_eq!(refusal.status(), 401);
    assert_eq!(
        refusal.headers()["www-authenticate"],
        r#"Bearer error="invalid_token""#
    );

    // A refusal: the host sends its 401.
    let mut g = group(c, "peer_bearer_reject");
    g.bench_function(GRANTOR, |b| {
        b.iter_custom(|iters| {
            let arrivals = arrivals_round(&grantor_unknown, iters, |t| Arrival::bearer(t));
            time_host(&rt, arrivals, async |request, out| {
                let refusal = bench.server.bearer(&request, Some(&required)).await;
                let refusal = refusal.expect_err("an unknown token");
                assert_eq!(refusal.status(), 401);
                write_answer(out, refusal.status(), refusal.headers(), refusal.body());
            })
        })
    });
    g.bench_function(OXIDE, |b| {
        b.iter_custom(|iters| {
            let arrivals = arrivals_round(&ox_unknown, iters, |t| Arrival::bearer(t));
            time_host_sync(arrivals, |request, out| {
                let refusal = oxide.bearer(&request).expect_err("an unknown token");
                assert_eq!(refusal.status, 401);
                write_oxide(out, &refusal);
            })
        })
    });
    g.bench_function(FLOOR, |b| {
        b.iter_custom(|iters| {
            let arrivals = arrivals_round(&grantor_unknown, iters, |t| Arrival::bearer(t));
            time_host_sync(arrivals, |request, out| {
                let refusal = least
                    .bearer(&request, "profile")
                    .expect_err("an unknown token");
                assert_eq!(refusal.status(), 401);
                write_grantor(out, &refusal);
            })
        })
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// The summary table

const GROUPS: &[&str] = &[
    "peer_authorize",
    "peer_authorize_pkce",
    "peer_exchange_confidential",
    "peer_exchange_public_pkce",
    "peer_refresh_confidential",
    "peer_refresh_public",
    "peer_client_credentials",
    "peer_bearer_valid",
    "peer_bearer_reject",
];

fn summary(since: SystemTime) {
    let mut lines = Vec::new();
    for group in GROUPS {
        let grantor = median_ns(group, GRANTOR, since);
        let oxide = median_ns(group, OXIDE, since);
        let floor = median_ns(group, FLOOR, since);
        if grantor.is_none() && oxide.is_none() {
            continue;
        }
        let text = |m: Option<f64>| m.map_or("-".to_owned(), format_ns);
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}x", a / b),
            _ => "-".to_owned(),
        };
        lines.push(format!(
            "| {group} | {} | {} | {} | {} | {} | {} |",
            text(grantor),
            text(oxide),
            ratio(oxide, grantor),
            text(floor),
            ratio(oxide, floor),
            ratio(grantor, floor),
        ));
    }
    if lines.is_empty() {
        return;
    }
    println!("\nMedians of this run (oxide-auth / grantor > 1 means grantor is faster):\n");
    println!(
        "| group | grantor | oxide-auth | oxide-auth / grantor | floor | oxide-auth / floor | grantor / floor |"
    );
    println!("|---|---|---|---|---|---|---|");
    for line in lines {
        println!("{line}");
    }
    println!(
        "\noxide-auth / floor is the most any crate could be faster than oxide-auth on that flow \
         here: the floor (benches/floor/mod.rs) does the least a token server can do."
    );
}

fn main() {
    let started = SystemTime::now();
    let mut criterion = Criterion::default().configure_from_args();
    authorize(&mut criterion);
    exchange(&mut criterion);
    refresh(&mut criterion);
    client_credentials(&mut criterion);
    bearer(&mut criterion);
    criterion.final_summary();
    if measuring() {
        summary(started);
    }
}
