//! DPoP on the demo servers over real HTTP (examples/README.md, "Sender-constrained tokens"), against
//! `axum_server` and `actix_server`: a token request with a proof gets a DPoP-bound token that
//! `/api/me` accepts only as `Authorization: DPoP` with a fresh proof, never as a bearer token;
//! a self-registered public client's refresh token is bound to the same key.

mod demo;
mod dpop_proofs;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use demo::Server;
use demo::http::*;
use dpop_proofs::ProofKey;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

each_framework! {
    a_bound_token_works_only_with_a_proof_of_its_key => bound_token;
    a_public_clients_refresh_token_is_bound_to_its_key => public_client;
    a_proof_for_another_origin_is_refused_with_that_origin_as_the_target => absolute_form;
    a_code_bound_by_dpop_jkt_or_a_pushed_proof_needs_that_keys_proof => bound_codes;
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token request with a `DPoP` proof of `key` (none when `key` is `None`).
async fn token_with_proof(
    base: &str,
    key: Option<&ProofKey>,
    basic: Option<(&str, &str)>,
    pairs: &[(&str, &str)],
) -> Reply {
    let url = format!("{base}/api/oauth/token");
    let mut request = browser()
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(pairs));
    if let Some(key) = key {
        request = request.header("dpop", key.proof("POST", &url, now()));
    }
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    send(request).await
}

/// `GET /api/me` with `authorization` and, if given, a proof of `key` for `token`.
async fn me_with(base: &str, authorization: &str, proof: Option<(&ProofKey, &str)>) -> Reply {
    let url = format!("{base}/api/me");
    let mut request = browser().get(&url).header("authorization", authorization);
    if let Some((key, token)) = proof {
        request = request.header("dpop", key.proof_for_token("GET", &url, now(), token));
    }
    send(request).await
}

fn bound(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    let tokens = reply.json();
    assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
    tokens
}

async fn bound_token(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = metadata_document(base).await;
    assert!(
        metadata["dpop_signing_alg_values_supported"]
            .as_array()
            .is_some_and(|algs| algs.contains(&json!("ES256")) && algs.contains(&json!("EdDSA"))),
        "{metadata}"
    );
    let key = ProofKey::es256(11);
    let pairs = [
        ("grant_type", "password"),
        ("username", ALICE.0),
        ("password", ALICE.1),
    ];
    let tokens = bound(&token_with_proof(base, Some(&key), Some(DEMO), &pairs).await);
    let token = access_token(&tokens).to_owned();
    assert_eq!(introspect(base, &token).await["cnf"]["jkt"], key.jkt());

    let profile = me_with(base, &format!("DPoP {token}"), Some((&key, &token))).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    assert_eq!(profile.json()["email"], ALICE.0);

    // Refused as a plain bearer token, and with another key's proof.
    let as_bearer = me(base, Some(&token)).await;
    assert_oauth_error(&as_bearer, 401, "invalid_token");
    let challenge = as_bearer.header("www-authenticate").unwrap_or_default();
    assert!(challenge.starts_with("DPoP "), "{challenge}");
    let other = ProofKey::eddsa(12);
    let stolen = me_with(base, &format!("DPoP {token}"), Some((&other, &token))).await;
    assert_oauth_error(&stolen, 401, "invalid_dpop_proof");
    let no_proof = me_with(base, &format!("DPoP {token}"), None).await;
    assert_oauth_error(&no_proof, 401, "invalid_dpop_proof");

    // A bad proof at the token endpoint, and a proof-less request still gets a bearer token.
    let url = format!("{base}/api/oauth/token");
    let reply = send(
        browser()
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("dpop", key.proof("GET", &url, now()))
            .basic_auth(DEMO.0, Some(DEMO.1))
            .body(form(&pairs)),
    )
    .await;
    assert_oauth_error(&reply, 400, "invalid_dpop_proof");
    let plain = token_with_proof(base, None, Some(DEMO), &pairs).await;
    assert_eq!(plain.json()["token_type"], "bearer", "{}", plain.body);
    server.assert_alive_and_calm();
}

async fn public_client(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let registration = send(
        browser()
            .post(format!("{base}/api/oauth/register"))
            .header("content-type", "application/json")
            .body(
                json!({
                    "redirect_uris": [CALLBACK],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "token_endpoint_auth_method": "none",
                    "scope": "profile",
                })
                .to_string(),
            ),
    )
    .await;
    assert_eq!(registration.status, 201, "{}", registration.body);
    let client = registration.json();
    let client_id = client["client_id"].as_str().unwrap();
    let verifier = "a-code-verifier-for-a-dpop-bound-public-client-0123456789";
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let http = browser();
    let params = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "profile"),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    let approval = sign_in_via_authorize(&http, base, &params, ALICE).await;
    let callback = callback_query(&decide(&http, base, &approval, "approve").await);
    let code = callback.get("code").expect("a code");
    let key = ProofKey::eddsa(21);
    let exchange = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", CALLBACK),
        ("client_id", client_id),
        ("code_verifier", verifier),
    ];
    let tokens = bound(&token_with_proof(base, Some(&key), None, &exchange).await);
    let refresh_token = tokens["refresh_token"].as_str().unwrap();
    let refresh = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("client_id", client_id),
    ];
    let without = token_with_proof(base, None, None, &refresh).await;
    assert_oauth_error(&without, 400, "invalid_dpop_proof");
    let other = ProofKey::es256(22);
    let stolen = token_with_proof(base, Some(&other), None, &refresh).await;
    assert_oauth_error(&stolen, 400, "invalid_grant");
    let refreshed = bound(&token_with_proof(base, Some(&key), None, &refresh).await);
    let token = access_token(&refreshed);
    let profile = me_with(base, &format!("DPoP {token}"), Some((&key, token))).await;
    assert_eq!(profile.status, 200, "{}", profile.body);
    server.assert_alive_and_calm();
}

