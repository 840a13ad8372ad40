//! FAPI 2.0 against the demos over HTTPS with a client CA: one demo per framework and profile,
//! shared by the tests of a binary, and self-registered clients that authenticate with
//! `private_key_jwt` (and constrain their tokens with DPoP) or with `tls_client_auth` (and bind
//! their tokens to their certificate), with the requests they push, sign and redeem.
//!
//! A test binary using it declares `mod demo;`, `mod keys;` (`dpop_proofs/mod.rs`) and
//! `mod tls;` (`demo/tls.rs`) at its root.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::{Value, json};

use crate::demo::Server;
use crate::demo::http::*;
use crate::keys::ProofKey;
use crate::tls::{Identity, TlsFiles};

pub const PAR: &str = "/api/oauth/par";
pub const TOKEN: &str = "/api/oauth/token";
pub const ME: &str = "/api/me";
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// What FAPI 2.0 lets a server sign with (Security Profile §5.4.1).
pub const FAPI_ALGORITHMS: [&str; 4] = ["PS256", "ES256", "EdDSA", "Ed25519"];
/// A second redirect URI with a query of its own, which the response must keep (RFC 6749
/// §3.1.2).
pub const CALLBACK_WITH_QUERY: &str = "http://127.0.0.1:8081/callback?dummy1=lorem&dummy2=ipsum";

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A value no other call in this process answers: `jti`s, `state`s, `nonce`s.
pub fn unique(what: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A seed for a key of its own (1 to 250: a P-256 scalar must not be zero).
fn seed() -> u8 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    (NEXT.fetch_add(1, Ordering::Relaxed) % 250 + 1) as u8
}

/// `claims` signed with `key`, its header naming `typ` and the key `signing`.
pub fn sign(key: &ProofKey, typ: Option<&str>, claims: &Value) -> String {
    key.sign_with(claims, |header| {
        header.typ = typ.map(str::to_owned);
        header.jwk = None;
        header.kid = Some("signing".to_owned());
    })
}

/// A JWKS holding `key`'s public half as `signing`.
pub fn jwks(key: &ProofKey) -> Value {
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    jwk["kid"] = json!("signing");
    json!({ "keys": [jwk] })
}

/// The two FAPI 2.0 profiles the demo serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `--profile fapi2`: the Security Profile and Message Signing (signed request objects).
    MessageSigning,
    /// `--profile fapi2-security`: the Security Profile alone.
    Security,
}

impl Profile {
    fn flag(self) -> &'static str {
        match self {
            Self::MessageSigning => "fapi2",
            Self::Security => "fapi2-security",
        }
    }
}

/// A demo over HTTPS under a FAPI 2.0 profile.
pub struct Demo {
    pub base: String,
    pub files: TlsFiles,
    pub server: &'static Server,
    pub profile: Profile,
}

/// The demo of `framework` under `profile`, shared by every test of this binary: the first
/// starts it, the others reuse it (tests leave nothing another relies on: each registers its
/// own clients and signs in with a browser of its own).
pub fn demo(framework: &str, profile: Profile) -> &'static Demo {
    static DEMOS: Mutex<Vec<(String, &'static Demo)>> = Mutex::new(Vec::new());
    let key = format!("{framework} {}", profile.flag());
    // Held while a demo starts, so that two tests asking at once start one.
    let mut demos = DEMOS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, demo)) = demos.iter().find(|(started, _)| *started == key) {
        return demo;
    }
    let files = TlsFiles::new();
    let mut args = files.args();
    args.extend(["--profile".to_owned(), profile.flag().to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::shared(framework, &args);
    // The server read its certificate, key and client CA before its banner; the files are
    // no longer needed, and this demo is never dropped to remove them.
    for path in [&files.cert, &files.key, &files.client_ca] {
        let _ = std::fs::remove_file(path);
    }
    let demo: &'static Demo = Box::leak(Box::new(Demo {
        base: server.base.clone(),
        files,
        server,
        profile,
    }));
    demos.push((key, demo));
    demo
}

impl Demo {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// An HTTPS client presenting no certificate.
    pub fn http(&self) -> reqwest::Client {
        self.files.http(None)
    }

    /// A browser of its own (cookies kept), presenting no certificate.
    pub fn browser(&self) -> reqwest::Client {
        self.files.browser(None)
    }

