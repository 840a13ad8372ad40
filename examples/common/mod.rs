//! What both demo servers share: settings, the seeded deployment of the demo contract, and the
//! host's pages. Everything here works on `http` types; each example maps its framework to it.

#![allow(dead_code)]

mod events;
mod exchange;
mod pages;
mod seed;
mod settings;

use std::net::SocketAddr;

use grantor::*;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, SET_COOKIE};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use pages::{
    Form, approval_html, device_answered_html, device_html, error_html, escape, layout,
    sign_in_html,
};
pub use settings::Settings;

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

/// The demo deployment: grantor's server and the sign-in flow.
pub struct Demo {
    pub server: AuthorizationServer,
    pub flow: SignInFlow,
}

/// Opens and seeds the chosen store and builds the server over it.
pub async fn demo(settings: &Settings) -> Result<Demo, Box<dyn std::error::Error>> {
    // The demo API at `{issuer}/api` is the default audience (CONTRACT.md).
    let audience = format!("{}/api", settings.issuer.trim_end_matches('/'));
    let builder = AuthorizationServer::builder()
        .issuer(settings.issuer.clone())
        .code_lifetime(settings.code_ttl)
        .profile(settings.profile)
        .refresh_grace(settings.refresh_grace)
        .default_audience(audience.clone())
        // The second resource of CONTRACT.md; any other `resource` is `invalid_target`.
        .resources(["https://resource.example/"])
        .scopes_supported(&Scope::parse("profile email admin")?)
        .registration(registration_policy()?)
        // RFC 9126: optional for every seeded client.
        .pushed_requests(grantor::par::PushedRequests::new())
        // RFC 8628: the verification page is `/device` (below).
        .device_flow(grantor::device::DeviceFlow::new().lifetime(settings.device_code_ttl))
        // RFC 8693: service-client only (examples/common/exchange.rs).
        .token_exchange(std::sync::Arc::new(exchange::DemoExchange::new(&audience)))
        // Clients change only through the server here (registration), which the cache sees at
        // once; it saves a store round trip on nearly every request.
        .cache_clients(std::time::Duration::from_secs(1))
        // Every event as a JSON line on standard output (the request log goes to stderr).
        .events(std::sync::Arc::new(events::JsonLines));
    let builder = sender_constrained(builder);
    let server = seed::open(
        &settings.store,
        &audience,
        settings.jwt_access_tokens,
        builder,
    )
    .await?
    .build()?;
    tracing::info!(store = %settings.store, "store ready");
    Ok(Demo {
        flow: SignInFlow::new(server.clone()),
        server,
    })
}

/// DPoP as CONTRACT.md has it (RFC 9449): a token request with a valid proof gets a bound
/// token; proofs stay optional, and their ids are spent in the store every node shares.
#[cfg(feature = "dpop")]
fn sender_constrained(builder: AuthorizationServerBuilder) -> AuthorizationServerBuilder {
    builder.dpop(grantor::dpop::Dpop::new())
}

#[cfg(not(feature = "dpop"))]
fn sender_constrained(builder: AuthorizationServerBuilder) -> AuthorizationServerBuilder {
    builder
}

/// Self-registration as CONTRACT.md has it: open to anyone (no initial access token), only the
/// `authorization_code` and `refresh_token` grants, `https` or loopback `http` redirect URIs,
/// `client_secret_basic` or `none` (PKCE), the approval page required, at most `profile email`
/// (never `admin`), and at most 60 registrations a minute (the default bound).
fn registration_policy() -> Result<RegistrationPolicy, ScopeError> {
    Ok(RegistrationPolicy::new()
        .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
        .approval(Approval::Required)
        .public_clients(true)
        .scope(&Scope::parse("profile email")?))
}

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
            Step::EnterUserCode(problem) => {
                let html = device_html("", Some(&problem.to_string()));
                self.page(StatusCode::BAD_REQUEST, &html, None)
            }
            Step::DeviceAnswered(decision) => {
                self.page(StatusCode::OK, &device_answered_html(decision), None)
            }
        }
    }

    /// `GET /device`: the device verification page (RFC 8628 §3.3), its code prefilled from
    /// `verification_uri_complete`'s `user_code`.
    pub fn device_page(&self, query: Option<&str>) -> Response<String> {
        let form = Form::parse(query.unwrap_or("").as_bytes());
        let html = device_html(form.get("user_code"), None);
        self.page(StatusCode::OK, &html, None)
    }

    /// `POST /device`: the code the user typed; the sign-in page next.
    pub async fn device(&self, body: &[u8]) -> Response<String> {
        let form = Form::parse(body);
        let step = self.flow.enter_user_code(form.get("user_code")).await;
        self.render(step)
    }

    /// `POST /signin`: the sign-in form.
    pub async fn sign_in(&self, headers: &HeaderMap, body: &[u8]) -> Response<String> {
        let form = Form::parse(body);
        let password = Password::new(form.get("password"));
        let step = self
            .flow
            .sign_in(
                self.flow.cookie(headers),
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
            .decide(self.flow.cookie(headers), form.get("csrf"), decision)
            .await;
        self.render(step)
    }

    /// `GET /.well-known/jwks.json`: the access-token signing keys (404 with opaque tokens).
    pub async fn jwks(&self) -> Response<String> {
        #[cfg(feature = "jwt")]
        return self.server.jwks().await;
        #[cfg(not(feature = "jwt"))]
        {
            let mut response = Response::new(String::new());
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    }

    /// `GET /api/me`: the protected resource, for `Authorization: Bearer` or (RFC 9449)
    /// `Authorization: DPoP` with a proof for this method and URI.
    pub async fn me<B>(&self, request: &http::Request<B>) -> Response<String> {
        match self.server.bearer(request, None).await {
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
        if let Some(session) = session
            && let Ok(value) = HeaderValue::from_str(&self.flow.set_cookie(session))
        {
            headers.insert(SET_COOKIE, value);
        }
        response
    }
}
