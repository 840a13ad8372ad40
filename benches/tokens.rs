//! JWT access tokens and DPoP (features `jwt` and `dpop`), in one criterion group,
//! `jwt_and_dpop`: bearer validation of a JWT access token beside an opaque one's, what a
//! resource server holding only the JWKS pays to verify one, a DPoP proof checked on its own,
//! and the whole bearer validation of a DPoP-bound token with its proof. See
//! `benches/README.md`.
//!
//! As in `flows`: grantor's public API over `MemoryStore` with the default `SystemClock`. The
//! first answer of every benchmark is checked in full (and a token or proof with a broken
//! signature refused), and every timed answer has its outcome asserted. Tokens and proofs are
//! made beforehand, untimed, and validation goes round a pool of distinct ones. A proof's `jti`
//! is accepted once, so `bearer_dpop` signs one fresh proof per iteration before each sample,
//! for a fresh server, and checks afterwards that the server spent them.
//!
//! `cargo bench -p grantor-benches --bench tokens` runs it and prints a table of medians as ratios to
//! `bearer_opaque`; `cargo test --benches --all-features` runs each benchmark once as a test.

mod common;
#[path = "../tests/dpop_proofs/mod.rs"]
mod dpop_proofs;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use grantor::clock::UnixTime;
use grantor::dpop::{Dpop, ProofContext, ProofError, verify_proof};
use grantor::jwt::{
    JwtAccessTokens, JwtError, JwtVerifier, SigningAlgorithm, SigningKey, StaticKeys,
};
use http::{Request, Response};
use serde_json::Value;
use tokio::runtime::Runtime;

use common::*;
use dpop_proofs::ProofKey;

const GROUP: &str = "jwt_and_dpop";
/// Signing: whole token requests with each signing algorithm, and the backend's signature alone.
const SIGNING: &str = "signing";
/// ID tokens: a code exchange that answers one, with each algorithm, beside a plain one.
const ID_TOKENS: &str = "id_tokens";
/// The RSA-2048 test key (PKCS#8 PEM) the tests sign with.
const RSA_PEM: &[u8] = include_bytes!("../tests/keys/rs256-test-only.pem");
/// The token endpoint and a resource of the server whose issuer is [`ISSUER`].
const TOKEN_URL: &str = "https://auth.example/api/oauth/token";
const ME_URL: &str = "https://auth.example/api/me";
/// How far a proof's `iat` may be from now: the window of `Dpop::new()`.
const WINDOW: Duration = Duration::from_secs(60);

/// How many distinct tokens (or proofs) each benchmark goes round, as `flows` does for bearer
/// validation: store lookups spread over this many miss the CPU caches as a large store's do.
fn pool() -> u64 {
    if measuring() { 16 * 1024 } else { 16 }
}

fn now() -> UnixTime {
    UnixTime::from(SystemTime::now())
}

/// A server as `flows`' with JWT access tokens signed by a fresh key of `algorithm` (no
/// revocation check: bearer validation verifies the token without the token store).
fn jwt_server(algorithm: SigningAlgorithm) -> Bench {
    let key = SigningKey::generate(algorithm).expect("a signing key");
    let keys = JwtAccessTokens::new(Arc::new(StaticKeys::new(key, [])));
    Bench::with(|builder| builder.jwt_access_tokens(keys))
}

/// Checks a token response (opaque or JWT access token) and returns its JSON.
fn check_tokens(response: &Response<String>, token_type: &str) -> Value {
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body: Value = serde_json::from_str(response.body()).expect("JSON");
    assert_eq!(body["token_type"], token_type, "{body}");
    assert!(body["access_token"].is_string(), "{body}");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "profile");
    assert!(body["jti"].is_string());
    body
}

/// The confidential client's client-credentials tokens (no user).
async fn client_tokens(bench: &Bench) -> Value {
    let request = bench.client_credentials_request(&bench.conf_basic);
    check_tokens(&bench.server.token(&request).await, "bearer")
}

/// Alice's tokens, from the whole code flow of the confidential client.
async fn user_tokens(bench: &Bench) -> Value {
    let code = bench.code().await;
    let request = bench.exchange_confidential_request(&code);
    check_tokens(&bench.server.token(&request).await, "bearer")
}

