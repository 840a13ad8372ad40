//! The flows under load: what each one sends, and what it needs made beforehand (untimed).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hyper::header::HeaderValue;
use hyper::{Method, Request};

use crate::http::{Conn, Reply, basic, bearer, form};

pub const CALLBACK: &str = "http://127.0.0.1:8081/callback";
const ALICE: (&str, &str) = ("alice@example.com", "alice-password-1");

/// Every flow, in the order `--flow all` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    ClientCredentials,
    Introspection,
    Bearer,
    Refresh,
    Password,
    Revocation,
    CodeExchange,
}

impl Flow {
    pub const ALL: [Flow; 7] = [
        Flow::ClientCredentials,
        Flow::Introspection,
        Flow::Bearer,
        Flow::Refresh,
        Flow::Password,
        Flow::Revocation,
        Flow::CodeExchange,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Flow::ClientCredentials => "client_credentials",
            Flow::Introspection => "introspection",
            Flow::Bearer => "bearer",
            Flow::Refresh => "refresh",
            Flow::Password => "password",
            Flow::Revocation => "revocation",
            Flow::CodeExchange => "code_exchange",
        }
    }

    pub fn parse(name: &str) -> Option<Flow> {
        Flow::ALL.into_iter().find(|flow| flow.name() == name)
    }
}

/// Limits on what the consuming flows prepare before their timed window.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// At most this many access tokens minted for `revocation`…
    pub tokens: usize,
    /// …and at most this many codes made through the sign-in page for `code_exchange`…
    pub codes: usize,
    /// …each within this much time.
    pub time: Duration,
}

/// What the workers of one flow share: its credentials and anything prepared for it.
pub struct Plan {
    pub flow: Flow,
    demo: HeaderValue,
    /// `api-server`'s credentials (introspection), or `plain-client`'s (code exchange).
    other: HeaderValue,
    /// The one token introspected or presented at `/api/me`.
    token: String,
    /// One-use items (access tokens to revoke, codes to redeem), handed out in order.
    pool: Vec<String>,
    next: AtomicUsize,
    /// How far into `pool` the warm-up may go: it must leave the rest to the timed window.
    warm_limit: usize,
    /// What the setup wants said beside the numbers.
    pub note: String,
}

/// One connection's own state: its socket and, for `refresh`, the head of its chain.
pub struct Worker {
    pub conn: Conn,
    chain: Option<String>,
    /// Refresh chains started again after a refused refresh (each is a counted non-2xx).
    pub restarts: usize,
}

impl Worker {
    pub fn new(conn: Conn) -> Self {
        Self {
            conn,
            chain: None,
            restarts: 0,
        }
    }
}

/// One request's fate, for the tally.
pub enum Outcome {
    /// The server answered this status after this long.
    Answered(u16, Duration),
    /// No answer (connection refused or reset, bad HTTP).
    Failed,
    /// The flow's one-use items ran out: this worker stops.
    Exhausted,
}

impl Plan {
    /// Makes what `flow` needs before timing, over the workers' own connections.
    pub async fn prepare(
        flow: Flow,
        workers: &mut [Worker],
        budget: Budget,
    ) -> Result<Plan, String> {
        let mut plan = Plan {
            flow,
            demo: basic("demo-client", "demo-secret"),
            other: basic("api-server", "api-secret"),
            token: String::new(),
            pool: Vec::new(),
            next: AtomicUsize::new(0),
            warm_limit: 0,
            note: String::new(),
        };
        let conn = &mut workers.first_mut().ok_or("no connections")?.conn;
        match flow {
            Flow::ClientCredentials | Flow::Password => {}
            Flow::Introspection => {
                plan.token = client_credentials_token(conn, &plan.demo).await?;
                let request = plan.request(conn, "")?;
                let reply = conn.send(request).await?;
                if reply.json()["active"] != true {
                    return Err(format!("introspection: {}", reply.describe()));
                }
            }
            Flow::Bearer => {
                plan.token = password_grant(conn, &plan.demo).await?.0;
                let request = plan.request(conn, "")?;
                let reply = conn.send(request).await?;
                if reply.status != 200 {
                    return Err(format!("/api/me: {}", reply.describe()));
                }
            }
            Flow::Refresh => {
                let demo = plan.demo.clone();
                let chains = join_all(workers, |mut conn| {
                    let demo = demo.clone();
                    async move {
                        let chain = password_grant(&mut conn, &demo).await;
                        (conn, chain)
                    }
                })
                .await;
                for (worker, chain) in workers.iter_mut().zip(chains) {
                    worker.chain = Some(chain?.1);
                }
            }
            Flow::Revocation => {
                let demo = plan.demo.clone();
                plan.pool = fill(workers, budget.tokens, budget.time, move |mut conn| {
                    let demo = demo.clone();
                    async move {
                        let token = client_credentials_token(&mut conn, &demo).await;
                        (conn, token)
                    }
                })
                .await?;
                plan.note = format!("{} tokens minted beforehand", plan.pool.len());
            }
            Flow::CodeExchange => {
                plan.other = basic("plain-client", "plain-secret");
                plan.pool = fill(workers, budget.codes, budget.time, |mut conn| async move {
                    let code = signed_in_code(&mut conn).await;
                    (conn, code)
                })
                .await?;
                plan.note = format!("{} codes made beforehand", plan.pool.len());
            }
        }
        plan.warm_limit = plan.pool.len() / 10;
        Ok(plan)
    }

