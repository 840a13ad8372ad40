//! The floor of the in-process comparison (`peer.rs`): the least a token server can do for each
//! request both crates answer there, written as a host's own minimal handlers would be, so that
//! the same harness times it beside grantor and oxide-auth. oxide-auth's time over the floor's
//! is the most any crate could be faster than oxide-auth on that flow in this benchmark;
//! grantor's time over the floor's is what grantor spends beyond the least.
//!
//! What the floor does, because both crates do it and a token server cannot skip it:
//! - the authorization request: reads the query (`response_type`, `client_id`, `redirect_uri`,
//!   `scope`, `state`, the PKCE challenge), finds the client, compares the redirect URI and the
//!   scope with the client's, demands S256 PKCE from a public client, mints a code, keeps it
//!   ten minutes and redirects with `code` and `state`;
//! - the token request: reads the form and the client's credentials (HTTP Basic: base64, the
//!   `:` split, form decoding only where a `%` or `+` is; or a public client's `client_id`),
//!   compares the SHA-256 digest of the secret in constant time, then per `grant_type`: takes
//!   the code out of its map and checks its client, expiry, redirect URI and PKCE verifier; or
//!   takes the refresh token out and checks its client (rotation); or checks the scope for
//!   client credentials. It mints 32 random bytes per token (`rand`'s thread-local generator,
//!   base64url), keeps the tokens in sharded maps with their grant and expiry, writes the JSON
//!   with `format!` and answers with `Content-Type` and `Cache-Control: no-store`
//!   (RFC 6749 §5.1);
//! - a bearer request: reads the `Authorization` header, finds the token, checks its expiry
//!   against the clock and the scope the resource demands, and hands back the grant (reference
//!   counts), or the 401 with its `WWW-Authenticate` challenge.
//!
//! What it leaves out, each a cost grantor pays (and oxide-auth partly pays): tokens kept as
//! themselves, not as their digests; no token family and no reuse detection (a spent refresh
//! token or code is merely gone); no `jti`, events, tracing or metrics; no audience; no scope
//! parsing beyond a comparison; no DPoP or certificate binding; no check of what a request must
//! not carry (a repeated parameter, two credentials); errors without descriptions; no expiry
//! sweep. Each is in grantor for a reason, so the floor is a bound to measure against, not a
//! design to copy.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use http::{HeaderValue, Request, Response, StatusCode};
use rand::RngCore as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Shards of each map, as `examples/floor.rs` has them: enough that two threads never wait.
const SHARDS: usize = 64;

/// Access tokens live an hour, codes ten minutes, refresh tokens thirty days.
const ACCESS_LIFETIME: u64 = 3600;
const CODE_LIFETIME: u64 = 600;
const REFRESH_LIFETIME: u64 = 30 * 24 * 3600;

/// What a live token grants.
#[derive(Clone, Debug)]
pub struct Grant {
    pub client_id: Arc<str>,
    pub owner: Arc<str>,
    pub scope: Arc<str>,
    expires: u64,
}

/// What a code grants, and what its redemption must show.
struct CodeGrant {
    grant: Grant,
    challenge: Option<String>,
}

/// A registered client: confidential with the digest of its secret, or public.
struct Client {
    id: Arc<str>,
    secret_digest: Option<[u8; 32]>,
    redirect_uri: String,
    scope: Arc<str>,
}

/// A map in shards chosen by the key's hash.
struct Sharded<V> {
    hasher: RandomState,
    shards: Vec<Mutex<HashMap<String, V>>>,
}

impl<V> Sharded<V> {
    fn new() -> Self {
        Self {
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, key: &str) -> std::sync::MutexGuard<'_, HashMap<String, V>> {
        let index = self.hasher.hash_one(key) as usize % SHARDS;
        self.shards[index].lock().expect("unpoisoned")
    }

    fn insert(&self, key: String, value: V) {
        self.shard(&key).insert(key, value);
    }

    fn remove(&self, key: &str) -> Option<V> {
        self.shard(key).remove(key)
    }

    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.lock().expect("unpoisoned").len())
            .sum()
    }
}

