//! The demo's settings: flags and environment variables (flags win).

use std::net::SocketAddr;
use std::time::Duration;

/// The demo's settings, from flags or the environment (flags win).
#[derive(Debug, Clone)]
pub struct Settings {
    pub addr: SocketAddr,
    pub issuer: String,
    pub code_ttl: Duration,
    pub profile: grantor::settings::Profile,
    /// `--refresh-grace`; unset: the profile's own (zero, or a minute under FAPI 2.0).
    pub refresh_grace: Option<Duration>,
    /// `--device-code-ttl`: how long device codes live (RFC 8628 `expires_in`).
    pub device_code_ttl: Duration,
    /// `--access-tokens jwt`: RFC 9068 JWT access tokens (feature `jwt`) instead of opaque ones.
    pub jwt_access_tokens: bool,
    /// Where clients, users, codes and tokens live.
    pub store: StoreChoice,
    /// `GRANTOR_KEY_ENCRYPTION_KEY` (environment only): encrypts signing and sealing keys at rest.
    pub key_encryption: Option<grantor::store::KeyEncryptionKey>,
    /// `--session-ttl`: how long a browser stays signed in (zero: no single sign-on).
    pub session_ttl: Duration,
    /// `--fetch-allow-loopback 1` (tests only): outbound requests may reach loopback addresses.
    pub fetch_allow_loopback: bool,
    /// `--fetch-ca-file` (tests only): a PEM root certificate trusted for outbound `https`.
    pub fetch_ca_file: Option<String>,
    /// `--client-id-metadata-documents on|off` (default on): an `https` URL as `client_id`
    /// names a document fetched from it.
    pub client_id_metadata_documents: bool,
    /// `GRANTOR_PAIRWISE_SECRET` (environment only, 32 bytes in base64): the key of pairwise
    /// subject identifiers; without it, [`DEMO_PAIRWISE_SECRET`], which is no secret.
    pub pairwise_secret: grantor::settings::PairwiseSecret,
    /// `--registration-idle-ttl`: how long a self-registered client may go unused before it
    /// is deleted with its tokens (zero: never).
    pub registration_idle_ttl: Duration,
    /// `--trust-issuer ISSUER=JWKS_URL` (repeatable; `GRANTOR_TRUST_ISSUER`, space-separated):
    /// identity providers whose assertions the JWT-bearer grant takes.
    pub trusted_issuers: Vec<(String, String)>,
    /// `--metrics on|off` (default on): grantor's metrics at `GET /metrics` in Prometheus text;
    /// off, no recorder is installed and `/metrics` is not served.
    pub metrics: bool,
    /// `--tls-cert PEM` and `--tls-key PEM` (`GRANTOR_TLS_CERT`, `GRANTOR_TLS_KEY`): serve HTTPS
    /// on the same address; with `--tls-client-ca PEM` (`GRANTOR_TLS_CLIENT_CA`) also ask for a
    /// client certificate, optionally (mutual TLS, RFC 8705).
    pub tls: Option<TlsFiles>,
}

/// The PEM files of `--tls-cert`, `--tls-key` and `--tls-client-ca`, read at start-up.
#[derive(Clone)]
pub struct TlsFiles {
    pub certificate_chain: Vec<u8>,
    pub private_key: Vec<u8>,
    /// The CAs a `tls_client_auth` client's certificate chains to; without them no client
    /// certificate is asked for.
    pub client_ca: Option<Vec<u8>>,
}

impl std::fmt::Debug for TlsFiles {
    /// Never the private key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsFiles")
            .field("client_ca", &self.client_ca.is_some())
            .finish_non_exhaustive()
    }
}

impl TlsFiles {
    /// The rustls configuration the demo serves.
    pub fn server_config(&self) -> Result<rustls::ServerConfig, String> {
        grantor::tls::server_config(
            &self.certificate_chain,
            &self.private_key,
            self.client_ca.as_deref(),
        )
        .map_err(|e| format!("TLS: {e}"))
    }
}

