//! What both demo servers share: settings, the seeded deployment of the demo contract, and the
//! demo's own routes (`/`, `/api/me` and `/api/me/strong`). Everything here works on `http`
//! types.

#![allow(dead_code)]

pub mod batched;
mod events;
mod exchange;
mod metrics;
mod seed;
mod settings;
mod totp;

use std::net::SocketAddr;
use std::time::Duration;

use grantor::*;
use grantor::{client::*, settings::*, signin::*, store::*};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response};
pub use metrics::Metrics;
pub use settings::Settings;

/// Logs to stderr through `tracing` (`RUST_LOG` filters: a level, or `target=level` directives
/// separated by commas; default `info,grantor=warn`: the demo's line per request, and
/// grantor's warnings), in plain text. grantor's span per endpoint call (`grantor` at `INFO`,
/// with the endpoint, client and outcome) is left out by default: the subscriber formats its
/// fields on every request, 10–20 % of the fastest flows' throughput as measured;
/// `RUST_LOG=info` adds it. Lines are formatted where they are
/// logged and written in batches by a thread of their own ([`batched`]): a request never
/// waits on a write to stderr. When more than 4 MiB of lines wait (a terminal slower than the
/// load), new ones are dropped, and counted, rather than slow the server down. Keep the
/// returned guard for the process's life: dropping it writes what waits and stops the thread.
pub fn init_logging() -> std::io::Result<batched::WriterGuard> {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::prelude::*;
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|directives| directives.parse::<Targets>().ok())
        .unwrap_or_else(|| {
            Targets::new()
                .with_default(tracing::Level::INFO)
                .with_target("grantor", tracing::Level::WARN)
        });
    let (writer, guard) = batched::Batched::start("demo-log", std::io::stderr(), true)?;
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(writer))
        .with(filter)
        .init();
    Ok(guard)
}

/// Prints the one line that says where the demo listens (tests wait for it on stdout).
pub fn announce(framework: &str, addr: SocketAddr, settings: &Settings) {
    let scheme = if settings.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let issuer = &settings.issuer;
    println!("grantor demo ({framework}) listening on {scheme}://{addr} with issuer {issuer}");
}

/// Opens and seeds the chosen store and builds the demo's server over it.
pub async fn demo(settings: &Settings) -> Result<AuthorizationServer, Box<dyn std::error::Error>> {
    // The demo API at `{issuer}/api` is the default audience (examples/README.md).
    let audience = format!("{}/api", settings.issuer.trim_end_matches('/'));
    let mut builder = AuthorizationServer::builder()
        .issuer(settings.issuer.clone())
        .code_lifetime(settings.code_ttl)
        .profile(settings.profile);
    if let Some(grace) = settings.refresh_grace {
        builder = builder.refresh_grace(grace);
    }
    let builder = builder
        .default_audience(audience.clone())
        // The second resource of examples/README.md; any other `resource` is `invalid_target`.
        .resources(["https://resource.example/"])
        .scopes_supported(&Scope::parse("profile email admin")?)
        .registration(registration_policy()?.idle_lifetime(Some(settings.registration_idle_ttl)))
        // RFC 9126: optional for every seeded client.
        .pushed_requests(grantor::settings::PushedRequests::new())
        // RFC 8628: the verification page is `/device` (below).
        .device_flow(grantor::settings::DeviceFlow::new().lifetime(settings.device_code_ttl))
        // RFC 8693: service-client only (examples/common/exchange.rs).
        .token_exchange(std::sync::Arc::new(exchange::DemoExchange::new(&audience)))
        // Clients change only through the server here (registration), which the cache sees at
        // once; it saves a store round trip on nearly every request.
        .cache_clients(std::time::Duration::from_secs(1))
        // Every event as a JSON line on standard output (the request log goes to stderr).
        .events(std::sync::Arc::new(events::JsonLines::stdout()?));
    // examples/README.md part 4: a password sign-in reaches `urn:grantor:acr:password`; Alice's TOTP
    // second factor, asked for by `acr_values` or an essential `acr` claim, `…:mfa`.
    let builder = builder
        .acr_levels(
            AcrLevels::new([totp::PASSWORD_ACR, totp::MFA_ACR])
                .password(totp::PASSWORD_ACR)
                .second_factor(totp::MFA_ACR),
        )
        .second_factor(std::sync::Arc::new(totp::DemoTotp::new()?));
    let builder = sender_constrained(builder);
    // Mutual TLS (RFC 8705): with a client CA the demo asks for client certificates, and a
    // token requested with one is bound to it.
    // `tls_client_auth` certificates chain to that CA; the endpoints that take certificates are
    // the usual ones, on the same address (`mtls_endpoint_aliases`, RFC 8705 section 5).
    let client_ca = settings.tls.as_ref().and_then(|tls| tls.client_ca.as_ref());
    let builder = match client_ca {
        Some(ca) => builder.certificate_bound_tokens(true).mutual_tls(
            grantor::mtls::MutualTls::new()
                .client_ca_pem(ca)
                .endpoint_aliases(settings.issuer.clone()),
        ),
        None => builder,
    };
    let builder = openid_connect(builder, settings)?;
    let builder = trusted_issuers(builder, settings);
    let builder = builder.session_ttl(settings.session_ttl);
    // The demo serves plain HTTP on whatever address it is given (examples/README.md), or HTTPS
    // with `--tls-cert`; a deployment puts TLS in front or serves it and gives an https issuer, and grantor refuses a non-loopback http one
    // unless told, as here, that it is meant.
    let builder = if settings.issuer.starts_with("http://") {
        builder.insecure_http_issuer()
    } else {
        builder
    };
    // With GRANTOR_KEY_ENCRYPTION_KEY (32 bytes in base64, never a flag: flags show in `ps`),
    // signing and sealing keys rest encrypted in the store. Without it the demo chooses, out
    // loud, to keep them in the clear (grantor refuses a durable store otherwise): a demo must
    // start with no secret to hand, and restart with the keys it made.
    let builder = match &settings.key_encryption {
        Some(key) => builder.encrypt_keys_at_rest(key.clone()),
        None => {
            if !matches!(settings.store, settings::StoreChoice::Memory) {
                tracing::warn!(
                    store = %settings.store,
                    "signing and sealing keys rest in the clear in the store: whoever reads it \
                     can sign tokens; set GRANTOR_KEY_ENCRYPTION_KEY (openssl rand -base64 32) \
                     to keep them encrypted"
                );
            }
            builder.keys_in_clear()
        }
    };
    let server = seed::open(
        &settings.store,
        &audience,
        settings.jwt_access_tokens,
        builder,
    )
    .await?
    .build()?;
    tracing::info!(store = %settings.store, "store ready");
    forget_idle_clients(server.clone(), settings.registration_idle_ttl);
    Ok(server)
}

