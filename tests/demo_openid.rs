//! OpenID Connect over real HTTP, against `axum_server` and `actix_server` (examples/README.md part 3):
//! the discovery document, ID tokens from the code flow and the implicit flow verified with
//! nothing but the published JWKS, one `sub` everywhere, userinfo by GET and POST, and the
//! errors a relying party must get.

mod demo;
#[cfg(feature = "dpop")]
mod dpop_proofs;
#[path = "demo/openid.rs"]
mod openid;

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use demo::Server;
use demo::http::*;
use jsonwebtoken::Algorithm;
use openid::{discovery as discovery_document, receiver, verified};
use serde_json::Value;
use sha2::Digest as _;

each_framework! {
    the_discovery_document_has_every_required_member_and_agrees_with_rfc_8414 => discovery;
    the_code_flow_returns_an_id_token_that_verifies_with_the_jwks_and_names_one_sub => code_flow;
    userinfo_answers_get_and_post_and_refuses_with_bearer_challenges => userinfo_errors;
    the_implicit_flow_answers_id_token_and_id_token_token_in_the_fragment => implicit;
    a_client_registered_for_es256_gets_es256_id_tokens => registered_algorithm;
    prompt_none_without_a_session_is_login_required_and_request_objects_are_refused => prompt_none;
    post_client_sends_its_secret_in_the_body_and_basic_is_refused => secret_in_body;
    the_password_grant_with_openid_answers_an_id_token_for_that_sign_in => password_id_token;
    a_refresh_of_an_openid_grant_answers_an_id_token_of_the_same_sign_in => refreshed_id_token;
    form_post_answers_a_page_that_posts_the_response_itself => form_post;
    the_claims_parameter_releases_what_it_names_in_the_id_token_and_at_userinfo => claims_parameter;
    a_pairwise_client_knows_alice_by_a_sub_of_its_own_everywhere_it_sees_her => pairwise;
}

#[cfg(feature = "dpop")]
use dpop::userinfo as dpop_userinfo;

#[cfg(feature = "dpop")]
each_framework! {
    userinfo_takes_a_dpop_bound_token_only_with_a_proof_of_its_key => dpop_userinfo;
}

const PUBLIC: &str = "public-client";

async fn discovery(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let document = discovery_document(base).await;
    // OIDC Discovery 1.0 §3: the REQUIRED members.
    for member in [
        "issuer",
        "authorization_endpoint",
        "token_endpoint",
        "jwks_uri",
        "response_types_supported",
        "subject_types_supported",
        "id_token_signing_alg_values_supported",
    ] {
        assert!(!document[member].is_null(), "{member} missing: {document}");
    }
    assert_eq!(document["issuer"], base.as_str());
    assert_eq!(
        document["userinfo_endpoint"],
        format!("{base}/api/oauth/userinfo")
    );
    assert_eq!(
        document["end_session_endpoint"],
        format!("{base}/api/oauth/logout")
    );
    assert_eq!(document["backchannel_logout_supported"], true);
    assert_eq!(document["backchannel_logout_session_supported"], true);
    assert_eq!(document["request_uri_parameter_supported"], false);
    assert!(strings(&document["id_token_signing_alg_values_supported"]).contains(&"RS256".into()));
    assert!(!strings(&document["id_token_signing_alg_values_supported"]).contains(&"none".into()));
    assert_eq!(
        strings(&document["subject_types_supported"]),
        ["public", "pairwise"]
    );
    for response_type in ["code", "id_token", "id_token token"] {
        assert!(
            strings(&document["response_types_supported"]).contains(&response_type.into()),
            "{response_type}: {document}"
        );
    }
    let scopes = strings(&document["scopes_supported"]);
    assert!(scopes.contains(&"openid".into()), "{document}");
    let claims = strings(&document["claims_supported"]);
    for claim in [
        "sub",
        "name",
        "given_name",
        "family_name",
        "email",
        "email_verified",
    ] {
        assert!(claims.contains(&claim.into()), "{claim}: {document}");
    }
    // The RFC 8414 document is the same deployment: the same issuer and endpoints.
    let metadata = metadata_document(base).await;
    for member in [
        "issuer",
        "authorization_endpoint",
        "token_endpoint",
        "jwks_uri",
        "userinfo_endpoint",
        "end_session_endpoint",
        "registration_endpoint",
        "backchannel_logout_supported",
    ] {
        assert_eq!(metadata[member], document[member], "{member}");
    }
    // Every published key is a public signing key with a `kid`, RS256 among them.
    let jwks = get(&browser(), document["jwks_uri"].as_str().unwrap()).await;
    assert_eq!(jwks.status, 200);
    let keys = jwks.json()["keys"].as_array().unwrap().clone();
    assert!(keys.iter().any(|k| k["alg"] == "RS256"), "{keys:?}");
    for key in &keys {
        assert!(key["kid"].is_string() && key["use"] == "sig", "{key}");
        assert!(
            key.get("d").is_none() && key.get("p").is_none(),
            "a private part: {key}"
        );
    }
    server.assert_alive_and_calm();
}

