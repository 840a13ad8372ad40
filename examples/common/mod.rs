//! What both demo servers share: settings, the seeded deployment of the demo contract, and the
//! host's pages. Everything here works on `http` types; each example maps its framework to it.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use grantor::signin::{ApprovalPage, SignInPage};
use grantor::*;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, COOKIE, SET_COOKIE};
use http::{HeaderMap, HeaderValue, Response, StatusCode};

/// The demo's settings, from flags or the environment (flags win).
#[derive(Debug, Clone)]
pub struct Settings {
    pub addr: SocketAddr,
    pub issuer: String,
    pub code_ttl: Duration,
    /// Where clients, users, codes and tokens live.
    pub store: StoreChoice,
}

/// The demo's store: `--store memory|sqlite:PATH|postgres:URL` (`GRANTOR_STORE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreChoice {
    /// In memory: gone when the process stops.
    Memory,
    /// A SQLite file (feature `sqlite`).
    Sqlite(String),
    /// A PostgreSQL database, shared by any number of demo processes (feature `postgres`).
    Postgres(String),
}

impl StoreChoice {
    /// The default: a SQLite file in the OS temporary directory when built with the `sqlite`
    /// feature (state survives restarts, nothing to install), else memory.
    pub fn default_for_build() -> Self {
        if cfg!(feature = "sqlite") {
            let path = std::env::temp_dir().join("grantor-demo.sqlite3");
            Self::Sqlite(path.to_string_lossy().into_owned())
        } else {
            Self::Memory
        }
    }

    /// Parses `memory`, `sqlite:PATH` or `postgres:URL` (a bare `postgres://…` URL works too).
    pub fn parse(spec: &str) -> Result<Self, String> {
        let choice = if spec == "memory" {
            Self::Memory
        } else if let Some(path) = spec.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err("--store sqlite:PATH needs a path".to_owned());
            }
            Self::Sqlite(path.to_owned())
        } else if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            Self::Postgres(spec.to_owned())
        } else if let Some(url) = spec.strip_prefix("postgres:") {
            Self::Postgres(url.to_owned())
        } else {
            return Err(format!(
                "unknown store {spec:?}: use memory, sqlite:PATH or postgres:URL"
            ));
        };
        let missing = match &choice {
            Self::Sqlite(_) if !cfg!(feature = "sqlite") => Some("sqlite"),
            Self::Postgres(_) if !cfg!(feature = "postgres") => Some("postgres"),
            _ => None,
        };
        match missing {
            Some(feature) => Err(format!(
                "this build has no {feature} store; build it with --features {feature}"
            )),
            None => Ok(choice),
        }
    }
}

impl std::fmt::Display for StoreChoice {
    /// What the log says about the store (never a URL: it may hold a password).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Memory => f.write_str("memory"),
            Self::Sqlite(path) => write!(f, "sqlite file {path}"),
            Self::Postgres(_) => f.write_str("postgres"),
        }
    }
}

impl Settings {
    /// `--addr` / `GRANTOR_ADDR` (default 127.0.0.1:8080), `--issuer` / `GRANTOR_ISSUER`
    /// (default `http://` + the address), `--code-ttl` / `GRANTOR_CODE_TTL` (seconds, default 60),
    /// `--store` / `GRANTOR_STORE` (see [`StoreChoice`]).
    pub fn from_args_and_env() -> Result<Self, String> {
        let mut addr = std::env::var("GRANTOR_ADDR").ok();
        let mut issuer = std::env::var("GRANTOR_ISSUER").ok();
        let mut code_ttl = std::env::var("GRANTOR_CODE_TTL").ok();
        let mut store = std::env::var("GRANTOR_STORE").ok();
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
                None => (arg.clone(), None),
            };
            let slot = match name.as_str() {
                "--addr" => &mut addr,
                "--issuer" => &mut issuer,
                "--code-ttl" => &mut code_ttl,
                "--store" => &mut store,
                "-h" | "--help" => {
                    return Err(
                        "usage: [--addr HOST:PORT] [--issuer URL] [--code-ttl SECONDS]\n\
                                [--store memory|sqlite:PATH|postgres:URL]\n\
                                (or GRANTOR_ADDR, GRANTOR_ISSUER, GRANTOR_CODE_TTL, GRANTOR_STORE)"
                            .to_owned(),
                    );
                }
                other => return Err(format!("unknown argument {other}; try --help")),
            };
            let value = inline.or_else(|| args.next());
            *slot = Some(value.ok_or_else(|| format!("{name} needs a value"))?);
        }
        let addr: SocketAddr = addr
            .as_deref()
            .unwrap_or("127.0.0.1:8080")
            .parse()
            .map_err(|e| format!("bad address: {e}"))?;
        let issuer = issuer.unwrap_or_else(|| format!("http://{addr}"));
        let code_ttl = match code_ttl {
            Some(s) => Duration::from_secs(s.parse().map_err(|e| format!("bad code TTL: {e}"))?),
            None => Duration::from_secs(60),
        };
        let store = match store {
            Some(spec) => StoreChoice::parse(&spec)?,
            None => StoreChoice::default_for_build(),
        };
        Ok(Self {
            addr,
            issuer,
            code_ttl,
            store,
        })
    }
}