    pub fn consumes(&self) -> bool {
        matches!(self.flow, Flow::Revocation | Flow::CodeExchange)
    }

    /// One-use items handed out so far (the whole pool once it ran out).
    pub fn used(&self) -> usize {
        self.next.load(Ordering::Relaxed).min(self.pool.len())
    }

    /// Sends the flow's next request and times it from the first byte written to the last byte
    /// of the answer read. Building the request and reading a refresh answer's new token are
    /// outside the measured span.
    pub async fn step(&self, worker: &mut Worker, warming: bool) -> Outcome {
        let item = if self.consumes() {
            let limit = if warming {
                self.warm_limit
            } else {
                self.pool.len()
            };
            let taken = self
                .next
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |i| {
                    (i < limit).then_some(i + 1)
                });
            match taken {
                Ok(i) => self.pool[i].as_str(),
                Err(_) => return Outcome::Exhausted,
            }
        } else {
            worker.chain.as_deref().unwrap_or("")
        };
        let Ok(request) = self.request(&worker.conn, item) else {
            return Outcome::Failed;
        };
        let started = Instant::now();
        let reply = worker.conn.send(request).await;
        let elapsed = started.elapsed();
        match reply {
            Ok(reply) => {
                if self.flow == Flow::Refresh {
                    self.advance(worker, &reply).await;
                }
                Outcome::Answered(reply.status, elapsed)
            }
            Err(_) => Outcome::Failed,
        }
    }

    /// Moves a refresh chain to the token just issued. A refused refresh ends the chain, so a
    /// new one starts from a password grant (counted in the notes; its time is not a sample).
    async fn advance(&self, worker: &mut Worker, reply: &Reply) {
        if let Some(next) = reply.json()["refresh_token"].as_str() {
            worker.chain = Some(next.to_owned());
            return;
        }
        worker.restarts += 1;
        if let Ok((_, refresh)) = password_grant(&mut worker.conn, &self.demo).await {
            worker.chain = Some(refresh);
        }
    }

    /// The flow's request; `item` is the refresh token, access token to revoke or code.
    fn request(&self, conn: &Conn, item: &str) -> Result<Request<String>, String> {
        let target = conn.target();
        let token = "/api/oauth/token";
        match self.flow {
            Flow::ClientCredentials => target.request(
                Method::POST,
                token,
                Some(&self.demo),
                Some(form(&[("grant_type", "client_credentials")])),
                &[],
            ),
            Flow::Introspection => target.request(
                Method::POST,
                "/api/oauth/introspect",
                Some(&self.other),
                Some(form(&[("token", &self.token)])),
                &[],
            ),
            Flow::Bearer => target.request(
                Method::GET,
                "/api/me",
                Some(&bearer(&self.token)?),
                None,
                &[],
            ),
            Flow::Refresh => target.request(
                Method::POST,
                token,
                Some(&self.demo),
                Some(form(&[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", item),
                ])),
                &[],
            ),
            Flow::Password => target.request(
                Method::POST,
                token,
                Some(&self.demo),
                Some(password_form()),
                &[],
            ),
            Flow::Revocation => target.request(
                Method::POST,
                "/api/oauth/revoke",
                Some(&self.demo),
                Some(form(&[
                    ("token", item),
                    ("token_type_hint", "access_token"),
                ])),
                &[],
            ),
            Flow::CodeExchange => target.request(
                Method::POST,
                token,
                Some(&self.other),
                Some(form(&[
                    ("grant_type", "authorization_code"),
                    ("code", item),
                    ("redirect_uri", CALLBACK),
                ])),
                &[],
            ),
        }
    }
}

fn password_form() -> String {
    form(&[
        ("grant_type", "password"),
        ("username", ALICE.0),
        ("password", ALICE.1),
        ("scope", "profile"),
    ])
}

/// A client-credentials access token of demo-client (audience: the demo API).
async fn client_credentials_token(conn: &mut Conn, demo: &HeaderValue) -> Result<String, String> {
    let body = form(&[("grant_type", "client_credentials")]);
    let request = conn.target().request(
        Method::POST,
        "/api/oauth/token",
        Some(demo),
        Some(body),
        &[],
    )?;
    let reply = conn.send(request).await?;
    match reply.json()["access_token"].as_str() {
        Some(token) => Ok(token.to_owned()),
        None => Err(format!("client credentials: {}", reply.describe())),
    }
}

