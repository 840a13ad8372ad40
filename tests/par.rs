//! Pushed authorization requests (RFC 9126) through the public API.

mod common;

use std::time::Duration;

use common::*;
use grantor::settings::PushedRequests;
use grantor::*;
use grantor::{client::*, settings::*};
use http::{Request, Response};

const PAR: &str = "/api/oauth/par";

fn with_par(settings: PushedRequests) -> Fixture {
    fixture_with(|b| b.pushed_requests(settings))
}

impl Fixture {
    async fn push(&self, authorization: Option<&str>, body: &str) -> Response<String> {
        self.server.par(&post(PAR, authorization, body)).await
    }

    /// Pushes `body` as the fast client and answers the `request_uri`.
    async fn pushed(&self, body: &str) -> String {
        let response = self.push(Some(&self.fast_basic()), body).await;
        assert_eq!(response.status(), 201, "{}", response.body());
        json(&response)["request_uri"].as_str().unwrap().to_owned()
    }

    async fn by_reference(&self, client_id: &str, request_uri: &str) -> Authorize {
        let query = format!(
            "client_id={client_id}&request_uri={}",
            url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
        );
        self.server.authorize(&authorize_request(&query)).await
    }
}

fn code_request() -> String {
    format!("response_type=code&redirect_uri={REDIRECT_ENCODED}&scope=email&state=s-1")
}

fn assert_reject(answer: Authorize, code: &str) {
    match answer {
        Authorize::Reject(error) => assert_eq!(error.code().as_str(), code, "{error}"),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[tokio::test]
async fn a_pushed_request_answers_201_with_a_request_uri_and_its_lifetime() {
    let f = with_par(PushedRequests::new());
    let response = f.push(Some(&f.fast_basic()), &code_request()).await;
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body = json(&response);
    let request_uri = body["request_uri"].as_str().unwrap();
    let reference = request_uri
        .strip_prefix("urn:ietf:params:oauth:request_uri:")
        .unwrap();
    assert_eq!(reference.len(), 43, "256 bits in base64url");
    assert_eq!(body["expires_in"], 60);
}

#[tokio::test]
async fn the_authorization_endpoint_takes_the_pushed_request_by_reference() {
    let f = with_par(PushedRequests::new());
    let request_uri = f.pushed(&code_request()).await;
    let Authorize::SignIn(pending) = f.by_reference(&f.fast_id, &request_uri).await else {
        panic!("the pushed request is valid");
    };
    assert_eq!(pending.redirect_uri(), REDIRECT);
    assert_eq!(pending.scope().as_str(), "email");
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    let redirect = redirect(&response);
    assert_eq!(redirect.query["state"], "s-1");
    let body = format!(
        "grant_type=authorization_code&code={}&redirect_uri={REDIRECT_ENCODED}",
        redirect.query["code"]
    );
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), &body).await);
    assert_scope(&tokens, "email");
}

#[tokio::test]
async fn parameters_beside_request_uri_are_ignored() {
    let f = with_par(PushedRequests::new());
    let request_uri = f.pushed(&code_request()).await;
    let query = format!(
        "client_id={}&request_uri={}&scope=profile&redirect_uri=https%3A%2F%2Fevil.example%2F",
        f.fast_id,
        url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
    );
    let Authorize::SignIn(pending) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("the pushed request is valid");
    };
    assert_eq!(pending.redirect_uri(), REDIRECT);
    assert_eq!(pending.scope().as_str(), "email");
}

/// A browser may visit a `request_uri` again (a reload, the back button) until the sign-in is
/// answered; answering spends it, so it is still answered once.
#[tokio::test]
async fn a_request_uri_serves_until_its_sign_in_is_answered() {
    let f = with_par(PushedRequests::new());
    let request_uri = f.pushed(&code_request()).await;
    let Authorize::SignIn(first) = f.by_reference(&f.fast_id, &request_uri).await else {
        panic!("the first visit starts a sign-in");
    };
    let Authorize::SignIn(second) = f.by_reference(&f.fast_id, &request_uri).await else {
        panic!("a second visit before the answer starts one too");
    };
    assert_eq!(second.scope().as_str(), "email");
    let answered = f
        .server
        .decide(second, f.alice.id(), Decision::Approve)
        .await;
    assert!(redirect(&answered).query.contains_key("code"));
    // Answered: the reference serves no one any more, nor does the other tab's sign-in.
    assert_reject(
        f.by_reference(&f.fast_id, &request_uri).await,
        "invalid_request_uri",
    );
    let other_tab = f
        .server
        .decide(first, f.alice.id(), Decision::Approve)
        .await;
    let other_tab = redirect(&other_tab);
    assert_eq!(other_tab.query["error"], "invalid_request_uri");
    assert_eq!(other_tab.query["state"], "s-1");
    assert!(!other_tab.query.contains_key("code"));
}

