//! The OpenID Foundation conformance suite's FAPI 2.0 plans for authorization servers, the
//! token side: the token endpoint, client assertions, DPoP binding and refresh. The plans, the
//! variants (`dpop`, `mtls`, `security`) and the shared demos are as in `demo_oidf_fapi2.rs`,
//! whose table holds the authorization side and the modules that do not apply.
//!
//! | module | what it checks | test |
//! |---|---|---|
//! | `AccessTokenTypeHeaderCaseSensitivity` | the resource takes the scheme in any case (`dPoP`, `bEARER`; RFC 9110 §11.1) | `fapi2_sp_final_access_token_type_header_case_sensitivity` (`dpop`, `mtls`) |
//! | `CheckDpopProofNbfExp` | DPoP proofs with `nbf` and `exp` at the token endpoint and the resource: taken | `fapi2_sp_final_check_dpop_proof_nbf_exp` |
//! | `EnsureDpopProofWithIat10SecondsBeforeSucceeds` | proofs issued 10 s ago at the PAR and token endpoints and the resource: taken | `fapi2_sp_final_ensure_dpopproof_with_iat_10seconds_before_succeeds` |
//! | `EnsureDpopProofWithIat10SecondsAfterSucceeds` | proofs issued 8 s ahead: taken | `fapi2_sp_final_ensure_dpopproof_with_iat_10seconds_after_succeeds` |
//! | `EnsureMismatchedDpopJktFails` | `dpop_jkt` not the PAR proof's key: `400` `invalid_request` or `invalid_dpop_proof` | `fapi2_sp_final_ensure_mismatched_dpop_jkt_fails` |
//! | `EnsureTokenEndpointFailsWithMismatchedDpopProofJkt` | the code bound at the PAR endpoint, redeemed with a proof of another key: `400` `invalid_request`, `invalid_grant` or `invalid_dpop_proof` | `fapi2_sp_final_ensure_token_endpoint_fails_with_mismatched_dpop_proof_jkt` |
//! | `EnsureTokenEndpointFailsWithMismatchedDpopJkt` | `dpop_jkt` naming another key, redeemed with the client's: the same | `fapi2_sp_final_ensure_token_endpoint_fails_with_mismatched_dpop_jkt` |
//! | `EnsureDpopProofAtParEndpointBindingSuccess` | a proof at the PAR endpoint, the same key at the token endpoint: success | `fapi2_sp_final_ensure_dpopproof_at_par_endpoint_binding_success` |
//! | `EnsureDpopAuthCodeBindingSuccess` | `dpop_jkt` and a proof of that key at the PAR endpoint: success | `fapi2_sp_final_ensure_dpop_auth_code_binding_success` |
//! | `EnsureClientIdInTokenEndpoint` | client 1's code with client 2's `client_id` (and its assertion, or client 1's certificate): `400`/`401` `invalid_client` or `invalid_grant` | `fapi2_sp_final_ensure_client_id_in_token_endpoint` (`dpop`, `mtls`) |
//! | `EnsureHolderOfKeyRequired` | the code redeemed without a DPoP proof (`invalid_request`, `invalid_grant`, `invalid_dpop_proof`), or without the certificate (`invalid_client`, `invalid_request`) | `fapi2_sp_final_ensure_holder_of_key_required` (`dpop`, `mtls`) |
//! | `EnsureAuthorizationCodeIsBoundToClient` | client 1's code redeemed by client 2: `400` `invalid_grant` | `fapi2_sp_final_ensure_authorization_code_is_bound_to_client` (`dpop`, `mtls`) |
//! | `AttemptReuseAuthorizationCodeAfterOneSecond` | the code redeemed twice: `400` `invalid_grant`, and the first token revoked (the suite only warns if not). Presented again at once rather than after a second: the code is spent at its first use | `fapi2_sp_final_attempt_reuse_authorization_code_after_one_second` (`dpop`, `mtls`) |
//! | `AttemptToUseExpiredAuthCode` | a code redeemed 62 s after it was issued: `400` `invalid_grant`. Not waited for here (the shortest `--code-ttl` is a second, and no test here sleeps); `authorization_code.rs` `code_expires_after_60_seconds` holds it on a mock clock, and the demo refuses to start under FAPI 2.0 with codes of more than 60 s | — |
//! | `EnsureSignedClientAssertionWithRS256Fails` | a PS256 client's assertion signed RS256: `400`/`401` `invalid_client` | `fapi2_sp_final_ensure_signed_client_assertion_with_rs256_fails` |
//! | `EnsureClientAssertionInTokenEndpoint` | `client_id` and no assertion: `invalid_client` or `invalid_request` | `fapi2_sp_final_ensure_client_assertion_in_token_endpoint` |
//! | `EnsureClientAssertionWithExpIs5MinutesInPastFails` | an assertion expired 5 minutes ago: the same | `fapi2_sp_final_ensure_client_assertion_with_exp_is_5_minutes_in_past_fails` |
//! | `EnsureClientAssertionWithWrongAudFails` | `aud` another server's URL: the same | `fapi2_sp_final_ensure_client_assertion_with_wrong_aud_fails` |
//! | `EnsureClientAssertionWithNoSubFails` | no `sub`: the same | `fapi2_sp_final_ensure_client_assertion_with_no_sub_fails` |
//! | `DpopNegativeTests` | at the resource: an upper-case header name and extra members taken; two proofs, not a JWS, no `typ`, `alg`, `jwk`, `jti`, `htm`, `htu`, `iat` or `ath`, a wrong `typ`, `alg: none`, a bad signature, a private `jwk`, `htm` `PUT`, another `htu`, `iat` an hour off, a wrong `ath`, another key, no proof: `400`/`401`; `htu` with or without the query taken (RFC 9449 §4.3); a replayed proof refused and an upper-case scheme and host in `htu` taken (the suite only warns) | `fapi2_sp_final_dpop_negative_tests` |
//! | `RefreshToken` | two clients refresh (sender-constrained, the token works); the previous refresh token presented again after a rotation still works (at once, where the suite waits 30 s); refused without client authentication and without the proof of possession or certificate; client 1's key or certificate with client 2's access token, and client 1 with client 2's refresh token, refused | `fapi2_sp_final_refresh_token` (`dpop`, `mtls`) |
//! | `PAREnsureJWTClientAssertionWithIatNbf8SecondsInTheFutureIsAccepted` | an assertion with `iat` and `nbf` 8 s ahead at the PAR endpoint: accepted (the suite only warns) | `fapi2_sp_final_par_ensure_jwt_client_assertions_nbf_8_seconds_in_the_future_is_accepted` |
//! | `PAREnsureJWTClientAssertionWithIatNbfOver60SecondsInTheFutureFails` | `iat`, `nbf` and `exp` 62 s ahead: `400`/`401` `invalid_client` or `invalid_request` | `fapi2_sp_final_par_ensure_jwt_client_assertions_nbf_over_60_seconds_in_the_future_fails` |
//! | `PAREnsurePKCECodeVerifierRequired` | the code redeemed without `code_verifier`: `400` `invalid_grant` | `fapi2_sp_final_ensure_pkce_code_verifier_required` (`dpop`, `security`) |
//! | `PARIncorrectPKCECodeVerifierRejected` | with a wrong one: `400` `invalid_grant` | `fapi2_sp_final_incorrect_pkce_code_verifier_rejected` (`dpop`, `security`) |
//! | `PAREndpointAsArrayAudienceFails` | an assertion whose `aud` is an array holding the issuer, at the PAR endpoint: `400`/`401` `invalid_client` or `invalid_request` (FAPI 2.0 SP §5.3.2.1: the issuer as a string) | `fapi2_sp_final_par_test_array_as_audience_fails` |
//! | `PAREndpointAsAudienceFails` | `aud` the PAR endpoint's URL: the same | `fapi2_sp_final_par_test_par_endpoint_url_as_audience_fails` |
//! | `PARTokenEndpointAsAudienceFails` | `aud` the token endpoint's URL: the same | `fapi2_sp_final_par_test_token_endpoint_url_as_audience_fails` |

