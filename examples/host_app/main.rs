//! A host that plugs its own users and its own sign-in step into grantor: the host owns its
//! users (a `users` table in a SQLite file of its own, with the hashes a legacy application
//! left), its pages (a branded login page, a TOTP code page) and its storage; grantor owns the
//! protocol (the authorization endpoint, the sealed sign-in form, codes, tokens, ID tokens,
//! RFC 9470 step-up), through its public API only.
//!
//! ```sh
//! cargo run --example host_app -- --addr 127.0.0.1:8090 --database /tmp/host.sqlite3
//! ```
//!
//! The client `host-spa` (public, PKCE, redirect URI `http://127.0.0.1:8081/callback`, scopes
//! `openid profile`) sends people to `/api/oauth/authorize`. They sign in as `carol` /
//! `carol-password-1`, then the TOTP code of the base32 secret
//! `KRSXG5CTMVRXEZLUKN2XAZLSKNSWG4TFOQ`, or as `dave` / `dave-password-2` (no second factor).
//! `GET /api/profile` answers only a token of Carol's kind of sign-in.

mod login;
mod pages;
mod second_step;
mod seed;
mod users;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRef, State};
use axum::routing::{get, post};
use grantor::axum::StepUpBearer;
use grantor::client::{Approval, Client, GrantType};
use grantor::settings::{AcrLevels, OpenIdConnect};
use grantor::signin::Site;
use grantor::store::Admin as _;
use grantor::{AuthorizationServer, MemoryStore, RequiredAuthentication};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, StatusCode};

use login::{MFA, PASSWORD};
use pages::{CODE_PATH, HostPages, LOGIN_PATH};
use second_step::PendingLogins;
use users::HostUsers;

/// The one client: a single-page application, public, with PKCE.
const CLIENT_ID: &str = "host-spa";
const CALLBACK: &str = "http://127.0.0.1:8081/callback";

/// What every route of the host reaches.
#[derive(Clone)]
pub struct HostApp {
    site: Site,
    users: HostUsers,
    pending: Arc<PendingLogins>,
}

/// grantor's extractors find the server in the host's state.
impl FromRef<HostApp> for AuthorizationServer {
    fn from_ref(app: &HostApp) -> Self {
        app.site.server().clone()
    }
}

#[tokio::main]
async fn main() {
    if let Err(error) = run().await {
        eprintln!("host_app: {error}");
        std::process::exit(2);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .init();
    let settings = Settings::from_args_and_env()?;
    let users = HostUsers::open(&settings.database)?;
    seed::legacy_rows(&users).await?;
    let server = server(&settings, &users).await?;
    // The host signs people in on its own route: grantor serves no password or second-factor
    // form of its own, so nobody posts a password around the host's second step.
    let site = Site::new(&server).pages(HostPages).host_sign_in(LOGIN_PATH);
    let app = HostApp {
        site: site.clone(),
        users,
        pending: Arc::new(PendingLogins::default()),
    };
    let router = grantor::axum::router(&site)
        .route(LOGIN_PATH, post(login::login))
        .route(CODE_PATH, post(login::code))
        .route("/api/profile", get(profile))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(settings.addr).await?;
    println!("host_app listening on http://{}", listener.local_addr()?);
    // With the peer's address, which grantor counts anonymous callers by.
    let router = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    Ok(())
}

/// grantor's server over the host's users, with grantor's memory store for the rest (clients,
/// codes, tokens, sessions, keys).
async fn server(
    settings: &Settings,
    users: &HostUsers,
) -> Result<AuthorizationServer, Box<dyn std::error::Error>> {
    let store = MemoryStore::new();
    let spa = Client::public(CLIENT_ID)
        .name("Host SPA")
        .redirect_uri(CALLBACK)
        .grant_types([GrantType::AuthorizationCode])
        .scopes("openid profile")
        .approval(Approval::NotRequired)
        .build()?;
    store.register_client(&spa).await?;
    let users = Arc::new(users.clone());
    let builder = AuthorizationServer::builder()
        .issuer(settings.issuer.clone())
        .users(users.clone())
        .user_admin(users)
        .store(store)
        .usernames(users::logins())
        // No `.second_factor(...)`: the host runs its own and says what it reached in
        // `finish_sign_in`; grantor lists the classes and enforces a requested one.
        .acr_levels(AcrLevels::new([PASSWORD, MFA]).password(PASSWORD))
        .openid_connect(OpenIdConnect::default());
    // A demo on plain HTTP; a deployment puts TLS in front and gives an https issuer.
    let builder = if settings.issuer.starts_with("http://") {
        builder.insecure_http_issuer()
    } else {
        builder
    };
    Ok(builder.build()?)
}

/// What `/api/profile` demands of the sign-in behind a token (RFC 9470): the host's second
/// step, within the last five minutes.
struct RecentMfa;

impl RequiredAuthentication for RecentMfa {
    const ACR_VALUES: &'static [&'static str] = &[MFA];
    const MAX_AGE: Option<Duration> = Some(Duration::from_secs(300));
}

