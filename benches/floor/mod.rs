//! The floor of the in-process comparison (`peer.rs`): the least a token server can do for the
//! client-credentials and bearer requests both crates answer there, written the way a host's
//! own minimal handler would be, so that the same harness times it beside grantor and
//! oxide-auth. oxide-auth's time over the floor's is the most any crate could be faster than
//! oxide-auth on that flow in this benchmark; grantor's time over the floor's is what grantor
//! spends beyond the least.
//!
//! What the floor still does, because both crates do it and a token server cannot skip it:
//! - client credentials: reads the `Authorization: Basic` header (base64, the `:` split, form
//!   decoding only when a `%` or `+` is there), finds the client in a map, compares the SHA-256
//!   digest of the secret in constant time, reads the form (`grant_type`, `scope`) and checks the
//!   scope against the client's, mints 32 bytes from `rand`'s thread-local generator as base64url,
//!   keeps the token in a sharded map with its client, scope and expiry, writes the token JSON
//!   with `format!` and answers with `Content-Type` and `Cache-Control: no-store` (RFC 6749
//!   §5.1);
//! - a bearer request: reads the `Authorization` header, finds the token in the map, checks its
//!   expiry against the clock and the scope the resource demands, and hands back the grant (two
//!   reference counts), or the 401 with its `WWW-Authenticate` challenge.
//!
//! What it leaves out, each a cost grantor pays and oxide-auth partly pays: tokens kept as
//! themselves, not as their digests; no token family, no refresh-token bookkeeping, no `jti`,
//! no events, no tracing, no metrics, no audience, no scope parsing beyond one comparison, no
//! DPoP or certificate binding, no checks of what the request must not carry (a repeated
//! parameter, a second credential), error answers without descriptions. Every one of these is
//! in grantor for a reason, so the floor is a bound, not a design.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, Request, Response, StatusCode};
use rand::RngCore as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Shards of the token map, as `examples/floor.rs` has them: enough that two threads never wait.
const SHARDS: usize = 64;

/// What a live token grants.
#[derive(Clone, Debug)]
pub struct Grant {
    pub client_id: Arc<str>,
    pub scope: Arc<str>,
    expires: u64,
}

/// A registered confidential client.
struct Client {
    id: Arc<str>,
    secret_digest: [u8; 32],
    scope: Arc<str>,
}

/// The floor's server: its clients and its live tokens.
pub struct Floor {
    clients: HashMap<String, Client>,
    hasher: RandomState,
    tokens: Vec<Mutex<HashMap<String, Grant>>>,
}

/// Access tokens live an hour, as both crates' do in `peer.rs`.
const LIFETIME: u64 = 3600;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The answer to a request the floor refuses: a status and nothing else worth its time.
fn refused(status: StatusCode, body: &'static str) -> Response<String> {
    let mut response = Response::new(body.to_owned());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `id:secret` from an `Authorization: Basic` header value, form-decoded (RFC 6749 §2.3.1)
/// only when they need it.
fn basic_credentials(value: &[u8]) -> Option<(String, String)> {
    let encoded = value.strip_prefix(b"Basic ")?;
    let decoded = STANDARD.decode(encoded).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let form_decode = |part: &str| {
        if part.contains(['%', '+']) {
            url::form_urlencoded::parse(format!("x={part}").as_bytes())
                .next()
                .map(|(_, value)| value.into_owned())
        } else {
            Some(part.to_owned())
        }
    };
    Some((form_decode(id)?, form_decode(secret)?))
}

impl Floor {
    /// A floor with one confidential client allowed scope `scope`.
    pub fn new(client_id: &str, secret: &str, scope: &str) -> Self {
        let client = Client {
            id: client_id.into(),
            secret_digest: Sha256::digest(secret.as_bytes()).into(),
            scope: scope.into(),
        };
        Self {
            clients: HashMap::from([(client_id.to_owned(), client)]),
            hasher: RandomState::new(),
            tokens: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, token: &str) -> &Mutex<HashMap<String, Grant>> {
        &self.tokens[self.hasher.hash_one(token) as usize % SHARDS]
    }

    /// How many tokens the floor keeps.
    pub fn live_tokens(&self) -> usize {
        self.tokens
            .iter()
            .map(|shard| shard.lock().expect("unpoisoned").len())
            .sum()
    }

    /// `POST /token` with `grant_type=client_credentials`: the token JSON, or a refusal.
    pub fn client_credentials(&self, request: &Request<String>) -> Response<String> {
        let Some((id, secret)) = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|value| basic_credentials(value.as_bytes()))
        else {
            return refused(StatusCode::UNAUTHORIZED, r#"{"error":"invalid_client"}"#);
        };
        let Some(client) = self.clients.get(&id) else {
            return refused(StatusCode::UNAUTHORIZED, r#"{"error":"invalid_client"}"#);
        };
        let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
        if !bool::from(digest.ct_eq(&client.secret_digest)) {
            return refused(StatusCode::UNAUTHORIZED, r#"{"error":"invalid_client"}"#);
        }
        let (mut grant_type, mut scope) = (None, None);
        for (key, value) in url::form_urlencoded::parse(request.body().as_bytes()) {
            match &*key {
                "grant_type" => grant_type = Some(value),
                "scope" => scope = Some(value),
                _ => {}
            }
        }
        if grant_type.as_deref() != Some("client_credentials") {
            return refused(
                StatusCode::BAD_REQUEST,
                r#"{"error":"unsupported_grant_type"}"#,
            );
        }
        if scope.is_some_and(|scope| *scope != *client.scope) {
            return refused(StatusCode::BAD_REQUEST, r#"{"error":"invalid_scope"}"#);
        }
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let token = URL_SAFE_NO_PAD.encode(bytes);
        let body = format!(
            r#"{{"access_token":"{token}","token_type":"Bearer","expires_in":{LIFETIME},"scope":"{}"}}"#,
            client.scope
        );
        let grant = Grant {
            client_id: client.id.clone(),
            scope: client.scope.clone(),
            expires: now() + LIFETIME,
        };
        self.shard(&token)
            .lock()
            .expect("unpoisoned")
            .insert(token, grant);
        let mut response = Response::new(body);
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    /// A resource request needing scope `required`: the grant, or the 401 and its challenge.
    pub fn bearer<B>(
        &self,
        request: &Request<B>,
        required: &str,
    ) -> Result<Grant, Response<String>> {
        let challenge = |status: StatusCode, value: &'static str| {
            let mut response = refused(status, "");
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static(value));
            response
        };
        let token = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                value
                    .get(..7)
                    .filter(|scheme| scheme.eq_ignore_ascii_case("bearer "))
                    .map(|_| &value[7..])
            })
            .ok_or_else(|| challenge(StatusCode::UNAUTHORIZED, "Bearer"))?;
        let grant = self
            .shard(token)
            .lock()
            .expect("unpoisoned")
            .get(token)
            .filter(|grant| grant.expires > now())
            .cloned()
            .ok_or_else(|| {
                challenge(StatusCode::UNAUTHORIZED, r#"Bearer error="invalid_token""#)
            })?;
        if !grant.scope.split(' ').any(|scope| scope == required) {
            return Err(challenge(
                StatusCode::FORBIDDEN,
                r#"Bearer error="insufficient_scope""#,
            ));
        }
        Ok(grant)
    }
}