    /// A JSON document the demo serves at `path`.
    pub async fn document(&self, path: &str) -> Value {
        let reply = get(&self.http(), &self.url(path)).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert_content_type(&reply, "application/json");
        reply.json()
    }

    /// The header and claims of a JWT the demo signed, after checking its signature against
    /// the demo's JWKS (by `kid`), its `iss`, its `aud` (`audience`) and `exp`, and that its
    /// algorithm is one FAPI 2.0 permits.
    pub async fn verified(&self, jwt: &str, audience: &str) -> (Value, Value) {
        let jwks: JwkSet = serde_json::from_str(
            &get(&self.http(), &self.url("/.well-known/jwks.json"))
                .await
                .body,
        )
        .expect("a JWKS");
        let header = jsonwebtoken::decode_header(jwt).expect("a JWS header");
        let alg = serde_json::to_value(header.alg).unwrap();
        assert!(
            FAPI_ALGORITHMS.iter().any(|permitted| alg == *permitted),
            "signed {alg}: FAPI 2.0 permits only {FAPI_ALGORITHMS:?}"
        );
        let kid = header.kid.clone().expect("a kid");
        let jwk = jwks.find(&kid).expect("the kid is published");
        let key = DecodingKey::from_jwk(jwk).expect("a usable key");
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.base]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["iss", "aud", "exp"]);
        let data = jsonwebtoken::decode::<Value>(jwt, &key, &validation).expect("it verifies");
        (serde_json::to_value(&data.header).unwrap(), data.claims)
    }
}

/// How a client authenticates and constrains its tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// `private_key_jwt`, and DPoP.
    KeyAndDpop,
    /// `tls_client_auth` with a certificate from the client CA, its tokens bound to it.
    Certificate,
}

/// A variant of the conformance suite's plans: the profile, the client's authentication and
/// sender constraint, and whether responses are JWTs (JARM).
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub profile: Profile,
    pub auth: Auth,
    pub jarm: bool,
}

impl Variant {
    /// `dpop` (Message Signing, `private_key_jwt` and DPoP), `mtls` (Message Signing,
    /// `tls_client_auth` and certificate-bound tokens), `jarm` (`dpop` with
    /// `response_mode=jwt`) or `security` (the Security Profile alone, `private_key_jwt` and
    /// DPoP, the parameters pushed unsigned).
    pub fn named(name: &str) -> Self {
        let (profile, auth, jarm) = match name {
            "dpop" => (Profile::MessageSigning, Auth::KeyAndDpop, false),
            "mtls" => (Profile::MessageSigning, Auth::Certificate, false),
            "jarm" => (Profile::MessageSigning, Auth::KeyAndDpop, true),
            "security" => (Profile::Security, Auth::KeyAndDpop, false),
            other => panic!("no variant {other}"),
        };
        Self {
            profile,
            auth,
            jarm,
        }
    }
}

/// What a check gets: the demo of its framework and profile, and its variant.
pub struct Setup {
    pub framework: &'static str,
    pub variant: Variant,
    pub demo: &'static Demo,
}

