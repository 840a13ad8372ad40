//! The fixture the benchmarks share: a server over the in-memory stores with one client of each
//! kind (its builder open to more settings), request builders, checks of the first answer of
//! every flow, the timing loops, and criterion's medians read back for the summary tables.
//!
//! Everything a timed iteration consumes (codes, refresh tokens, access tokens to revoke) is
//! made beforehand, untimed, through grantor's own endpoints.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use grantor::store::UserAdmin as _;
use grantor::*;
use grantor::{client::*, settings::*, store::*};
use http::{Request, Response};
use tokio::runtime::Runtime;

pub const ISSUER: &str = "https://auth.example";
pub const REDIRECT: &str = "https://app.example/cb";
pub const REDIRECT_ENCODED: &str = "https%3A%2F%2Fapp.example%2Fcb";
pub const PUBLIC_ID: &str = "public-client";
pub const LEGACY_ID: &str = "legacy-client";
/// A low-entropy secret a person chose: registered with an Argon2id verifier.
pub const LEGACY_SECRET: &str = "legacy-secret-1";
pub const ALICE: &str = "alice@example.com";
pub const ALICE_ENCODED: &str = "alice%40example.com";
pub const ALICE_PASSWORD: &str = "alice-password-1";
/// RFC 7636 Appendix B.
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/// A tokio current-thread runtime, as a host's request task would run on.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime")
}

/// The answer of a future that is ready at once, as the memory store's admin calls are.
fn at_once<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("the memory store answers at once"),
    }
}

fn register(store: &MemoryStore, client: Client) {
    at_once(store.register_client(&client)).expect("a new client");
}

/// What is slow to make (Argon2id hashes), made once per process.
struct Seed {
    alice: User,
    alice_hash: String,
    legacy_verifier: SecretVerifier,
}

fn seed() -> &'static Seed {
    static SEED: OnceLock<Seed> = OnceLock::new();
    SEED.get_or_init(|| {
        let alice_hash = grantor::hash::hash_password(ALICE_PASSWORD).expect("a hash");
        let legacy_verifier =
            SecretVerifier::argon2id(&ClientSecret::new(LEGACY_SECRET)).expect("an Argon2id hash");
        Seed {
            alice: User::new(UserId::new("alice"), ALICE),
            alice_hash,
            legacy_verifier,
        }
    })
}

/// A server over fresh in-memory stores (the users and the Argon2id verifier are shared).
///
/// Clients: a confidential client with generated credentials (digest verifier, every grant), a
/// public client (code with PKCE, refresh), and a confidential client with a chosen secret
/// (Argon2id verifier, client credentials). No client needs an approval page.
pub struct Bench {
    pub server: AuthorizationServer,
    /// Every seam: `token_counts` tells what it holds.
    pub tokens: MemoryStore,
    pub alice: User,
    pub conf_id: String,
    /// `Basic base64(id:secret)` of the digest-verified client.
    pub conf_basic: String,
    /// `Basic base64(id:secret)` of the Argon2id-verified client.
    pub legacy_basic: String,
}

impl Default for Bench {
    fn default() -> Self {
        Self::new()
    }
}

impl Bench {
    pub fn new() -> Self {
        Self::with(|builder| builder)
    }