/// Logs to stderr through `tracing` (`RUST_LOG` filters, default `info`; colors on a terminal).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

/// Prints the one line that says where the demo listens (tests wait for it on stdout).
pub fn announce(framework: &str, addr: SocketAddr, issuer: &str) {
    println!("grantor demo ({framework}) listening on http://{addr} with issuer {issuer}");
}

/// The demo deployment: grantor's server, the sign-in flow, and how cookies are marked.
pub struct Demo {
    pub server: AuthorizationServer,
    pub flow: SignInFlow,
    secure_cookies: bool,
}

const REDIRECTS: [&str; 2] = [
    "http://127.0.0.1:8081/callback",
    "http://localhost:8081/callback",
];

/// The contract's clients (only secret verifiers are kept).
fn demo_clients() -> Result<Vec<Client>, Box<dyn std::error::Error>> {
    let with_redirects = |b: ClientBuilder| {
        REDIRECTS
            .iter()
            .fold(b, |b, uri| b.redirect_uri(*uri))
            .scopes("profile email")
    };
    let demo_secret = SecretVerifier::argon2id(&ClientSecret::new("demo-secret"))?;
    let plain_secret = SecretVerifier::argon2id(&ClientSecret::new("plain-secret"))?;
    Ok(vec![
        with_redirects(Client::confidential("demo-client", demo_secret))
            .name("Demo Client")
            .grant_types(GrantType::ALL)
            .approval(Approval::Required)
            .build()?,
        with_redirects(Client::confidential("plain-client", plain_secret))
            .name("Plain Client")
            .grant_types([GrantType::AuthorizationCode, GrantType::Password])
            .approval(Approval::NotRequired)
            .build()?,
        with_redirects(Client::public("public-client"))
            .name("Public Client")
            .grant_types([GrantType::AuthorizationCode])
            .approval(Approval::NotRequired)
            .build()?,
    ])
}

/// The contract's users and their passwords (only Argon2id hashes are kept).
const USERS: [(&str, &str); 2] = [
    ("alice@example.com", "alice-password-1"),
    ("bob@example.com", "bob-password-2"),
];

/// The three seams, from whichever store was chosen.
struct Seams {
    clients: Arc<dyn ClientStore>,
    users: Arc<dyn UserStore>,
    tokens: Arc<dyn TokenIssuer>,
    /// Deletes what has expired; run hourly.
    purge: Arc<dyn Fn(UnixTime) -> PurgeFuture + Send + Sync>,
}

type PurgeFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Registers the clients and adds the users that are missing.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! seed_sql {
    ($store:expr, $clients:expr) => {
        for client in &$clients {
            $store.insert_client(client).await?;
        }
        for (username, password) in USERS {
            match $store.add_user(username, &Password::new(password)).await {
                Ok(_) | Err(grantor::AddUserError::Taken) => {}
                Err(error) => return Err(error.into()),
            }
        }
    };
}