/// Runs `check` against the shared demo of `framework` for `variant`, then asserts the demo
/// calm.
pub async fn run<F>(framework: &'static str, variant: &str, check: fn(Setup) -> F)
where
    F: Future<Output = ()>,
{
    let setup = Setup::new(framework, variant);
    let demo = setup.demo;
    check(setup).await;
    demo.server.assert_alive_and_calm();
}

impl Setup {
    /// The shared demo of `framework` for the variant `name` (see [`Variant::named`]).
    pub fn new(framework: &'static str, name: &str) -> Self {
        let variant = Variant::named(name);
        Self {
            framework,
            variant,
            demo: demo(framework, variant.profile),
        }
    }

    /// A newly registered client of the variant, with a P-256 signing key.
    pub async fn client(&self) -> Client {
        self.client_with(|_| {}).await
    }

    /// The same, its metadata as `edit` leaves it.
    pub async fn client_with(&self, edit: impl FnOnce(&mut Value)) -> Client {
        self.register(ProofKey::es256(seed()), edit).await
    }

    /// A newly registered client of the variant signing with `key`, its metadata as `edit`
    /// leaves it.
    pub async fn register(&self, key: ProofKey, edit: impl FnOnce(&mut Value)) -> Client {
        let demo = self.demo;
        let mut metadata = json!({
            "redirect_uris": [CALLBACK],
            "jwks": jwks(&key),
            "grant_types": ["authorization_code", "refresh_token"],
        });
        let (identity, dpop) = match self.variant.auth {
            Auth::KeyAndDpop => {
                metadata["token_endpoint_auth_method"] = json!("private_key_jwt");
                (None, Some(ProofKey::es256(seed())))
            }
            Auth::Certificate => {
                let name = unique("fapi-client");
                metadata["token_endpoint_auth_method"] = json!("tls_client_auth");
                metadata["tls_client_auth_subject_dn"] =
                    json!(format!("CN={name},O=grantor tests"));
                (Some(demo.files.client(&name, "fapi.example")), None)
            }
        };
        edit(&mut metadata);
        let reply = send(
            demo.http()
                .post(demo.url("/api/oauth/register"))
                .header("content-type", "application/json")
                .body(metadata.to_string()),
        )
        .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let id = reply.json()["client_id"].as_str().unwrap().to_owned();
        Client {
            demo,
            variant: self.variant,
            id,
            key,
            http: demo.files.http(identity.as_ref()),
            identity,
            dpop,
        }
    }
}

/// A self-registered client.
pub struct Client {
    pub demo: &'static Demo,
    pub variant: Variant,
    pub id: String,
    /// Signs its request objects, and its assertions under `private_key_jwt`.
    pub key: ProofKey,
    /// Its back channel: presents its certificate, if it has one.
    pub http: reqwest::Client,
    pub identity: Option<Identity>,
    /// Its DPoP key, under `private_key_jwt`.
    pub dpop: Option<ProofKey>,
}

/// A finished authorization: the authorization response's parameters and the token response.
pub struct Flow {
    pub response: HashMap<String, String>,
    pub tokens: Value,
}

impl Flow {
    pub fn access_token(&self) -> &str {
        self.tokens["access_token"]
            .as_str()
            .expect("an access token")
    }
}

impl Client {
    pub fn base(&self) -> &'static str {
        &self.demo.base
    }

    /// The claims of a good client assertion: `iss` and `sub` the client, `aud` the issuer.
    pub fn assertion_claims(&self) -> Value {
        json!({
            "iss": self.id, "sub": self.id, "aud": self.base(),
            "iat": now(), "exp": now() + 60, "jti": unique("assertion"),
        })
    }

    /// The client's authentication as form pairs: `client_id`, and under `private_key_jwt` an
    /// assertion whose claims `edit` leaves as it likes, signed with the client's key.
    pub fn authentication_with(&self, edit: impl FnOnce(&mut Value)) -> Vec<(String, String)> {
        let mut pairs = vec![("client_id".to_owned(), self.id.clone())];
        if self.variant.auth == Auth::KeyAndDpop {
            let mut claims = self.assertion_claims();
            edit(&mut claims);
            pairs.push((
                "client_assertion_type".to_owned(),
                ASSERTION_TYPE.to_owned(),
            ));
            pairs.push((
                "client_assertion".to_owned(),
                sign(&self.key, None, &claims),
            ));
        }
        pairs
    }

    pub fn authentication(&self) -> Vec<(String, String)> {
        self.authentication_with(|_| {})
    }

    /// A DPoP proof of the client's key for `POST` at `path`, issued now.
    pub fn proof(&self, path: &str) -> Option<String> {
        let key = self.dpop.as_ref()?;
        Some(key.proof("POST", &self.demo.url(path), now()))
    }

    /// `POST`s `authentication` and `pairs` to `path` from the client's back channel, with a
    /// `DPoP` header if given.
    pub async fn post(
        &self,
        path: &str,
        authentication: Vec<(String, String)>,
        pairs: &[(&str, &str)],
        dpop: Option<String>,
    ) -> Reply {
        let mut all = authentication;
        all.extend(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&all)
            .finish();
        let mut request = self
            .http
            .post(self.demo.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        if let Some(proof) = dpop {
            request = request.header("dpop", proof);
        }
        send(request).await
    }

    /// A token request, authenticated, with a DPoP proof for a DPoP client.
    pub async fn token(&self, pairs: &[(&str, &str)]) -> Reply {
        self.post(TOKEN, self.authentication(), pairs, self.proof(TOKEN))
            .await
    }

    /// A pushed authorization request, authenticated, without a DPoP proof.
    pub async fn par(&self, pairs: &[(&str, &str)]) -> Reply {
        self.post(PAR, self.authentication(), pairs, None).await
    }

    /// The parameters of a good authorization request: the code flow for `openid profile`
    /// with a fresh `state` and `nonce`, PKCE S256, and `response_mode=jwt` under JARM.
    pub fn request(&self) -> Value {
        let mut params = json!({
            "response_type": "code", "client_id": self.id, "redirect_uri": CALLBACK,
            "scope": "openid profile", "state": unique("state"), "nonce": unique("nonce"),
            "code_challenge": CHALLENGE, "code_challenge_method": "S256",
        });
        if self.variant.jarm {
            params["response_mode"] = json!("jwt");
        }
        params
    }

    /// The claims of a request object carrying `params`: `iss` and `client_id` the client,
    /// `aud` the issuer, `nbf` now, `exp` in 5 minutes, a fresh `jti`.
    pub fn object_claims(&self, params: &Value) -> Value {
        let mut claims = params.clone();
        let extra = json!({
            "iss": self.id, "aud": self.base(), "nbf": now(), "exp": now() + 300,
            "jti": unique("object"), "client_id": self.id,
        });
        for (name, value) in extra.as_object().unwrap() {
            claims[name] = value.clone();
        }
        claims
    }

    /// `claims` signed with the client's key, typed `oauth-authz-req+jwt` (RFC 9101 §10.8).
    pub fn sign_object(&self, claims: &Value) -> String {
        sign(&self.key, Some("oauth-authz-req+jwt"), claims)
    }

    /// Pushes `params` as the profile asks: in a signed request object under Message Signing,
    /// as form parameters under the Security Profile alone.
    pub async fn push(&self, params: &Value) -> Reply {
        match self.demo.profile {
            Profile::MessageSigning => {
                let object = self.sign_object(&self.object_claims(params));
                self.par(&[("request", &object)]).await
            }
            // `client_id` goes with the client's authentication.
            Profile::Security => {
                self.par(&form_pairs(&without(params.clone(), "client_id")))
                    .await
            }
        }
    }

    /// [`Self::push`], which must succeed: the `request_uri`.
    pub async fn pushed(&self, params: &Value) -> String {
        request_uri_of(&self.push(params).await)
    }

    /// The authorization request by reference: `client_id`, `request_uri` and `extra`.
    pub fn by_reference<'a>(
        &'a self,
        request_uri: &'a str,
        extra: &[(&'a str, &'a str)],
    ) -> Vec<(&'a str, &'a str)> {
        let mut params = vec![
            ("client_id", self.id.as_str()),
            ("request_uri", request_uri),
        ];
        params.extend_from_slice(extra);
        params
    }

    /// Alice signs in through the authorization endpoint with `params` in `browser` of her
    /// own and approves: the redirect to the client.
    pub async fn approved(&self, browser: &reqwest::Client, params: &[(&str, &str)]) -> Reply {
        let approval = sign_in_via_authorize(browser, self.base(), params, ALICE).await;
        decide(browser, self.base(), &approval, "approve").await
    }

    /// The parameters of an authorization response redirected to the client: under JARM
    /// the claims of its `response` JWT (verified, nothing beside it), else its query. The
    /// `iss` is this server's either way (RFC 9207, JARM §2.1).
    pub async fn response(&self, reply: &Reply) -> HashMap<String, String> {
        let query = callback_query(reply);
        let Some(jwt) = query.get("response") else {
            assert_eq!(
                query.get("iss").map(String::as_str),
                Some(self.base()),
                "{query:?}"
            );
            return query;
        };
        let names: Vec<&String> = query
            .keys()
            .filter(|name| !name.starts_with("dummy"))
            .collect();
        assert_eq!(names, ["response"], "nothing beside the response JWT");
        let (_, claims) = self.demo.verified(jwt, &self.id).await;
        let mut response: HashMap<String, String> = claims
            .as_object()
            .unwrap()
            .iter()
            .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
            .collect();
        for (name, value) in query {
            if name.starts_with("dummy") {
                response.insert(name, value);
            }
        }
        response
    }

    /// Redeems `code` with the verifier of [`CHALLENGE`].
    pub async fn redeem(&self, code: &str) -> Reply {
        self.redeem_at(code, CALLBACK).await
    }

    /// Redeems `code` issued for `redirect_uri`.
    pub async fn redeem_at(&self, code: &str, redirect_uri: &str) -> Reply {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", VERIFIER),
        ])
        .await
    }

    /// A good token response, sender-constrained as the client asked: its JSON.
    pub fn tokens(&self, reply: &Reply) -> Value {
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_content_type(reply, "application/json");
        assert_eq!(reply.header("cache-control"), Some("no-store"));
        let tokens = reply.json();
        let token = tokens["access_token"].as_str().expect("an access token");
        // FAPI 2.0 Security Profile §5.4.1: at least 128 bits of entropy.
        assert!(token.len() >= 22, "{tokens}");
        let expected = match self.variant.auth {
            Auth::KeyAndDpop => "DPoP",
            Auth::Certificate => "bearer",
        };
        assert!(
            tokens["token_type"]
                .as_str()
                .is_some_and(|t| t.eq_ignore_ascii_case(expected)),
            "{tokens}"
        );
        assert!(
            tokens["expires_in"].as_u64().is_some_and(|s| s > 0),
            "{tokens}"
        );
        tokens
    }

    /// The code of `response`, which must carry `state` and a code of at least 128 bits.
    pub fn code(&self, response: &HashMap<String, String>, state: &str) -> String {
        assert!(!response.contains_key("error"), "{response:?}");
        assert_eq!(
            response.get("state").map(String::as_str),
            Some(state),
            "{response:?}"
        );
        let code = response.get("code").expect("a code");
        assert!(code.len() >= 22, "a code of 128 bits or more: {code}");
        code.clone()
    }

    /// The whole flow for `params`: pushed, Alice approving in a browser of her own, the code
    /// redeemed, and the authorization response's `state` checked.
    pub async fn run(&self, params: &Value) -> Flow {
        let request_uri = self.pushed(params).await;
        let browser = self.demo.browser();
        let reply = self
            .approved(&browser, &self.by_reference(&request_uri, &[]))
            .await;
        let response = self.response(&reply).await;
        if let Some(state) = params["state"].as_str() {
            self.code(&response, state);
        }
        let tokens = self.tokens(&self.redeem(&response["code"]).await);
        Flow { response, tokens }
    }

    /// `GET /api/me` with `token` as the client presents it: under DPoP the `DPoP` scheme and
    /// a fresh proof with `ath`, else the `Bearer` scheme over the client's certificate.
    pub async fn resource(&self, token: &str) -> Reply {
        self.fetch(&self.demo.url(ME), token).await
    }

    /// `GET url` with `token` as the client presents it (see [`Self::resource`]).
    pub async fn fetch(&self, url: &str, token: &str) -> Reply {
        match &self.dpop {
            Some(key) => {
                let proof = key.proof_for_token("GET", url, now(), token);
                self.get_with(url, &format!("DPoP {token}"), &[&proof])
                    .await
            }
            None => self.get_with(url, &format!("Bearer {token}"), &[]).await,
        }
    }

    /// `GET /api/me` from the client's back channel with `authorization` and a `DPoP` header
    /// for each of `proofs`.
    pub async fn resource_with(&self, authorization: &str, proofs: &[&str]) -> Reply {
        self.get_with(&self.demo.url(ME), authorization, proofs)
            .await
    }

    async fn get_with(&self, url: &str, authorization: &str, proofs: &[&str]) -> Reply {
        let mut request = self.http.get(url).header("authorization", authorization);
        for proof in proofs {
            request = request.header("dpop", *proof);
        }
        send(request).await
    }

    /// The ID token of `tokens`, verified for this client: its claims.
    pub async fn id_token(&self, tokens: &Value) -> Value {
        let id_token = tokens["id_token"].as_str().expect("an id_token");
        self.demo.verified(id_token, &self.id).await.1
    }
}

