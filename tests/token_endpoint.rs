//! The token endpoint's request format (RFC 6749 §3.2) and client authentication (§2.3).

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::*;
use grantor::client::*;
use http::Request;

const CC: &str = "grant_type=client_credentials";

/// A request with full control over method, Content-Type, `Authorization` headers and body bytes.
fn raw(
    method: &str,
    content_type: Option<&str>,
    authorizations: &[&str],
    body: impl Into<Vec<u8>>,
) -> Request<Vec<u8>> {
    let mut builder = Request::builder().method(method).uri("/api/oauth/token");
    if let Some(content_type) = content_type {
        builder = builder.header("content-type", content_type);
    }
    for authorization in authorizations {
        builder = builder.header("authorization", *authorization);
    }
    builder.body(body.into()).unwrap()
}

fn code_body(code: &str) -> String {
    format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}")
}

fn pkce_body(code: &str) -> String {
    format!("{}&code_verifier={VERIFIER}", code_body(code))
}

fn pkce() -> String {
    format!("&code_challenge={CHALLENGE}&code_challenge_method=S256")
}

// ---- request format ----

#[tokio::test]
async fn get_is_405_with_allow_post() {
    let f = fixture();
    let basic = f.demo_basic();
    let response = f.server.token(&raw("GET", None, &[&basic], "")).await;
    assert_error(&response, 405, "invalid_request");
    assert_eq!(response.headers()["allow"], "POST");
    assert_eq!(response.headers()["pragma"], "no-cache");
}

#[tokio::test]
async fn content_type_must_be_form_urlencoded() {
    let f = fixture();
    let basic = f.demo_basic();
    for content_type in [None, Some("text/plain"), Some("application/json")] {
        let response = f
            .server
            .token(&raw("POST", content_type, &[&basic], CC))
            .await;
        assert_error(&response, 400, "invalid_request");
    }
}

#[tokio::test]
async fn content_type_parameters_are_accepted() {
    let f = fixture();
    let basic = f.fast_basic();
    for content_type in [
        "application/x-www-form-urlencoded; charset=UTF-8",
        "Application/X-WWW-Form-URLEncoded",
    ] {
        let response = f
            .server
            .token(&raw("POST", Some(content_type), &[&basic], CC))
            .await;
        assert_tokens(&response);
    }
}

/// `CC` padded with an unknown parameter to exactly `len` bytes.
fn padded(len: usize) -> String {
    let mut body = format!("{CC}&x=");
    let mut chunks = 0;
    while len - body.len() > 4000 {
        body.push_str(&"a".repeat(4000));
        chunks += 1;
        body.push_str(&format!("&x{chunks}="));
    }
    body.push_str(&"a".repeat(len - body.len()));
    assert_eq!(body.len(), len);
    body
}

#[tokio::test]
async fn body_over_16_kib_is_413() {
    let f = fixture();
    let basic = f.fast_basic();
    let response = f.token(Some(&basic), &padded(16 * 1024)).await;
    assert_tokens(&response);
    let response = f.token(Some(&basic), &padded(16 * 1024 + 1)).await;
    assert_error(&response, 413, "invalid_request");
}

#[tokio::test]
async fn parameter_over_4_kib_is_invalid_request() {
    let f = fixture();
    let basic = f.fast_basic();
    let at_limit = format!("{CC}&x={}", "a".repeat(4096));
    assert_tokens(&f.token(Some(&basic), &at_limit).await);
    let over = format!("{CC}&x={}", "a".repeat(4097));
    assert_error(&f.token(Some(&basic), &over).await, 400, "invalid_request");
    let scope = format!("{CC}&scope={}", "a".repeat(4097));
    assert_error(&f.token(Some(&basic), &scope).await, 400, "invalid_request");
}

