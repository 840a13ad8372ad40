//! The authorization endpoint and the decision that ends it, as a host and a client see them:
//! what is rejected without a redirect, what is redirected back with an error, what reaches the
//! sign-in page, and what the client receives after the user answers.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use grantor::*;
use grantor::{client::*, settings::*, store::*};
use http::{Request, Response};

const FORM: &str = "application/x-www-form-urlencoded";
const S256: &str = "&code_challenge_method=S256";

/// A code request by `client` to [`REDIRECT`] with state `xyz`, then `extra`.
fn query(client: &str, extra: &str) -> String {
    format!(
        "response_type=code&client_id={client}&redirect_uri={REDIRECT_ENCODED}&state=xyz{extra}"
    )
}

fn demo(extra: &str) -> String {
    query("demo-client", extra)
}

/// A code request by demo-client to `uri`.
fn demo_to(uri: &str, extra: &str) -> String {
    format!(
        "response_type=code&client_id=demo-client&redirect_uri={}{extra}",
        enc(uri)
    )
}

fn enc(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn post(content_type: Option<&str>, body: impl Into<Vec<u8>>) -> Request<Vec<u8>> {
    let mut builder = Request::post("/api/oauth/authorize");
    if let Some(content_type) = content_type {
        builder = builder.header("content-type", content_type);
    }
    builder.body(body.into()).unwrap()
}

fn location(response: &Response<String>) -> &str {
    response.headers()["location"].to_str().unwrap()
}

async fn rejected(f: &Fixture, request: &Request<Vec<u8>>) -> OAuthError {
    match f.server.authorize(request).await {
        Authorize::Reject(error) => error,
        other => panic!("expected Reject for {request:?}, got {other:?}"),
    }
}

/// Asserts each query is shown to the user as a 400 `invalid_request`, never redirected.
async fn assert_rejected<Q: AsRef<str>>(f: &Fixture, queries: impl IntoIterator<Item = Q>) {
    for query in queries {
        let query = query.as_ref();
        let error = rejected(f, &authorize_request(query)).await;
        assert_eq!(error.code(), ErrorCode::InvalidRequest, "{query}: {error}");
        assert_eq!(error.status(), 400, "{query}");
    }
}

/// Expects an error redirect (303, `Cache-Control: no-store`) and answers its parts.
async fn error_redirect(f: &Fixture, query: &str) -> Redirect {
    match f.server.authorize(&authorize_request(query)).await {
        Authorize::Redirect(response) => {
            assert_eq!(response.headers()["cache-control"], "no-store");
            redirect(&response)
        }
        other => panic!("expected an error redirect for {query}, got {other:?}"),
    }
}

/// Asserts each query's error goes to [`REDIRECT`] in the query, with state `xyz` and `iss`.
async fn assert_query_error<Q: AsRef<str>>(
    f: &Fixture,
    code: &str,
    queries: impl IntoIterator<Item = Q>,
) {
    for query in queries {
        let query = query.as_ref();
        let r = error_redirect(f, query).await;
        assert_eq!(r.base, REDIRECT, "{query}");
        assert_eq!(r.query["error"], code, "{query}");
        assert!(!r.query["error_description"].is_empty(), "{query}");
        assert_eq!(r.query["state"], "xyz", "{query}");
        assert_eq!(r.query["iss"], ISSUER, "{query}");
        assert!(!r.query.contains_key("code"), "{query}");
        assert!(r.fragment.is_empty(), "{query}");
    }
}

/// Decides on `query` as Alice.
async fn decide(f: &Fixture, query: &str, decision: Decision) -> Response<String> {
    let pending = f.pending(query).await;
    f.server.decide(pending, f.alice.id(), decision).await
}

/// Registers a client (scope `profile`, approval not required); answers its Basic credentials.
fn register(
    f: &Fixture,
    id: &str,
    uri: &str,
    grants: impl IntoIterator<Item = GrantType>,
) -> String {
    let creds = ClientCredentials::generate().unwrap();
    let client = Client::confidential(id, creds.verifier)
        .redirect_uri(uri)
        .grant_types(grants);
    f.register(
        client
            .scopes("profile")
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
    );
    basic(id, creds.secret.expose_secret())
}

/// A token request for `code` at the token endpoint by public-client with the RFC verifier.
fn public_exchange(code: &str) -> String {
    format!(
        "grant_type=authorization_code&client_id=public-client&code={code}&redirect_uri={REDIRECT_ENCODED}&code_verifier={VERIFIER}"
    )
}

/// `query` padded with unknown parameters (each under 4 KiB) to exactly `len` bytes.
fn padded(query: &str, len: usize) -> String {
    let mut q = query.to_owned();
    while q.len() < len {
        let room = len - q.len();
        if room < 4 {
            q.push_str(&"&".repeat(room));
        } else {
            q.push_str("&p=");
            q.push_str(&"a".repeat((room - 3).min(4000)));
        }
    }
    q
}

// ---- 1. Rejected, never redirected ----------------------------------------------------------

#[tokio::test]
async fn missing_or_unknown_client_id_is_rejected_without_redirect() {
    let f = fixture();
    let no_client = format!("response_type=code&redirect_uri={REDIRECT_ENCODED}");
    let empty = format!("{no_client}&client_id=");
    assert_rejected(
        &f,
        [
            no_client,
            empty,
            query("nobody", ""),
            query("Demo-Client", ""),
        ],
    )
    .await;
}

#[tokio::test]
async fn missing_or_unregistered_redirect_uri_is_rejected_without_redirect() {
    let f = fixture();
    let missing = "response_type=code&client_id=demo-client&state=xyz";
    assert_rejected(&f, [missing, &format!("{missing}&redirect_uri=")]).await;
    let unregistered = [
        "https://evil.example/callback",
        "http://127.0.0.2:8081/callback",
        "/cb",
    ];
    assert_rejected(&f, unregistered.map(|uri| demo_to(uri, ""))).await;
}

#[tokio::test]
async fn redirect_uri_must_match_a_registered_one_exactly() {
    let f = fixture();
    let near_misses = [
        "http://127.0.0.1:8081/callback/",
        "http://127.0.0.1:8081/Callback",
        "HTTP://127.0.0.1:8081/callback",
        "http://127.0.0.1:8081/callback?x=1",
        "http://127.0.0.1:8081/callback?",
        "http://127.0.0.1:8081/callback#frag",
        "http://127.0.0.1:8081/%63allback",
        "https://127.0.0.1:8081/callback",
        "http://127.0.0.1:8081@evil.example/callback",
        "http://127.0.0.1.nip.io:8081/callback",
        "http://127.0.0.1:0/callback",
    ];
    assert_rejected(&f, near_misses.map(|uri| demo_to(uri, ""))).await;
}

#[tokio::test]
async fn a_loopback_redirect_uri_matches_with_any_port_and_the_code_goes_there() {
    for profile in [Profile::OAuth2, Profile::OAuth21] {
        let f = fixture_with(|b| b.profile(profile));
        // RFC 8252 §7.3: a native app listens on whatever port is free.
        let uri = "http://127.0.0.1:51234/callback";
        let query = format!(
            "response_type=code&client_id=public-client&redirect_uri={}&code_challenge={CHALLENGE}{S256}",
            enc(uri)
        );
        let redeem_at = |port: &str| {
            let f = &f;
            let query = query.clone();
            let port = port.to_owned();
            async move {
                let pending = f.pending(&query).await;
                assert_eq!(pending.redirect_uri(), uri);
                let response = f
                    .server
                    .decide(pending, f.alice.id(), Decision::Approve)
                    .await;
                let r = redirect(&response);
                assert_eq!(r.base, uri);
                let body = format!(
                    "grant_type=authorization_code&code={}&client_id=public-client&code_verifier={VERIFIER}&redirect_uri={}",
                    r.query["code"],
                    enc(&format!("http://127.0.0.1:{port}/callback"))
                );
                f.token(None, &body).await
            }
        };
        assert_tokens(&redeem_at("51234").await);
        // The code is bound to the exact redirect URI it was sent to, port included.
        assert_error(&redeem_at("8081").await, 400, "invalid_grant");
    }
}

#[tokio::test]
async fn repeated_client_id_or_redirect_uri_is_rejected_without_redirect() {
    let f = fixture();
    let other = enc(OTHER_REDIRECT);
    let extras = [
        "&client_id=demo-client".to_owned(),
        "&client_id=plain-client".to_owned(),
        format!("&redirect_uri={REDIRECT_ENCODED}"),
        format!("&redirect_uri={other}"),
    ];
    assert_rejected(&f, extras.map(|extra| demo(&extra))).await;
}

#[tokio::test]
async fn malformed_percent_encoding_anywhere_is_rejected() {
    let f = fixture();
    let extras = [
        "&scope=%zz",
        "&foo=%zz",
        "&%zz=1",
        "&state=%4",
        "&state=abc%",
        "&foo=%g1",
    ];
    assert_rejected(&f, extras.map(demo)).await;
    assert_rejected(&f, [query("demo%zzclient", "")]).await;
}

#[tokio::test]
async fn invalid_utf8_is_rejected() {
    let f = fixture();
    assert_rejected(
        &f,
        ["&state=%ff", "&scope=%c3%28", "&foo=%ff", "&%fe=1"].map(demo),
    )
    .await;
    // Raw bytes that are not UTF-8, in a form body.
    let mut raw = demo("").into_bytes();
    raw.extend_from_slice(b"&foo=\xff");
    assert_eq!(
        rejected(&f, &post(Some(FORM), raw)).await.code(),
        ErrorCode::InvalidRequest
    );
}

#[tokio::test]
async fn query_over_16_kib_is_rejected_and_one_at_the_limit_is_accepted() {
    let f = fixture();
    assert_rejected(&f, [padded(&demo(""), 16 * 1024 + 1)]).await;
    f.pending(&padded(&demo(""), 16 * 1024)).await;
}

#[tokio::test]
async fn parameter_over_4_kib_is_rejected_and_one_at_the_limit_is_accepted() {
    let f = fixture();
    let long = "s".repeat(4097);
    assert_rejected(
        &f,
        [
            demo(&format!("&state={long}")),
            demo(&format!("&foo={long}")),
        ],
    )
    .await;
    f.pending(&demo_to(REDIRECT, &format!("&foo={}", &long[1..])))
        .await;
    // The limit counts decoded bytes: 4096 bytes sent as 12288 characters of escapes pass.
    f.pending(&demo_to(REDIRECT, &format!("&foo={}", "%61".repeat(4096))))
        .await;
}

#[tokio::test]
async fn state_is_at_most_2_kib_of_printable_ascii_and_kept_as_sent() {
    let f = fixture();
    // Everything a request carries is kept until the user decides: `state` is RFC 6749's
    // VSCHAR, at most 2048 of them, or the request is refused on a page (never redirected
    // without the state the client would match it by).
    let at_limit = "s".repeat(2048);
    let pending = f
        .pending(&demo_to(REDIRECT, &format!("&state={at_limit}")))
        .await;
    drop(pending);
    for state in [
        "s".repeat(2049),
        "a%00b".to_owned(),
        "tab%09".to_owned(),
        "%7F".to_owned(),
        enc("caf\u{e9}"),
    ] {
        let query = demo_to(REDIRECT, &format!("&state={state}"));
        let error = rejected(&f, &authorize_request(&query)).await;
        assert_eq!(error.code(), ErrorCode::InvalidRequest, "{state}");
        assert!(
            error.description().contains("printable ASCII"),
            "{}",
            error.description()
        );
    }
}

#[tokio::test]
async fn methods_other_than_get_and_post_are_rejected_with_405() {
    let f = fixture();
    for method in ["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"] {
        let request = Request::builder()
            .method(method)
            .uri(format!("/api/oauth/authorize?{}", demo("")))
            .header("content-type", FORM)
            .body(demo("").into_bytes())
            .unwrap();
        let error = rejected(&f, &request).await;
        assert_eq!(error.code(), ErrorCode::InvalidRequest, "{method}");
        assert_eq!(error.status(), 405, "{method}");
    }
}

#[tokio::test]
async fn post_without_form_content_type_is_rejected() {
    let f = fixture();
    for content_type in [
        None,
        Some("application/json"),
        Some("text/plain"),
        Some("multipart/form-data"),
    ] {
        let error = rejected(&f, &post(content_type, demo(""))).await;
        assert_eq!(error.code(), ErrorCode::InvalidRequest, "{content_type:?}");
        assert_eq!(error.status(), 400, "{content_type:?}");
    }
}

#[tokio::test]
async fn post_body_over_16_kib_is_rejected() {
    let f = fixture();
    let error = rejected(&f, &post(Some(FORM), padded(&demo(""), 16 * 1024 + 1))).await;
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    assert_eq!(error.status(), 413);
}

#[tokio::test]
async fn client_and_redirect_uri_checks_come_before_any_redirected_error() {
    let f = fixture();
    let evil = "https://evil.example/cb";
    let bad = "&scope=admin&response_type=id_token&state=x";
    assert_rejected(
        &f,
        [query("nobody", bad), demo_to(evil, bad), demo_to(evil, "")],
    )
    .await;
}

// ---- 2. Errors redirected to the client ------------------------------------------------------

#[tokio::test]
async fn missing_response_type_redirects_invalid_request_in_the_query() {
    let f = fixture();
    let base = format!("client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&state=xyz");
    assert_query_error(
        &f,
        "invalid_request",
        [base.clone(), format!("{base}&response_type=")],
    )
    .await;
}

#[tokio::test]
async fn unknown_response_types_redirect_unsupported_response_type_in_the_query() {
    let f = fixture();
    let types = ["id_token", "code%20token", "token%20code", "CODE", "none"];
    let queries = types.map(|t| {
        format!("response_type={t}&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&state=xyz")
    });
    assert_query_error(&f, "unsupported_response_type", queries).await;
}

#[tokio::test]
async fn client_not_agreed_for_code_gets_unauthorized_client_in_the_query() {
    let f = fixture();
    register(&f, "implicit-only", REDIRECT, [GrantType::Implicit]);
    assert_query_error(&f, "unauthorized_client", [query("implicit-only", "")]).await;
}

#[tokio::test]
async fn scope_beyond_the_client_redirects_invalid_scope() {
    let f = fixture();
    let extras = ["&scope=admin", "&scope=profile%20admin", "&scope=prof"];
    assert_query_error(&f, "invalid_scope", extras.map(demo)).await;
}

#[tokio::test]
async fn malformed_scope_redirects_invalid_scope() {
    let f = fixture();
    let scopes = [
        "a%22b",
        "a%5Cb",
        "%C3%A9",
        "profile%09email",
        "profile%0Aemail",
    ];
    assert_query_error(
        &f,
        "invalid_scope",
        scopes.map(|s| demo(&format!("&scope={s}"))),
    )
    .await;
}

#[tokio::test]
async fn repeated_oauth_parameters_redirect_invalid_request() {
    let f = fixture();
    let challenge = format!("&code_challenge={CHALLENGE}&code_challenge={CHALLENGE}{S256}");
    let extras = [
        "&scope=profile&scope=email",
        "&response_type=code",
        &challenge,
    ];
    assert_query_error(&f, "invalid_request", extras.map(demo)).await;
    let r = error_redirect(&f, &demo("&state=other")).await;
    assert_eq!(
        (r.query["error"].as_str(), r.query["iss"].as_str()),
        ("invalid_request", ISSUER)
    );
}

#[tokio::test]
async fn public_client_without_code_challenge_redirects_invalid_request() {
    let f = fixture();
    let queries = [
        query("public-client", ""),
        query("public-client", "&code_challenge="),
    ];
    assert_query_error(&f, "invalid_request", queries).await;
}

#[tokio::test]
async fn plain_pkce_is_refused_by_default() {
    let f = fixture();
    let plain = format!("&code_challenge={VERIFIER}&code_challenge_method=plain");
    let no_method = format!("&code_challenge={VERIFIER}");
    for client in ["public-client", "demo-client"] {
        let queries = [query(client, &plain), query(client, &no_method)];
        assert_query_error(&f, "invalid_request", queries).await;
    }
}

#[tokio::test]
async fn malformed_or_unknown_pkce_redirects_invalid_request() {
    let f = fixture();
    let (long, plus) = (format!("{CHALLENGE}A"), format!("%2B{}", &CHALLENGE[1..]));
    let (pad, short) = (format!("{}%3D", &CHALLENGE[..42]), &CHALLENGE[..42]);
    let challenges = ["abc", &long, &plus, &pad, short];
    let queries = challenges.map(|c| query("public-client", &format!("&code_challenge={c}{S256}")));
    assert_query_error(&f, "invalid_request", queries).await;
    let methods = ["S512", "s256", "SHA256"].map(|m| {
        query(
            "public-client",
            &format!("&code_challenge={CHALLENGE}&code_challenge_method={m}"),
        )
    });
    assert_query_error(&f, "invalid_request", methods).await;
    let method_only = [query("public-client", S256), query("demo-client", S256)];
    assert_query_error(&f, "invalid_request", method_only).await;
}

#[tokio::test]
async fn error_redirect_without_state_carries_no_state() {
    let f = fixture();
    for extra in ["&scope=admin", "&scope=admin&state="] {
        let r = error_redirect(&f, &demo_to(REDIRECT, extra)).await;
        assert_eq!(
            (r.query["error"].as_str(), r.query["iss"].as_str()),
            ("invalid_scope", ISSUER)
        );
        assert!(!r.query.contains_key("state"), "{:?}", r.query);
    }
}

#[tokio::test]
async fn error_redirect_goes_to_the_redirect_uri_the_request_named() {
    let f = fixture();
    let r = error_redirect(&f, &demo_to(OTHER_REDIRECT, "&scope=admin")).await;
    assert_eq!(
        (r.base.as_str(), r.query["error"].as_str()),
        (OTHER_REDIRECT, "invalid_scope")
    );
}

// ---- 3. PKCE configuration -------------------------------------------------------------------

#[tokio::test]
async fn public_client_with_s256_gets_a_code_its_verifier_redeems() {
    let f = fixture();
    let code = f
        .code(
            "public-client",
            &format!("&code_challenge={CHALLENGE}{S256}"),
        )
        .await;
    assert_eq!(f.token(None, &public_exchange(&code)).await.status(), 200);
}

#[tokio::test]
async fn the_plain_allowed_policy_accepts_plain_and_a_missing_method() {
    let f = fixture_with(|b| b.pkce_policy(PkcePolicy::PlainAllowed));
    let plain = format!("&code_challenge={VERIFIER}&code_challenge_method=plain");
    for extra in [plain, format!("&code_challenge={VERIFIER}")] {
        let code = f.code("public-client", &extra).await;
        assert_eq!(
            f.token(None, &public_exchange(&code)).await.status(),
            200,
            "{extra}"
        );
    }
    // A plain challenge must still have verifier syntax (43 to 128 unreserved characters).
    let short = query(
        "public-client",
        "&code_challenge=short&code_challenge_method=plain",
    );
    assert_query_error(&f, "invalid_request", [short]).await;
}

#[tokio::test]
async fn default_policy_lets_confidential_clients_skip_pkce() {
    let f = fixture();
    f.pending(&demo("")).await;
    f.pending(&query("plain-client", "")).await;
}

#[tokio::test]
async fn all_clients_policy_requires_pkce_from_confidential_clients() {
    let f = fixture_with(|b| b.pkce_policy(PkcePolicy::AllClients));
    assert_query_error(&f, "invalid_request", [demo(""), query("plain-client", "")]).await;
    f.pending(&demo(&format!("&code_challenge={CHALLENGE}{S256}")))
        .await;
}

// ---- 4. Sign-in ------------------------------------------------------------------------------

#[tokio::test]
async fn valid_request_asks_for_sign_in_with_its_details() {
    let f = fixture();
    let pending = f.pending(&demo("&scope=profile%20email")).await;
    assert_eq!(pending.client().id().as_str(), "demo-client");
    assert_eq!(pending.client().name(), "Demo Client");
    assert_eq!(pending.scope().as_str(), "email profile");
    assert!(pending.needs_approval());
    assert_eq!(pending.response_type(), ResponseType::Code);
    assert_eq!(pending.redirect_uri(), REDIRECT);
    let plain = f
        .pending(&query("plain-client", "&scope=profile+email+profile"))
        .await;
    assert!(!plain.needs_approval());
    assert_eq!(plain.client().name(), "plain-client");
    assert_eq!(plain.scope().as_str(), "email profile");
}

#[tokio::test]
async fn absent_or_empty_scope_gets_the_client_default() {
    let f = fixture();
    let fast = f.fast_id.as_str();
    let cases = [
        ("demo-client", "", "email profile"),
        ("demo-client", "&scope=", "email profile"),
    ];
    for (client, extra, scope) in cases
        .into_iter()
        .chain([(fast, "", "profile"), (fast, "&scope=email", "email")])
    {
        assert_eq!(
            f.pending(&query(client, extra)).await.scope().as_str(),
            scope,
            "{extra}"
        );
    }
}

#[tokio::test]
async fn post_form_works_like_get() {
    let f = fixture();
    let types = [
        FORM,
        "application/x-www-form-urlencoded; charset=UTF-8",
        "Application/X-WWW-Form-URLEncoded",
    ];
    for content_type in types {
        let request = post(Some(content_type), demo("&scope=email"));
        let Authorize::SignIn(pending) = f.server.authorize(&request).await else {
            panic!("{content_type}: expected SignIn");
        };
        assert_eq!(pending.scope().as_str(), "email");
        let response = f
            .server
            .decide(pending, f.alice.id(), Decision::Approve)
            .await;
        assert_eq!(redirect(&response).query["state"], "xyz");
    }
}

#[tokio::test]
async fn unknown_parameters_are_ignored_and_may_repeat() {
    let f = fixture();
    let pending = f
        .pending(&demo(
            "&ui_locales=a&ui_locales=b&foo&nonce=1&nonce=2&prompt=",
        ))
        .await;
    assert_eq!(pending.scope().as_str(), "email profile");
}

// ---- 5. The decision ---------------------------------------------------------------------------

#[tokio::test]
async fn approve_redirects_with_code_state_and_iss_in_the_query() {
    let f = fixture();
    let response = decide(&f, &demo(""), Decision::Approve).await;
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert!(
        !location(&response).contains('#'),
        "{}",
        location(&response)
    );
    let r = redirect(&response);
    assert_eq!(r.base, REDIRECT);
    assert_eq!(r.query["code"].len(), 43);
    assert_eq!(
        (r.query["state"].as_str(), r.query["iss"].as_str()),
        ("xyz", ISSUER)
    );
    assert_eq!(r.query.len(), 3, "{:?}", r.query);
    let again = redirect(&decide(&f, &demo(""), Decision::Approve).await);
    assert_ne!(again.query["code"], r.query["code"]);
}

#[tokio::test]
async fn approve_goes_to_the_redirect_uri_the_request_named() {
    let f = fixture();
    let r = redirect(&decide(&f, &demo_to(OTHER_REDIRECT, ""), Decision::Approve).await);
    assert_eq!(r.base, OTHER_REDIRECT);
    assert!(r.query.contains_key("code") && !r.query.contains_key("state"));
}

#[tokio::test]
async fn deny_redirects_access_denied_with_state_and_iss() {
    let f = fixture();
    let response = decide(&f, &demo(""), Decision::Deny).await;
    assert_eq!(response.headers()["cache-control"], "no-store");
    let r = redirect(&response);
    assert_eq!(
        (r.base.as_str(), r.query["error"].as_str()),
        (REDIRECT, "access_denied")
    );
    assert_eq!(
        (r.query["state"].as_str(), r.query["iss"].as_str()),
        ("xyz", ISSUER)
    );
    assert!(!r.query.contains_key("code") && r.fragment.is_empty());
}

#[tokio::test]
async fn approved_code_exchanges_at_the_token_endpoint() {
    let f = fixture();
    let code = f.code(&f.fast_id, "&scope=email").await;
    let body = format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
    let response = f.token(Some(&f.fast_basic()), &body).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(json(&response)["scope"], "email");
}

async fn decide_after(f: &Fixture, wait: u64) -> Redirect {
    let pending = f.pending(&demo("")).await;
    f.clock.advance(Duration::from_secs(wait));
    redirect(
        &f.server
            .decide(pending, f.alice.id(), Decision::Approve)
            .await,
    )
}

#[tokio::test]
async fn pending_older_than_ten_minutes_is_access_denied() {
    let f = fixture();
    let r = decide_after(&f, 601).await;
    assert_eq!(
        (r.query["error"].as_str(), r.query["state"].as_str()),
        ("access_denied", "xyz")
    );
    assert!(!r.query.contains_key("code"));
    assert!(decide_after(&f, 599).await.query.contains_key("code"));
}

#[tokio::test]
async fn unknown_user_is_access_denied() {
    let f = fixture();
    let pending = f.pending(&demo("")).await;
    let response = f
        .server
        .decide(pending, &UserId::new("nobody"), Decision::Approve)
        .await;
    let r = redirect(&response);
    assert_eq!(r.query["error"], "access_denied");
    assert!(!r.query.contains_key("code"));
}

#[tokio::test]
async fn client_removed_before_decide_is_not_redirected() {
    for decision in [Decision::Approve, Decision::Deny] {
        let f = fixture();
        let pending = f.pending(&demo("")).await;
        assert!(f.remove_client("demo-client"));
        let response = f.server.decide(pending, f.alice.id(), decision).await;
        assert_error(&response, 400, "invalid_request");
        assert!(response.headers().get("location").is_none());
    }
}

#[tokio::test]
async fn redirect_uri_deregistered_before_decide_is_not_redirected() {
    let f = fixture();
    let pending = f.pending(&demo("")).await;
    register(
        &f,
        "demo-client",
        OTHER_REDIRECT,
        [GrantType::AuthorizationCode],
    );
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    assert_error(&response, 400, "invalid_request");
    assert!(response.headers().get("location").is_none());
}

#[tokio::test]
async fn state_with_special_characters_round_trips_exactly() {
    let f = fixture();
    let state = "a&b=c d#e+f%20?g/h;i ~!\"'<>[]{}|\\^`";
    let query = demo_to(REDIRECT, &format!("&state={}", enc(state)));
    let approved = redirect(&decide(&f, &query, Decision::Approve).await);
    assert_eq!(approved.query["state"], state);
    let denied = redirect(&decide(&f, &query, Decision::Deny).await);
    assert_eq!(denied.query["state"], state);
    let error = error_redirect(&f, &format!("{query}&scope=admin")).await;
    assert_eq!(error.query["state"], state);
}

#[tokio::test]
async fn registered_redirect_uri_with_a_query_keeps_it() {
    let f = fixture();
    let uri = "http://127.0.0.1:8081/cb?tenant=a";
    let basic = register(&f, "tenant-client", uri, [GrantType::AuthorizationCode]);
    let query = format!(
        "response_type=code&client_id=tenant-client&redirect_uri={}",
        enc(uri)
    );
    let response = decide(&f, &format!("{query}&state=xyz"), Decision::Approve).await;
    assert!(location(&response).starts_with("http://127.0.0.1:8081/cb?tenant=a&"));
    let r = redirect(&response);
    assert_eq!(r.base, "http://127.0.0.1:8081/cb");
    assert_eq!(r.query["tenant"], "a");
    assert_eq!(r.query["state"], "xyz");
    let code = &r.query["code"];
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={}",
        enc(uri)
    );
    assert_eq!(f.token(Some(&basic), &body).await.status(), 200);
    let error = error_redirect(&f, &format!("{query}&scope=admin")).await;
    assert_eq!(error.query["tenant"], "a");
    assert_eq!(error.query["error"], "invalid_scope");
}