/// Alice's access and refresh tokens from the password grant (demo-client, scope `profile`).
async fn password_grant(conn: &mut Conn, demo: &HeaderValue) -> Result<(String, String), String> {
    let request = conn.target().request(
        Method::POST,
        "/api/oauth/token",
        Some(demo),
        Some(password_form()),
        &[],
    )?;
    let reply = conn.send(request).await?;
    let json = reply.json();
    match (
        json["access_token"].as_str(),
        json["refresh_token"].as_str(),
    ) {
        (Some(access), Some(refresh)) => Ok((access.to_owned(), refresh.to_owned())),
        _ => Err(format!("password grant: {}", reply.describe())),
    }
}

/// A code for plain-client (no approval step) the way a browser gets one: the authorization
/// URL, then the sign-in form with its CSRF token and the session cookie it set.
async fn signed_in_code(conn: &mut Conn) -> Result<String, String> {
    let query = form(&[
        ("response_type", "code"),
        ("client_id", "plain-client"),
        ("redirect_uri", CALLBACK),
        ("scope", "profile"),
    ]);
    let path = format!("/api/oauth/authorize?{query}");
    let page = conn
        .send(conn.target().request(Method::GET, &path, None, None, &[])?)
        .await?;
    let html = String::from_utf8_lossy(&page.body);
    let csrf = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .ok_or_else(|| format!("no CSRF token on the sign-in page: {}", page.describe()))?;
    // The cookie jar of one sign-in: every cookie the page set, sent back as `name=value`.
    let cookies: Vec<&str> = page
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| value.split(';').next())
        .collect();
    let body = form(&[("csrf", csrf), ("username", ALICE.0), ("password", ALICE.1)]);
    let request = conn.target().request(
        Method::POST,
        "/signin",
        None,
        Some(body),
        &[("cookie", &cookies.join("; "))],
    )?;
    let reply = conn.send(request).await?;
    let location = reply
        .headers
        .get("location")
        .and_then(|value| value.to_str().ok())
        .filter(|_| reply.status == 303)
        .ok_or_else(|| format!("sign-in did not redirect: {}", reply.describe()))?;
    let url = url::Url::parse(location).map_err(|e| format!("bad Location {location}: {e}"))?;
    url.query_pairs()
        .find(|(name, _)| name == "code")
        .map(|(_, code)| code.into_owned())
        .ok_or_else(|| format!("no code in {location}"))
}

/// Runs `make` on every connection at once (each task owns its connection and hands it back);
/// one answer per connection, in order.
async fn join_all<T, F, Fut>(workers: &mut [Worker], make: F) -> Vec<Result<T, String>>
where
    F: Fn(Conn) -> Fut,
    Fut: Future<Output = (Conn, Result<T, String>)> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = workers
        .iter_mut()
        .map(|worker| {
            let spare = Conn::new(worker.conn.target().clone());
            tokio::spawn(make(std::mem::replace(&mut worker.conn, spare)))
        })
        .collect();
    let mut out = Vec::with_capacity(handles.len());
    for (worker, handle) in workers.iter_mut().zip(handles) {
        match handle.await {
            Ok((conn, answer)) => {
                worker.conn = conn;
                out.push(answer);
            }
            Err(error) => out.push(Err(format!("a setup task failed: {error}"))),
        }
    }
    out
}

/// Makes up to `cap` one-use items with `make`, over every connection at once, for at most
/// `time`. Fails only if nothing could be made.
async fn fill<F, Fut>(
    workers: &mut [Worker],
    cap: usize,
    time: Duration,
    make: F,
) -> Result<Vec<String>, String>
where
    F: Fn(Conn) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = (Conn, Result<String, String>)> + Send + 'static,
{
    let deadline = Instant::now() + time;
    let claimed = Arc::new(AtomicUsize::new(0));
    let batches = join_all(workers, |conn| {
        let claimed = Arc::clone(&claimed);
        let make = make.clone();
        async move {
            let mut conn = conn;
            let mut made = Vec::new();
            let mut failures = 0;
            let mut last_error = None;
            // A server that keeps refusing is not worth the whole time budget.
            while failures < 20
                && Instant::now() < deadline
                && claimed.fetch_add(1, Ordering::Relaxed) < cap
            {
                let (back, item) = make(conn).await;
                conn = back;
                match item {
                    Ok(item) => made.push(item),
                    Err(error) => {
                        failures += 1;
                        last_error = Some(error);
                    }
                }
            }
            let answer = match last_error {
                Some(error) if made.is_empty() => Err(error),
                _ => Ok(made),
            };
            (conn, answer)
        }
    })
    .await;
    let mut pool = Vec::new();
    let mut error = None;
    for batch in batches {
        match batch {
            Ok(items) => pool.extend(items),
            Err(e) => error = Some(e),
        }
    }
    match error {
        Some(error) if pool.is_empty() => Err(error),
        _ => Ok(pool),
    }
}