#[tokio::test]
async fn malformed_percent_encoding_and_utf8_are_invalid_request() {
    let f = fixture();
    let basic = f.fast_basic();
    for body in [
        format!("{CC}&scope=%zz").into_bytes(),
        format!("{CC}&scope=%4").into_bytes(),
        format!("{CC}&scope=%ff").into_bytes(),
        [CC.as_bytes(), b"&scope=\xff"].concat(),
    ] {
        let request = raw(
            "POST",
            Some("application/x-www-form-urlencoded"),
            &[&basic],
            body,
        );
        assert_error(&f.server.token(&request).await, 400, "invalid_request");
    }
}

#[tokio::test]
async fn repeated_parameter_is_invalid_request() {
    let f = fixture();
    let basic = f.fast_basic();
    for body in [
        format!("{CC}&{CC}"),
        format!("{CC}&grant_type=password"),
        format!("{CC}&scope=profile&scope=profile"),
    ] {
        assert_error(&f.token(Some(&basic), &body).await, 400, "invalid_request");
    }
    let code = f.code(&f.fast_id, "").await;
    let body = format!("{}&code={code}", code_body(&code));
    assert_error(&f.token(Some(&basic), &body).await, 400, "invalid_request");
    // The refused request did not spend the code.
    assert_tokens(&f.token(Some(&basic), &code_body(&code)).await);
}

#[tokio::test]
async fn repeated_unknown_parameter_is_ignored() {
    let f = fixture();
    let body = format!("{CC}&ext_param=a&ext_param=b");
    assert_tokens(&f.token(Some(&f.fast_basic()), &body).await);
}

#[tokio::test]
async fn empty_value_counts_as_absent() {
    let f = fixture();
    let basic = f.fast_basic();
    let response = f.token(Some(&basic), "grant_type=").await;
    assert_error(&response, 400, "invalid_request");
    let body = assert_tokens(&f.token(Some(&basic), &format!("{CC}&scope=")).await);
    assert_eq!(body["scope"], "profile");
    let with_empty_secret = format!("{CC}&client_secret=&client_id=");
    assert_tokens(&f.token(Some(&basic), &with_empty_secret).await);
}

#[tokio::test]
async fn missing_grant_type_is_invalid_request() {
    let f = fixture();
    let response = f.token(Some(&f.fast_basic()), "scope=profile").await;
    assert_error(&response, 400, "invalid_request");
}

#[tokio::test]
async fn unknown_grant_type_is_unsupported() {
    let f = fixture();
    for grant in ["foo", "implicit", "token", "AUTHORIZATION_CODE"] {
        let body = format!("grant_type={grant}");
        let response = f.token(Some(&f.demo_basic()), &body).await;
        assert_error(&response, 400, "unsupported_grant_type");
    }
}

#[tokio::test]
async fn grant_not_agreed_is_unauthorized_client() {
    let f = fixture();
    let plain = basic("plain-client", "plain-secret");
    for body in [CC, "grant_type=refresh_token&refresh_token=abc"] {
        assert_error(
            &f.token(Some(&plain), body).await,
            400,
            "unauthorized_client",
        );
    }
}

// ---- client authentication ----

#[tokio::test]
async fn missing_credentials_are_401_with_challenge() {
    let f = fixture();
    let response = f.token(None, CC).await;
    assert_error(&response, 401, "invalid_client");
    assert_eq!(response.headers()["pragma"], "no-cache");
}

#[tokio::test]
async fn wrong_secret_and_unknown_client_fail_alike() {
    let f = fixture();
    let wrong = f.token(Some(&basic("demo-client", "wrong")), CC).await;
    let unknown = f.token(Some(&basic("nobody", "demo-secret")), CC).await;
    let wrong_fast = f
        .token(Some(&basic(&f.fast_id, "x".repeat(43).as_str())), CC)
        .await;
    for response in [&wrong, &unknown, &wrong_fast] {
        assert_error(response, 401, "invalid_client");
    }
    assert_eq!(json(&wrong), json(&unknown));
    assert_eq!(json(&wrong), json(&wrong_fast));
}