/// The decoded JOSE header of a compact JWS, unverified.
fn jose_header(token: &str) -> Value {
    use base64::Engine as _;
    let header = token.split('.').next().expect("a header");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON")
}

/// `token` with one character of its end (a JWS's signature) changed.
fn tampered(token: &str) -> String {
    let at = token.len() - 10;
    let mut bytes = token.as_bytes().to_vec();
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).expect("ASCII")
}

/// Runs `work` `iters` times over `inputs` in turn, for synchronous work that consumes nothing.
fn time_sync<T, R>(iters: u64, inputs: &[T], mut work: impl FnMut(&T) -> R) -> Duration {
    let start = Instant::now();
    for input in inputs.iter().cycle().take(iters as usize) {
        std::hint::black_box(work(input));
    }
    start.elapsed()
}

// ---------------------------------------------------------------------------------------------
// Bearer validation: opaque and JWT access tokens

/// Checks `bearer()` of the first of `tokens` (issued as `first`): the grant, Alice's when
/// `alice`, and the same token with a broken signature (or unknown, when opaque) refused.
fn check_bearer(rt: &Runtime, bench: &Bench, first: &Value, alice: bool) {
    let token = access_token(first);
    let grant = rt
        .block_on(bench.server.bearer(&bearer_request(&token), None))
        .expect("a valid token");
    let authorization = &grant.authorization;
    assert_eq!(authorization.client_id.as_str(), bench.conf_id);
    assert_eq!(authorization.user.as_ref(), alice.then_some(&bench.alice));
    assert_eq!(authorization.scope.as_str(), "profile");
    assert_eq!(
        authorization.audience.as_str(),
        ISSUER,
        "the default audience"
    );
    assert_eq!(grant.jti().as_str(), first["jti"]);
    assert!(grant.binding.is_none());
    let refusal = rt
        .block_on(
            bench
                .server
                .bearer(&bearer_request(&tampered(&token)), None),
        )
        .expect_err("a tampered token");
    assert_eq!(refusal.status(), 401);
}

/// Times `server.bearer(request, None)` going round `tokens`, each answer a grant.
fn bench_bearer(
    g: &mut BenchmarkGroup<'_, WallTime>,
    rt: &Runtime,
    id: &str,
    bench: &Bench,
    tokens: &[String],
) {
    g.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let requests = requests_round(tokens, iters, |t| bearer_request(t));
            time_each(rt, &requests, async |r| {
                let grant = bench.server.bearer(r, None).await;
                assert!(grant.is_ok());
                grant
            })
        })
    });
}

/// A pool of access tokens made by `make`, the first answer kept for its checks.
fn token_pool(
    rt: &Runtime,
    bench: &Bench,
    make: impl AsyncFn(&Bench) -> Value,
) -> (Value, Vec<String>) {
    let answers = prepare(rt, pool(), async || make(bench).await);
    let tokens = answers.iter().map(access_token).collect();
    (answers[0].clone(), tokens)
}

fn bearer_opaque(g: &mut BenchmarkGroup<'_, WallTime>, rt: &Runtime) {
    let bench = Bench::new();
    let (first, tokens) = token_pool(rt, &bench, client_tokens);
    assert_eq!(
        tokens[0].len(),
        44,
        "an opaque token: its issue time and 216 random bits"
    );
    check_bearer(rt, &bench, &first, false);
    bench_bearer(g, rt, "bearer_opaque", &bench, &tokens);

    let (first, tokens) = token_pool(rt, &bench, user_tokens);
    check_bearer(rt, &bench, &first, true);
    bench_bearer(g, rt, "bearer_opaque_user", &bench, &tokens);
}

/// A JWT access token's header: `at+jwt`, signed with `algorithm` by the JWKS's key.
fn check_jwt_header(token: &str, algorithm: &str, jwks: &Value) {
    let header = jose_header(token);
    assert_eq!(header["typ"], "at+jwt");
    assert_eq!(header["alg"], algorithm);
    assert_eq!(header["kid"], jwks["keys"][0]["kid"]);
}

/// The server's JWKS document.
fn jwks(rt: &Runtime, bench: &Bench) -> String {
    let response = rt.block_on(bench.server.jwks());
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    response.into_body()
}