/// The `request_uri` of a successful pushed authorization request (RFC 9126 §2.2).
pub fn request_uri_of(reply: &Reply) -> String {
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_content_type(reply, "application/json");
    let body = reply.json();
    assert!(body["expires_in"].as_u64().is_some_and(|s| s > 0), "{body}");
    let uri = body["request_uri"].as_str().expect("a request_uri");
    assert!(
        uri.starts_with("urn:ietf:params:oauth:request_uri:"),
        "{uri}"
    );
    uri.to_owned()
}

/// The string members of `params` as form pairs.
pub fn form_pairs(params: &Value) -> Vec<(&str, &str)> {
    params
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.as_str()?)))
        .collect()
}

/// `params` without `name`.
pub fn without(mut params: Value, name: &str) -> Value {
    params.as_object_mut().unwrap().remove(name);
    params
}

/// An error answer to a request: `status` and a JSON `error` among `errors`.
pub fn assert_error_among(reply: &Reply, statuses: &[u16], errors: &[&str]) {
    assert!(
        statuses.contains(&reply.status),
        "{} {}",
        reply.status,
        reply.body
    );
    assert_content_type(reply, "application/json");
    let error = reply.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        errors.contains(&error.as_str()),
        "{errors:?}: {}",
        reply.body
    );
    // RFC 6749 §5.2: the description is printable ASCII, without `"` and `\`.
    if let Some(description) = reply.json()["error_description"].as_str() {
        assert!(
            description
                .bytes()
                .all(|b| (0x20..=0x7e).contains(&b) && b != b'"' && b != b'\\'),
            "{description:?}"
        );
    }
}