#[tokio::test]
async fn malformed_basic_credentials_are_invalid_client() {
    let f = fixture();
    let no_colon = format!("Basic {}", STANDARD.encode("demo-client"));
    let empty_id = format!("Basic {}", STANDARD.encode(":demo-secret"));
    let bad_escape = format!("Basic {}", STANDARD.encode("demo-client:%zz"));
    for value in [
        "Basic !!!",
        "Basic",
        "Bearer x",
        &no_colon,
        &empty_id,
        &bad_escape,
    ] {
        let response = f.token(Some(value), CC).await;
        assert_error(&response, 401, "invalid_client");
    }
    let (good, bad) = (f.demo_basic(), basic("demo-client", "wrong"));
    for headers in [[&good, &good], [&good, &bad]] {
        let request = raw(
            "POST",
            Some("application/x-www-form-urlencoded"),
            &[headers[0].as_str(), headers[1].as_str()],
            CC,
        );
        assert_error(&f.server.token(&request).await, 401, "invalid_client");
    }
}

#[tokio::test]
async fn client_secret_post_is_for_the_clients_registered_for_it() {
    let f = fixture();
    let creds = ClientCredentials::generate().unwrap();
    let id = creds.client_id.as_str().to_owned();
    let secret = creds.secret.expose_secret().to_owned();
    f.register(
        Client::confidential(&id, creds.verifier)
            .grant_types([GrantType::ClientCredentials])
            .scopes("profile")
            .secret_in_body(true)
            .build()
            .unwrap(),
    );
    let in_body = format!("{CC}&client_id={id}&client_secret={secret}");
    assert_tokens(&f.token(None, &in_body).await);
    // HTTP Basic is refused to it, and a wrong secret in the body too.
    let response = f.token(Some(&basic(&id, &secret)), CC).await;
    assert_error(&response, 401, "invalid_client");
    let wrong = format!("{CC}&client_id={id}&client_secret=not-{secret}");
    assert_error(&f.token(None, &wrong).await, 401, "invalid_client");
    // One method per request (RFC 6749 §2.3).
    let response = f.token(Some(&basic(&id, &secret)), &in_body).await;
    assert_error(&response, 400, "invalid_request");
}

#[tokio::test]
async fn client_secret_in_body_is_refused_to_basic_clients() {
    let f = fixture();
    let both = format!("{CC}&client_secret=demo-secret");
    let response = f.token(Some(&f.demo_basic()), &both).await;
    assert_error(&response, 401, "invalid_client");
    let body_only = format!("{CC}&client_id=demo-client&client_secret=demo-secret");
    assert_error(&f.token(None, &body_only).await, 401, "invalid_client");
}

#[tokio::test]
async fn confidential_client_cannot_authenticate_by_client_id_alone() {
    let f = fixture();
    let body = format!("{CC}&client_id=demo-client");
    assert_error(&f.token(None, &body).await, 401, "invalid_client");
}

#[tokio::test]
async fn body_client_id_must_match_basic() {
    let f = fixture();
    let differs = format!("{CC}&client_id=plain-client");
    let response = f.token(Some(&f.demo_basic()), &differs).await;
    assert_error(&response, 400, "invalid_request");
    let same = format!("{CC}&client_id=demo-client");
    assert_tokens(&f.token(Some(&f.demo_basic()), &same).await);
}

#[tokio::test]
async fn basic_scheme_is_case_insensitive() {
    let f = fixture();
    let encoded = STANDARD.encode("demo-client:demo-secret");
    for scheme in ["basic", "BASIC", "bAsIc"] {
        let value = format!("{scheme} {encoded}");
        assert_tokens(&f.token(Some(&value), CC).await);
    }
    let unpadded = format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", f.fast_id, f.fast_secret))
    );
    assert_tokens(&f.token(Some(unpadded.trim_end_matches('=')), CC).await);
}