    /// The same server, with `configure` applied to its builder last (JWT access tokens,
    /// DPoP…).
    pub fn with(
        configure: impl FnOnce(AuthorizationServerBuilder) -> AuthorizationServerBuilder,
    ) -> Self {
        let seed = seed();
        let store = MemoryStore::new();
        at_once(store.insert_user(&seed.alice, &seed.alice_hash)).expect("alice");
        let clients = &store;
        let creds = ClientCredentials::generate().expect("credentials");
        register(
            clients,
            Client::confidential(creds.client_id.as_str(), creds.verifier)
                .redirect_uri(REDIRECT)
                .grant_types(GrantType::ALL)
                .scopes("profile email")
                .default_scope("profile")
                .approval(Approval::NotRequired)
                .build()
                .expect("confidential client"),
        );
        register(
            clients,
            Client::public(PUBLIC_ID)
                .redirect_uri(REDIRECT)
                .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
                .scopes("profile email")
                .approval(Approval::NotRequired)
                .build()
                .expect("public client"),
        );
        register(
            clients,
            Client::confidential(LEGACY_ID, seed.legacy_verifier.clone())
                .grant_types([GrantType::ClientCredentials])
                .scopes("profile email")
                .build()
                .expect("legacy client"),
        );
        let tokens = store.clone();
        let builder = AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(store)
            // Codes are prepared in batches before they are redeemed: give them the longest
            // lifetime RFC 6749 allows so a slow batch cannot expire.
            .code_lifetime(MAX_CODE_LIFETIME);
        let server = configure(builder).build().expect("server");
        let conf_id = creds.client_id.to_string();
        let conf_basic = basic(&conf_id, creds.secret.expose_secret());
        Self {
            server,
            tokens,
            alice: seed.alice.clone(),
            conf_id,
            conf_basic,
            legacy_basic: basic(LEGACY_ID, LEGACY_SECRET),
        }
    }

    /// `GET /authorize` for a code, for the confidential client.
    pub fn authorize_code_request(&self) -> Request<String> {
        authorize_request(&format!(
            "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}&state=xyz\
             &scope=profile",
            self.conf_id
        ))
    }

    /// `GET /authorize` for a code with a PKCE challenge, for the public client.
    pub fn authorize_pkce_request(&self) -> Request<String> {
        authorize_request(&format!(
            "response_type=code&client_id={PUBLIC_ID}&redirect_uri={REDIRECT_ENCODED}&state=xyz\
             &scope=profile&code_challenge={CHALLENGE}&code_challenge_method=S256"
        ))
    }

    /// `GET /authorize` for a token in the fragment (implicit grant), confidential client.
    pub fn authorize_implicit_request(&self) -> Request<String> {
        authorize_request(&format!(
            "response_type=token&client_id={}&redirect_uri={REDIRECT_ENCODED}&state=xyz\
             &scope=profile",
            self.conf_id
        ))
    }

    /// Authorization endpoint, then Alice approves: the redirect.
    pub async fn authorize_and_approve(&self, request: &Request<String>) -> Response<String> {
        let Authorize::SignIn(pending) = self.server.authorize(request).await else {
            panic!("the authorization request is valid");
        };
        self.server
            .decide(pending, self.alice.id(), Decision::Approve)
            .await
    }

    /// A fresh code for the confidential client.
    pub async fn code(&self) -> String {
        let response = self
            .authorize_and_approve(&self.authorize_code_request())
            .await;
        code_of(&response)
    }

    /// A fresh code for the public client, bound to [`CHALLENGE`].
    pub async fn pkce_code(&self) -> String {
        let response = self
            .authorize_and_approve(&self.authorize_pkce_request())
            .await;
        code_of(&response)
    }