/// `GET /api/profile`: who the token's user is, from the host's own table; a token of a weaker
/// or older sign-in gets grantor's 401 `insufficient_user_authentication`.
async fn profile(
    State(app): State<HostApp>,
    StepUpBearer(grant, ..): StepUpBearer<RecentMfa>,
) -> http::Response<String> {
    let authorization = &grant.authorization;
    let Some(user) = &authorization.user else {
        // A step-up demand is met only by a user's sign-in: never reached.
        return json(
            StatusCode::FORBIDDEN,
            &serde_json::json!({ "error": "no user" }),
        );
    };
    let name = match app.users.display_name(user.id()).await {
        Ok(name) => name,
        Err(error) => {
            tracing::error!(%error, "reading the user's display name");
            let body = serde_json::json!({ "error": "temporarily_unavailable" });
            return json(StatusCode::SERVICE_UNAVAILABLE, &body);
        }
    };
    let acr = authorization
        .authentication
        .as_ref()
        .and_then(|signed_in| signed_in.acr());
    let body = serde_json::json!({ "sub": user.id().as_str(), "name": name, "acr": acr });
    json(StatusCode::OK, &body)
}

fn json(status: StatusCode, body: &serde_json::Value) -> http::Response<String> {
    let mut response = http::Response::new(body.to_string());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Flags, else the environment, else defaults.
struct Settings {
    /// `--addr` / `HOST_ADDR` (default `127.0.0.1:8090`).
    addr: SocketAddr,
    /// `--issuer` / `HOST_ISSUER` (default `http://` and the address).
    issuer: String,
    /// `--database` / `HOST_DATABASE` (default `host-app.sqlite3` in the temporary directory).
    database: PathBuf,
}

impl Settings {
    fn from_args_and_env() -> Result<Self, String> {
        let mut flags = std::collections::HashMap::new();
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            if !matches!(flag.as_str(), "--addr" | "--issuer" | "--database") {
                return Err(format!(
                    "unknown argument {flag:?}: use --addr, --issuer, --database"
                ));
            }
            let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
            flags.insert(flag, value);
        }
        let setting = |flag: &str, env: &str| flags.get(flag).cloned().or(std::env::var(env).ok());
        let addr = setting("--addr", "HOST_ADDR").unwrap_or_else(|| "127.0.0.1:8090".to_owned());
        let addr: SocketAddr = addr
            .parse()
            .map_err(|error| format!("--addr {addr:?}: {error}"))?;
        let issuer = setting("--issuer", "HOST_ISSUER").unwrap_or_else(|| format!("http://{addr}"));
        let database = setting("--database", "HOST_DATABASE").map_or_else(
            || std::env::temp_dir().join("host-app.sqlite3"),
            PathBuf::from,
        );
        Ok(Self {
            addr,
            issuer,
            database,
        })
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                terminate.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