/// Bearer validation of JWT access tokens signed with `algorithm` (client credentials, and with
/// `with_user` Alice's from the code flow too), then the same tokens verified by a
/// [`JwtVerifier`] built from the JWKS alone.
fn bearer_jwt(
    g: &mut BenchmarkGroup<'_, WallTime>,
    rt: &Runtime,
    algorithm: SigningAlgorithm,
    suffix: &str,
    with_user: bool,
) {
    let bench = jwt_server(algorithm);
    let jwks = jwks(rt, &bench);
    let jwks_json: Value = serde_json::from_str(&jwks).expect("JSON");
    assert_eq!(jwks_json["keys"].as_array().map(Vec::len), Some(1));

    let (first, tokens) = token_pool(rt, &bench, client_tokens);
    check_jwt_header(&tokens[0], algorithm.as_str(), &jwks_json);
    check_bearer(rt, &bench, &first, false);
    bench_bearer(g, rt, &format!("bearer_jwt{suffix}"), &bench, &tokens);

    if with_user {
        let (first, tokens) = token_pool(rt, &bench, user_tokens);
        check_jwt_header(&tokens[0], algorithm.as_str(), &jwks_json);
        check_bearer(rt, &bench, &first, true);
        bench_bearer(g, rt, &format!("bearer_jwt_user{suffix}"), &bench, &tokens);
    }

    // A resource server with the JWKS alone; its audience is the server's default, the issuer.
    let verifier = JwtVerifier::from_jwks(ISSUER, ISSUER, &jwks).expect("a JWKS");
    let now = now();
    let verified = verifier.verify(&tokens[0], now).expect("a valid token");
    assert_eq!(verified.client_id.as_str(), bench.conf_id);
    assert!(verified.is_client_only());
    assert_eq!(verified.scope.as_str(), "profile");
    assert_eq!(verified.audience.as_str(), ISSUER);
    assert_eq!(verified.jti.as_str(), first["jti"]);
    assert!(verified.expires_at > now);
    let refusal = verifier.verify(&tampered(&tokens[0]), now);
    assert_eq!(refusal.unwrap_err(), JwtError::BadSignature);
    g.bench_function(format!("jwt_verifier{suffix}"), |b| {
        b.iter_custom(|iters| {
            time_sync(iters, &tokens, |token| {
                let verified = verifier.verify(token, now);
                assert!(verified.is_ok());
                verified
            })
        })
    });
}

// ---------------------------------------------------------------------------------------------
// DPoP

/// `verify_proof` alone on proofs for `POST` at the token endpoint signed by `key`.
fn dpop_proof(g: &mut BenchmarkGroup<'_, WallTime>, id: &str, key: &ProofKey) {
    let now = now();
    let proofs: Vec<String> = (0..pool())
        .map(|_| key.proof("POST", TOKEN_URL, now.as_secs()))
        .collect();
    let context = ProofContext {
        method: "POST",
        uri: TOKEN_URL,
        access_token: None,
        now,
        window: WINDOW,
    };
    let verified = verify_proof(&proofs[0], &context).expect("a valid proof");
    assert_eq!(verified.jkt.to_string(), key.jkt());
    assert_eq!(verified.issued_at, now);
    assert!(verified.jti.starts_with("proof-"));
    assert!(verified.nonce.is_none());
    let refusal = verify_proof(&tampered(&proofs[0]), &context);
    assert_eq!(refusal.unwrap_err(), ProofError::BadSignature);
    g.bench_function(id, |b| {
        b.iter_custom(|iters| {
            time_sync(iters, &proofs, |proof| {
                let verified = verify_proof(proof, &context);
                assert!(verified.is_ok());
                verified
            })
        })
    });
}

/// A server as `flows`' that accepts DPoP proofs (opaque access tokens).
fn dpop_server() -> Bench {
    // One key sends every proof, far faster than the default per-key budget allows (100 a
    // second of the window): the budget is counted as by default, set high enough not to
    // refuse.
    let dpop = Dpop::new().proofs_per_key_per_second(1_000_000);
    Bench::with(|builder| builder.dpop(dpop))
}