mod demo;
#[path = "demo/fapi2.rs"]
mod fapi2;
#[path = "dpop_proofs/mod.rs"]
mod keys;
#[path = "demo/tls.rs"]
mod tls;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use demo::http::*;
use fapi2::*;
use keys::ProofKey;
use serde_json::{Value, json};

oidf_fapi2! {
    fapi2_sp_final_access_token_type_header_case_sensitivity => token_type_case [dpop, mtls];
    fapi2_sp_final_check_dpop_proof_nbf_exp => dpop_nbf_exp [dpop];
    fapi2_sp_final_ensure_dpopproof_with_iat_10seconds_before_succeeds => dpop_iat_10_seconds_before [dpop];
    fapi2_sp_final_ensure_dpopproof_with_iat_10seconds_after_succeeds => dpop_iat_8_seconds_after [dpop];
    fapi2_sp_final_ensure_mismatched_dpop_jkt_fails => dpop_jkt_not_the_proofs [dpop];
    fapi2_sp_final_ensure_token_endpoint_fails_with_mismatched_dpop_proof_jkt => token_proof_of_another_key [dpop];
    fapi2_sp_final_ensure_token_endpoint_fails_with_mismatched_dpop_jkt => token_proof_not_the_dpop_jkt [dpop];
    fapi2_sp_final_ensure_dpopproof_at_par_endpoint_binding_success => dpop_bound_at_par [dpop];
    fapi2_sp_final_ensure_dpop_auth_code_binding_success => dpop_jkt_and_proof_at_par [dpop];
    fapi2_sp_final_ensure_client_id_in_token_endpoint => client_id_of_another_client [dpop, mtls];
    fapi2_sp_final_ensure_holder_of_key_required => holder_of_key_required [dpop, mtls];
    fapi2_sp_final_ensure_authorization_code_is_bound_to_client => code_of_another_client [dpop, mtls];
    fapi2_sp_final_attempt_reuse_authorization_code_after_one_second => code_reused [dpop, mtls];
    fapi2_sp_final_ensure_signed_client_assertion_with_rs256_fails => assertion_signed_rs256 [dpop];
    fapi2_sp_final_ensure_client_assertion_in_token_endpoint => no_assertion [dpop];
    fapi2_sp_final_ensure_client_assertion_with_exp_is_5_minutes_in_past_fails => assertion_expired [dpop];
    fapi2_sp_final_ensure_client_assertion_with_wrong_aud_fails => assertion_wrong_aud [dpop];
    fapi2_sp_final_ensure_client_assertion_with_no_sub_fails => assertion_without_sub [dpop];
    fapi2_sp_final_dpop_negative_tests => dpop_negative [dpop];
    fapi2_sp_final_refresh_token => refresh_token [dpop, mtls];
    fapi2_sp_final_par_ensure_jwt_client_assertions_nbf_8_seconds_in_the_future_is_accepted => par_assertion_8_seconds_ahead [dpop];
    fapi2_sp_final_par_ensure_jwt_client_assertions_nbf_over_60_seconds_in_the_future_fails => par_assertion_62_seconds_ahead [dpop];
    fapi2_sp_final_ensure_pkce_code_verifier_required => no_code_verifier [dpop, security];
    fapi2_sp_final_incorrect_pkce_code_verifier_rejected => wrong_code_verifier [dpop, security];
    fapi2_sp_final_par_test_array_as_audience_fails => par_assertion_aud_array [dpop];
    fapi2_sp_final_par_test_par_endpoint_url_as_audience_fails => par_assertion_aud_par_endpoint [dpop];
    fapi2_sp_final_par_test_token_endpoint_url_as_audience_fails => par_assertion_aud_token_endpoint [dpop];
}