/// How the authorization endpoint refused a request: an error page it showed, or an error
/// response redirected to the client.
pub enum Refusal {
    Page,
    Redirected(HashMap<String, String>),
}

impl Client {
    /// The authorization endpoint's refusal of `params`, the browser's first request: an
    /// HTML error page that redirects nowhere, or an error redirected to the client with
    /// nothing but `error`, `error_description`, `state`, `iss` (and under JARM the same
    /// inside a verified `response`).
    pub async fn refusal(&self, params: &[(&str, &str)]) -> Refusal {
        let reply = get(&self.demo.browser(), &authorize_url(self.base(), params)).await;
        if reply.location().is_none() {
            assert!(
                (400..500).contains(&reply.status),
                "{} {}",
                reply.status,
                reply.body
            );
            assert_content_type(&reply, "text/html");
            return Refusal::Page;
        }
        let response = self.response(&reply).await;
        assert!(response.contains_key("error"), "{response:?}");
        assert!(!response.contains_key("code"), "{response:?}");
        let expected = ["error", "error_description", "error_uri", "state", "iss"];
        let jarm = ["aud", "exp", "iat"];
        for name in response.keys() {
            assert!(
                expected.contains(&name.as_str())
                    || jarm.contains(&name.as_str())
                    || name.starts_with("dummy"),
                "unexpected {name}: {response:?}"
            );
        }
        Refusal::Redirected(response)
    }
}