#[tokio::test]
async fn a_parameter_repeated_with_an_empty_value_is_repeated_in_either_order() {
    let f = fixture();
    for repeated in [
        "client_id=&client_id=demo-client",
        "client_id=demo-client&client_id=",
    ] {
        let query = format!("response_type=code&{repeated}&redirect_uri={REDIRECT_ENCODED}");
        assert_rejected(&f, [query]).await;
    }
    assert_query_error(
        &f,
        "invalid_request",
        [demo("&scope=&scope=profile"), demo("&scope=profile&scope=")],
    )
    .await;
}

#[tokio::test]
async fn decide_follows_the_registration_as_it_is_now() {
    let f = fixture();
    let pending = f.pending(&demo("&scope=email")).await;
    // The administrator withdraws the code grant while the user signs in.
    register(&f, "demo-client", REDIRECT, [GrantType::Implicit]);
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    let r = redirect(&response);
    assert_eq!(r.query["error"], "unauthorized_client");
    assert!(!r.query.contains_key("code"));

    let f = fixture();
    let pending = f.pending(&demo("&scope=email")).await;
    // … or narrows its scopes to `profile`.
    register(&f, "demo-client", REDIRECT, [GrantType::AuthorizationCode]);
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    let r = redirect(&response);
    assert_eq!(r.query["error"], "invalid_scope");
    assert_eq!(r.query["state"], "xyz");
}