/// Deletes the self-registered clients unused for `ttl` that never came back (one that does is
/// refused and deleted at its request), every hour or every `ttl` if that is shorter.
fn forget_idle_clients(server: AuthorizationServer, ttl: std::time::Duration) {
    if ttl.is_zero() {
        return;
    }
    let every = ttl.min(std::time::Duration::from_secs(3600));
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        loop {
            ticks.tick().await;
            match server.forget_idle_clients().await {
                Ok(0) => {}
                Ok(clients) => tracing::info!(clients, "forgot idle self-registered clients"),
                Err(error) => tracing::warn!(%error, "forgetting idle clients failed"),
            }
        }
    });
}

/// The identity providers whose assertions the JWT-bearer grant takes (`--trust-issuer`), their
/// keys fetched from their JWKS URLs through the outbound client when first needed.
#[cfg(feature = "private-key-jwt")]
fn trusted_issuers(
    builder: AuthorizationServerBuilder,
    settings: &Settings,
) -> AuthorizationServerBuilder {
    settings
        .trusted_issuers
        .iter()
        .fold(builder, |builder, (issuer, jwks_uri)| {
            builder.trust_issuer(grantor::trust::TrustedIssuer::jwks_uri(issuer, jwks_uri))
        })
}

#[cfg(not(feature = "private-key-jwt"))]
fn trusted_issuers(
    builder: AuthorizationServerBuilder,
    _settings: &Settings,
) -> AuthorizationServerBuilder {
    builder
}

/// DPoP as examples/README.md has it (RFC 9449): a token request with a valid proof gets a bound
/// token; proofs stay optional, and their ids are spent in the store every node shares.
#[cfg(feature = "dpop")]
fn sender_constrained(builder: AuthorizationServerBuilder) -> AuthorizationServerBuilder {
    builder.dpop(grantor::dpop::Dpop::new())
}

#[cfg(not(feature = "dpop"))]
fn sender_constrained(builder: AuthorizationServerBuilder) -> AuthorizationServerBuilder {
    builder
}

/// OpenID Connect as examples/README.md part 3 has it: ID tokens (RS256 unless a client registered
/// ES256 or EdDSA), userinfo and the discovery document, and pairwise subjects for the clients
/// that register `subject_type: pairwise` (under `GRANTOR_PAIRWISE_SECRET`).
/// With feature `outbound`, back-channel logout tokens are posted to clients (loopback allowed
/// only under `--fetch-allow-loopback 1`, for tests; `--fetch-ca-file` only adds a trusted
/// root). As the enterprise's identity provider, `service-client` trades
/// users' ID tokens for ID-JAGs aimed at other authorization servers
/// (examples/common/exchange.rs).
#[cfg(feature = "oidc")]
fn openid_connect(
    builder: AuthorizationServerBuilder,
    settings: &Settings,
) -> Result<AuthorizationServerBuilder, Box<dyn std::error::Error>> {
    let openid = grantor::settings::OpenIdConnect::default()
        .pairwise_secret(settings.pairwise_secret.clone());
    let builder = builder
        .openid_connect(openid)
        .id_jag_issuance(std::sync::Arc::new(exchange::DemoIdJag));
    outbound(builder, settings)
}