/// Opens (and for SQL, migrates) the chosen store and seeds it. Seeding a database that already
/// has the contract's clients and users leaves it as it is (clients are re-registered as they
/// are; existing users are kept), so any number of demo processes can share one.
async fn open(choice: &StoreChoice) -> Result<Seams, Box<dyn std::error::Error>> {
    let clients = demo_clients()?;
    match choice {
        StoreChoice::Memory => {
            let store = MemoryClientStore::new();
            for client in clients {
                store.insert(client);
            }
            let users = MemoryUserStore::new();
            for (username, password) in USERS {
                users.add(username, &Password::new(password))?;
            }
            let tokens = Arc::new(MemoryTokenIssuer::new());
            let purged = Arc::clone(&tokens);
            Ok(Seams {
                clients: Arc::new(store),
                users: Arc::new(users),
                tokens,
                purge: Arc::new(move |now| {
                    purged.purge_expired(now);
                    Box::pin(std::future::ready(()))
                }),
            })
        }
        #[cfg(feature = "sqlite")]
        StoreChoice::Sqlite(path) => {
            let options = grantor::sql::sqlx::sqlite::SqliteConnectOptions::new().filename(path);
            let store = grantor::sql::SqliteStore::connect_with(options).await?;
            seed_sql!(store, clients);
            Ok(sql_seams(store))
        }
        #[cfg(feature = "postgres")]
        StoreChoice::Postgres(url) => {
            let store = grantor::sql::PostgresStore::connect(url).await?;
            seed_sql!(store, clients);
            Ok(sql_seams(store))
        }
        #[allow(unreachable_patterns)]
        other => Err(format!("this build has no {other} store").into()),
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn sql_seams<DB: grantor::sql::sqlx::Database>(store: grantor::sql::SqlStore<DB>) -> Seams
where
    grantor::sql::SqlStore<DB>: ClientStore + UserStore + TokenIssuer + Purge,
{
    let purged = store.clone();
    Seams {
        clients: Arc::new(store.clone()),
        users: Arc::new(store.clone()),
        tokens: Arc::new(store),
        purge: Arc::new(move |now| purged.purge_boxed(now)),
    }
}

/// `purge_expired` of a SQL store as a boxed future; failures are logged.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
trait Purge {
    fn purge_boxed(&self, now: UnixTime) -> PurgeFuture;
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! purge_impl {
    ($store:ty) => {
        impl Purge for $store {
            fn purge_boxed(&self, now: UnixTime) -> PurgeFuture {
                let store = self.clone();
                Box::pin(async move {
                    match store.purge_expired(now).await {
                        Ok(rows) => tracing::info!(rows, "purged expired codes and tokens"),
                        Err(error) => tracing::warn!(%error, "purging expired rows failed"),
                    }
                })
            }
        }
    };
}
#[cfg(feature = "sqlite")]
purge_impl!(grantor::sql::SqliteStore);
#[cfg(feature = "postgres")]
purge_impl!(grantor::sql::PostgresStore);

/// Opens and seeds the chosen store, builds the server, and purges expired rows hourly.
pub async fn demo(settings: &Settings) -> Result<Demo, Box<dyn std::error::Error>> {
    let seams = open(&settings.store).await?;
    tracing::info!(store = %settings.store, "store ready");
    let server = AuthorizationServer::builder()
        .issuer(settings.issuer.clone())
        .code_lifetime(settings.code_ttl)
        .scopes_supported(&Scope::parse("profile email admin")?)
        .clients(seams.clients)
        .users(seams.users)
        .tokens(seams.tokens)
        .build()?;
    let purge = seams.purge;
    tokio::spawn(async move {
        let mut hourly = tokio::time::interval(Duration::from_secs(3600));
        loop {
            hourly.tick().await;
            purge(UnixTime::from(std::time::SystemTime::now())).await;
        }
    });
    Ok(Demo {
        flow: SignInFlow::new(server.clone()),
        server,
        secure_cookies: settings.issuer.starts_with("https:"),
    })
}

/// The sign-in session cookie.
const COOKIE_NAME: &str = "grantor_signin";

impl Demo {
    /// Renders a sign-in step: a page, the redirect to the client, or an error page.
    pub fn render(&self, step: Step) -> Response<String> {
        match step {
            Step::SignIn(page) => {
                let session = page.session.clone();
                self.page(StatusCode::OK, &sign_in_html(&page), Some(&session))
            }
            Step::Approve(page) => {
                let session = page.session.clone();
                self.page(StatusCode::OK, &approval_html(&page), Some(&session))
            }
            Step::Respond(response) => response,
            Step::Error(error) => self.page(error.status(), &error_html(&error), None),
        }
    }

    /// `POST /signin`: the sign-in form.
    pub async fn sign_in(&self, headers: &HeaderMap, body: &[u8]) -> Response<String> {
        let form = Form::parse(body);
        let password = Password::new(form.get("password"));
        let step = self
            .flow
            .sign_in(
                &session_cookie(headers),
                form.get("csrf"),
                form.get("username"),
                &password,
            )
            .await;
        self.render(step)
    }

    /// `POST /approve`: the approval form.
    pub async fn approve(&self, headers: &HeaderMap, body: &[u8]) -> Response<String> {
        let form = Form::parse(body);
        let decision = match form.get("decision") {
            "approve" => Decision::Approve,
            _ => Decision::Deny,
        };
        let step = self
            .flow
            .decide(&session_cookie(headers), form.get("csrf"), decision)
            .await;
        self.render(step)
    }

    /// `GET /api/me`: the protected resource.
    pub async fn me(&self, headers: &HeaderMap) -> Response<String> {
        match self.server.bearer_headers(headers, None).await {
            Ok(grant) => {
                let user = grant.authorization.user.as_ref();
                let body = serde_json::json!({
                    "email": user.map(|u| u.username()),
                    "sub": user.map_or(grant.authorization.client_id.as_str(), |u| u.id().as_str()),
                    "client_id": grant.authorization.client_id.as_str(),
                    "scope": grant.authorization.scope.as_str(),
                });
                let mut response = Response::new(body.to_string());
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
                    .headers_mut()
                    .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
                response
            }
            Err(refusal) => refusal,
        }
    }

    /// `GET /`: a page saying what this is.
    pub fn index(&self) -> Response<String> {
        let issuer = escape(self.server.issuer());
        let html = format!(
            "<h1>grantor demo</h1><p>An OAuth 2.0 authorization server. Metadata: \
             <a href=\"/.well-known/oauth-authorization-server\">{issuer}/.well-known/oauth-authorization-server</a></p>"
        );
        self.page(StatusCode::OK, &html, None)
    }

    /// An HTML page with the headers every page of the sign-in flow carries.
    fn page(&self, status: StatusCode, body: &str, session: Option<&str>) -> Response<String> {
        let mut response = Response::new(layout(body));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        let fixed = [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "no-store"),
            (http::header::X_FRAME_OPTIONS, "DENY"),
            (
                http::header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
            ),
            (http::header::REFERRER_POLICY, "no-referrer"),
            (http::header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ];
        for (name, value) in fixed {
            headers.insert(name, HeaderValue::from_static(value));
        }
        if let Some(session) = session {
            let secure = if self.secure_cookies { "; Secure" } else { "" };
            let cookie = format!(
                "{COOKIE_NAME}={session}; Path=/; HttpOnly; SameSite=Lax; Max-Age=600{secure}"
            );
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                headers.insert(SET_COOKIE, value);
            }
        }
        response
    }
}

/// The sign-in session id from the `Cookie` header (empty if absent).
fn session_cookie(headers: &HeaderMap) -> String {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value.to_owned())
        .unwrap_or_default()
}

/// A posted HTML form (last value wins; these are the host's own forms).
struct Form(Vec<(String, String)>);

impl Form {
    fn parse(body: &[u8]) -> Self {
        Self(url::form_urlencoded::parse(body).into_owned().collect())
    }

    fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

fn layout(body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>grantor demo</title><style>{STYLE}</style></head>\
         <body><main>{body}</main></body></html>\n"
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0}\
main{max-width:24rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;\
box-shadow:0 1px 4px rgba(0,0,0,.15)}h1{font-size:1.4rem;margin-top:0}\
label{display:block;margin:1rem 0 .3rem;font-weight:600}\
input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box;\
border:1px solid #999;border-radius:4px}button{margin-top:1.2rem;padding:.55rem 1.2rem;\
border:0;border-radius:4px;background:#2457c5;color:#fff;font-size:1rem;cursor:pointer}\
button.secondary{background:#777;margin-left:.5rem}.problem{color:#a00;font-weight:600}\
ul{padding-left:1.2rem}";

fn sign_in_html(page: &SignInPage) -> String {
    let problem = page
        .problem
        .map(|p| {
            format!(
                "<p class=\"problem\" role=\"alert\">{}</p>",
                escape(&p.to_string())
            )
        })
        .unwrap_or_default();
    format!(
        "<h1>Sign in</h1><p><strong>{client}</strong> wants to access your account.</p>{problem}\
         <form method=\"post\" action=\"/signin\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <label for=\"username\">Email</label>\
         <input id=\"username\" name=\"username\" type=\"email\" autocomplete=\"username\" required autofocus>\
         <label for=\"password\">Password</label>\
         <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>",
        client = escape(&page.client_name),
        csrf = escape(&page.csrf),
    )
}

fn approval_html(page: &ApprovalPage) -> String {
    let scopes: String = if page.scope.is_empty() {
        "<li>Only to know that you signed in</li>".to_owned()
    } else {
        page.scope
            .iter()
            .map(|s| {
                format!(
                    "<li><strong>{}</strong>: {}</li>",
                    escape(s),
                    describe_scope(s)
                )
            })
            .collect()
    };
    format!(
        "<h1>Allow access?</h1><p>Signed in as {user}.</p>\
         <p><strong>{client}</strong> asks for:</p><ul>{scopes}</ul>\
         <form method=\"post\" action=\"/approve\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <button type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\" class=\"secondary\">Deny</button>\
         </form>",
        user = escape(&page.username),
        client = escape(&page.client_name),
        csrf = escape(&page.csrf),
    )
}

fn describe_scope(scope: &str) -> &'static str {
    match scope {
        "profile" => "your profile (your account id)",
        "email" => "your email address",
        _ => "access named by this scope",
    }
}

fn error_html(error: &OAuthError) -> String {
    format!(
        "<h1>This request cannot continue</h1><p class=\"problem\">{}</p>\
         <p>Error code: <code>{}</code></p>",
        escape(error.description()),
        error.code()
    )
}

/// Escapes text for HTML content and quoted attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}