/// A denial answers the sign-in too: the reference is spent.
#[tokio::test]
async fn a_denied_sign_in_spends_its_request_uri() {
    let f = with_par(PushedRequests::new());
    let request_uri = f.pushed(&code_request()).await;
    let Authorize::SignIn(pending) = f.by_reference(&f.fast_id, &request_uri).await else {
        panic!("the pushed request is valid");
    };
    let denied = f.server.decide(pending, f.alice.id(), Decision::Deny).await;
    assert_eq!(redirect(&denied).query["error"], "access_denied");
    assert_reject(
        f.by_reference(&f.fast_id, &request_uri).await,
        "invalid_request_uri",
    );
}

/// Once visited, a request outlives its short push lifetime for as long as its sign-in may
/// take (the authorization request lifetime, counted from the push), and no longer.
#[tokio::test]
async fn a_visited_request_uri_lives_as_long_as_its_sign_in() {
    let f = with_par(PushedRequests::new().lifetime(Duration::from_secs(30)));
    let request_uri = f.pushed(&code_request()).await;
    assert!(matches!(
        f.by_reference(&f.fast_id, &request_uri).await,
        Authorize::SignIn(_)
    ));
    f.clock.advance(Duration::from_secs(120));
    let Authorize::SignIn(slow) = f.by_reference(&f.fast_id, &request_uri).await else {
        panic!("the visited request waits for its sign-in");
    };
    let answered = f.server.decide(slow, f.alice.id(), Decision::Approve).await;
    assert!(redirect(&answered).query.contains_key("code"));

    let unanswered = f.pushed(&code_request()).await;
    assert!(matches!(
        f.by_reference(&f.fast_id, &unanswered).await,
        Authorize::SignIn(_)
    ));
    // The default authorization request lifetime is ten minutes.
    f.clock.advance(Duration::from_secs(600));
    assert_reject(
        f.by_reference(&f.fast_id, &unanswered).await,
        "invalid_request_uri",
    );
}

#[tokio::test]
async fn another_clients_request_uri_is_refused_and_left_for_its_owner() {
    let f = with_par(PushedRequests::new());
    let request_uri = f.pushed(&code_request()).await;
    assert_reject(
        f.by_reference("demo-client", &request_uri).await,
        "invalid_request_uri",
    );
    assert!(matches!(
        f.by_reference(&f.fast_id, &request_uri).await,
        Authorize::SignIn(_)
    ));
}

#[tokio::test]
async fn a_request_uri_expires_after_its_lifetime() {
    let f = with_par(PushedRequests::new().lifetime(Duration::from_secs(30)));
    let request_uri = f.pushed(&code_request()).await;
    f.clock.advance(Duration::from_secs(30));
    assert_reject(
        f.by_reference(&f.fast_id, &request_uri).await,
        "invalid_request_uri",
    );
}

#[tokio::test]
async fn unknown_malformed_or_missing_client_request_uris_are_refused() {
    let f = with_par(PushedRequests::new());
    let forged = "urn:ietf:params:oauth:request_uri:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    assert_reject(
        f.by_reference(&f.fast_id, forged).await,
        "invalid_request_uri",
    );
    assert_reject(
        f.by_reference(&f.fast_id, "https://client.example/request.jwt")
            .await,
        "request_uri_not_supported",
    );
    let request_uri = f.pushed(&code_request()).await;
    let query = format!(
        "request_uri={}",
        url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
    );
    assert_reject(
        f.server.authorize(&authorize_request(&query)).await,
        "invalid_request",
    );
}

#[tokio::test]
async fn pushing_needs_client_authentication_as_at_the_token_endpoint() {
    let f = with_par(PushedRequests::new());
    let body = format!("client_id={}&{}", f.fast_id, code_request());
    assert_error(&f.push(None, &body).await, 401, "invalid_client");
    let wrong = basic(&f.fast_id, "not-the-secret");
    assert_error(
        &f.push(Some(&wrong), &code_request()).await,
        401,
        "invalid_client",
    );
    let in_body = format!("client_secret={}&{}", f.fast_secret, body);
    assert_error(&f.push(None, &in_body).await, 401, "invalid_client");
}