/// An access token bound to `key`: client credentials with a proof of it.
async fn bound_token(bench: &Bench, key: &ProofKey) -> String {
    let mut request = bench.client_credentials_request(&bench.conf_basic);
    let proof = key.proof("POST", TOKEN_URL, now().as_secs());
    let proof = proof.parse().expect("a header value");
    request.headers_mut().insert("dpop", proof);
    access_token(&check_tokens(&bench.server.token(&request).await, "DPoP"))
}

/// `GET /api/me` with `Authorization: DPoP {token}` and a fresh proof of `key` for it.
fn dpop_request(key: &ProofKey, token: &str) -> Request<()> {
    let proof = key.proof_for_token("GET", ME_URL, now().as_secs(), token);
    Request::get("/api/me")
        .header("authorization", format!("DPoP {token}"))
        .header("dpop", proof)
        .body(())
        .expect("request")
}

/// The error description of a refusal.
fn description(refusal: &Response<String>) -> String {
    let body: Value = serde_json::from_str(refusal.body()).expect("JSON");
    body["error_description"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn bearer_dpop(g: &mut BenchmarkGroup<'_, WallTime>, rt: &Runtime) {
    let key = ProofKey::es256(7);
    let bench = dpop_server();
    let metadata: Value = serde_json::from_str(bench.server.metadata().body()).expect("JSON");
    assert_eq!(metadata["token_endpoint"], TOKEN_URL);
    let token = rt.block_on(bound_token(&bench, &key));
    let request = dpop_request(&key, &token);
    let grant = rt
        .block_on(bench.server.bearer(&request, None))
        .expect("a bound token with its proof");
    assert_eq!(
        grant
            .binding
            .and_then(|b| b.jkt())
            .map(|jkt| jkt.to_string()),
        Some(key.jkt())
    );
    assert_eq!(grant.authorization.client_id.as_str(), bench.conf_id);
    assert_eq!(grant.authorization.scope.as_str(), "profile");
    let replay = rt.block_on(bench.server.bearer(&request, None));
    let replay = replay
        .expect_err("a proof is accepted once")
        .into_response();
    assert_eq!(replay.status(), 401);
    assert!(description(&replay).contains("used before"), "{replay:?}");
    let as_bearer = rt.block_on(bench.server.bearer(&bearer_request(&token), None));
    let as_bearer = as_bearer
        .expect_err("a bound token is not a bearer token")
        .into_response();
    assert!(description(&as_bearer).contains("bound to a DPoP key"));

    g.bench_function("bearer_dpop", |b| {
        b.iter_custom(|iters| {
            // A fresh server per sample: every proof's id is kept (for its window) in the
            // single-use store, which holds at most `MAX_SINGLE_USE`.
            let bench = dpop_server();
            let token = rt.block_on(bound_token(&bench, &key));
            let requests: Vec<_> = (0..iters).map(|_| dpop_request(&key, &token)).collect();
            let elapsed = time_each(rt, &requests, async |r| {
                let grant = bench.server.bearer(r, None).await;
                assert!(grant.is_ok());
                grant
            });
            for spent in [requests.first(), requests.last()].into_iter().flatten() {
                let again = rt.block_on(bench.server.bearer(spent, None));
                assert!(again.is_err_and(|r| r.status() == 401), "each proof spent");
            }
            elapsed
        })
    });
}

// ---------------------------------------------------------------------------------------------
// The summary table

const FUNCTIONS: &[&str] = &[
    "bearer_opaque",
    "bearer_opaque_user",
    "bearer_jwt",
    "bearer_jwt_user",
    "bearer_jwt_es256",
    "jwt_verifier",
    "jwt_verifier_es256",
    "dpop_proof_es256",
    "dpop_proof_eddsa",
    "bearer_dpop",
];

fn summary(since: SystemTime) {
    let base = median_ns(GROUP, "bearer_opaque", since);
    let mut lines = Vec::new();
    for function in FUNCTIONS {
        let Some(median) = median_ns(GROUP, function, since) else {
            continue;
        };
        let ratio = base.map_or("-".to_owned(), |b| format!("{:.1}x", median / b));
        lines.push(format!(
            "| {GROUP}/{function} | {} | {ratio} |",
            format_ns(median)
        ));
    }
    if lines.is_empty() {
        return;
    }
    println!("\nMedians of this run, as ratios to bearer_opaque:\n");
    println!("| benchmark | median | / bearer_opaque |");
    println!("|---|---|---|");
    for line in lines {
        println!("{line}");
    }
}

// ---------------------------------------------------------------------------------------------
// Signing

/// A server as `jwt_server`'s with `key`.
fn jwt_server_with(key: SigningKey) -> Bench {
    let keys = JwtAccessTokens::new(Arc::new(StaticKeys::new(key, [])));
    Bench::with(|builder| builder.jwt_access_tokens(keys))
}

/// Times whole client-credentials token requests of the confidential client (client
/// authentication, the token minted and kept, the response), each answer checked: with a JWT
/// format, the access token signed.
fn issue(g: &mut BenchmarkGroup<'_, WallTime>, rt: &Runtime, id: &str, bench: &Bench, alg: &str) {
    let first = rt.block_on(client_tokens(bench));
    let token = access_token(&first);
    if alg.is_empty() {
        assert_eq!(
            token.len(),
            44,
            "an opaque token: its issue time and 216 random bits"
        );
    } else {
        assert_eq!(jose_header(&token)["alg"], alg);
    }
    g.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let requests: Vec<_> = (0..iters)
                .map(|_| bench.client_credentials_request(&bench.conf_basic))
                .collect();
            time_each(rt, &requests, async |r| {
                let response = bench.server.token(r).await;
                assert_eq!(response.status(), 200);
                response
            })
        })
    });
}