/// Alice approves `client`'s request for `params`, pushed with `dpop` at the PAR endpoint if
/// given: the code.
async fn code_for(client: &Client, params: &Value, dpop: Option<String>) -> String {
    let pushed = match client.demo.profile {
        Profile::MessageSigning => {
            let object = client.sign_object(&client.object_claims(params));
            client
                .post(PAR, client.authentication(), &[("request", &object)], dpop)
                .await
        }
        Profile::Security => {
            let params = without(params.clone(), "client_id");
            client
                .post(PAR, client.authentication(), &form_pairs(&params), dpop)
                .await
        }
    };
    let request_uri = request_uri_of(&pushed);
    let browser = client.demo.browser();
    let reply = client
        .approved(&browser, &client.by_reference(&request_uri, &[]))
        .await;
    let response = client.response(&reply).await;
    client.code(&response, params["state"].as_str().unwrap())
}

/// A code for `client`'s good request, nothing at the PAR endpoint binding it.
async fn code(client: &Client) -> String {
    code_for(client, &client.request(), None).await
}

/// The pairs of a code's redemption, with the verifier of the challenge.
fn redemption(code: &str) -> [(&str, &str); 4] {
    [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CALLBACK),
        ("code_verifier", VERIFIER),
    ]
}

/// A DPoP proof of `key` for `method` at `url` whose claims `edit` leaves as it likes.
fn proof_with(key: &ProofKey, method: &str, url: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut claims = keys::claims(method, url, now());
    edit(&mut claims);
    key.sign(&claims)
}

/// The token request the modules expect refused for the client's authentication: `400` (or
/// `401` for `invalid_client`) with `invalid_client` or `invalid_request`.
fn assert_unauthenticated(reply: &Reply) {
    let statuses: &[u16] = if reply.status == 401 { &[401] } else { &[400] };
    assert_error_among(reply, statuses, &["invalid_client", "invalid_request"]);
    if reply.status == 401 {
        assert_eq!(reply.json()["error"], "invalid_client", "{}", reply.body);
    }
}

async fn token_type_case(setup: Setup) {
    let client = setup.client().await;
    let flow = client.run(&client.request()).await;
    let token = flow.access_token();
    let url = setup.demo.url(ME);
    // RFC 9110 §11.1: the scheme is case-insensitive.
    let served = match &client.dpop {
        Some(key) => {
            let proof = key.proof_for_token("GET", &url, now(), token);
            client
                .resource_with(&format!("dPoP {token}"), &[&proof])
                .await
        }
        None => client.resource_with(&format!("bEARER {token}"), &[]).await,
    };
    assert_eq!(served.status, 200, "{}", served.body);
}