/// The header and claims of an ID token, after checking its signature against the JWKS at
/// `base`, its `iss`, its `aud` (the client) and its `exp`.
/// `at_hash` of `access_token` for RS256 and ES256 (OIDC Core §3.1.3.6).
fn sha256_half(value: &str) -> String {
    URL_SAFE_NO_PAD.encode(&sha2::Sha256::digest(value.as_bytes())[..16])
}

/// A public client's code for `user` with `scope` and `nonce` (its approval is not required).
async fn public_code(base: &str, scope: &str, nonce: &str) -> String {
    let http = browser();
    let params = [
        ("response_type", "code"),
        ("client_id", PUBLIC),
        ("redirect_uri", CALLBACK),
        ("scope", scope),
        ("nonce", nonce),
        ("state", "s1"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    let signed_in = sign_in_via_authorize(&http, base, &params, ALICE).await;
    let query = callback_query(&signed_in);
    assert_eq!(query["state"], "s1");
    query["code"].clone()
}

async fn exchange(base: &str, code: &str) -> Value {
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
            ("client_id", PUBLIC),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_tokens(&reply)
}

/// Introspection by the demo API, the resource server of the tokens' audience.
async fn introspect_as_api(base: &str, token: &str) -> Value {
    let reply = post_form(
        &browser(),
        &format!("{base}/api/oauth/introspect"),
        Some(("api-server", "api-secret")),
        &[("token", token)],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let answer = reply.json();
    assert_eq!(answer["active"], true, "{answer}");
    answer
}

async fn userinfo_get(base: &str, access_token: &str) -> Reply {
    send(
        browser()
            .get(format!("{base}/api/oauth/userinfo"))
            .bearer_auth(access_token),
    )
    .await
}

async fn code_flow(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let code = public_code(base, "openid profile email", "n-0S6_WzA2Mj").await;
    let tokens = exchange(base, &code).await;
    let id_token = tokens["id_token"].as_str().expect("an id_token");
    let (header, claims) = verified(base, id_token, PUBLIC).await;
    assert_eq!(header["alg"], "RS256");
    assert_eq!(header["typ"], "JWT");
    assert_eq!(claims["nonce"], "n-0S6_WzA2Mj");
    assert_eq!(claims["azp"], PUBLIC);
    let auth_time = claims["auth_time"].as_u64().expect("auth_time");
    assert!(auth_time >= before && auth_time <= claims["iat"].as_u64().unwrap());
    assert!(claims["exp"].as_u64().unwrap() > claims["iat"].as_u64().unwrap());
    assert_eq!(claims["at_hash"], sha256_half(access_token(&tokens)));
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]));
    // The code flow's ID token carries no claims: userinfo does (OIDC Core §5.4).
    assert!(claims.get("email").is_none(), "{claims}");
    let sub = claims["sub"].as_str().expect("sub").to_owned();

    // One `sub` everywhere: userinfo, introspection, the demo API.
    let info = userinfo_get(base, access_token(&tokens)).await;
    assert_eq!(info.status, 200, "{}", info.body);
    assert_content_type(&info, "application/json");
    let info = info.json();
    assert_eq!(info["sub"], sub.as_str());
    assert_eq!(info["name"], "Alice Example");
    assert_eq!(info["given_name"], "Alice");
    assert_eq!(info["family_name"], "Example");
    assert_eq!(info["email"], "alice@example.com");
    assert_eq!(info["email_verified"], true);
    assert_eq!(
        introspect_as_api(base, access_token(&tokens)).await["sub"],
        sub.as_str()
    );
    assert_eq!(
        me(base, Some(access_token(&tokens))).await.json()["sub"],
        sub.as_str()
    );

    // Without `openid`, the same flow is plain OAuth: no ID token.
    let code = public_code(base, "profile", "unused").await;
    let plain = exchange(base, &code).await;
    assert!(plain.get("id_token").is_none(), "{plain}");
    server.assert_alive_and_calm();
}