/// Times the JOSE backend's signature alone: `jsonwebtoken::encode` of an access token's
/// claims with `key`.
fn sign(g: &mut BenchmarkGroup<'_, WallTime>, id: &str, key: &ProofKey) {
    let claims = serde_json::json!({
        "iss": "https://auth.example", "sub": "alice", "aud": "https://auth.example",
        "client_id": "conf", "scope": "profile", "iat": 1_800_000_000u64,
        "exp": 1_800_003_600u64, "jti": "0123456789abcdefghijkl",
    });
    let signed = key.sign(&claims);
    assert_eq!(signed.split('.').count(), 3);
    g.bench_function(id, |b| {
        b.iter_custom(|iters| time_sync(iters, &[()], |()| key.sign(&claims)))
    });
}

fn signing(criterion: &mut Criterion, rt: &Runtime) {
    let mut g = group(criterion, SIGNING);
    issue(&mut g, rt, "issue_opaque", &Bench::new(), "");
    let eddsa = SigningKey::generate(SigningAlgorithm::EdDSA).expect("a key");
    issue(
        &mut g,
        rt,
        "issue_jwt_eddsa",
        &jwt_server_with(eddsa),
        "EdDSA",
    );
    let es256 = SigningKey::generate(SigningAlgorithm::ES256).expect("a key");
    issue(
        &mut g,
        rt,
        "issue_jwt_es256",
        &jwt_server_with(es256),
        "ES256",
    );
    let rs256 = SigningKey::from_pem(SigningAlgorithm::RS256, RSA_PEM).expect("a key");
    issue(
        &mut g,
        rt,
        "issue_jwt_rs256",
        &jwt_server_with(rs256),
        "RS256",
    );
    sign(&mut g, "sign_eddsa", &ProofKey::eddsa(3));
    sign(&mut g, "sign_es256", &ProofKey::es256(3));
    sign(
        &mut g,
        "sign_rs256",
        &ProofKey::rsa(jsonwebtoken::Algorithm::RS256),
    );
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// ID tokens

/// A server serving OpenID Connect with a confidential client per algorithm (`oidc-rs256`…,
/// secret `oidc-secret`, a digest verifier as for generated secrets) besides the usual ones.
fn oidc_server() -> Bench {
    use grantor::client::{Approval, Client, GrantType, SecretVerifier};
    use grantor::store::Admin as _;
    let bench = Bench::with(|b| b.openid_connect(grantor::settings::OpenIdConnect::default()));
    for algorithm in SigningAlgorithm::ALL {
        let verifier = SecretVerifier::digest(&grantor::client::ClientSecret::new(OIDC_SECRET))
            .expect("a long enough secret");
        let client = Client::confidential(oidc_client(algorithm), verifier)
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode])
            .scopes("profile email")
            .approval(Approval::NotRequired)
            .id_token_signing_algorithm(algorithm)
            .build()
            .expect("an OpenID client");
        rt_block(bench.tokens.register_client(&client)).expect("registered");
    }
    bench
}