async fn dpop_nbf_exp(setup: Setup) {
    let client = setup.client().await;
    let key = client.dpop.as_ref().unwrap();
    let code = code(&client).await;
    let timed = |claims: &mut Value| {
        claims["nbf"] = json!(now());
        claims["exp"] = json!(now() + 300);
    };
    let proof = proof_with(key, "POST", &setup.demo.url(TOKEN), timed);
    let tokens = client.tokens(
        &client
            .post(
                TOKEN,
                client.authentication(),
                &redemption(&code),
                Some(proof),
            )
            .await,
    );
    let token = tokens["access_token"].as_str().unwrap();
    let proof = proof_with(key, "GET", &setup.demo.url(ME), |claims| {
        timed(claims);
        claims["ath"] = json!(keys::ath(token));
    });
    let served = client
        .resource_with(&format!("DPoP {token}"), &[&proof])
        .await;
    assert_eq!(served.status, 200, "{}", served.body);
}

/// The code bound at the PAR endpoint, redeemed and used, every proof issued `offset`
/// seconds from now.
async fn proofs_issued_at(setup: &Setup, offset: i64) {
    let client = setup.client().await;
    let key = client.dpop.as_ref().unwrap();
    let iat = |claims: &mut Value| claims["iat"] = json!(now() as i64 + offset);
    let par_proof = proof_with(key, "POST", &setup.demo.url(PAR), iat);
    let code = code_for(&client, &client.request(), Some(par_proof)).await;
    let proof = proof_with(key, "POST", &setup.demo.url(TOKEN), iat);
    let tokens = client.tokens(
        &client
            .post(
                TOKEN,
                client.authentication(),
                &redemption(&code),
                Some(proof),
            )
            .await,
    );
    let token = tokens["access_token"].as_str().unwrap();
    let proof = proof_with(key, "GET", &setup.demo.url(ME), |claims| {
        iat(claims);
        claims["ath"] = json!(keys::ath(token));
    });
    let served = client
        .resource_with(&format!("DPoP {token}"), &[&proof])
        .await;
    assert_eq!(served.status, 200, "{}", served.body);
}

async fn dpop_iat_10_seconds_before(setup: Setup) {
    proofs_issued_at(&setup, -10).await;
}

async fn dpop_iat_8_seconds_after(setup: Setup) {
    proofs_issued_at(&setup, 8).await;
}

/// A `dpop_jkt` naming no key the client has: the thumbprint of its key with every byte
/// flipped, as the suite makes it.
fn flipped_jkt(key: &ProofKey) -> String {
    let bytes: Vec<u8> = URL_SAFE_NO_PAD
        .decode(key.jkt())
        .unwrap()
        .iter()
        .map(|b| b ^ 0x5a)
        .collect();
    URL_SAFE_NO_PAD.encode(bytes)
}

async fn dpop_jkt_not_the_proofs(setup: Setup) {
    let client = setup.client().await;
    let key = client.dpop.as_ref().unwrap();
    let mut params = client.request();
    params["dpop_jkt"] = json!(flipped_jkt(key));
    let object = client.sign_object(&client.object_claims(&params));
    let pushed = client
        .post(
            PAR,
            client.authentication(),
            &[("request", &object)],
            client.proof(PAR),
        )
        .await;
    assert_error_among(&pushed, &[400], &["invalid_request", "invalid_dpop_proof"]);
}

/// The refusal at the token endpoint of a proof of another key than the code's.
fn assert_not_the_bound_key(reply: &Reply) {
    assert_error_among(
        reply,
        &[400],
        &["invalid_request", "invalid_grant", "invalid_dpop_proof"],
    );
}

async fn token_proof_of_another_key(setup: Setup) {
    let client = setup.client().await;
    let code = code_for(&client, &client.request(), client.proof(PAR)).await;
    let other = ProofKey::es256(250);
    let proof = other.proof("POST", &setup.demo.url(TOKEN), now());
    let refused = client
        .post(
            TOKEN,
            client.authentication(),
            &redemption(&code),
            Some(proof),
        )
        .await;
    assert_not_the_bound_key(&refused);
}

async fn token_proof_not_the_dpop_jkt(setup: Setup) {
    let client = setup.client().await;
    let mut params = client.request();
    params["dpop_jkt"] = json!(flipped_jkt(client.dpop.as_ref().unwrap()));
    let code = code_for(&client, &params, None).await;
    assert_not_the_bound_key(&client.redeem(&code).await);
}

async fn dpop_bound_at_par(setup: Setup) {
    let client = setup.client().await;
    let code = code_for(&client, &client.request(), client.proof(PAR)).await;
    let tokens = client.tokens(&client.redeem(&code).await);
    let served = client
        .resource(tokens["access_token"].as_str().unwrap())
        .await;
    assert_eq!(served.status, 200, "{}", served.body);
}