async fn userinfo_errors(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let url = format!("{base}/api/oauth/userinfo");
    let code = public_code(base, "openid email", "n1").await;
    let tokens = exchange(base, &code).await;
    let access = access_token(&tokens);
    let expected = serde_json::json!({
        "sub": introspect_as_api(base, access).await["sub"],
        "email": "alice@example.com",
        "email_verified": true,
    });
    // GET and POST with the header, POST with the token in the form body (RFC 6750 §2.2).
    let by_header = send(browser().post(&url).bearer_auth(access)).await;
    assert_eq!(by_header.status, 200, "{}", by_header.body);
    assert_eq!(by_header.json(), expected);
    let by_body = post_form(&browser(), &url, None, &[("access_token", access)]).await;
    assert_eq!(by_body.status, 200, "{}", by_body.body);
    assert_eq!(by_body.json(), expected);
    assert_eq!(
        userinfo_get(base, access).await.json(),
        expected,
        "only the scope's claims"
    );

    // No token: 401 with a bare Bearer challenge; a bad one: invalid_token.
    let none = get(&browser(), &url).await;
    assert_eq!(none.status, 401);
    assert!(
        none.header("www-authenticate")
            .unwrap()
            .starts_with("Bearer")
    );
    let forged = userinfo_get(base, "not-a-token").await;
    assert_eq!(forged.status, 401);
    assert!(
        forged
            .header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );
    // A token without `openid`: 403 insufficient_scope.
    let oauth = password_grant(base, DEMO, ALICE, "profile").await;
    let refused = userinfo_get(base, access_token(&oauth)).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused
            .header("www-authenticate")
            .unwrap()
            .contains("insufficient_scope")
    );
    // The token in the header and the body at once: invalid_request.
    let twice = send(
        browser()
            .post(&url)
            .bearer_auth(access)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[("access_token", access)])),
    )
    .await;
    assert_oauth_error(&twice, 400, "invalid_request");
    let put = send(browser().put(&url).bearer_auth(access)).await;
    assert_eq!(put.status, 405);
    server.assert_alive_and_calm();
}

/// The fragment of a redirect to the callback, as pairs.
fn callback_fragment(reply: &Reply) -> HashMap<String, String> {
    assert_eq!(reply.status, 303, "a redirect: {}", reply.body);
    let location = reply.location().expect("a Location");
    let url = url::Url::parse(location).expect("an absolute Location");
    assert_eq!(&url[..url::Position::AfterPath], CALLBACK);
    assert!(url.query().is_none(), "nothing in the query: {location}");
    url::form_urlencoded::parse(url.fragment().expect("a fragment").as_bytes())
        .into_owned()
        .collect()
}

/// `demo-client` (agreed the implicit grant, approval required) asks for `response_type`.
async fn implicit_answer(base: &str, response_type: &str, nonce: Option<&str>) -> Reply {
    let http = browser();
    let mut params = vec![
        ("response_type", response_type),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("scope", "openid profile email"),
        ("state", "i1"),
    ];
    params.extend(nonce.map(|n| ("nonce", n)));
    let approval = sign_in_via_authorize(&http, base, &params, BOB).await;
    decide(&http, base, &approval, "approve").await
}