/// Runs `future` to completion on a runtime of its own (the benchmarks' runtime is not
/// entered yet while servers are built).
fn rt_block<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(future)
}

const OIDC_SECRET: &str = "oidc-secret-0123456789abcdefghijklmnopqrstuv";

fn oidc_client(algorithm: SigningAlgorithm) -> String {
    format!("oidc-{}", algorithm.as_str().to_ascii_lowercase())
}

/// Times code exchanges of `client_id` for codes of `scope` (with a nonce), the codes made
/// beforehand, untimed; every answer asserted, with an ID token of `alg` when one is expected.
fn exchange(
    g: &mut BenchmarkGroup<'_, WallTime>,
    rt: &Runtime,
    id: &str,
    bench: &Bench,
    client_id: &str,
    alg: Option<&str>,
) {
    let scope = if alg.is_some() {
        "openid%20profile"
    } else {
        "profile"
    };
    let query = format!(
        "response_type=code&client_id={client_id}&redirect_uri={REDIRECT_ENCODED}&state=xyz\
         &scope={scope}&nonce=n-0S6_WzA2Mj"
    );
    let basic = basic(client_id, OIDC_SECRET);
    let codes = |n: u64| -> Vec<Request<String>> {
        rt.block_on(async {
            let mut requests = Vec::new();
            for _ in 0..n {
                let response = bench
                    .authorize_and_approve(&authorize_request(&query))
                    .await;
                let code = code_of(&response);
                requests.push(token_request(
                    Some(&basic),
                    format!(
                        "grant_type=authorization_code&code={code}\
                         &redirect_uri={REDIRECT_ENCODED}"
                    ),
                ));
            }
            requests
        })
    };
    let first = rt.block_on(bench.server.token(&codes(1)[0]));
    assert_eq!(first.status(), 200, "{}", first.body());
    let tokens: Value = serde_json::from_str(first.body()).expect("JSON");
    assert!(tokens["access_token"].is_string(), "{tokens}");
    match alg {
        Some(alg) => assert_eq!(
            jose_header(tokens["id_token"].as_str().unwrap())["alg"],
            alg
        ),
        None => assert!(tokens.get("id_token").is_none()),
    }
    g.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let requests = codes(iters);
            time_each(rt, &requests, async |r| {
                let response = bench.server.token(r).await;
                assert_eq!(response.status(), 200);
                response
            })
        })
    });
}

fn id_tokens(criterion: &mut Criterion, rt: &Runtime) {
    let mut g = group(criterion, ID_TOKENS);
    let bench = oidc_server();
    // The same client and exchange without `openid`: what an ID token adds is the difference.
    let rs256 = oidc_client(SigningAlgorithm::RS256);
    exchange(&mut g, rt, "exchange_oauth", &bench, &rs256, None);
    for algorithm in SigningAlgorithm::ALL {
        let id = format!(
            "exchange_id_token_{}",
            algorithm.as_str().to_ascii_lowercase()
        );
        let client = oidc_client(algorithm);
        exchange(&mut g, rt, &id, &bench, &client, Some(algorithm.as_str()));
    }
    g.finish();
}

fn main() {
    let started = SystemTime::now();
    let mut criterion = Criterion::default().configure_from_args();
    let rt = runtime();
    let mut g = group(&mut criterion, GROUP);
    bearer_opaque(&mut g, &rt);
    bearer_jwt(&mut g, &rt, SigningAlgorithm::EdDSA, "", true);
    bearer_jwt(&mut g, &rt, SigningAlgorithm::ES256, "_es256", false);
    dpop_proof(&mut g, "dpop_proof_es256", &ProofKey::es256(7));
    dpop_proof(&mut g, "dpop_proof_eddsa", &ProofKey::eddsa(7));
    bearer_dpop(&mut g, &rt);
    g.finish();
    signing(&mut criterion, &rt);
    id_tokens(&mut criterion, &rt);
    criterion.final_summary();
    if measuring() {
        summary(started);
    }
}