async fn dpop_jkt_and_proof_at_par(setup: Setup) {
    let client = setup.client().await;
    let mut params = client.request();
    params["dpop_jkt"] = json!(client.dpop.as_ref().unwrap().jkt());
    let code = code_for(&client, &params, client.proof(PAR)).await;
    let tokens = client.tokens(&client.redeem(&code).await);
    let served = client
        .resource(tokens["access_token"].as_str().unwrap())
        .await;
    assert_eq!(served.status, 200, "{}", served.body);
}

async fn client_id_of_another_client(setup: Setup) {
    let client = setup.client().await;
    let other = setup.client().await;
    let code = code(&client).await;
    let refused = match setup.variant.auth {
        // The other client's id and its own assertion and proof.
        Auth::KeyAndDpop => {
            other
                .post(
                    TOKEN,
                    other.authentication(),
                    &redemption(&code),
                    other.proof(TOKEN),
                )
                .await
        }
        // The other client's id over this client's certificate.
        Auth::Certificate => {
            let id = vec![("client_id".to_owned(), other.id.clone())];
            client.post(TOKEN, id, &redemption(&code), None).await
        }
    };
    let statuses: &[u16] = if refused.status == 401 {
        &[401]
    } else {
        &[400]
    };
    assert_error_among(&refused, statuses, &["invalid_client", "invalid_grant"]);
}

async fn holder_of_key_required(setup: Setup) {
    let client = setup.client().await;
    let code = code(&client).await;
    match setup.variant.auth {
        // No DPoP proof.
        Auth::KeyAndDpop => {
            let refused = client
                .post(TOKEN, client.authentication(), &redemption(&code), None)
                .await;
            assert!((400..500).contains(&refused.status), "{}", refused.status);
            assert_error_among(
                &refused,
                &[refused.status],
                &["invalid_request", "invalid_grant", "invalid_dpop_proof"],
            );
        }
        // No certificate.
        Auth::Certificate => {
            let mut pairs = vec![("client_id", client.id.as_str())];
            pairs.extend(redemption(&code));
            let refused = post_form(&setup.demo.http(), &setup.demo.url(TOKEN), None, &pairs).await;
            assert_unauthenticated(&refused);
        }
    }
}

async fn code_of_another_client(setup: Setup) {
    let client = setup.client().await;
    let other = setup.client().await;
    let code = code(&client).await;
    let refused = other.redeem(&code).await;
    assert_error_among(&refused, &[400], &["invalid_grant"]);
}

async fn code_reused(setup: Setup) {
    let client = setup.client().await;
    let code = code(&client).await;
    let tokens = client.tokens(&client.redeem(&code).await);
    // Presented again (the suite waits a second; the code is as used at once).
    let refused = client.redeem(&code).await;
    assert_error_among(&refused, &[400], &["invalid_grant"]);
    // RFC 6749 §4.1.2: the tokens issued for the code are revoked.
    let served = client
        .resource(tokens["access_token"].as_str().unwrap())
        .await;
    assert!(
        (400..500).contains(&served.status),
        "{} {}",
        served.status,
        served.body
    );
}

async fn assertion_signed_rs256(setup: Setup) {
    // The suite runs this with a PS256 client only, signing RS256 with the same RSA key.
    let client = setup
        .register(ProofKey::rsa(jsonwebtoken::Algorithm::PS256), |_| {})
        .await;
    let code = code(&client).await;
    let assertion = sign(
        &ProofKey::rsa(jsonwebtoken::Algorithm::RS256),
        None,
        &client.assertion_claims(),
    );
    let authentication = vec![
        ("client_id".to_owned(), client.id.clone()),
        (
            "client_assertion_type".to_owned(),
            ASSERTION_TYPE.to_owned(),
        ),
        ("client_assertion".to_owned(), assertion),
    ];
    let refused = client
        .post(
            TOKEN,
            authentication,
            &redemption(&code),
            client.proof(TOKEN),
        )
        .await;
    let statuses: &[u16] = if refused.status == 401 {
        &[401]
    } else {
        &[400]
    };
    assert_error_among(&refused, statuses, &["invalid_client"]);
}

/// A code redeemed with the assertion `edit` leaves, which must not authenticate the client.
async fn refused_assertion(setup: &Setup, edit: impl FnOnce(&mut Value)) {
    let client = setup.client().await;
    let code = code(&client).await;
    let refused = client
        .post(
            TOKEN,
            client.authentication_with(edit),
            &redemption(&code),
            client.proof(TOKEN),
        )
        .await;
    assert_unauthenticated(&refused);
}

