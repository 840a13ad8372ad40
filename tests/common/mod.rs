//! The fixture every integration test shares: a server with the demo deployment's clients and
//! users over the in-memory stores, a manual clock, and request/response helpers.
#![allow(dead_code)]

pub mod browser;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use grantor::store::{AccessToken, TokenIssuer as _, UserAdmin as _};
use grantor::*;
use grantor::{client::*, clock::*, store::*};
use http::{Request, Response};

pub const ISSUER: &str = "http://127.0.0.1:8080";
pub const REDIRECT: &str = "http://127.0.0.1:8081/callback";
pub const REDIRECT_ENCODED: &str = "http%3A%2F%2F127.0.0.1%3A8081%2Fcallback";
pub const OTHER_REDIRECT: &str = "http://localhost:8081/callback";
pub const START: u64 = 1_800_000_000;

/// RFC 7636 Appendix B.
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

pub const ALICE: &str = "alice@example.com";
pub const ALICE_PASSWORD: &str = "alice-password-1";
pub const BOB: &str = "bob@example.com";
pub const BOB_PASSWORD: &str = "bob-password-2";

/// A server and handles on its parts.
pub struct Fixture {
    pub server: AuthorizationServer,
    pub clock: ManualClock,
    /// Every seam of the server.
    pub store: MemoryStore,
    pub alice: User,
    pub bob: User,
    /// A client with generated credentials: digest verifier, every grant, approval not required.
    pub fast_id: String,
    pub fast_secret: String,
}

struct Seed {
    alice: User,
    bob: User,
    /// Alice's and Bob's Argon2id hashes.
    alice_hash: String,
    bob_hash: String,
    demo_verifier: SecretVerifier,
    plain_verifier: SecretVerifier,
}

/// Argon2id hashing is slow on purpose; hash the seed once per test binary.
fn seed() -> &'static Seed {
    static SEED: OnceLock<Seed> = OnceLock::new();
    SEED.get_or_init(|| Seed {
        alice: User::new(UserId::new("alice-id"), ALICE),
        bob: User::new(UserId::new("bob-id"), BOB),
        alice_hash: grantor::hash::hash_password(ALICE_PASSWORD).unwrap(),
        bob_hash: grantor::hash::hash_password(BOB_PASSWORD).unwrap(),
        demo_verifier: SecretVerifier::argon2id(&ClientSecret::new("demo-secret")).unwrap(),
        plain_verifier: SecretVerifier::argon2id(&ClientSecret::new("plain-secret")).unwrap(),
    })
}

pub fn fixture() -> Fixture {
    fixture_with(|b| b)
}

/// A fixture whose server builder `configure` may change.
pub fn fixture_with(
    configure: impl FnOnce(AuthorizationServerBuilder) -> AuthorizationServerBuilder,
) -> Fixture {
    let seed = seed();
    let store = MemoryStore::new();
    let clients = &store;
    let all = [
        GrantType::AuthorizationCode,
        GrantType::Implicit,
        GrantType::Password,
        GrantType::RefreshToken,
        GrantType::ClientCredentials,
    ];
    let with_redirects = |b: ClientBuilder| b.redirect_uri(REDIRECT).redirect_uri(OTHER_REDIRECT);
    register(
        clients,
        with_redirects(Client::confidential(
            "demo-client",
            seed.demo_verifier.clone(),
        ))
        .name("Demo Client")
        .grant_types(all)
        .scopes("profile email")
        .approval(Approval::Required)
        .build()
        .unwrap(),
    );
    register(
        clients,
        with_redirects(Client::confidential(
            "plain-client",
            seed.plain_verifier.clone(),
        ))
        .grant_types([GrantType::AuthorizationCode, GrantType::Password])
        .scopes("profile email")
        .approval(Approval::NotRequired)
        .build()
        .unwrap(),
    );
    register(
        clients,
        with_redirects(Client::public("public-client"))
            .grant_types([GrantType::AuthorizationCode])
            .scopes("profile email")
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
    );
    let creds = ClientCredentials::generate().unwrap();
    register(
        clients,
        with_redirects(Client::confidential(
            creds.client_id.as_str(),
            creds.verifier,
        ))
        .grant_types(all)
        .scopes("profile email")
        .default_scope("profile")
        .approval(Approval::NotRequired)
        .build()
        .unwrap(),
    );
    at_once(store.insert_user(&seed.alice, &seed.alice_hash)).unwrap();
    at_once(store.insert_user(&seed.bob, &seed.bob_hash)).unwrap();
    let clock = ManualClock::new(UnixTime::from_secs(START));
    let builder = AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(store.clone())
        .clock(Arc::new(clock.clone()));
    Fixture {
        server: configure(builder).build().unwrap(),
        clock,
        store,
        alice: seed.alice.clone(),
        bob: seed.bob.clone(),
        fast_id: creds.client_id.to_string(),
        fast_secret: creds.secret.expose_secret().to_owned(),
    }
}