async fn implicit(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    // `id_token token`: both, `at_hash` tying them.
    let both = callback_fragment(&implicit_answer(base, "id_token token", Some("n-2")).await);
    assert_eq!(both["state"], "i1");
    let (_, claims) = verified(base, &both["id_token"], DEMO.0).await;
    assert_eq!(claims["nonce"], "n-2");
    assert_eq!(claims["at_hash"], sha256_half(&both["access_token"]));
    assert!(claims.get("email").is_none(), "userinfo has them: {claims}");
    // `id_token` alone: no access token, so the claims ride in the ID token (§5.4).
    let alone = callback_fragment(&implicit_answer(base, "id_token", Some("n-3")).await);
    assert!(!alone.contains_key("access_token"), "{alone:?}");
    let (_, claims) = verified(base, &alone["id_token"], DEMO.0).await;
    assert_eq!(claims["nonce"], "n-3");
    assert!(claims.get("at_hash").is_none());
    assert_eq!(claims["email"], "bob@example.com");
    assert_eq!(claims["email_verified"], false);
    assert_eq!(claims["name"], "Bob Example");
    // Without a nonce, the implicit flow is refused in the fragment (OIDC Core §3.2.2.1).
    let http = browser();
    let params = [
        ("response_type", "id_token"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("state", "i2"),
    ];
    let refused = callback_fragment(&get(&http, &authorize_url(base, &params)).await);
    assert_eq!(refused["error"], "invalid_request");
    assert_eq!(refused["state"], "i2");
    assert!(
        refused["error_description"].contains("nonce"),
        "{refused:?}"
    );
    // `id_token` without the scope `openid` is not an OpenID request.
    let params = [
        ("response_type", "id_token"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("scope", "profile"),
        ("nonce", "n"),
    ];
    let refused = callback_fragment(&get(&http, &authorize_url(base, &params)).await);
    assert_eq!(refused["error"], "invalid_scope", "{refused:?}");
    // A client not agreed the implicit grant may not ask for it.
    let params = [
        ("response_type", "id_token"),
        ("client_id", PUBLIC),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("nonce", "n"),
    ];
    let refused = callback_fragment(&get(&http, &authorize_url(base, &params)).await);
    assert_eq!(refused["error"], "unauthorized_client", "{refused:?}");
    server.assert_alive_and_calm();
}

/// The tokens of a registered public client's code flow for `openid` with `nonce`, Alice
/// signing in and approving in `http`.
async fn approved_tokens(
    http: &reqwest::Client,
    base: &str,
    client_id: &str,
    nonce: &str,
) -> Value {
    let params = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("nonce", nonce),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    let approval = sign_in_via_authorize(http, base, &params, ALICE).await;
    let code = callback_query(&decide(http, base, &approval, "approve").await)["code"].clone();
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("client_id", client_id),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_tokens(&reply)
}

async fn registered_algorithm(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let registered = register(
        base,
        &serde_json::json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "id_token_signed_response_alg": "ES256",
            "client_name": "An ES256 relying party",
        }),
    )
    .await;
    assert_eq!(registered["id_token_signed_response_alg"], "ES256");
    let client_id = registered["client_id"].as_str().unwrap();
    let http = browser();
    let tokens = approved_tokens(&http, base, client_id, "n-es").await;
    let (header, claims) = verified(base, tokens["id_token"].as_str().unwrap(), client_id).await;
    assert_eq!(header["alg"], "ES256");
    assert_eq!(claims["nonce"], "n-es");
    assert_eq!(claims["at_hash"], sha256_half(access_token(&tokens)));
    assert_eq!(
        jsonwebtoken::decode_header(tokens["id_token"].as_str().unwrap())
            .unwrap()
            .alg,
        Algorithm::ES256
    );
    // `none` and symmetric algorithms are refused at registration.
    for alg in ["none", "HS256"] {
        let reply = send(
            browser()
                .post(format!("{base}/api/oauth/register"))
                .header("content-type", "application/json")
                .body(
                    serde_json::json!({
                        "redirect_uris": [CALLBACK],
                        "token_endpoint_auth_method": "none",
                        "id_token_signed_response_alg": alg,
                    })
                    .to_string(),
                ),
        )
        .await;
        assert_oauth_error(&reply, 400, "invalid_client_metadata");
    }
    server.assert_alive_and_calm();
}