    /// The confidential client's code exchange, with HTTP Basic.
    pub fn exchange_confidential_request(&self, code: &str) -> Request<String> {
        token_request(
            Some(&self.conf_basic),
            format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}"),
        )
    }

    /// The public client's code exchange: `client_id` and the PKCE verifier.
    pub fn exchange_public_request(&self, code: &str) -> Request<String> {
        token_request(
            None,
            format!(
                "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
                 &client_id={PUBLIC_ID}&code_verifier={VERIFIER}"
            ),
        )
    }

    pub fn refresh_confidential_request(&self, refresh_token: &str) -> Request<String> {
        token_request(
            Some(&self.conf_basic),
            format!("grant_type=refresh_token&refresh_token={refresh_token}"),
        )
    }

    pub fn refresh_public_request(&self, refresh_token: &str) -> Request<String> {
        token_request(
            None,
            format!("grant_type=refresh_token&refresh_token={refresh_token}&client_id={PUBLIC_ID}"),
        )
    }

    pub fn password_request(&self) -> Request<String> {
        token_request(
            Some(&self.conf_basic),
            format!(
                "grant_type=password&username={ALICE_ENCODED}&password={ALICE_PASSWORD}\
                 &scope=profile"
            ),
        )
    }

    pub fn client_credentials_request(&self, authorization: &str) -> Request<String> {
        token_request(
            Some(authorization),
            "grant_type=client_credentials&scope=profile".to_owned(),
        )
    }

    pub fn introspect_request(&self, token: &str) -> Request<String> {
        post(
            "/api/oauth/introspect",
            Some(&self.conf_basic),
            format!("token={token}&token_type_hint=access_token"),
        )
    }

    pub fn revoke_request(&self, token: &str) -> Request<String> {
        post(
            "/api/oauth/revoke",
            Some(&self.conf_basic),
            format!("token={token}&token_type_hint=access_token"),
        )
    }

    /// Tokens from the whole code flow of the confidential client: authorize, approve, exchange.
    pub async fn confidential_tokens(&self) -> serde_json::Value {
        let code = self.code().await;
        let response = self
            .server
            .token(&self.exchange_confidential_request(&code))
            .await;
        check_token_json(&response, true)
    }

    /// Tokens from the whole code flow of the public client (PKCE).
    pub async fn public_tokens(&self) -> serde_json::Value {
        let code = self.pkce_code().await;
        let response = self
            .server
            .token(&self.exchange_public_request(&code))
            .await;
        check_token_json(&response, true)
    }
}

/// `Basic base64(id:secret)` (both are form-urlencoding-safe here).
pub fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
}

pub fn authorize_request(query: &str) -> Request<String> {
    Request::get(format!("/api/oauth/authorize?{query}"))
        .body(String::new())
        .expect("request")
}

pub fn post(path: &str, authorization: Option<&str>, body: String) -> Request<String> {
    let mut builder =
        Request::post(path).header("content-type", "application/x-www-form-urlencoded");
    if let Some(authorization) = authorization {
        builder = builder.header("authorization", authorization);
    }
    builder.body(body).expect("request")
}

pub fn token_request(authorization: Option<&str>, body: String) -> Request<String> {
    post("/api/oauth/token", authorization, body)
}

/// A resource request carrying `Authorization: Bearer {token}`.
pub fn bearer_request(token: &str) -> Request<()> {
    Request::get("/api/me")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .expect("request")
}

/// The parameters of a redirect's query or fragment.
fn params(response: &Response<String>, fragment: bool) -> Vec<(String, String)> {
    assert_eq!(response.status(), 303, "expected a redirect: {response:?}");
    let location = response.headers()["location"].to_str().expect("ASCII");
    let url = url::Url::parse(location).expect("an absolute redirect");
    let base = format!(
        "{}://{}{}",
        url.scheme(),
        url.host_str().unwrap_or(""),
        url.path()
    );
    assert_eq!(base, REDIRECT, "redirected to the registered URI");
    let encoded = if fragment {
        assert!(url.query().is_none(), "a token never goes in the query");
        url.fragment().expect("a fragment").to_owned()
    } else {
        assert!(url.fragment().is_none());
        url.query().expect("a query").to_owned()
    };
    url::form_urlencoded::parse(encoded.as_bytes())
        .into_owned()
        .collect()
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Checks an approval's redirect carries a fresh code, the state and `iss`; returns the code.
pub fn code_of(response: &Response<String>) -> String {
    let params = params(response, false);
    assert!(param(&params, "error").is_none(), "{params:?}");
    assert_eq!(param(&params, "state"), Some("xyz"));
    assert_eq!(param(&params, "iss"), Some(ISSUER));
    let code = param(&params, "code").expect("a code");
    assert_eq!(code.len(), 43, "256 bits in base64url");
    code.to_owned()
}

/// Checks an implicit grant's redirect: the token in the fragment, never a refresh token.
pub fn check_implicit(response: &Response<String>) {
    let params = params(response, true);
    assert!(param(&params, "error").is_none(), "{params:?}");
    assert_eq!(param(&params, "access_token").map(str::len), Some(44));
    assert_eq!(param(&params, "token_type"), Some("bearer"));
    assert_eq!(param(&params, "expires_in"), Some("3600"));
    assert_eq!(param(&params, "scope"), Some("profile"));
    assert_eq!(param(&params, "state"), Some("xyz"));
    assert!(param(&params, "refresh_token").is_none());
}

/// Checks a token response (RFC 6749 §5.1) and returns its JSON.
pub fn check_token_json(response: &Response<String>, with_refresh: bool) -> serde_json::Value {
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: serde_json::Value = serde_json::from_str(response.body()).expect("JSON");
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["access_token"].as_str().map(str::len), Some(44));
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "profile");
    assert!(body["jti"].is_string());
    assert_eq!(body["refresh_token"].is_string(), with_refresh, "{body}");
    body
}