/// One multi-threaded runtime per test binary, for property tests that drive async calls
/// from synchronous cases.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// The answer of a future that is ready at once, as every call into the memory store is.
pub fn at_once<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("the memory store answers at once"),
    }
}

/// Registers `client` in `store`, replacing a client with the same id.
pub fn register(store: &MemoryStore, client: Client) {
    if !at_once(store.replace_client(&client)).unwrap() {
        at_once(store.register_client(&client)).unwrap();
    }
}

impl Fixture {
    /// Registers `client`, replacing a client with the same id.
    pub fn register(&self, client: Client) {
        register(&self.store, client);
    }

    /// Removes a client; answers whether there was one.
    pub fn remove_client(&self, client_id: &str) -> bool {
        at_once(self.store.remove_client(client_id)).unwrap()
    }
}

/// `Basic base64(id:secret)` (both are form-urlencoding-safe in this fixture).
pub fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
}

/// A form POST to the token endpoint with optional `Authorization`.
pub fn token_request(authorization: Option<&str>, body: &str) -> Request<String> {
    let mut builder = Request::post("/api/oauth/token")
        .header("content-type", "application/x-www-form-urlencoded");
    if let Some(authorization) = authorization {
        builder = builder.header("authorization", authorization);
    }
    builder.body(body.to_owned()).unwrap()
}

/// `GET /api/oauth/authorize?{query}`.
pub fn authorize_request(query: &str) -> Request<Vec<u8>> {
    Request::get(format!("/api/oauth/authorize?{query}"))
        .body(Vec::new())
        .unwrap()
}

/// The JSON body of a response.
pub fn json(response: &Response<String>) -> serde_json::Value {
    serde_json::from_str(response.body()).expect("a JSON body")
}

/// A redirect's target without query and fragment, its query and its fragment parameters.
pub struct Redirect {
    pub base: String,
    pub query: HashMap<String, String>,
    pub fragment: HashMap<String, String>,
}

/// What a redirect answer is read from: a response, or an authorization error's redirect.
pub trait Answer: std::fmt::Debug {
    fn status(&self) -> http::StatusCode;
    fn headers(&self) -> &http::HeaderMap;
}

impl Answer for Response<String> {
    fn status(&self) -> http::StatusCode {
        Response::status(self)
    }
    fn headers(&self) -> &http::HeaderMap {
        Response::headers(self)
    }
}

impl Answer for ErrorRedirect {
    fn status(&self) -> http::StatusCode {
        ErrorRedirect::status(self)
    }
    fn headers(&self) -> &http::HeaderMap {
        ErrorRedirect::headers(self)
    }
}