async fn prompt_none(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let params = [
        ("response_type", "code"),
        ("client_id", PUBLIC),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("prompt", "none"),
        ("state", "p1"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    let reply = get(&browser(), &authorize_url(base, &params)).await;
    let query = callback_query(&reply);
    assert_eq!(query["error"], "login_required", "{query:?}");
    assert_eq!(query["state"], "p1");
    // An unsigned request object is refused rather than ignored (RFC 9101 §6.2), at the
    // redirect URI sent beside it, which is registered for the client.
    let mut with_object = params[..5].to_vec();
    with_object.retain(|(name, _)| *name != "prompt");
    with_object.extend([
        ("request", "eyJhbGciOiJub25lIn0.eyJub25jZSI6Im4ifQ."),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]);
    let reply = get(&browser(), &authorize_url(base, &with_object)).await;
    assert_eq!(callback_query(&reply)["error"], "invalid_request_object");
    server.assert_alive_and_calm();
}

async fn secret_in_body(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let code = |http: reqwest::Client| async move {
        let params = [
            ("response_type", "code"),
            ("client_id", "post-client"),
            ("redirect_uri", CALLBACK),
            ("scope", "openid email"),
            ("nonce", "n-post"),
        ];
        let done = sign_in_via_authorize(&http, base, &params, ALICE).await;
        callback_query(&done)["code"].clone()
    };
    let first = code(browser()).await;
    let reply = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", &first),
            ("redirect_uri", CALLBACK),
            ("client_id", "post-client"),
            ("client_secret", "post-secret"),
        ],
    )
    .await;
    let tokens = assert_tokens(&reply);
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    let (_, claims) = verified(base, tokens["id_token"].as_str().unwrap(), "post-client").await;
    assert_eq!(claims["nonce"], "n-post");
    // HTTP Basic is refused to it.
    let second = code(browser()).await;
    let reply = token(
        base,
        Some(("post-client", "post-secret")),
        &[
            ("grant_type", "authorization_code"),
            ("code", &second),
            ("redirect_uri", CALLBACK),
        ],
    )
    .await;
    assert_oauth_error(&reply, 401, "invalid_client");
    server.assert_alive_and_calm();
}