#[tokio::test]
async fn basic_credentials_are_form_urlencoded() {
    let f = fixture();
    let secret = "s3cret: with space+plus%percent-0123456789abcdef";
    f.register(
        Client::confidential(
            "my client",
            SecretVerifier::digest(&ClientSecret::new(secret)).unwrap(),
        )
        .grant_types([GrantType::ClientCredentials])
        .scopes("profile")
        .build()
        .unwrap(),
    );
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let encoded = format!("{}:{}", encode("my client"), encode(secret));
    assert!(encoded.contains("my+client") && encoded.contains("%3A") && encoded.contains("%2B"));
    let value = format!("Basic {}", STANDARD.encode(&encoded));
    let body = assert_tokens(&f.token(Some(&value), CC).await);
    assert_eq!(body["scope"], "profile");
    let percent = encoded.replace("my+client", "my%20client");
    let value = format!("Basic {}", STANDARD.encode(percent));
    assert_tokens(&f.token(Some(&value), CC).await);
    // Unencoded, the '+' decodes to a space and the '%pe' is malformed: refused.
    let raw_value = format!("Basic {}", STANDARD.encode(format!("my client:{secret}")));
    assert_error(&f.token(Some(&raw_value), CC).await, 401, "invalid_client");
}

#[tokio::test]
async fn error_description_never_contains_the_secret() {
    let f = fixture();
    let secret = "Sup3rSecretValue-that-must-not-leak";
    let no_colon = format!("Basic {}", STANDARD.encode(secret));
    for (authorization, body) in [
        (basic("demo-client", secret), CC.to_owned()),
        (basic("nobody", secret), CC.to_owned()),
        (no_colon, CC.to_owned()),
        (f.demo_basic(), format!("{CC}&client_secret={secret}")),
        (
            basic("demo-client", secret),
            format!("{CC}&client_id=other"),
        ),
    ] {
        let response = f.token(Some(&authorization), &body).await;
        assert!(response.status().is_client_error(), "{response:?}");
        assert!(!response.body().contains(secret), "{}", response.body());
        for value in response.headers().values() {
            assert!(!value.to_str().unwrap().contains(secret));
        }
    }
}

#[tokio::test]
async fn public_client_authenticates_by_client_id() {
    let f = fixture();
    let code = f.code("public-client", &pkce()).await;
    let body = format!("{}&client_id=public-client", pkce_body(&code));
    let tokens = assert_tokens(&f.token(None, &body).await);
    assert!(tokens.get("refresh_token").is_none(), "{tokens}");
}

#[tokio::test]
async fn public_client_basic_with_empty_secret_is_accepted() {
    let f = fixture();
    let code = f.code("public-client", &pkce()).await;
    let response = f
        .token(Some(&basic("public-client", "")), &pkce_body(&code))
        .await;
    assert_tokens(&response);
}

#[tokio::test]
async fn public_client_basic_with_a_secret_is_refused() {
    let f = fixture();
    let code = f.code("public-client", &pkce()).await;
    let response = f
        .token(Some(&basic("public-client", "x")), &pkce_body(&code))
        .await;
    assert_error(&response, 401, "invalid_client");
    // The code was not spent by the refused request.
    let body = format!("{}&client_id=public-client", pkce_body(&code));
    assert_tokens(&f.token(None, &body).await);
}

#[tokio::test]
async fn argon2_verifier_works_repeatedly() {
    let f = fixture();
    let right = f.demo_basic();
    let wrong = basic("demo-client", "demo-secreT");
    assert_tokens(&f.token(Some(&right), CC).await);
    assert_tokens(&f.token(Some(&right), CC).await);
    assert_error(&f.token(Some(&wrong), CC).await, 401, "invalid_client");
    assert_tokens(&f.token(Some(&right), CC).await);
    assert_error(&f.token(Some(&wrong), CC).await, 401, "invalid_client");
}