async fn no_assertion(setup: Setup) {
    let client = setup.client().await;
    let code = code(&client).await;
    let id = vec![("client_id".to_owned(), client.id.clone())];
    let refused = client
        .post(TOKEN, id, &redemption(&code), client.proof(TOKEN))
        .await;
    assert_unauthenticated(&refused);
}

async fn assertion_expired(setup: Setup) {
    refused_assertion(&setup, |claims| {
        claims["iat"] = json!(now() - 360);
        claims["exp"] = json!(now() - 300);
    })
    .await;
}

async fn assertion_wrong_aud(setup: Setup) {
    refused_assertion(&setup, |claims| {
        claims["aud"] = json!("https://fapidev-rs.authlete.net/api/userinfo");
    })
    .await;
}

async fn assertion_without_sub(setup: Setup) {
    refused_assertion(&setup, |claims| {
        claims.as_object_mut().unwrap().remove("sub");
    })
    .await;
}

async fn dpop_negative(setup: Setup) {
    let client = setup.client().await;
    let flow = client.run(&client.request()).await;
    let token = flow.access_token();
    let key = client.dpop.as_ref().unwrap();
    let url = setup.demo.url(ME);
    let scheme = format!("DPoP {token}");
    let good = || {
        let mut claims = keys::claims("GET", &url, now());
        claims["ath"] = json!(keys::ath(token));
        claims
    };
    let signed = |claims: &Value| key.sign(claims);
    let part = |value: &Value| URL_SAFE_NO_PAD.encode(value.to_string());
    let header = || json!({ "typ": "dpop+jwt", "alg": "ES256", "jwk": key.jwk });
    // A proof whose header is `header`, signed by the key.
    let with_header = |header: &Value, claims: &Value| key.sign_header(header, claims);
    let served =
        |reply: &Reply, what: &str| assert_eq!(reply.status, 200, "{what}: {}", reply.body);
    let refused = |reply: &Reply, what: &str| {
        assert!(
            [400, 401].contains(&reply.status),
            "{what}: {} {}",
            reply.status,
            reply.body
        )
    };

    // Header names are case-insensitive (RFC 9110 §5.1).
    let reply = send(
        client
            .http
            .get(&url)
            .header("authorization", &scheme)
            .header("DPOP", signed(&good())),
    )
    .await;
    served(&reply, "an upper-case header name");
    let reply = client
        .resource_with(&scheme, &[&signed(&good()), &signed(&good())])
        .await;
    refused(&reply, "two proofs");
    let proof = signed(&good());
    let (two_parts, _) = proof.rsplit_once('.').unwrap();
    refused(
        &client.resource_with(&scheme, &[two_parts]).await,
        "not a JWS",
    );
    let mut without_typ = header();
    without_typ.as_object_mut().unwrap().remove("typ");
    refused(
        &client
            .resource_with(&scheme, &[&with_header(&without_typ, &good())])
            .await,
        "no typ",
    );
    let (input, signature) = proof.rsplit_once('.').unwrap();
    let (header_part, claims_part) = input.split_once('.').unwrap();
    let renamed = String::from_utf8(URL_SAFE_NO_PAD.decode(header_part).unwrap())
        .unwrap()
        .replace("alg", "alg2");
    let no_alg = format!(
        "{}.{claims_part}.{signature}",
        URL_SAFE_NO_PAD.encode(renamed)
    );
    refused(&client.resource_with(&scheme, &[&no_alg]).await, "no alg");
    let mut without_jwk = header();
    without_jwk.as_object_mut().unwrap().remove("jwk");
    refused(
        &client
            .resource_with(&scheme, &[&with_header(&without_jwk, &good())])
            .await,
        "no jwk",
    );
    for claim in ["jti", "htm", "htu", "iat", "ath"] {
        let mut claims = good();
        claims.as_object_mut().unwrap().remove(claim);
        refused(
            &client.resource_with(&scheme, &[&signed(&claims)]).await,
            claim,
        );
    }
    let mut wrong_typ = header();
    wrong_typ["typ"] = json!("dpop+jwt+wrongyousee");
    refused(
        &client
            .resource_with(&scheme, &[&with_header(&wrong_typ, &good())])
            .await,
        "a wrong typ",
    );
    let none = format!(
        "{}.{}.",
        part(&json!({ "typ": "dpop+jwt", "alg": "none", "jwk": key.jwk })),
        part(&good())
    );
    refused(&client.resource_with(&scheme, &[&none]).await, "alg none");
    let mut forged = URL_SAFE_NO_PAD.decode(signature).unwrap();
    for byte in &mut forged {
        *byte ^= 0x5a;
    }
    let forged = format!("{input}.{}", URL_SAFE_NO_PAD.encode(forged));
    refused(
        &client.resource_with(&scheme, &[&forged]).await,
        "a bad signature",
    );
    let mut private = header();
    private["jwk"]["d"] = json!(URL_SAFE_NO_PAD.encode([7u8; 32]));
    refused(
        &client
            .resource_with(&scheme, &[&with_header(&private, &good())])
            .await,
        "a private jwk",
    );
    let mut put = good();
    put["htm"] = json!("PUT");
    refused(
        &client.resource_with(&scheme, &[&signed(&put)]).await,
        "htm PUT",
    );
    // RFC 9449 §4.3: the query and fragment of `htu` are not compared.
    let mut with_query = good();
    with_query["htu"] = json!(format!("{url}?allthedoors#cheery"));
    served(
        &client.resource_with(&scheme, &[&signed(&with_query)]).await,
        "htu with a query",
    );
    let queried = format!("{url}?x=1");
    let reply = send(
        client
            .http
            .get(&queried)
            .header("authorization", &scheme)
            .header("dpop", signed(&good())),
    )
    .await;
    served(&reply, "a request with a query, htu without");
    let mut elsewhere = good();
    elsewhere["htu"] = json!(format!("{url}ohnonotagain"));
    refused(
        &client.resource_with(&scheme, &[&signed(&elsewhere)]).await,
        "another htu",
    );
    for (offset, what) in [(3600, "iat an hour ahead"), (-3600, "iat an hour ago")] {
        let mut claims = good();
        claims["iat"] = json!(now() as i64 + offset);
        refused(
            &client.resource_with(&scheme, &[&signed(&claims)]).await,
            what,
        );
    }
    let replayed = signed(&good());
    served(
        &client.resource_with(&scheme, &[&replayed]).await,
        "a proof's first use",
    );
    refused(
        &client.resource_with(&scheme, &[&replayed]).await,
        "a proof replayed",
    );
    let mut wrong_ath = good();
    wrong_ath["ath"] = json!(keys::ath("another token"));
    refused(
        &client.resource_with(&scheme, &[&signed(&wrong_ath)]).await,
        "a wrong ath",
    );
    let other = ProofKey::es256(249).proof_for_token("GET", &url, now(), token);
    refused(
        &client.resource_with(&scheme, &[&other]).await,
        "another key",
    );
    let mut extra_header = header();
    extra_header["tx_id"] = json!(now());
    let mut extra_claims = good();
    extra_claims["tx_id_key"] = json!(now());
    served(
        &client
            .resource_with(&scheme, &[&with_header(&extra_header, &extra_claims)])
            .await,
        "extra members",
    );
    // RFC 3986 §6.2.2: scheme and host compare case-insensitively (the suite warns only).
    let mut upper = good();
    upper["htu"] = json!(url.replacen("https://127.0.0.1", "HTTPS://127.0.0.1", 1));
    served(
        &client.resource_with(&scheme, &[&signed(&upper)]).await,
        "htu in upper case",
    );
    refused(&client.resource_with(&scheme, &[]).await, "no proof");
    refused(
        &client.resource_with(&format!("Bearer {token}"), &[]).await,
        "no proof, Bearer",
    );
    served(
        &client.resource_with(&scheme, &[&signed(&good())]).await,
        "a good proof",
    );
}