/// `response`'s `error`, which must be among `errors`, with `state` if given.
pub fn assert_redirected_error(
    response: &HashMap<String, String>,
    state: Option<&str>,
    errors: &[&str],
) {
    let error = response
        .get("error")
        .map(String::as_str)
        .unwrap_or_default();
    assert!(errors.contains(&error), "{errors:?}: {response:?}");
    assert_eq!(
        response.get("state").map(String::as_str),
        state,
        "{response:?}"
    );
}

/// One test module per module of the conformance suite, in it a module per variant (see
/// [`Variant::named`]), and in that a test per framework: `module => check [variant, …];`.
/// Attributes written before a variant go on both its tests.
#[macro_export]
macro_rules! oidf_fapi2 {
    ($($module:ident => $check:ident [$($(#[$attribute:meta])* $variant:ident),+ $(,)?];)*) => {$(
        mod $module {
            $(
                mod $variant {
                    $(#[$attribute])*
                    #[tokio::test(flavor = "multi_thread")]
                    async fn axum() {
                        $crate::fapi2::run("axum", stringify!($variant), $crate::$check).await;
                    }

                    $(#[$attribute])*
                    #[tokio::test(flavor = "multi_thread")]
                    async fn actix() {
                        $crate::fapi2::run("actix", stringify!($variant), $crate::$check).await;
                    }
                }
            )+
        }
    )*};
}
