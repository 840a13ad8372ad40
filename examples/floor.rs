//! The floor the HTTP load benchmark measures grantor against: the same axum and tokio, answering
//! the load tool's client-credentials and introspection requests with the least a token server
//! can do, and nothing of grantor. A client-credentials request reads the form, mints 32 random
//! bytes (base64url), keeps them in a sharded map and writes the token JSON; an introspection
//! request reads the form, looks the token up and writes `{"active": true, ...}`. Neither checks
//! the client's credentials, parses a scope, keeps a family or logs: whatever grantor spends
//! beyond this is its own.
//!
//! ```sh
//! cargo run --release --example floor -- --addr 127.0.0.1:8090 &
//! cargo run --release --example load -- --base http://127.0.0.1:8090 \
//!     --flow client_credentials,introspection
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Form, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::post;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore as _;

/// Shards of the token map: as many as make lock contention vanish on a small machine.
const SHARDS: usize = 64;

/// Issued tokens and when they expire, in shards chosen by the token's hash.
struct Tokens {
    hasher: RandomState,
    shards: Vec<Mutex<HashMap<String, u64>>>,
}

impl Tokens {
    fn shard(&self, token: &str) -> &Mutex<HashMap<String, u64>> {
        let index = self.hasher.hash_one(token) as usize % SHARDS;
        &self.shards[index]
    }
}

#[derive(serde::Deserialize)]
struct TokenForm {
    grant_type: String,
}

#[derive(serde::Deserialize)]
struct IntrospectForm {
    token: String,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn json(body: String) -> impl IntoResponse {
    ([(CONTENT_TYPE, "application/json")], body)
}

async fn token(
    State(tokens): State<Arc<Tokens>>,
    Form(form): Form<TokenForm>,
) -> axum::response::Response {
    if form.grant_type != "client_credentials" {
        return (
            StatusCode::BAD_REQUEST,
            json(r#"{"error":"unsupported_grant_type"}"#.to_owned()),
        )
            .into_response();
    }
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = URL_SAFE_NO_PAD.encode(bytes);
    let expires = now() + 3600;
    let body = format!(r#"{{"access_token":"{token}","token_type":"Bearer","expires_in":3600}}"#);
    if let Ok(mut shard) = tokens.shard(&token).lock() {
        shard.insert(token, expires);
    }
    json(body).into_response()
}

async fn introspect(
    State(tokens): State<Arc<Tokens>>,
    Form(form): Form<IntrospectForm>,
) -> impl IntoResponse {
    let expires = tokens
        .shard(&form.token)
        .lock()
        .ok()
        .and_then(|shard| shard.get(&form.token).copied());
    json(match expires {
        Some(exp) if exp > now() => format!(
            r#"{{"active":true,"client_id":"demo-client","token_type":"Bearer","exp":{exp}}}"#
        ),
        _ => r#"{"active":false}"#.to_owned(),
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut addr: SocketAddr = "127.0.0.1:8090".parse()?;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--addr", Some(value)) => addr = value.parse()?,
            _ => return Err("usage: floor [--addr HOST:PORT]".into()),
        }
    }
    let tokens = Arc::new(Tokens {
        hasher: RandomState::new(),
        shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
    });
    let app = Router::new()
        .route("/api/oauth/token", post(token))
        .route("/api/oauth/introspect", post(introspect))
        .with_state(tokens);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("floor listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