pub fn access_token(tokens: &serde_json::Value) -> String {
    tokens["access_token"]
        .as_str()
        .expect("access_token")
        .to_owned()
}

pub fn refresh_token(tokens: &serde_json::Value) -> String {
    tokens["refresh_token"]
        .as_str()
        .expect("refresh_token")
        .to_owned()
}

/// Runs `work` on every input in turn inside one `block_on`, and answers how long that took.
/// The inputs are made and dropped outside the timed span; each answer is dropped inside it,
/// as a server drops its response once written.
pub fn time_each<T, R>(rt: &Runtime, inputs: &[T], mut work: impl AsyncFnMut(&T) -> R) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        for input in inputs {
            std::hint::black_box(work(input).await);
        }
        start.elapsed()
    })
}

/// Runs `work` `iters` times over `inputs` in turn (for work that consumes nothing, such as
/// validating a token), inside one `block_on`.
pub fn time_cycled<T, R>(
    rt: &Runtime,
    iters: u64,
    inputs: &[T],
    mut work: impl AsyncFnMut(&T) -> R,
) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        for input in inputs.iter().cycle().take(iters as usize) {
            std::hint::black_box(work(input).await);
        }
        start.elapsed()
    })
}

/// Whether criterion measures (`cargo bench`) rather than runs each benchmark once as a test.
pub fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// A group of fast benchmarks: short warm-up and measurement keep each suite within minutes.
pub fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    group
}

/// Makes `n` inputs untimed, on the runtime.
pub fn prepare<T>(rt: &Runtime, n: u64, mut make: impl AsyncFnMut() -> T) -> Vec<T> {
    rt.block_on(async {
        let mut inputs = Vec::with_capacity(n as usize);
        for _ in 0..n {
            inputs.push(make().await);
        }
        inputs
    })
}

/// `iters` requests made one after another (so they lie in memory in the order they are used,
/// as a freshly parsed request would be at hand), going round `pool`.
pub fn requests_round<T, B>(
    pool: &[T],
    iters: u64,
    make: impl Fn(&T) -> Request<B>,
) -> Vec<Request<B>> {
    pool.iter().cycle().take(iters as usize).map(make).collect()
}

/// Where criterion writes its estimates (as criterion finds it, short of `cargo metadata`).
pub fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("criterion")
}

/// The median (ns per iteration) criterion estimated in this run, if it ran this benchmark.
pub fn median_ns(group: &str, function: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_home()
        .join(group)
        .join(function)
        .join("new")
        .join("estimates.json");
    let written = std::fs::metadata(&path).ok()?.modified().ok()?;
    if written < since {
        return None; // left over from an earlier run
    }
    let estimates: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

/// A time as the tables print it: ns, µs or ms.
pub fn format_ns(ns: f64) -> String {
    match ns {
        ns if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.2} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    }
}