/// The hidden inputs of a Form Post Response Mode page, and its form's action.
fn posted_form(response: &Response<String>) -> (String, HashMap<String, String>) {
    assert_eq!(response.status(), 200, "{}", response.body());
    let headers = response.headers();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(headers["cache-control"], "no-store");
    assert!(headers.get("location").is_none());
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'sha256-"),
        "{csp}"
    );
    let body = response.body();
    let attribute = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
        let end = tag[start..].find('"')? + start;
        Some(
            tag[start..end]
                .replace("&amp;", "&")
                .replace("&quot;", "\"")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&#39;", "'"),
        )
    };
    let form = body.split("<form").nth(1).expect("a form");
    assert!(form.starts_with(" method=\"post\""), "{body}");
    let action = attribute(form, "action").expect("an action");
    let inputs = body
        .split("<input")
        .skip(1)
        .map(|tag| {
            (
                attribute(tag, "name").unwrap(),
                attribute(tag, "value").unwrap(),
            )
        })
        .collect();
    (action, inputs)
}

#[tokio::test]
async fn form_post_answers_a_page_that_posts_the_code_state_and_iss_to_the_redirect_uri() {
    let f = fixture();
    let state = "s&\"<>'1";
    let query = demo_to(
        REDIRECT,
        &format!("&state={}&response_mode=form_post", enc(state)),
    );
    let (action, inputs) = posted_form(&decide(&f, &query, Decision::Approve).await);
    assert_eq!(action, REDIRECT);
    assert!(inputs["code"].len() >= 32, "{inputs:?}");
    assert_eq!(inputs["state"], state);
    assert!(inputs.contains_key("iss"), "{inputs:?}");
    // A denial, and an error found once the redirect URI is known good, go the same way.
    let (_, denied) = posted_form(&decide(&f, &query, Decision::Deny).await);
    assert_eq!(denied["error"], "access_denied");
    assert_eq!(denied["state"], state);
    match f
        .server
        .authorize(&authorize_request(&format!("{query}&scope=admin")))
        .await
    {
        Authorize::Redirect(redirect) => {
            let (action, error) = posted_form(&redirect.into_response());
            assert_eq!(action, REDIRECT);
            assert_eq!(error["error"], "invalid_scope");
            assert_eq!(error["state"], state);
        }
        other => panic!("expected the error posted back, got {other:?}"),
    }
    // The code redeems as any other.
    let (_, inputs) = posted_form(&decide(&f, &query, Decision::Approve).await);
    let body = format!(
        "grant_type=authorization_code&code={}&redirect_uri={}",
        inputs["code"],
        enc(REDIRECT)
    );
    assert_tokens(&f.token(Some(&f.demo_basic()), &body).await);
}

#[tokio::test]
async fn response_mode_is_query_fragment_or_form_post_and_never_a_query_for_tokens() {
    let f = fixture();
    // The fragment for a code, on request.
    let query = demo_to(REDIRECT, "&state=f&response_mode=fragment");
    let response = decide(&f, &query, Decision::Approve).await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        location.starts_with(&format!("{REDIRECT}#code=")),
        "{location}"
    );
    // An unknown mode: an error in the response type's own mode.
    let error = error_redirect(&f, &demo_to(REDIRECT, "&state=u&response_mode=jwt")).await;
    assert_eq!(error.query["error"], "invalid_request");
    assert!(error.query["error_description"].contains("response_mode"));
    // Tokens never go in a query.
    let token_query = format!(
        "response_type=token&client_id=demo-client&redirect_uri={}&state=t&response_mode=query",
        enc(REDIRECT)
    );
    match f.server.authorize(&authorize_request(&token_query)).await {
        Authorize::Redirect(response) => {
            let location = response.headers()["location"].to_str().unwrap();
            assert!(location.contains("#error=invalid_request"), "{location}");
        }
        other => panic!("expected an error redirect, got {other:?}"),
    }
}
