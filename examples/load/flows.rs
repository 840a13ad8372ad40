//! The flows under load: what each one sends, and what it needs made beforehand (untimed).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hyper::header::HeaderValue;
use hyper::{Method, Request};

use crate::http::{Conn, Reply, basic, bearer, form};
use crate::setup::{
    Client, client_credentials_token, code_in_session, fill, join_all, password_grant,
    registered_client, signed_in,
};

pub const CALLBACK: &str = "http://127.0.0.1:8081/callback";
pub const ALICE: (&str, &str) = ("alice@example.com", "alice-password-1");

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

    /// Whether the flow spends one-use items made beforehand (tokens to revoke, codes).
    pub fn consumes(self) -> bool {
        matches!(self, Flow::Revocation | Flow::CodeExchange)
    }

    pub fn parse(name: &str) -> Option<Flow> {
        Flow::ALL.into_iter().find(|flow| flow.name() == name)
    }
}

/// Limits on what the consuming flows prepare before their timed window.
#[derive(Debug, Clone)]
pub struct Budget {
    /// The scope code flows ask for (`openid profile`: each code exchange signs an ID token).
    pub scope: String,
    /// At most this many access tokens minted for `revocation`…
    pub tokens: usize,
    /// …and at most this many codes made in a sign-on session for `code_exchange`…
    pub codes: usize,
    /// …each within this much time.
    pub time: Duration,
    /// The `id_token_signed_response_alg` of a client registered for `code_exchange`; `None`
    /// uses plain-client (RS256, the server's default).
    pub id_token_alg: Option<String>,
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
                let client = match &budget.id_token_alg {
                    Some(alg) => registered_client(conn, alg).await?,
                    None => Client::plain(),
                };
                plan.other = basic(&client.id, &client.secret);
                let scope = budget.scope.clone();
                // One password sign-in; every other code comes from its sign-on session.
                let (session, first) = signed_in(conn, &client.id, &scope).await?;
                let id = client.id.clone();
                plan.pool = fill(workers, budget.codes, budget.time, move |mut conn| {
                    let (id, scope, session) = (id.clone(), scope.clone(), session.clone());
                    async move {
                        let code = code_in_session(&mut conn, &id, &scope, &session).await;
                        (conn, code)
                    }
                })
                .await?;
                plan.pool.push(first);
                plan.note = format!(
                    "{} codes made beforehand for {}, scope `{}`",
                    plan.pool.len(),
                    client.described,
                    budget.scope
                );
            }
        }
        plan.warm_limit = plan.pool.len() / 10;
        Ok(plan)
    }

    pub fn consumes(&self) -> bool {
        self.flow.consumes()
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

pub fn password_form() -> String {
    form(&[
        ("grant_type", "password"),
        ("username", ALICE.0),
        ("password", ALICE.1),
        ("scope", "profile"),
    ])
}