async fn refresh_token(setup: Setup) {
    let first = setup.client().await;
    let second = setup.client().await;
    let mut refresh_tokens = Vec::new();
    for client in [&first, &second] {
        let flow = client.run(&client.request()).await;
        let refresh = flow.tokens["refresh_token"]
            .as_str()
            .expect("a refresh token")
            .to_owned();
        // RFC 6749 Appendix A.17: printable ASCII.
        assert!(
            refresh.bytes().all(|b| (0x20..=0x7e).contains(&b)),
            "{refresh}"
        );
        let refreshing = |token: &str| {
            [
                ("grant_type", "refresh_token"),
                ("refresh_token", token),
                ("scope", "openid profile"),
            ]
            .map(|(k, v)| (k, v.to_owned()))
        };
        let pairs = refreshing(&refresh);
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let refreshed = client.tokens(&client.token(&pairs).await);
        let served = client
            .resource(refreshed["access_token"].as_str().unwrap())
            .await;
        assert_eq!(served.status, 200, "{}", served.body);
        let mut current = refreshed["refresh_token"]
            .as_str()
            .unwrap_or(&refresh)
            .to_owned();
        if current != refresh {
            // FAPI 2.0 SP §5.3.2.1 note: a client that lost the answer may present the
            // previous refresh token again (the suite waits 30 s first). The retry's token is
            // the live one after it, which the refusals below must be about.
            let again = client.tokens(&client.token(&pairs).await);
            assert!(again["access_token"].is_string());
            current = again["refresh_token"]
                .as_str()
                .expect("the retry rotates")
                .to_owned();
            let live = refreshing(&current);
            let live: Vec<(&str, &str)> = live.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let works = client.tokens(&client.token(&live).await);
            assert!(works["access_token"].is_string());
            current = works["refresh_token"]
                .as_str()
                .unwrap_or(&current)
                .to_owned();
        }
        if client.variant.auth == Auth::KeyAndDpop {
            // Without client authentication (RFC 6749 §6).
            let id = vec![("client_id".to_owned(), client.id.clone())];
            let pairs = refreshing(&current);
            let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let refused = client.post(TOKEN, id, &pairs, client.proof(TOKEN)).await;
            assert!([400, 401].contains(&refused.status), "{}", refused.body);
            assert_error_among(
                &refused,
                &[refused.status],
                &["invalid_client", "invalid_grant", "invalid_request"],
            );
            // Without the proof of possession.
            let refused = client
                .post(TOKEN, client.authentication(), &pairs, None)
                .await;
            assert_error_among(
                &refused,
                &[400],
                &["invalid_request", "invalid_grant", "invalid_dpop_proof"],
            );
        } else {
            // Without the certificate.
            let mut pairs = vec![("client_id", client.id.as_str())];
            let refreshing = refreshing(&current);
            pairs.extend(refreshing.iter().map(|(k, v)| (*k, v.as_str())));
            let refused = post_form(&setup.demo.http(), &setup.demo.url(TOKEN), None, &pairs).await;
            assert_unauthenticated(&refused);
        }
        refresh_tokens.push((current, flow.access_token().to_owned()));
    }
    // The first client's key (or certificate) with the second client's access token.
    let (second_refresh, second_access) = &refresh_tokens[1];
    let stolen = first.resource(second_access).await;
    assert!((400..500).contains(&stolen.status), "{}", stolen.status);
    // And with its refresh token.
    let refused = first
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", second_refresh),
        ])
        .await;
    assert!([400, 401].contains(&refused.status), "{}", refused.body);
    assert_error_among(
        &refused,
        &[refused.status],
        &["invalid_grant", "invalid_client"],
    );
}