/// Userinfo with a DPoP-bound access token (Core §5.3 over RFC 9449 §7).
#[cfg(feature = "dpop")]
mod dpop {
    use super::dpop_proofs::ProofKey;
    use super::*;

    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    /// `method` userinfo with `authorization` and, if given, a proof of `key` for `token`
    /// made for `proof_method`.
    async fn userinfo_with(
        base: &str,
        method: &str,
        authorization: &str,
        proof: Option<(&ProofKey, &str, &str)>,
    ) -> Reply {
        let url = format!("{base}/api/oauth/userinfo");
        let mut request = match method {
            "POST" => browser()
                .post(&url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(""),
            _ => browser().get(&url),
        };
        request = request.header("authorization", authorization);
        if let Some((key, token, proof_method)) = proof {
            let proof = key.proof_for_token(proof_method, &url, now(), token);
            request = request.header("dpop", proof);
        }
        send(request).await
    }

    pub(super) async fn userinfo(framework: &str) {
        let server = Server::start(framework);
        let base = &server.base;
        let key = ProofKey::es256(13);
        let code = public_code(base, "openid email", "n-dpop").await;
        let url = format!("{base}/api/oauth/token");
        let pairs = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", CALLBACK),
            ("client_id", PUBLIC),
            ("code_verifier", VERIFIER),
        ];
        let reply = send(
            browser()
                .post(&url)
                .header("content-type", "application/x-www-form-urlencoded")
                .header("dpop", key.proof("POST", &url, now()))
                .body(form(&pairs)),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let tokens = reply.json();
        assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
        let token = access_token(&tokens).to_owned();
        let (_, id_token) = verified(base, tokens["id_token"].as_str().unwrap(), PUBLIC).await;
        let authorization = format!("DPoP {token}");
        for method in ["GET", "POST"] {
            let proof = Some((&key, token.as_str(), method));
            let reply = userinfo_with(base, method, &authorization, proof).await;
            assert_eq!(reply.status, 200, "{method}: {}", reply.body);
            let claims = reply.json();
            assert_eq!(claims["sub"], id_token["sub"], "{claims}");
            assert_eq!(claims["email"], ALICE.0, "{claims}");
        }
        // As a bearer token, without a proof, with another key's, or one for another method.
        let as_bearer = userinfo_with(base, "GET", &format!("Bearer {token}"), None).await;
        assert_oauth_error(&as_bearer, 401, "invalid_token");
        let challenge = as_bearer.header("www-authenticate").unwrap_or_default();
        assert!(challenge.starts_with("DPoP "), "{challenge}");
        let no_proof = userinfo_with(base, "GET", &authorization, None).await;
        assert_oauth_error(&no_proof, 401, "invalid_dpop_proof");
        let other = ProofKey::eddsa(14);
        let stolen = Some((&other, token.as_str(), "GET"));
        let stolen = userinfo_with(base, "GET", &authorization, stolen).await;
        assert_oauth_error(&stolen, 401, "invalid_dpop_proof");
        let wrong_method = Some((&key, token.as_str(), "POST"));
        let wrong_method = userinfo_with(base, "GET", &authorization, wrong_method).await;
        assert_oauth_error(&wrong_method, 401, "invalid_dpop_proof");
        server.assert_alive_and_calm();
    }
}

async fn password_id_token(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let pairs = [
        ("grant_type", "password"),
        ("username", ALICE.0),
        ("password", ALICE.1),
        ("scope", "openid profile"),
    ];
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let tokens = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    assert_scope(&tokens["scope"], "openid profile");
    let id_token = tokens["id_token"].as_str().expect("an ID token");
    let (header, claims) = verified(base, id_token, DEMO.0).await;
    assert_eq!(header["alg"], "RS256");
    assert!(
        claims["auth_time"].as_u64().is_some_and(|t| t >= before),
        "{claims}"
    );
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]), "{claims}");
    assert!(
        claims.get("nonce").is_none() && claims.get("sid").is_none(),
        "{claims}"
    );
    let access = access_token(&tokens);
    assert_eq!(claims["at_hash"], sha256_half(access), "{claims}");
    assert_eq!(claims["sub"], introspect_as_api(base, access).await["sub"]);
    let info = userinfo_get(base, access).await;
    assert_eq!(info.status, 200, "{}", info.body);
    assert_eq!(info.json()["sub"], claims["sub"]);
    assert_eq!(info.json()["given_name"], "Alice");
    // Without `openid`, no ID token; a scope past the client's is still refused.
    let plain = [("scope", "profile"), pairs[0], pairs[1], pairs[2]];
    let plain = assert_tokens(&token(base, Some(DEMO), &plain).await);
    assert!(plain.get("id_token").is_none(), "{plain}");
    let admin = [("scope", "openid admin"), pairs[0], pairs[1], pairs[2]];
    assert_oauth_error(&token(base, Some(DEMO), &admin).await, 400, "invalid_scope");
    server.assert_alive_and_calm();
}

async fn refreshed_id_token(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    let params = [
        ("response_type", "code"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("scope", "openid profile"),
        ("nonce", "refresh-nonce"),
        ("state", "r1"),
    ];
    let approval = sign_in_via_authorize(&http, base, &params, ALICE).await;
    let query = callback_query(&decide(&http, base, &approval, "approve").await);
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", query["code"].as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let first = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    let (_, original) = verified(base, first["id_token"].as_str().unwrap(), DEMO.0).await;
    // A second later, so the new `iat` is later.
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let refresh = first["refresh_token"].as_str().expect("a refresh token");
    let pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let refreshed = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    let id_token = refreshed["id_token"]
        .as_str()
        .expect("an ID token on refresh");
    let (_, claims) = verified(base, id_token, DEMO.0).await;
    // OIDC Core 12.2: the same sign-in, a new iat, no nonce but the original's.
    for claim in ["iss", "sub", "aud", "auth_time", "acr", "amr"] {
        assert_eq!(
            claims[claim], original[claim],
            "{claim}: {claims} vs {original}"
        );
    }
    assert!(
        claims["iat"].as_u64() > original["iat"].as_u64(),
        "{claims}"
    );
    assert!(
        claims.get("nonce").is_none_or(|n| *n == original["nonce"]),
        "{claims}"
    );
    assert_eq!(claims["at_hash"], sha256_half(access_token(&refreshed)));
    // A refresh without openid in its scope answers none.
    let refresh = refreshed["refresh_token"].as_str().unwrap();
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh),
        ("scope", "profile"),
    ];
    let narrowed = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    assert!(narrowed.get("id_token").is_none(), "{narrowed}");
    server.assert_alive_and_calm();
}