#[tokio::test]
async fn a_pushed_request_is_validated_as_the_authorization_endpoint_would_and_answered_in_json() {
    let f = with_par(PushedRequests::new());
    let basic = f.fast_basic();
    let unregistered = "response_type=code&redirect_uri=https%3A%2F%2Fevil.example%2F";
    assert_error(
        &f.push(Some(&basic), unregistered).await,
        400,
        "invalid_request",
    );
    let scope = format!("response_type=code&redirect_uri={REDIRECT_ENCODED}&scope=admin");
    assert_error(&f.push(Some(&basic), &scope).await, 400, "invalid_scope");
    let response_type = format!("response_type=id_token&redirect_uri={REDIRECT_ENCODED}");
    assert_error(
        &f.push(Some(&basic), &response_type).await,
        400,
        "unsupported_response_type",
    );
    let nested = format!("{}&request_uri=urn%3Ax", code_request());
    assert_error(&f.push(Some(&basic), &nested).await, 400, "invalid_request");
    let other = format!("client_id=demo-client&{}", code_request());
    assert_error(&f.push(Some(&basic), &other).await, 400, "invalid_request");
    let public = format!("client_id=public-client&{}", code_request());
    assert_error(&f.push(None, &public).await, 400, "invalid_request");
}

#[tokio::test]
async fn a_public_client_pushes_with_its_client_id_and_pkce() {
    let f = with_par(PushedRequests::new());
    let body = format!(
        "client_id=public-client&{}&code_challenge={CHALLENGE}&code_challenge_method=S256",
        code_request()
    );
    let response = f.push(None, &body).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let request_uri = json(&response)["request_uri"].as_str().unwrap().to_owned();
    let Authorize::SignIn(pending) = f.by_reference("public-client", &request_uri).await else {
        panic!("the pushed request is valid");
    };
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    let code = redirect(&response).query["code"].clone();
    let exchange = format!(
        "grant_type=authorization_code&client_id=public-client&code={code}\
         &redirect_uri={REDIRECT_ENCODED}&code_verifier={VERIFIER}"
    );
    assert_tokens(&f.token(None, &exchange).await);
}

#[tokio::test]
async fn a_client_that_must_push_is_refused_at_the_authorization_endpoint_without_a_request_uri() {
    let f = with_par(PushedRequests::new());
    f.register(
        Client::public("pushing-client")
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode])
            .scopes("profile")
            .require_pushed_requests(true)
            .build()
            .unwrap(),
    );
    let query = format!(
        "response_type=code&client_id=pushing-client&redirect_uri={REDIRECT_ENCODED}\
         &code_challenge={CHALLENGE}&code_challenge_method=S256&state=s-2"
    );
    let response = match f.server.authorize(&authorize_request(&query)).await {
        Authorize::Redirect(redirect) => redirect.into_response(),
        other => panic!("expected an error redirect, got {other:?}"),
    };
    let redirect = redirect(&response);
    assert_eq!(redirect.query["error"], "invalid_request");
    assert_eq!(redirect.query["state"], "s-2");
    let response = f.push(None, &query).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    // Clients that need not push still may go straight to the authorization endpoint.
    f.pending(&format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}",
        f.fast_id
    ))
    .await;
}

#[tokio::test]
async fn a_server_that_requires_pushing_refuses_every_direct_request_and_says_so_in_its_metadata() {
    let f = with_par(PushedRequests::new().required(true));
    let query = format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}",
        f.fast_id
    );
    let Authorize::Redirect(response) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("a direct request is refused");
    };
    assert_eq!(redirect(&response).query["error"], "invalid_request");
    let request_uri = f.pushed(&code_request()).await;
    assert!(matches!(
        f.by_reference(&f.fast_id, &request_uri).await,
        Authorize::SignIn(_)
    ));
    let metadata = json(&f.server.metadata());
    assert_eq!(
        metadata["pushed_authorization_request_endpoint"],
        format!("{ISSUER}{PAR}")
    );
    assert_eq!(metadata["require_pushed_authorization_requests"], true);
}

#[tokio::test]
async fn without_pushed_requests_the_endpoint_is_absent_and_request_uri_refused() {
    let f = fixture();
    let response = f.push(Some(&f.fast_basic()), &code_request()).await;
    assert_error(&response, 404, "invalid_request");
    assert_reject(
        f.by_reference(&f.fast_id, "urn:ietf:params:oauth:request_uri:abc")
            .await,
        "request_uri_not_supported",
    );
    let metadata = json(&f.server.metadata());
    assert!(
        metadata
            .get("pushed_authorization_request_endpoint")
            .is_none()
    );
}