/// The floor's server: its clients, codes and live tokens.
pub struct Floor {
    clients: HashMap<String, Client>,
    codes: Sharded<CodeGrant>,
    access: Sharded<Grant>,
    refresh: Sharded<Grant>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// 32 random bytes in base64url: a code or a token.
fn mint() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A JSON answer with `status`.
fn json(status: StatusCode, body: String) -> Response<String> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A refusal: the status and the error code, nothing more.
fn refused(status: StatusCode, error: &'static str) -> Response<String> {
    json(status, format!(r#"{{"error":"{error}"}}"#))
}

/// `id:secret` from an `Authorization: Basic` header value, form-decoded (RFC 6749 §2.3.1)
/// only where they need it.
fn basic_credentials(value: &[u8]) -> Option<(String, String)> {
    let encoded = value.strip_prefix(b"Basic ")?;
    let decoded = String::from_utf8(STANDARD.decode(encoded).ok()?).ok()?;
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

/// The parameters of a request the floor reads, borrowed where no decoding was needed.
#[derive(Default)]
struct Params<'a> {
    response_type: Option<Cow<'a, str>>,
    grant_type: Option<Cow<'a, str>>,
    client_id: Option<Cow<'a, str>>,
    redirect_uri: Option<Cow<'a, str>>,
    scope: Option<Cow<'a, str>>,
    state: Option<Cow<'a, str>>,
    code: Option<Cow<'a, str>>,
    code_challenge: Option<Cow<'a, str>>,
    code_challenge_method: Option<Cow<'a, str>>,
    code_verifier: Option<Cow<'a, str>>,
    refresh_token: Option<Cow<'a, str>>,
}

impl<'a> Params<'a> {
    fn of(encoded: &'a str) -> Self {
        let mut params = Self::default();
        for (key, value) in url::form_urlencoded::parse(encoded.as_bytes()) {
            let slot = match &*key {
                "response_type" => &mut params.response_type,
                "grant_type" => &mut params.grant_type,
                "client_id" => &mut params.client_id,
                "redirect_uri" => &mut params.redirect_uri,
                "scope" => &mut params.scope,
                "state" => &mut params.state,
                "code" => &mut params.code,
                "code_challenge" => &mut params.code_challenge,
                "code_challenge_method" => &mut params.code_challenge_method,
                "code_verifier" => &mut params.code_verifier,
                "refresh_token" => &mut params.refresh_token,
                _ => continue,
            };
            *slot = Some(value);
        }
        params
    }
}

impl Floor {
    /// A floor with a confidential client (`client_id`, `secret`) and a public client
    /// (`public_id`), both redirecting to `redirect_uri` and allowed `scope`.
    pub fn new(
        (client_id, secret): (&str, &str),
        public_id: &str,
        redirect_uri: &str,
        scope: &str,
    ) -> Self {
        let client = |id: &str, secret: Option<&str>| Client {
            id: id.into(),
            secret_digest: secret.map(|secret| Sha256::digest(secret.as_bytes()).into()),
            redirect_uri: redirect_uri.to_owned(),
            scope: scope.into(),
        };
        Self {
            clients: HashMap::from([
                (client_id.to_owned(), client(client_id, Some(secret))),
                (public_id.to_owned(), client(public_id, None)),
            ]),
            codes: Sharded::new(),
            access: Sharded::new(),
            refresh: Sharded::new(),
        }
    }

    /// How many access tokens the floor keeps.
    pub fn live_tokens(&self) -> usize {
        self.access.len()
    }

    /// `GET /authorize?response_type=code&…` with `owner` signed in and approving at once:
    /// the redirect with `code` and `state`, or a refusal.
    pub fn authorize<B>(&self, request: &Request<B>, owner: &Arc<str>) -> Response<String> {
        let params = Params::of(request.uri().query().unwrap_or(""));
        let Some(client) = params
            .client_id
            .as_deref()
            .and_then(|id| self.clients.get(id))
        else {
            return refused(StatusCode::BAD_REQUEST, "invalid_client");
        };
        if params
            .redirect_uri
            .as_deref()
            .is_some_and(|uri| uri != client.redirect_uri)
        {
            return refused(StatusCode::BAD_REQUEST, "invalid_request");
        }
        if params.response_type.as_deref() != Some("code") {
            return refused(StatusCode::BAD_REQUEST, "unsupported_response_type");
        }
        if params
            .scope
            .as_deref()
            .is_some_and(|scope| scope != &*client.scope)
        {
            return refused(StatusCode::BAD_REQUEST, "invalid_scope");
        }
        let challenge = match (
            params.code_challenge,
            params.code_challenge_method.as_deref(),
        ) {
            (Some(challenge), Some("S256")) => Some(challenge.into_owned()),
            (None, None) if client.secret_digest.is_some() => None,
            _ => return refused(StatusCode::BAD_REQUEST, "invalid_request"),
        };
        let code = mint();
        let mut location = format!("{}?code={code}", client.redirect_uri);
        if let Some(state) = params.state {
            location.push_str("&state=");
            location.extend(url::form_urlencoded::byte_serialize(state.as_bytes()));
        }
        self.codes.insert(
            code,
            CodeGrant {
                grant: Grant {
                    client_id: client.id.clone(),
                    owner: owner.clone(),
                    scope: client.scope.clone(),
                    expires: now() + CODE_LIFETIME,
                },
                challenge,
            },
        );
        let mut response = Response::new(String::new());
        *response.status_mut() = StatusCode::FOUND;
        match HeaderValue::try_from(location) {
            Ok(location) => response.headers_mut().insert(LOCATION, location),
            Err(_) => return refused(StatusCode::BAD_REQUEST, "invalid_request"),
        };
        response
    }

    /// `POST /token`: the token JSON for the flow `grant_type` names, or a refusal.
    pub fn token(&self, request: &Request<String>) -> Response<String> {
        let params = Params::of(request.body());
        let client = match request.headers().get(AUTHORIZATION) {
            Some(value) => {
                let Some((id, secret)) = basic_credentials(value.as_bytes()) else {
                    return refused(StatusCode::UNAUTHORIZED, "invalid_client");
                };
                let Some(client) = self.clients.get(&id) else {
                    return refused(StatusCode::UNAUTHORIZED, "invalid_client");
                };
                let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
                match client.secret_digest {
                    Some(kept) if bool::from(digest.ct_eq(&kept)) => client,
                    _ => return refused(StatusCode::UNAUTHORIZED, "invalid_client"),
                }
            }
            None => match params
                .client_id
                .as_deref()
                .and_then(|id| self.clients.get(id))
            {
                Some(client) if client.secret_digest.is_none() => client,
                _ => return refused(StatusCode::UNAUTHORIZED, "invalid_client"),
            },
        };
        let now = now();
        match params.grant_type.as_deref() {
            Some("authorization_code") => {
                let Some(CodeGrant { grant, challenge }) = params
                    .code
                    .as_deref()
                    .and_then(|code| self.codes.remove(code))
                else {
                    return refused(StatusCode::BAD_REQUEST, "invalid_grant");
                };
                let verified = match (challenge, params.code_verifier.as_deref()) {
                    (None, None) => true,
                    (Some(challenge), Some(verifier)) => {
                        let hash = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
                        bool::from(hash.as_bytes().ct_eq(challenge.as_bytes()))
                    }
                    _ => false,
                };
                if grant.client_id != client.id
                    || grant.expires <= now
                    || params.redirect_uri.as_deref() != Some(client.redirect_uri.as_str())
                    || !verified
                {
                    return refused(StatusCode::BAD_REQUEST, "invalid_grant");
                }
                self.issue(grant, true, now)
            }
            Some("refresh_token") => {
                let Some(grant) = params
                    .refresh_token
                    .as_deref()
                    .and_then(|token| self.refresh.remove(token))
                else {
                    return refused(StatusCode::BAD_REQUEST, "invalid_grant");
                };
                if grant.client_id != client.id || grant.expires <= now {
                    return refused(StatusCode::BAD_REQUEST, "invalid_grant");
                }
                self.issue(grant, true, now)
            }
            Some("client_credentials") if client.secret_digest.is_some() => {
                if params
                    .scope
                    .as_deref()
                    .is_some_and(|scope| scope != &*client.scope)
                {
                    return refused(StatusCode::BAD_REQUEST, "invalid_scope");
                }
                let grant = Grant {
                    client_id: client.id.clone(),
                    owner: client.id.clone(),
                    scope: client.scope.clone(),
                    expires: 0,
                };
                self.issue(grant, false, now)
            }
            Some("client_credentials") => refused(StatusCode::BAD_REQUEST, "unauthorized_client"),
            _ => refused(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
        }
    }

    /// Mints and keeps an access token (and a refresh token if `with_refresh`) for `grant`.
    fn issue(&self, grant: Grant, with_refresh: bool, now: u64) -> Response<String> {
        let access = mint();
        let mut body = format!(
            r#"{{"access_token":"{access}","token_type":"Bearer","expires_in":{ACCESS_LIFETIME},"scope":"{}""#,
            grant.scope
        );
        if with_refresh {
            let refresh = mint();
            body.push_str(r#","refresh_token":""#);
            body.push_str(&refresh);
            body.push('"');
            let kept = Grant {
                expires: now + REFRESH_LIFETIME,
                ..grant.clone()
            };
            self.refresh.insert(refresh, kept);
        }
        body.push('}');
        let grant = Grant {
            expires: now + ACCESS_LIFETIME,
            ..grant
        };
        self.access.insert(access, grant);
        json(StatusCode::OK, body)
    }

    /// A resource request needing scope `required`: the grant, or the 401 and its challenge.
    #[expect(
        clippy::result_large_err,
        reason = "the refusal is the answer the host writes; boxing it would add an allocation"
    )]
    pub fn bearer<B>(
        &self,
        request: &Request<B>,
        required: &str,
    ) -> Result<Grant, Response<String>> {
        let challenge = |status: StatusCode, value: &'static str| {
            let mut response = Response::new(String::new());
            *response.status_mut() = status;
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
            .access
            .shard(token)
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