async fn par_assertion_8_seconds_ahead(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    let object = client.sign_object(&client.object_claims(&params));
    let authentication = client.authentication_with(|claims| {
        claims["iat"] = json!(now() + 8);
        claims["nbf"] = json!(now() + 8);
    });
    let request_uri = request_uri_of(
        &client
            .post(PAR, authentication, &[("request", &object)], None)
            .await,
    );
    let browser = setup.demo.browser();
    let reply = client
        .approved(&browser, &client.by_reference(&request_uri, &[]))
        .await;
    let response = client.response(&reply).await;
    let code = client.code(&response, params["state"].as_str().unwrap());
    client.tokens(&client.redeem(&code).await);
}

/// A pushed request whose assertion `edit` leaves: `400` or `401`, `invalid_client` or
/// `invalid_request`.
async fn refused_at_par(setup: &Setup, edit: impl FnOnce(&mut Value)) {
    let client = setup.client().await;
    let object = client.sign_object(&client.object_claims(&client.request()));
    let refused = client
        .post(
            PAR,
            client.authentication_with(edit),
            &[("request", &object)],
            None,
        )
        .await;
    assert!([400, 401].contains(&refused.status), "{}", refused.body);
    assert_error_among(
        &refused,
        &[refused.status],
        &["invalid_client", "invalid_request"],
    );
}

async fn par_assertion_62_seconds_ahead(setup: Setup) {
    refused_at_par(&setup, |claims| {
        for name in ["iat", "exp"] {
            claims[name] = json!(claims[name].as_u64().unwrap() + 62);
        }
        claims["nbf"] = json!(now() + 62);
    })
    .await;
}

async fn no_code_verifier(setup: Setup) {
    let client = setup.client().await;
    let code = code(&client).await;
    let refused = client
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
        ])
        .await;
    assert_error_among(&refused, &[400], &["invalid_grant"]);
}

async fn wrong_code_verifier(setup: Setup) {
    let client = setup.client().await;
    let code = code(&client).await;
    let wrong = "w".repeat(43);
    let refused = client
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("code_verifier", &wrong),
        ])
        .await;
    assert_error_among(&refused, &[400], &["invalid_grant"]);
}

async fn par_assertion_aud_array(setup: Setup) {
    let base = setup.demo.base.clone();
    refused_at_par(&setup, |claims| {
        claims["aud"] = json!([base, "https://other1.example.com"])
    })
    .await;
}

async fn par_assertion_aud_par_endpoint(setup: Setup) {
    let url = setup.demo.url(PAR);
    refused_at_par(&setup, |claims| claims["aud"] = json!(url)).await;
}

async fn par_assertion_aud_token_endpoint(setup: Setup) {
    let url = setup.demo.url(TOKEN);
    refused_at_par(&setup, |claims| claims["aud"] = json!(url)).await;
}