pub fn redirect(response: &impl Answer) -> Redirect {
    assert_eq!(response.status(), 303, "expected a redirect: {response:?}");
    let location = response.headers()["location"].to_str().unwrap();
    let url = url::Url::parse(location).unwrap();
    let query = url.query_pairs().into_owned().collect();
    let fragment = url
        .fragment()
        .map(|f| {
            url::form_urlencoded::parse(f.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let mut base = url.clone();
    base.set_query(None);
    base.set_fragment(None);
    Redirect {
        base: base.to_string(),
        query,
        fragment,
    }
}

impl Fixture {
    /// Runs the authorization endpoint; panics unless it asks for sign-in.
    pub async fn pending(&self, query: &str) -> PendingAuthorization {
        match self.server.authorize(&authorize_request(query)).await {
            Authorize::SignIn(pending) => pending,
            other => panic!("expected SignIn, got {other:?}"),
        }
    }

    /// A code for `client_id` approved by Alice, with `extra` query parameters (PKCE, scope…).
    pub async fn code(&self, client_id: &str, extra: &str) -> String {
        let query = format!(
            "response_type=code&client_id={client_id}&redirect_uri={REDIRECT_ENCODED}{extra}"
        );
        let pending = self.pending(&query).await;
        let response = self
            .server
            .decide(pending, self.alice.id(), Decision::Approve)
            .await;
        redirect(&response).query["code"].clone()
    }

    /// POSTs `body` to the token endpoint.
    pub async fn token(&self, authorization: Option<&str>, body: &str) -> Response<String> {
        self.server.token(&token_request(authorization, body)).await
    }

    /// Whether the issuer still honours `access_token`.
    pub async fn access_is_active(&self, access_token: &str) -> bool {
        self.store
            .find_access_token(&AccessToken::new(access_token).digest(), self.clock.now())
            .await
            .unwrap()
            .is_some()
    }

    pub fn demo_basic(&self) -> String {
        basic("demo-client", "demo-secret")
    }

    pub fn fast_basic(&self) -> String {
        basic(&self.fast_id, &self.fast_secret)
    }
}

/// Asserts an RFC 6749 §5.2 error response.
pub fn assert_error(response: &Response<String>, status: u16, code: &str) {
    assert_eq!(response.status(), status, "{response:?}");
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body = json(response);
    assert_eq!(body["error"], code, "{body}");
    let description = body["error_description"].as_str().expect("a description");
    assert!(
        description
            .bytes()
            .all(|b| matches!(b, 0x20..=0x21 | 0x23..=0x5b | 0x5d..=0x7e)),
        "{description}"
    );
    if code == "invalid_client" {
        assert_eq!(
            response.headers()["www-authenticate"],
            format!("Basic realm=\"{ISSUER}\"")
        );
    }
}

/// A form POST to `path` with optional `Authorization`.
pub fn post(path: &str, authorization: Option<&str>, body: &str) -> Request<String> {
    let mut builder =
        Request::post(path).header("content-type", "application/x-www-form-urlencoded");
    if let Some(authorization) = authorization {
        builder = builder.header("authorization", authorization);
    }
    builder.body(body.to_owned()).unwrap()
}

impl Fixture {
    /// Tokens from the code flow for the generated (digest-verified) client: access and refresh.
    pub async fn fast_tokens(&self) -> serde_json::Value {
        let code = self.code(&self.fast_id.clone(), "").await;
        let body =
            format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
        let response = self.token(Some(&self.fast_basic()), &body).await;
        assert_eq!(response.status(), 200, "{}", response.body());
        json(&response)
    }

    /// POSTs `body` to the revocation endpoint.
    pub async fn revoke(&self, authorization: Option<&str>, body: &str) -> Response<String> {
        let request = post("/api/oauth/revoke", authorization, body);
        self.server.revoke(&request).await
    }

    /// POSTs `body` to the introspection endpoint.
    pub async fn introspect(&self, authorization: Option<&str>, body: &str) -> Response<String> {
        let request = post("/api/oauth/introspect", authorization, body);
        self.server.introspect(&request).await
    }

    /// Bearer validation of a request carrying `authorization`.
    pub async fn bearer(
        &self,
        authorization: Option<&str>,
        scope: Option<&str>,
    ) -> Result<AccessGrant, Response<String>> {
        let mut builder = Request::get("/api/me");
        if let Some(authorization) = authorization {
            builder = builder.header("authorization", authorization);
        }
        let request = builder.body(()).unwrap();
        let scope = scope.map(|s| Scope::parse(s).unwrap());
        let checked = self.server.bearer(&request, scope.as_ref()).await;
        checked.map_err(BearerRefusal::into_response)
    }

    /// Refreshes with the generated client.
    pub async fn refresh(&self, refresh_token: &str) -> Response<String> {
        let body = format!("grant_type=refresh_token&refresh_token={refresh_token}");
        self.token(Some(&self.fast_basic()), &body).await
    }
}

/// Asserts a successful token response (RFC 6749 §5.1, with the spec's `jti`): 200, JSON, never
/// cached, a bearer token with its `jti` and integer `expires_in`. Answers the body.
pub fn assert_tokens(response: &Response<String>) -> serde_json::Value {
    assert_eq!(response.status(), 200, "{response:?}");
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["pragma"], "no-cache");
    let body = json(response);
    assert_eq!(body["token_type"], "bearer", "{body}");
    assert!(body["access_token"].is_string(), "{body}");
    assert!(
        body["jti"].is_string() && body["jti"] != body["access_token"],
        "{body}"
    );
    assert!(body["expires_in"].is_u64(), "{body}");
    assert!(body["scope"].is_string(), "{body}");
    body
}

/// Asserts the response's scope is the set `expected` (order is not significant, RFC 6749 §3.3).
pub fn assert_scope(body: &serde_json::Value, expected: &str) {
    let scope = body["scope"].as_str().expect("a scope");
    let actual: std::collections::BTreeSet<&str> =
        scope.split(' ').filter(|s| !s.is_empty()).collect();
    let expected: std::collections::BTreeSet<&str> =
        expected.split(' ').filter(|s| !s.is_empty()).collect();
    assert_eq!(actual, expected, "{body}");
}

/// Sends `count` copies of a token request at once from separate tasks; answers every response.
pub async fn race_token(
    server: &AuthorizationServer,
    authorization: &str,
    body: &str,
    count: usize,
) -> Vec<Response<String>> {
    let barrier = Arc::new(tokio::sync::Barrier::new(count));
    let tasks: Vec<_> = (0..count)
        .map(|_| {
            let (server, barrier) = (server.clone(), barrier.clone());
            let request = token_request(Some(authorization), body);
            tokio::spawn(async move {
                barrier.wait().await;
                server.token(&request).await
            })
        })
        .collect();
    let mut responses = Vec::with_capacity(count);
    for task in tasks {
        responses.push(task.await.expect("the task ran"));
    }
    responses
}

/// A fresh directory of one test's own under the temporary directory (for database files).
pub fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "grantor_{name}_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An events seam that keeps every event, for a test to read.
#[derive(Default)]
pub struct KeptEvents(std::sync::Mutex<Vec<grantor::events::Event>>);

impl grantor::events::Events for KeptEvents {
    fn record(&self, event: &grantor::events::Event) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl KeptEvents {
    /// The events kept since the last call.
    pub fn take(&self) -> Vec<grantor::events::Event> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// The events kept so far, left kept.
    pub fn all(&self) -> Vec<grantor::events::Event> {
        self.0.lock().unwrap().clone()
    }
}