/// `GET <target>` in absolute form (RFC 9112 §3.2.2) over a raw connection, as a client may
/// send it; the status code of the answer.
async fn absolute_form_get(base: &str, target: &str, headers: &[(&str, &str)]) -> u16 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let host = target.split('/').nth(2).unwrap();
    let mut request = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.split(' ').nth(1).unwrap_or_default();
    status
        .parse()
        .unwrap_or_else(|_| panic!("no status in {answer}"))
}

/// examples/README.md, "Under attack, part 3": a proof made for another server's URL, sent with that URL
/// as the absolute-form request target, is refused; `htu` is built from the configured origin.
async fn absolute_form(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let key = ProofKey::es256(13);
    let pairs = [
        ("grant_type", "password"),
        ("username", ALICE.0),
        ("password", ALICE.1),
    ];
    let tokens = bound(&token_with_proof(base, Some(&key), Some(DEMO), &pairs).await);
    let token = access_token(&tokens).to_owned();
    let scheme = format!("DPoP {token}");
    let elsewhere = "https://other.example/api/me";
    let foreign = key.proof_for_token("GET", elsewhere, now(), &token);
    let status = absolute_form_get(
        base,
        elsewhere,
        &[("authorization", &scheme), ("dpop", &foreign)],
    )
    .await;
    assert_eq!(status, 401, "a proof for another origin was accepted");
    // The same request with a proof for the server's own URL is answered.
    let own = format!("{base}/api/me");
    let proof = key.proof_for_token("GET", &own, now(), &token);
    let status =
        absolute_form_get(base, &own, &[("authorization", &scheme), ("dpop", &proof)]).await;
    assert_eq!(status, 200);
    server.assert_alive_and_calm();
}

/// The public client's code for Alice, through the sign-in page, from the authorization
/// request `params` (PKCE added).
async fn public_code(base: &str, params: &[(&str, &str)]) -> String {
    let mut params = params.to_vec();
    params.extend([
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]);
    let signed_in = sign_in_via_authorize(&browser(), base, &params, ALICE).await;
    callback_query(&signed_in)
        .remove("code")
        .unwrap_or_else(|| panic!("a code: {}", signed_in.body))
}

/// The public client's code exchange, with a proof of `key`.
async fn exchange_with(base: &str, code: &str, key: &ProofKey) -> Reply {
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CALLBACK),
        ("client_id", "public-client"),
        ("code_verifier", VERIFIER),
    ];
    token_with_proof(base, Some(key), None, &pairs).await
}

async fn bound_codes(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let key = ProofKey::es256(31);
    let other = ProofKey::eddsa(32);
    let jkt = key.jkt();
    let by_jkt = [
        ("response_type", "code"),
        ("client_id", "public-client"),
        ("redirect_uri", CALLBACK),
        ("state", "s-jkt"),
        ("dpop_jkt", jkt.as_str()),
    ];
    // Through the sign-in page (the request sealed into its form and back): another key's
    // proof is refused, the bound key's redeems.
    let code = public_code(base, &by_jkt).await;
    let stolen = exchange_with(base, &code, &other).await;
    assert_oauth_error(&stolen, 400, "invalid_grant");
    let code = public_code(base, &by_jkt).await;
    let tokens = bound(&exchange_with(base, &code, &key).await);
    let token = access_token(&tokens);
    let profile = me_with(base, &format!("DPoP {token}"), Some((&key, token))).await;
    assert_eq!(
        profile.status, 200,
        "the token is bound to the key: {}",
        profile.body
    );

    // A proof on the pushed request binds its code the same way (RFC 9449 §10.1).
    let par = format!("{base}/api/oauth/par");
    let pushed_request = [
        ("response_type", "code"),
        ("client_id", "public-client"),
        ("redirect_uri", CALLBACK),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    for (redeemer, status) in [(&other, 400), (&key, 200)] {
        let pushed = send(
            browser()
                .post(&par)
                .header("content-type", "application/x-www-form-urlencoded")
                .header("dpop", key.proof("POST", &par, now()))
                .body(form(&pushed_request)),
        )
        .await;
        assert_eq!(pushed.status, 201, "{}", pushed.body);
        let request_uri = pushed.json()["request_uri"].as_str().unwrap().to_owned();
        let params = [
            ("client_id", "public-client"),
            ("request_uri", request_uri.as_str()),
        ];
        let signed_in = sign_in_via_authorize(&browser(), base, &params, ALICE).await;
        let code = callback_query(&signed_in).remove("code").expect("a code");
        let answer = exchange_with(base, &code, redeemer).await;
        assert_eq!(answer.status, status, "{}", answer.body);
    }
    server.assert_alive_and_calm();
}