#[cfg(not(feature = "oidc"))]
fn openid_connect(
    builder: AuthorizationServerBuilder,
    _settings: &Settings,
) -> Result<AuthorizationServerBuilder, Box<dyn std::error::Error>> {
    Ok(builder)
}

#[cfg(all(feature = "oidc", feature = "outbound"))]
fn outbound(
    builder: AuthorizationServerBuilder,
    settings: &Settings,
) -> Result<AuthorizationServerBuilder, Box<dyn std::error::Error>> {
    use grantor::outbound::HttpOutbound;
    // Two separate settings: a root to trust, and (tests only) loopback to reach.
    let mut outbound = HttpOutbound::new()?;
    if let Some(path) = &settings.fetch_ca_file {
        outbound = outbound.extra_root(&std::fs::read(path)?)?;
    }
    if settings.fetch_allow_loopback {
        outbound = outbound.allow_loopback()?;
    }
    let builder = builder.outbound(std::sync::Arc::new(outbound));
    // Client ID metadata documents (examples/README.md part 3), for what self-registered clients
    // may have: `profile email`, never `admin`.
    if settings.client_id_metadata_documents {
        let documents = grantor::settings::ClientIdDocuments::new().scope("profile email");
        return Ok(builder.client_id_metadata_documents(documents));
    }
    Ok(builder)
}

#[cfg(all(feature = "oidc", not(feature = "outbound")))]
fn outbound(
    builder: AuthorizationServerBuilder,
    _settings: &Settings,
) -> Result<AuthorizationServerBuilder, Box<dyn std::error::Error>> {
    Ok(builder)
}

/// Self-registration as examples/README.md has it: open to anyone (no initial access token), only the
/// `authorization_code` and `refresh_token` grants, `https` or loopback `http` redirect URIs,
/// `client_secret_basic` or `none` (PKCE), the approval page required, at most `profile email`
/// (never `admin`), and at most 60 registrations a minute (the default bound).
fn registration_policy() -> Result<RegistrationPolicy, ScopeError> {
    Ok(RegistrationPolicy::new()
        .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
        .approval(Approval::Required)
        .public_clients(true)
        .scope(&Scope::parse("profile email")?)
        // The seeded clients' names (seed.rs): a self-registered client cannot pass for one.
        .reserved_client_names(seed::CLIENT_NAMES))
}

/// `GET /api/me`'s answer for a valid bearer (or DPoP) token: the user's email and id (the
/// client's id for a client-credentials token), the client and the scope.
pub fn me(grant: &AccessGrant) -> Response<String> {
    let authorization = &grant.authorization;
    let user = authorization.user.as_ref();
    let body = serde_json::json!({
        "email": user.map(|u| u.username()),
        "sub": user.map_or(authorization.client_id.as_str(), |u| u.id().as_str()),
        "client_id": authorization.client_id.as_str(),
        "scope": authorization.scope.as_str(),
    });
    let mut response = Response::new(body.to_string());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// What `GET /api/me/strong` demands of the sign-in behind its token (RFC 9470 step-up): a
/// second factor (`urn:grantor:acr:mfa`) within the last five minutes. Otherwise it answers 401
/// `insufficient_user_authentication` with `acr_values="urn:grantor:acr:mfa", max_age=300`.
pub struct StrongSignIn;

impl RequiredAuthentication for StrongSignIn {
    const ACR_VALUES: &'static [&'static str] = &["urn:grantor:acr:mfa"];
    const MAX_AGE: Option<Duration> = Some(Duration::from_secs(300));
}

/// `GET /`: a page saying what this is, with the headers of grantor's pages.
pub fn index(site: &Site) -> Response<String> {
    let issuer = grantor::signin::escape_html(site.server().issuer());
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>grantor demo</title>\
         </head><body><h1>grantor demo</h1><p>An OAuth 2.0 authorization server. Metadata: \
         <a href=\"/.well-known/oauth-authorization-server\">{issuer}/.well-known/oauth-authorization-server</a>\
         </p></body></html>\n"
    );
    site.html_page(http::StatusCode::OK, html)
}

/// Resolves on Ctrl-C or SIGTERM (actix-web stops on them by itself).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
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
    tracing::info!("shutting down");
}