/// The hidden inputs of a Form Post Response Mode page posting to the callback, whose own
/// script runs: the page's policy names it by its hash.
fn posted_form(page: &Reply) -> HashMap<String, String> {
    let policy = page.header("content-security-policy").unwrap_or_default();
    assert!(policy.contains("script-src 'sha256-"), "{policy}");
    posted_to_callback(page)
}

async fn form_post(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = discovery_document(base).await;
    assert!(
        strings(&metadata["response_modes_supported"]).contains(&"form_post".to_owned()),
        "{metadata}"
    );
    // A pushed request keeps its mode: the answer after the sign-in is the page.
    let http = browser();
    let pushed = post_form(
        &http,
        &format!("{base}/api/oauth/par"),
        None,
        &[
            ("client_id", PUBLIC),
            ("response_type", "code"),
            ("response_mode", "form_post"),
            ("redirect_uri", CALLBACK),
            ("scope", "openid profile"),
            ("nonce", "form-post"),
            ("state", "fp"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ],
    )
    .await;
    assert_eq!(pushed.status, 201, "{}", pushed.body);
    let request_uri = pushed.json()["request_uri"].as_str().unwrap().to_owned();
    let params = [("client_id", PUBLIC), ("request_uri", request_uri.as_str())];
    let page = sign_in_via_authorize(&http, base, &params, ALICE).await;
    let inputs = posted_form(&page);
    assert_eq!(inputs["state"], "fp");
    assert_eq!(inputs["iss"], *base);
    let tokens = exchange(base, &inputs["code"]).await;
    assert!(tokens["id_token"].is_string(), "{tokens}");
    // An error once the redirect URI is known good is posted back too.
    let denied = get(
        &http,
        &authorize_url(
            base,
            &[
                ("client_id", PUBLIC),
                ("response_type", "code"),
                ("response_mode", "form_post"),
                ("redirect_uri", CALLBACK),
                ("scope", "admin"),
                ("state", "fp2"),
                ("code_challenge", CHALLENGE),
                ("code_challenge_method", "S256"),
            ],
        ),
    )
    .await;
    let error = posted_form(&denied);
    assert_eq!(error["error"], "invalid_scope");
    assert_eq!(error["state"], "fp2");
    server.assert_alive_and_calm();
}

async fn claims_parameter(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    assert_eq!(
        discovery_document(base).await["claims_parameter_supported"],
        true
    );
    // The scope releases nothing but `sub`; the claims parameter names the rest (OIDC Core
    // 5.5), each where it asks.
    let claims = serde_json::json!({
        "id_token": {"email": null, "given_name": {"essential": true}, "nickname": null},
        "userinfo": {"name": null, "email_verified": {"essential": true}},
    })
    .to_string();
    let http = browser();
    let params = [
        ("response_type", "code"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("scope", "openid"),
        ("nonce", "claims"),
        ("state", "c1"),
        ("claims", claims.as_str()),
    ];
    let approval = sign_in_via_authorize(&http, base, &params, ALICE).await;
    let query = callback_query(&decide(&http, base, &approval, "approve").await);
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", query["code"].as_str()),
        ("redirect_uri", CALLBACK),
    ];
    let tokens = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    let (_, id_token) = verified(base, tokens["id_token"].as_str().unwrap(), DEMO.0).await;
    assert_eq!(id_token["email"], "alice@example.com", "{id_token}");
    assert_eq!(id_token["given_name"], "Alice", "{id_token}");
    // Alice has no nickname: a claim without a value is left out, never refused.
    assert!(id_token.get("nickname").is_none(), "{id_token}");
    assert!(id_token.get("name").is_none(), "{id_token}");
    let info = userinfo_get(base, access_token(&tokens)).await.json();
    assert_eq!(info["name"], "Alice Example", "{info}");
    assert_eq!(info["email_verified"], true, "{info}");
    assert!(info.get("email").is_none(), "{info}");
    assert!(info.get("given_name").is_none(), "{info}");
    // A refreshed access token keeps what the request named.
    let refresh = tokens["refresh_token"].as_str().expect("a refresh token");
    let pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let refreshed = assert_tokens(&token(base, Some(DEMO), &pairs).await);
    let info = userinfo_get(base, access_token(&refreshed)).await.json();
    assert_eq!(info["name"], "Alice Example", "{info}");

    // A claims parameter that is not an object of objects is invalid_request, redirected.
    for bad in [
        r#"["email"]"#,
        r#"{"userinfo": ["email"]}"#,
        r#"{"id_token": {"email": 1}}"#,
    ] {
        let params = [
            ("response_type", "code"),
            ("client_id", PUBLIC),
            ("redirect_uri", CALLBACK),
            ("scope", "openid"),
            ("state", "c2"),
            ("claims", bad),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ];
        let reply = get(&http, &authorize_url(base, &params)).await;
        let query = callback_query(&reply);
        assert_eq!(query["error"], "invalid_request", "{bad}: {query:?}");
        assert_eq!(query["state"], "c2");
    }
    server.assert_alive_and_calm();
}

/// OIDC Core §8.1: a client registered `subject_type: pairwise` gets a `sub` for Alice that is
/// not her public one, the same in its ID token, userinfo and back-channel logout token, and
/// its ID token as a hint proves a logout; the resource server still sees her id.
async fn pairwise(framework: &str) {
    let server = Server::start_with_args(framework, "memory", &["--fetch-allow-loopback", "1"]);
    let base = &server.base;
    let public_tokens = exchange(base, &public_code(base, "openid", "n-public").await).await;
    let public_id_token = public_tokens["id_token"].as_str().unwrap();
    let public_sub = verified(base, public_id_token, PUBLIC).await.1["sub"].clone();
    assert!(public_sub.is_string(), "{public_sub}");

    let (backchannel, mut bodies) = receiver().await;
    let registered = register(
        base,
        &serde_json::json!({
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "subject_type": "pairwise",
            "backchannel_logout_uri": backchannel,
            "client_name": "A pairwise relying party",
        }),
    )
    .await;
    assert_eq!(registered["subject_type"], "pairwise");
    let client_id = registered["client_id"].as_str().unwrap();
    let http = browser();
    let tokens = approved_tokens(&http, base, client_id, "n-pairwise").await;
    let id_token = tokens["id_token"].as_str().unwrap();
    let sub = verified(base, id_token, client_id).await.1["sub"].clone();
    assert!(sub.is_string(), "{sub}");
    assert_ne!(sub, public_sub, "not Alice's public sub");
    let info = userinfo_get(base, access_token(&tokens)).await;
    assert_eq!(info.status, 200, "{}", info.body);
    assert_eq!(info.json()["sub"], sub);
    // Access tokens are for resource servers: the demo API sees Alice's own id.
    let profile = me(base, Some(access_token(&tokens))).await;
    assert_eq!(profile.json()["sub"], public_sub);

    // Her pairwise ID token proves the logout at once; the logout token names her so too.
    let logout = get(
        &http,
        &format!(
            "{base}/api/oauth/logout?{}",
            form(&[("id_token_hint", id_token)])
        ),
    )
    .await;
    assert_eq!(logout.status, 200, "the logged-out page: {}", logout.body);
    assert!(!logout.body.contains("name=\"csrf\""), "{}", logout.body);
    let body = tokio::time::timeout(std::time::Duration::from_secs(5), bodies.recv())
        .await
        .expect("a logout token within 5 s")
        .expect("a body");
    let pairs: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let logout_token = pairs["logout_token"].split('.').nth(1).expect("a JWS");
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(logout_token).unwrap())
        .expect("JSON claims");
    assert_eq!(claims["sub"], sub);
    assert_eq!(claims["aud"], client_id);
    server.assert_alive_and_calm();
}