#[tokio::test]
async fn a_client_may_push_only_so_many_requests_per_lifetime() {
    let f = with_par(PushedRequests::new().per_client(2));
    f.pushed(&code_request()).await;
    f.pushed(&code_request()).await;
    let response = f.push(Some(&f.fast_basic()), &code_request()).await;
    assert_error(&response, 429, "temporarily_unavailable");
    // Other clients push on.
    let public = format!(
        "client_id=public-client&{}&code_challenge={CHALLENGE}&code_challenge_method=S256",
        code_request()
    );
    assert_eq!(f.push(None, &public).await.status(), 201);
    f.clock.advance(Duration::from_secs(60));
    f.pushed(&code_request()).await;
}

/// A visited request waits up to the authorization request lifetime, ten times a push's: the
/// requests a client may leave waiting are counted per such window, with the push quota's
/// number, so a client pushing and visiting at full speed cannot keep ten times more than it
/// may push. Past it, the first visit is refused (429) and the request stays pushed; a visit of
/// one already waiting is not counted again.
#[tokio::test]
async fn a_client_may_leave_only_so_many_requests_waiting_for_a_sign_in() {
    let f = with_par(PushedRequests::new().per_client(2));
    let first = f.pushed(&code_request()).await;
    let second = f.pushed(&code_request()).await;
    for request_uri in [&first, &second, &first] {
        assert!(matches!(
            f.by_reference(&f.fast_id, request_uri).await,
            Authorize::SignIn(_)
        ));
    }
    f.clock.advance(Duration::from_secs(60));
    let third = f.pushed(&code_request()).await;
    match f.by_reference(&f.fast_id, &third).await {
        Authorize::Reject(error) => {
            assert_eq!(error.code().as_str(), "temporarily_unavailable", "{error}");
            assert_eq!(error.status(), 429);
            assert!(
                error.description().contains("waiting for a sign-in"),
                "{error}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Other clients visit on; the waiting ones still serve their sign-ins.
    let public = format!(
        "client_id=public-client&{}&code_challenge={CHALLENGE}&code_challenge_method=S256",
        code_request()
    );
    let pushed = f.push(None, &public).await;
    let public_uri = json(&pushed)["request_uri"].as_str().unwrap().to_owned();
    assert!(matches!(
        f.by_reference("public-client", &public_uri).await,
        Authorize::SignIn(_)
    ));
    assert!(matches!(
        f.by_reference(&f.fast_id, &second).await,
        Authorize::SignIn(_)
    ));
}

/// Register a public client the way anyone may (RFC 7591) and answer its id.
async fn self_registered(f: &Fixture) -> String {
    let metadata = serde_json::json!({
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    });
    let request = Request::post("/api/oauth/register")
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .unwrap();
    let response = f.server.register(&request).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    json(&response)["client_id"].as_str().unwrap().to_owned()
}

/// Pushes a PKCE code request as the public client `id`.
async fn push_as_public(f: &Fixture, id: &str) -> Response<String> {
    let body = format!(
        "response_type=code&client_id={id}&redirect_uri={REDIRECT_ENCODED}\
         &code_challenge={CHALLENGE}&code_challenge_method=S256"
    );
    f.push(None, &body).await
}

/// Self-registered clients share one budget (anyone can register more of them); a client an
/// administrator registered keeps its own, so their flood never refuses it.
#[tokio::test]
async fn self_registered_clients_together_may_push_only_so_many_and_administered_ones_keep_their_own()
 {
    let f = fixture_with(|b| {
        b.pushed_requests(PushedRequests::new().total(3).per_client(2))
            .registration(RegistrationPolicy::new().public_clients(true))
    });
    let (one, two) = (self_registered(&f).await, self_registered(&f).await);
    for id in [&one, &one, &two] {
        assert_eq!(push_as_public(&f, id).await.status(), 201);
    }
    // The shared budget is spent: every self-registered client waits for the window.
    let three = self_registered(&f).await;
    for id in [&two, &three] {
        assert_error(
            &push_as_public(&f, id).await,
            429,
            "temporarily_unavailable",
        );
    }
    // Administrator-registered clients push on, each within its own budget.
    f.pushed(&code_request()).await;
    assert_eq!(push_as_public(&f, "public-client").await.status(), 201);
    f.pushed(&code_request()).await;
    assert_error(
        &f.push(Some(&f.fast_basic()), &code_request()).await,
        429,
        "temporarily_unavailable",
    );
    f.clock.advance(Duration::from_secs(60));
    assert_eq!(push_as_public(&f, &three).await.status(), 201);
}

#[tokio::test]
async fn the_endpoint_takes_form_posts_only() {
    let f = with_par(PushedRequests::new());
    let get = Request::get(format!("{PAR}?{}", code_request()))
        .header("authorization", f.fast_basic())
        .body(String::new())
        .unwrap();
    assert_error(&f.server.par(&get).await, 405, "invalid_request");
    let json_body = Request::post(PAR)
        .header("authorization", f.fast_basic())
        .header("content-type", "application/json")
        .body("{}".to_owned())
        .unwrap();
    assert_error(&f.server.par(&json_body).await, 400, "invalid_request");
}

#[test]
fn the_builder_refuses_unusable_settings() {
    let build = |settings: PushedRequests| {
        AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(MemoryStore::new())
            .pushed_requests(settings)
            .build()
            .map(|_| ())
    };
    assert!(build(PushedRequests::new()).is_ok());
    for settings in [
        PushedRequests::new().lifetime(Duration::ZERO),
        PushedRequests::new().lifetime(Duration::from_millis(1500)),
        PushedRequests::new().lifetime(Duration::from_secs(601)),
        PushedRequests::new().per_client(0),
        PushedRequests::new().total(0),
    ] {
        assert_eq!(build(settings), Err(ConfigError::PushedRequests));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Whatever a browser sends as `request_uri`, and whatever a client pushes, the answer is
    /// an error page, a 201 or a 4xx RFC error: never a panic, a 500, or another request.
    #[test]
    fn arbitrary_request_uris_and_pushes_are_refused_cleanly(
        request_uri in "(urn:ietf:params:oauth:request_uri:)?\\PC{0,60}",
        values in proptest::collection::vec("\\PC{0,24}", 5),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let f = with_par(PushedRequests::new());
        runtime.block_on(async {
            f.pushed(&code_request()).await;
            let answer = f.by_reference(&f.fast_id, &request_uri).await;
            let Authorize::Reject(error) = answer else {
                return Err(proptest::test_runner::TestCaseError::fail("not refused"));
            };
            // An empty request_uri is no request_uri: then redirect_uri is missing.
            proptest::prop_assert!(
                [
                    ErrorCode::InvalidRequestUri,
                    ErrorCode::RequestUriNotSupported,
                    ErrorCode::InvalidRequest,
                ]
                .contains(&error.code()),
                "{}", error
            );
            let names = ["response_type", "redirect_uri", "scope", "code_challenge", "resource"];
            let mut body = url::form_urlencoded::Serializer::new(String::new());
            for (name, value) in names.iter().zip(&values) {
                body.append_pair(name, value);
            }
            let response = f.push(Some(&f.fast_basic()), &body.finish()).await;
            let status = response.status().as_u16();
            proptest::prop_assert!(status == 201 || status == 400, "{}", response.body());
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn a_self_registered_client_may_ask_to_push_every_request() {
    let f = fixture_with(|b| {
        b.pushed_requests(PushedRequests::new())
            .registration(RegistrationPolicy::new().public_clients(true))
    });
    let metadata = serde_json::json!({
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "require_pushed_authorization_requests": true,
    });
    let request = Request::post("/api/oauth/register")
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .unwrap();
    let response = f.server.register(&request).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let client = json(&response);
    assert_eq!(client["require_pushed_authorization_requests"], true);
    let id = client["client_id"].as_str().unwrap();
    let query = format!(
        "response_type=code&client_id={id}&redirect_uri={REDIRECT_ENCODED}\
         &code_challenge={CHALLENGE}&code_challenge_method=S256"
    );
    let Authorize::Redirect(refused) = f.server.authorize(&authorize_request(&query)).await else {
        panic!("a direct request is refused");
    };
    assert_eq!(redirect(&refused).query["error"], "invalid_request");
    let pushed = f.push(None, &query).await;
    assert_eq!(pushed.status(), 201, "{}", pushed.body());
    let wrong = serde_json::json!({
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "require_pushed_authorization_requests": "yes",
    });
    let request = Request::post("/api/oauth/register")
        .header("content-type", "application/json")
        .body(wrong.to_string())
        .unwrap();
    assert_error(
        &f.server.register(&request).await,
        400,
        "invalid_client_metadata",
    );
}
