//! How much memory the in-memory token store takes per live access token, all-in.
//!
//! Fills a `MemoryStore` through grantor's own endpoints with 100,000 refresh families
//! (the whole code flow: authorize, approve, exchange; each family holds an access token, a
//! refresh token and the redeemed code, remembered for replay detection), then brings the live
//! access tokens to 1,000,000 in one of two ways:
//!
//! - `client-credentials`: 900,000 client-credentials tokens, each in a family of its own;
//! - `refresh`: 9 refreshes of every family (each rotation mints an access token and a refresh
//!   token; the rotated refresh token stays, to detect its reuse, until it expires).
//!
//! It prints the resident memory (`VmRSS` of `/proc/self/status`) before and after each phase,
//! and bytes per access token. Without arguments it runs both, each in a fresh process of its
//! own so that one does not inherit the other's heap:
//!
//! ```sh
//! cargo run --release --example memory                        # both, 100,000 families each
//! cargo run --release --example memory -- refresh 10000      # one of them, 10,000 families
//! ```
//!
//! The store is filled as a server fills it, so the figure includes what the allocator keeps
//! around the entries (the transient requests and responses are freed as they go). The target
//! is at most 250 bytes per access token, all-in.

use std::process::Command;

use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use grantor::store::UserAdmin as _;
use grantor::*;
use grantor::{client::*, store::*};

const REDIRECT_ENCODED: &str = "https%3A%2F%2Fapp.example%2Fcb";
/// Access tokens per refresh family, when the families are refreshed.
const PER_FAMILY: usize = 10;

/// Resident memory in bytes, from `/proc/self/status` (Linux).
fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status (Linux)");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line");
    kib * 1024
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn post(authorization: &str, body: String) -> http::Request<String> {
    http::Request::post("/api/oauth/token")
        .header("authorization", authorization)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .expect("request")
}

fn json(response: &http::Response<String>) -> serde_json::Value {
    assert_eq!(response.status(), 200, "{}", response.body());
    serde_json::from_str(response.body()).expect("JSON")
}

/// A server over the in-memory stores with one confidential client and one user.
struct Setup {
    server: AuthorizationServer,
    tokens: MemoryStore,
    alice: User,
    basic: String,
    authorize: http::Request<String>,
}

async fn setup() -> Setup {
    let creds = ClientCredentials::generate().expect("credentials");
    let store = MemoryStore::new();
    let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
        .redirect_uri("https://app.example/cb")
        .grant_types([
            GrantType::AuthorizationCode,
            GrantType::RefreshToken,
            GrantType::ClientCredentials,
        ])
        .scopes("profile email")
        .default_scope("profile")
        .approval(Approval::NotRequired)
        .build()
        .expect("client");
    store.register_client(&client).await.expect("a new client");
    // The password is never checked here: a stored hash stands in for Argon2id's output.
    let alice = User::new(UserId::new("alice-0001"), "alice@example.com");
    let hash = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQ$aGFzaA";
    store.insert_user(&alice, hash).await.expect("user");
    let tokens = store.clone();
    let server = AuthorizationServer::builder()
        .issuer("https://auth.example")
        .store(store)
        .build()
        .expect("server");
    let basic = format!(
        "Basic {}",
        STANDARD.encode(format!(
            "{}:{}",
            creds.client_id,
            creds.secret.expose_secret()
        ))
    );
    let authorize = http::Request::get(format!(
        "/api/oauth/authorize?response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}\
         &state=xyz&scope=profile",
        creds.client_id
    ))
    .body(String::new())
    .expect("request");
    Setup {
        server,
        tokens,
        alice,
        basic,
        authorize,
    }
}

impl Setup {
    /// The whole code flow; answers the refresh token.
    async fn code_flow(&self) -> String {
        let Authorize::SignIn(pending) = self.server.authorize(&self.authorize).await else {
            panic!("a valid authorization request");
        };
        let redirect = self
            .server
            .decide(pending, self.alice.id(), Decision::Approve)
            .await;
        let location = redirect.headers()["location"].to_str().expect("ASCII");
        let url = url::Url::parse(location).expect("a URL");
        let code = url
            .query_pairs()
            .find(|(k, _)| k == "code")
            .expect("a code")
            .1
            .into_owned();
        let body =
            format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
        let tokens = json(&self.server.token(&post(&self.basic, body)).await);
        tokens["refresh_token"]
            .as_str()
            .expect("refresh_token")
            .to_owned()
    }

    /// One refresh; answers the new refresh token.
    async fn refresh(&self, refresh_token: &str) -> String {
        let body = format!("grant_type=refresh_token&refresh_token={refresh_token}");
        let tokens = json(&self.server.token(&post(&self.basic, body)).await);
        tokens["refresh_token"]
            .as_str()
            .expect("refresh_token")
            .to_owned()
    }
}

async fn run(mode: &str, families: usize) {
    let s = setup().await;
    let access_total = families * PER_FAMILY;
    let base = rss_bytes();
    println!(
        "[{mode}] baseline (server, one client, one user): {:.1} MiB",
        mib(base)
    );

    let started = Instant::now();
    let after_families;
    match mode {
        "client-credentials" => {
            for _ in 0..families {
                s.code_flow().await;
            }
            after_families = rss_bytes();
            let cc = post(
                &s.basic,
                "grant_type=client_credentials&scope=profile".to_owned(),
            );
            for _ in families..access_total {
                json(&s.server.token(&cc).await);
            }
        }
        "refresh" => {
            for _ in 0..families {
                let mut refresh_token = s.code_flow().await;
                for _ in 1..PER_FAMILY {
                    refresh_token = s.refresh(&refresh_token).await;
                }
            }
            after_families = base;
        }
        other => panic!("unknown mode {other:?}: client-credentials or refresh"),
    }
    let after = rss_bytes();
    let (access, refresh, codes) = s.tokens.token_counts();
    assert_eq!((access, codes), (access_total, families));
    if mode == "client-credentials" {
        println!(
            "[{mode}] {families} code-flow families: {:.0} bytes per family (access token, \
             refresh token, family, redeemed code); {} client-credentials tokens: {:.0} bytes \
             per token (access token and its family)",
            (after_families - base) as f64 / families as f64,
            access_total - families,
            (after - after_families) as f64 / (access_total - families) as f64
        );
    }
    println!(
        "[{mode}] {access} live access tokens, {refresh} refresh tokens (current and rotated), \
         {families} refresh families, {codes} redeemed codes, filled in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    println!(
        "[{mode}] resident {:.1} MiB ({:.1} MiB over the baseline): {:.0} bytes per access \
         token all-in (target <= 250)",
        mib(after),
        mib(after - base),
        (after - base) as f64 / access_total as f64
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(mode @ ("client-credentials" | "refresh")) => {
            let families = args
                .get(1)
                .map(|n| n.parse().expect("a number of refresh families"))
                .unwrap_or(100_000);
            run(mode, families).await;
        }
        Some(other) => panic!("unknown mode {other:?}: client-credentials or refresh"),
        None => {
            let me = std::env::current_exe().expect("this program");
            for mode in ["client-credentials", "refresh"] {
                let status = Command::new(&me).arg(mode).status().expect("a child");
                assert!(status.success(), "{mode} failed");
            }
        }
    }
}