/// The demo's pairwise secret when `GRANTOR_PAIRWISE_SECRET` is not set: fixed, so pairwise
/// `sub` values survive a restart of the demo, and public in this source, so never for a
/// deployment (anyone could compute its clients' subjects).
pub const DEMO_PAIRWISE_SECRET: [u8; 32] = *b"grantor-demo-pairwise-subjects!!";

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
    /// The default: a SQLite file in the OS temporary directory, named for the listen address
    /// (`grantor-demo-127.0.0.1_8080.sqlite3`), when built with the `sqlite` feature (on by
    /// default): state survives a restart on the same address, servers on other addresses
    /// share nothing, and there is nothing to install. Without the feature, memory.
    pub fn default_for(addr: SocketAddr) -> Self {
        if cfg!(feature = "sqlite") {
            let name = addr.to_string().replace([':', '[', ']'], "_");
            let path = std::env::temp_dir().join(format!("grantor-demo-{name}.sqlite3"));
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
    /// `--store` / `GRANTOR_STORE` (see [`StoreChoice`]), `--profile` / `GRANTOR_PROFILE`
    /// (`oauth2`, the default, `oauth2.1`, `fapi2` or `fapi2-security`), `--refresh-grace` / `GRANTOR_REFRESH_GRACE`
    /// (seconds, default 0), `--access-tokens` / `GRANTOR_ACCESS_TOKENS` (`opaque`, the default,
    /// or `jwt`), `--device-code-ttl` / `GRANTOR_DEVICE_CODE_TTL` (seconds, default 600).
    pub fn from_args_and_env() -> Result<Self, String> {
        let mut addr = std::env::var("GRANTOR_ADDR").ok();
        let mut issuer = std::env::var("GRANTOR_ISSUER").ok();
        let mut code_ttl = std::env::var("GRANTOR_CODE_TTL").ok();
        let mut store = std::env::var("GRANTOR_STORE").ok();
        let mut profile = std::env::var("GRANTOR_PROFILE").ok();
        let mut refresh_grace = std::env::var("GRANTOR_REFRESH_GRACE").ok();
        let mut access_tokens = std::env::var("GRANTOR_ACCESS_TOKENS").ok();
        let mut device_code_ttl = std::env::var("GRANTOR_DEVICE_CODE_TTL").ok();
        let mut session_ttl = std::env::var("GRANTOR_SESSION_TTL").ok();
        let mut fetch_allow_loopback = std::env::var("GRANTOR_FETCH_ALLOW_LOOPBACK").ok();
        let mut fetch_ca_file = std::env::var("GRANTOR_FETCH_CA_FILE").ok();
        let mut documents = std::env::var("GRANTOR_CLIENT_ID_METADATA_DOCUMENTS").ok();
        let mut registration_idle_ttl = std::env::var("GRANTOR_REGISTRATION_IDLE_TTL").ok();
        let mut metrics = std::env::var("GRANTOR_METRICS").ok();
        let mut tls_cert = std::env::var("GRANTOR_TLS_CERT").ok();
        let mut tls_key = std::env::var("GRANTOR_TLS_KEY").ok();
        let mut tls_client_ca = std::env::var("GRANTOR_TLS_CLIENT_CA").ok();
        let mut trusted: Vec<String> = std::env::var("GRANTOR_TRUST_ISSUER")
            .map(|all| all.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let mut trusted_from_flags = true;
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
                None => (arg.clone(), None),
            };
            // Repeatable: each names one more issuer (the flags replace the variable's).
            if name == "--trust-issuer" {
                let value = inline.or_else(|| args.next());
                let value = value.ok_or_else(|| format!("{name} needs a value"))?;
                if std::mem::take(&mut trusted_from_flags) {
                    trusted.clear();
                }
                trusted.push(value);
                continue;
            }
            let slot = match name.as_str() {
                "--addr" => &mut addr,
                "--issuer" => &mut issuer,
                "--code-ttl" => &mut code_ttl,
                "--store" => &mut store,
                "--profile" => &mut profile,
                "--refresh-grace" => &mut refresh_grace,
                "--access-tokens" => &mut access_tokens,
                "--device-code-ttl" => &mut device_code_ttl,
                "--session-ttl" => &mut session_ttl,
                "--fetch-allow-loopback" => &mut fetch_allow_loopback,
                "--fetch-ca-file" => &mut fetch_ca_file,
                "--client-id-metadata-documents" => &mut documents,
                "--registration-idle-ttl" => &mut registration_idle_ttl,
                "--metrics" => &mut metrics,
                "--tls-cert" => &mut tls_cert,
                "--tls-key" => &mut tls_key,
                "--tls-client-ca" => &mut tls_client_ca,
                "-h" | "--help" => {
                    return Err(
                        "usage: [--addr HOST:PORT] [--issuer URL] [--code-ttl SECONDS]\n\
                                [--store memory|sqlite:PATH|postgres:URL] [--profile oauth2|oauth2.1|fapi2|fapi2-security]\n\
                                [--refresh-grace SECONDS] [--access-tokens opaque|jwt]\n\
                                [--device-code-ttl SECONDS] [--session-ttl SECONDS]\n\
                                [--fetch-allow-loopback 0|1] [--fetch-ca-file PEM]\n\
                                [--client-id-metadata-documents on|off]\n\
                                [--registration-idle-ttl SECONDS] [--metrics on|off]\n\
                                [--trust-issuer ISSUER=JWKS_URL]...\n\
                                [--tls-cert PEM --tls-key PEM [--tls-client-ca PEM]]\n\
                                (or GRANTOR_ADDR, GRANTOR_ISSUER, GRANTOR_CODE_TTL, GRANTOR_STORE,\n\
                                GRANTOR_PROFILE, GRANTOR_REFRESH_GRACE, GRANTOR_ACCESS_TOKENS,\n\
                                GRANTOR_DEVICE_CODE_TTL, GRANTOR_SESSION_TTL,\n\
                                GRANTOR_FETCH_ALLOW_LOOPBACK, GRANTOR_FETCH_CA_FILE,\n\
                                GRANTOR_CLIENT_ID_METADATA_DOCUMENTS,\n\
                                GRANTOR_REGISTRATION_IDLE_TTL, GRANTOR_TRUST_ISSUER,\n\
                                GRANTOR_METRICS, GRANTOR_TLS_CERT, GRANTOR_TLS_KEY,\n\
                                GRANTOR_TLS_CLIENT_CA;\n\
                                GRANTOR_KEY_ENCRYPTION_KEY and GRANTOR_PAIRWISE_SECRET,\n\
                                environment only, each 32 bytes in base64)"
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
        let tls = match (tls_cert, tls_key) {
            (Some(cert), Some(key)) => {
                let read = |what: &str, path: &str| {
                    std::fs::read(path).map_err(|e| format!("{what} {path}: {e}"))
                };
                Some(TlsFiles {
                    certificate_chain: read("--tls-cert", &cert)?,
                    private_key: read("--tls-key", &key)?,
                    client_ca: match tls_client_ca {
                        Some(path) => Some(read("--tls-client-ca", &path)?),
                        None => None,
                    },
                })
            }
            (None, None) if tls_client_ca.is_some() => {
                return Err("--tls-client-ca needs --tls-cert and --tls-key".to_owned());
            }
            (None, None) => None,
            _ => return Err("--tls-cert and --tls-key go together".to_owned()),
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let issuer = issuer.unwrap_or_else(|| format!("{scheme}://{addr}"));
        let code_ttl = match code_ttl {
            Some(s) => Duration::from_secs(s.parse().map_err(|e| format!("bad code TTL: {e}"))?),
            None => Duration::from_secs(60),
        };
        let refresh_grace = match refresh_grace {
            Some(s) => Some(Duration::from_secs(
                s.parse().map_err(|e| format!("bad refresh grace: {e}"))?,
            )),
            None => None,
        };
        let device_code_ttl = match device_code_ttl {
            Some(s) => {
                Duration::from_secs(s.parse().map_err(|e| format!("bad device code TTL: {e}"))?)
            }
            None => Duration::from_secs(600),
        };
        let trusted_issuers = trusted
            .iter()
            .map(|pair| match pair.split_once('=') {
                Some((issuer, jwks)) if !issuer.is_empty() && !jwks.is_empty() => {
                    Ok((issuer.to_owned(), jwks.to_owned()))
                }
                _ => Err(format!("bad trusted issuer {pair:?}: ISSUER=JWKS_URL")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let registration_idle_ttl = match registration_idle_ttl {
            Some(s) => Duration::from_secs(
                s.parse()
                    .map_err(|e| format!("bad registration idle TTL: {e}"))?,
            ),
            None => Duration::from_secs(30 * 86_400),
        };
        let session_ttl = match session_ttl {
            Some(s) => Duration::from_secs(s.parse().map_err(|e| format!("bad session TTL: {e}"))?),
            None => Duration::from_secs(86_400),
        };
        let fetch_allow_loopback = match fetch_allow_loopback.as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(other) => return Err(format!("bad --fetch-allow-loopback {other}: 0 or 1")),
        };
        let metrics = match metrics.as_deref() {
            None | Some("on") => true,
            Some("off") => false,
            Some(other) => return Err(format!("bad --metrics {other}: on or off")),
        };
        let client_id_metadata_documents = match documents.as_deref() {
            None | Some("on") => true,
            Some("off") => false,
            Some(other) => {
                return Err(format!(
                    "bad --client-id-metadata-documents {other}: on or off"
                ));
            }
        };
        let profile = match profile.as_deref() {
            None | Some("oauth2") => grantor::settings::Profile::OAuth2,
            Some("oauth2.1") => grantor::settings::Profile::OAuth21,
            // FAPI 2.0: the Security Profile and Message Signing (signed request objects).
            Some("fapi2") => grantor::settings::Profile::Fapi2MessageSigning,
            // The Security Profile alone.
            Some("fapi2-security") => grantor::settings::Profile::Fapi2,
            Some(other) => {
                return Err(format!(
                    "bad profile {other}: oauth2, oauth2.1, fapi2 or fapi2-security"
                ));
            }
        };
        let jwt_access_tokens = match access_tokens.as_deref() {
            None | Some("opaque") => false,
            Some("jwt") if cfg!(feature = "jwt") => true,
            Some("jwt") => return Err("JWT access tokens need the jwt feature".to_owned()),
            Some(other) => return Err(format!("bad access tokens {other}: opaque or jwt")),
        };
        let key_encryption = match std::env::var("GRANTOR_KEY_ENCRYPTION_KEY") {
            Ok(encoded) => Some(
                grantor::store::KeyEncryptionKey::from_base64(&encoded)
                    .map_err(|e| format!("GRANTOR_KEY_ENCRYPTION_KEY: {e}"))?,
            ),
            Err(_) => None,
        };
        // A secret, so never a flag (`ps` shows a process's arguments to every user).
        let pairwise_secret = match std::env::var("GRANTOR_PAIRWISE_SECRET") {
            Ok(encoded) => grantor::settings::PairwiseSecret::from_base64(&encoded)
                .map_err(|e| format!("GRANTOR_PAIRWISE_SECRET: {e}"))?,
            Err(_) => grantor::settings::PairwiseSecret::from_bytes(DEMO_PAIRWISE_SECRET),
        };
        let store = match store {
            Some(spec) => StoreChoice::parse(&spec)?,
            None => StoreChoice::default_for(addr),
        };
        Ok(Self {
            addr,
            issuer,
            code_ttl,
            profile,
            refresh_grace,
            device_code_ttl,
            jwt_access_tokens,
            store,
            key_encryption,
            session_ttl,
            fetch_allow_loopback,
            fetch_ca_file,
            client_id_metadata_documents,
            pairwise_secret,
            registration_idle_ttl,
            trusted_issuers,
            metrics,
            tls,
        })
    }
}
