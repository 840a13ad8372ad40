//! The device authorization grant (RFC 8628) through the public API: the device authorization
//! endpoint, the verification page's steps in the sign-in flow, and the device's polls.

mod common;

use std::time::Duration;

use common::*;
use grantor::device::{USER_CODE_ALPHABET, UserCodeProblem};
use grantor::settings::DeviceFlow;
use grantor::*;
use grantor::{client::*, signin::*};
use http::Response;

const DEVICE: &str = "/api/oauth/device_authorization";
const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// A server with the device flow and a public TV client whose approval is required.
fn devices(settings: DeviceFlow) -> Fixture {
    let f = fixture_with(|b| b.device_flow(settings));
    f.register(
        Client::public("tv")
            .name("Living Room TV")
            .grant_types([GrantType::DeviceCode, GrantType::RefreshToken])
            .scopes("profile email")
            .approval(Approval::Required)
            .build()
            .unwrap(),
    );
    f
}

/// What the device authorization endpoint answered.
struct Started {
    device_code: String,
    user_code: String,
}

impl Fixture {
    async fn start(&self, authorization: Option<&str>, body: &str) -> Response<String> {
        self.server
            .device_authorization(&post(DEVICE, authorization, body))
            .await
    }

    async fn started(&self) -> Started {
        let response = self.start(None, "client_id=tv&scope=profile").await;
        assert_eq!(response.status(), 200, "{}", response.body());
        let body = json(&response);
        Started {
            device_code: body["device_code"].as_str().unwrap().to_owned(),
            user_code: body["user_code"].as_str().unwrap().to_owned(),
        }
    }

    async fn poll(&self, device_code: &str) -> Response<String> {
        let body = format!("grant_type={GRANT}&client_id=tv&device_code={device_code}");
        self.token(None, &body).await
    }

    /// Alice enters `user_code`, signs in and answers `decision`.
    async fn answer(
        &self,
        flow: &AuthorizationServer,
        user_code: &str,
        decision: Decision,
    ) -> Step {
        let approval = approval_page(flow, user_code).await;
        assert_eq!(approval.client_name, "Living Room TV");
        assert_eq!(approval.scope.as_str(), "profile");
        flow.answer_approval(&approval.session, &approval.csrf, decision)
            .await
    }
}

/// Alice enters `user_code` and signs in: the approval page.
async fn approval_page(
    flow: &AuthorizationServer,
    user_code: &str,
) -> grantor::signin::ApprovalPage {
    let Step::SignIn(page) = flow.enter_user_code(user_code).await else {
        panic!("the user code is live");
    };
    let password = Password::new(ALICE_PASSWORD);
    let Step::Approve(approval) = flow
        .sign_in(&page.session, &page.csrf, ALICE, &password)
        .await
    else {
        panic!("the device's approval is required");
    };
    approval
}

/// RFC 8628 §5.4: the user confirms a device's request even for a client whose registration
/// skips the approval page elsewhere; signing in alone approves nothing.
#[tokio::test]
async fn a_device_flow_always_asks_the_user_to_confirm() {
    let f = fixture_with(|b| b.device_flow(DeviceFlow::new()));
    f.register(
        Client::public("tv")
            .name("Living Room TV")
            .grant_types([GrantType::DeviceCode])
            .scopes("profile")
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
    );
    let started = f.started().await;
    let approval = approval_page(&f.server, &started.user_code).await;
    assert_eq!(approval.client_name, "Living Room TV");
    assert_error(
        &f.poll(&started.device_code).await,
        400,
        "authorization_pending",
    );
    let step = f
        .server
        .answer_approval(&approval.session, &approval.csrf, Decision::Approve)
        .await;
    assert!(
        matches!(step, Step::DeviceAnswered(Decision::Approve)),
        "{step:?}"
    );
    f.clock.advance(Duration::from_secs(5));
    assert_tokens(&f.poll(&started.device_code).await);
}

#[tokio::test]
async fn the_device_authorization_endpoint_answers_the_codes_and_where_to_enter_them() {
    let f = devices(DeviceFlow::new());
    let response = f.start(None, "client_id=tv&scope=profile").await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body = json(&response);
    assert_eq!(body["device_code"].as_str().unwrap().len(), 43);
    let user_code = body["user_code"].as_str().unwrap();
    assert_eq!(user_code.len(), 9);
    assert_eq!(&user_code[4..5], "-");
    assert!(
        user_code
            .bytes()
            .filter(|b| *b != b'-')
            .all(|b| USER_CODE_ALPHABET.contains(&b))
    );
    assert_eq!(body["verification_uri"], format!("{ISSUER}/device"));
    assert_eq!(
        body["verification_uri_complete"],
        format!("{ISSUER}/device?user_code={user_code}")
    );
    assert_eq!(body["expires_in"], 600);
    assert_eq!(body["interval"], 5);
}

#[tokio::test]
async fn a_device_gets_tokens_once_the_user_enters_the_code_signs_in_and_approves() {
    let f = devices(DeviceFlow::new());
    let started = f.started().await;
    assert_error(
        &f.poll(&started.device_code).await,
        400,
        "authorization_pending",
    );
    let flow = f.server.clone();
    let typed = started.user_code.to_lowercase().replace('-', " ");
    let step = f.answer(&flow, &typed, Decision::Approve).await;
    assert_eq!(format!("{step:?}"), "DeviceAnswered(Approve)");
    f.clock.advance(Duration::from_secs(5));
    let tokens = assert_tokens(&f.poll(&started.device_code).await);
    assert_scope(&tokens, "profile");
    assert!(
        tokens["refresh_token"].is_string(),
        "the TV is agreed refresh tokens"
    );
    let access = tokens["access_token"].as_str().unwrap();
    let grant = f
        .server
        .bearer(&bearer_request(access), None)
        .await
        .unwrap();
    let authorization = &grant.authorization;
    assert_eq!(authorization.user.as_ref().unwrap().username(), ALICE);
    assert_eq!(authorization.client_id.as_str(), "tv");
    // Redeemed: the device code is spent.
    f.clock.advance(Duration::from_secs(5));
    assert_error(&f.poll(&started.device_code).await, 400, "invalid_grant");
}

#[tokio::test]
async fn a_device_s_tokens_remember_the_user_s_sign_in_not_the_poll() {
    let f = devices(DeviceFlow::new());
    let started = f.started().await;
    let flow = f.server.clone();
    // Alice signs in with her password and approves now; the device polls later.
    let step = f.answer(&flow, &started.user_code, Decision::Approve).await;
    assert_eq!(format!("{step:?}"), "DeviceAnswered(Approve)");
    f.clock.advance(Duration::from_secs(5));
    let tokens = assert_tokens(&f.poll(&started.device_code).await);
    let access = tokens["access_token"].as_str().unwrap();
    let grant = f
        .server
        .bearer(&bearer_request(access), None)
        .await
        .unwrap();
    let signed_in = grant.authorization.authentication.expect("a sign-in");
    assert_eq!(
        signed_in.auth_time(),
        grantor::clock::UnixTime::from_secs(START)
    );
    assert_eq!(signed_in.amr(), ["pwd"]);
    // A refresh keeps it.
    f.clock.advance(Duration::from_secs(60));
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let body = format!("grant_type=refresh_token&client_id=tv&refresh_token={refresh}");
    let refreshed = assert_tokens(&f.token(None, &body).await);
    let access = refreshed["access_token"].as_str().unwrap();
    let grant = f
        .server
        .bearer(&bearer_request(access), None)
        .await
        .unwrap();
    assert_eq!(grant.authorization.authentication, Some(signed_in));
}

fn bearer_request(token: &str) -> http::Request<()> {
    http::Request::get("/api/me")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap()
}

#[tokio::test]
async fn a_denial_reaches_the_device_as_access_denied_once() {
    let f = devices(DeviceFlow::new());
    let started = f.started().await;
    let flow = f.server.clone();
    let step = f.answer(&flow, &started.user_code, Decision::Deny).await;
    assert!(
        matches!(step, Step::DeviceAnswered(Decision::Deny)),
        "{step:?}"
    );
    assert_error(&f.poll(&started.device_code).await, 400, "access_denied");
    f.clock.advance(Duration::from_secs(5));
    assert_error(&f.poll(&started.device_code).await, 400, "invalid_grant");
}

#[tokio::test]
async fn polling_faster_than_the_interval_is_slowed_down_and_the_interval_grows() {
    let f = devices(DeviceFlow::new());
    let code = f.started().await.device_code;
    assert_error(&f.poll(&code).await, 400, "authorization_pending");
    f.clock.advance(Duration::from_secs(1));
    assert_error(&f.poll(&code).await, 400, "slow_down");
    // The interval is now 10 seconds, counted from the slowed poll.
    f.clock.advance(Duration::from_secs(5));
    assert_error(&f.poll(&code).await, 400, "slow_down");
    // Now 15 seconds.
    f.clock.advance(Duration::from_secs(15));
    assert_error(&f.poll(&code).await, 400, "authorization_pending");
    f.clock.advance(Duration::from_secs(10));
    assert_error(&f.poll(&code).await, 400, "slow_down");
    f.clock.advance(Duration::from_secs(20));
    assert_error(&f.poll(&code).await, 400, "authorization_pending");
}

#[tokio::test]
async fn an_expired_device_code_answers_expired_token_then_is_forgotten() {
    let f = devices(DeviceFlow::new().lifetime(Duration::from_secs(60)));
    let started = f.started().await;
    f.clock.advance(Duration::from_secs(60));
    assert_error(&f.poll(&started.device_code).await, 400, "expired_token");
    let flow = f.server.clone();
    let step = flow.enter_user_code(&started.user_code).await;
    assert!(
        matches!(step, Step::EnterUserCode(UserCodeProblem::Unknown)),
        "{step:?}"
    );
    f.clock.advance(Duration::from_secs(60));
    assert_error(&f.poll(&started.device_code).await, 400, "invalid_grant");
}

#[tokio::test]
async fn an_answer_after_the_code_expired_is_refused() {
    let f = devices(DeviceFlow::new().lifetime(Duration::from_secs(60)));
    let started = f.started().await;
    let flow = f.server.clone();
    let approval = approval_page(&flow, &started.user_code).await;
    f.clock.advance(Duration::from_secs(61));
    let step = flow
        .answer_approval(&approval.session, &approval.csrf, Decision::Approve)
        .await;
    let Step::Error(error) = step else {
        panic!("expected an error page, got {step:?}");
    };
    assert_eq!(error.code(), ErrorCode::ExpiredToken);
    assert_error(&f.poll(&started.device_code).await, 400, "expired_token");
}

#[tokio::test]
async fn a_user_code_is_answered_once() {
    let f = devices(DeviceFlow::new());
    let started = f.started().await;
    let flow = f.server.clone();
    // Two sign-ins for one code (two tabs, or someone else who read the code).
    let Step::SignIn(first) = flow.enter_user_code(&started.user_code).await else {
        panic!()
    };
    let Step::SignIn(second) = flow.enter_user_code(&started.user_code).await else {
        panic!()
    };
    let password = Password::new(ALICE_PASSWORD);
    let Step::Approve(a) = flow
        .sign_in(&first.session, &first.csrf, ALICE, &password)
        .await
    else {
        panic!()
    };
    let Step::Approve(b) = flow
        .sign_in(&second.session, &second.csrf, ALICE, &password)
        .await
    else {
        panic!()
    };
    let step = flow
        .answer_approval(&a.session, &a.csrf, Decision::Approve)
        .await;
    assert!(
        matches!(step, Step::DeviceAnswered(Decision::Approve)),
        "{step:?}"
    );
    let step = flow
        .answer_approval(&b.session, &b.csrf, Decision::Deny)
        .await;
    assert!(matches!(step, Step::Error(_)), "{step:?}");
    assert_tokens(&f.poll(&started.device_code).await);
}

#[tokio::test]
async fn wrong_and_malformed_user_codes_are_shown_again_and_guessing_is_throttled() {
    let f = devices(DeviceFlow::new().user_code_guesses(3));
    let started = f.started().await;
    let flow = f.server.clone();
    let step = flow.enter_user_code("12345678").await;
    assert!(
        matches!(step, Step::EnterUserCode(UserCodeProblem::Malformed)),
        "{step:?}"
    );
    let wrong = if started.user_code == "BBBB-BBBB" {
        "CCCC-CCCC"
    } else {
        "BBBB-BBBB"
    };
    for _ in 0..3 {
        let step = flow.enter_user_code(wrong).await;
        assert!(
            matches!(step, Step::EnterUserCode(UserCodeProblem::Unknown)),
            "{step:?}"
        );
    }
    // Past the limit nobody's code is taken without a sign-in, the right one included.
    let step = flow.enter_user_code(&started.user_code).await;
    assert!(
        matches!(step, Step::EnterUserCode(UserCodeProblem::SignInRequired)),
        "{step:?}"
    );
    // Signed in, the right code gets through, to the approval page, signed in.
    let password = Password::new(ALICE_PASSWORD);
    let step = flow
        .enter_user_code_signed_in(&started.user_code, ALICE, &password)
        .await;
    let Step::Approve(page) = step else {
        panic!("expected the approval page, got {step:?}");
    };
    assert_eq!(page.username, ALICE);
    let step = flow
        .answer_approval(&page.session, &page.csrf, Decision::Approve)
        .await;
    assert!(
        matches!(step, Step::DeviceAnswered(Decision::Approve)),
        "{step:?}"
    );
    assert_tokens(&f.poll(&started.device_code).await);
    // A malformed code is said so before the password is checked: even a wrong one.
    let step = flow
        .enter_user_code_signed_in("12345678", ALICE, &Password::new("not-alices"))
        .await;
    assert!(
        matches!(step, Step::EnterUserCode(UserCodeProblem::Malformed)),
        "{step:?}"
    );
    // A wrong password is said so, and takes no code.
    let wrong_password = Password::new("not-alices");
    let step = flow
        .enter_user_code_signed_in(wrong, ALICE, &wrong_password)
        .await;
    assert!(
        matches!(step, Step::DeviceSignIn(SignInProblem::WrongCredentials)),
        "{step:?}"
    );
    // Each account has a budget of its own: five wrong codes, then its own wait.
    for _ in 0..DeviceFlow::USER_CODE_GUESSES_PER_ACCOUNT {
        let step = flow
            .enter_user_code_signed_in(wrong, ALICE, &password)
            .await;
        assert!(
            matches!(step, Step::EnterUserCode(UserCodeProblem::Unknown)),
            "{step:?}"
        );
    }
    let step = flow
        .enter_user_code_signed_in(wrong, ALICE, &password)
        .await;
    let Step::EnterUserCode(UserCodeProblem::Throttled(wait)) = step else {
        panic!("expected Alice's throttle, got {step:?}");
    };
    assert_eq!(wait, Duration::from_secs(60));
    assert!(
        UserCodeProblem::Throttled(wait)
            .to_string()
            .contains("1 minute")
    );
    let another = f.started().await;
    let bob = Password::new(BOB_PASSWORD);
    let step = flow
        .enter_user_code_signed_in(&another.user_code, BOB, &bob)
        .await;
    assert!(matches!(step, Step::Approve(_)), "{step:?}");
    // A minute later codes are taken without a sign-in again.
    f.clock.advance(wait);
    assert!(matches!(
        flow.enter_user_code(&another.user_code).await,
        Step::SignIn(_)
    ));
}

#[tokio::test]
async fn a_device_code_serves_only_the_client_it_was_issued_to() {
    let f = devices(DeviceFlow::new());
    f.register(
        Client::public("other-tv")
            .grant_types([GrantType::DeviceCode])
            .scopes("profile")
            .build()
            .unwrap(),
    );
    let started = f.started().await;
    let body = format!(
        "grant_type={GRANT}&client_id=other-tv&device_code={}",
        started.device_code
    );
    assert_error(&f.token(None, &body).await, 400, "invalid_grant");
    assert_error(&f.poll("not-a-device-code").await, 400, "invalid_grant");
    let missing = format!("grant_type={GRANT}&client_id=tv");
    assert_error(&f.token(None, &missing).await, 400, "invalid_request");
}

#[tokio::test]
async fn only_clients_agreed_the_grant_start_device_flows() {
    let f = devices(DeviceFlow::new());
    let response = f.start(None, "client_id=public-client").await;
    assert_error(&response, 400, "unauthorized_client");
    assert_error(
        &f.start(None, "client_id=nobody").await,
        401,
        "invalid_client",
    );
    assert_error(&f.start(None, "").await, 401, "invalid_client");
    let scope = f.start(None, "client_id=tv&scope=admin").await;
    assert_error(&scope, 400, "invalid_scope");
    let target = f
        .start(
            None,
            "client_id=tv&resource=https%3A%2F%2Funknown.example%2F",
        )
        .await;
    assert_error(&target, 400, "invalid_target");
    // A confidential client agreed the grant authenticates with HTTP Basic.
    f.register(
        Client::confidential(
            "console",
            SecretVerifier::digest(&ClientSecret::new("a-long-console-secret-of-32-bytes"))
                .unwrap(),
        )
        .grant_types([GrantType::DeviceCode])
        .scopes("profile")
        .build()
        .unwrap(),
    );
    let basic = basic("console", "a-long-console-secret-of-32-bytes");
    assert_eq!(f.start(Some(&basic), "scope=profile").await.status(), 200);
    let wrong = common::basic("console", "wrong");
    assert_error(&f.start(Some(&wrong), "").await, 401, "invalid_client");
}

#[tokio::test]
async fn a_client_may_start_only_so_many_flows_per_lifetime() {
    let f = devices(DeviceFlow::new().per_client(2));
    f.started().await;
    f.started().await;
    let response = f.start(None, "client_id=tv").await;
    assert_error(&response, 429, "temporarily_unavailable");
    f.clock.advance(Duration::from_secs(600));
    f.started().await;
}

#[tokio::test]
async fn the_metadata_lists_the_endpoint_and_the_grant_urn() {
    let f = devices(DeviceFlow::new());
    let metadata = json(&f.server.metadata());
    assert_eq!(
        metadata["device_authorization_endpoint"],
        format!("{ISSUER}{DEVICE}")
    );
    let grants = metadata["grant_types_supported"].as_array().unwrap();
    assert!(grants.iter().any(|g| g == GRANT), "{grants:?}");
    let plain = json(&fixture().server.metadata());
    assert!(plain.get("device_authorization_endpoint").is_none());
    let grants = plain["grant_types_supported"].as_array().unwrap();
    assert!(!grants.iter().any(|g| g == GRANT));
}

#[tokio::test]
async fn without_the_device_flow_its_endpoint_and_grant_are_absent() {
    let f = fixture();
    assert_error(
        &f.start(None, "client_id=public-client").await,
        404,
        "invalid_request",
    );
    let body = format!("grant_type={GRANT}&device_code=x");
    assert_error(
        &f.token(Some(&f.fast_basic()), &body).await,
        400,
        "unauthorized_client",
    );
    let flow = f.server.clone();
    assert!(matches!(
        flow.enter_user_code("BCDF-GHJK").await,
        Step::Error(_)
    ));
}

#[test]
fn the_builder_refuses_unusable_settings() {
    let build = |settings: DeviceFlow| {
        AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(MemoryStore::new())
            .device_flow(settings)
            .build()
            .map(|_| ())
    };
    assert!(build(DeviceFlow::new()).is_ok());
    assert!(build(DeviceFlow::new().verification_uri("https://tv.example/link")).is_ok());
    for settings in [
        DeviceFlow::new().lifetime(Duration::ZERO),
        DeviceFlow::new().lifetime(Duration::from_secs(1801)),
        DeviceFlow::new().interval(Duration::from_millis(2500)),
        DeviceFlow::new().interval(Duration::from_secs(61)),
        DeviceFlow::new().verification_uri("device"),
        DeviceFlow::new().verification_uri("javascript:alert(1)"),
        DeviceFlow::new().per_client(0),
        DeviceFlow::new().user_code_guesses(0),
    ] {
        assert!(
            matches!(build(settings.clone()), Err(ConfigError::DeviceFlow(_))),
            "{settings:?}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Whatever is typed as a user code or polled as a device code, the answer is the code
    /// form again or a 400 RFC error: never a panic, a 500, or someone else's flow.
    #[test]
    fn arbitrary_user_and_device_codes_are_refused_cleanly(
        typed in "\\PC{0,40}",
        device_code in "\\PC{0,60}",
        scope in "\\PC{0,20}",
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let f = devices(DeviceFlow::new());
        let flow = f.server.clone();
        runtime.block_on(async {
            f.started().await;
            let step = flow.enter_user_code(&typed).await;
            proptest::prop_assert!(matches!(step, Step::EnterUserCode(_)), "{:?}", step);
            let body = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("grant_type", GRANT)
                .append_pair("client_id", "tv")
                .append_pair("device_code", &device_code)
                .finish();
            let response = f.token(None, &body).await;
            proptest::prop_assert_eq!(response.status(), 400, "{}", response.body());
            let error = json(&response)["error"].as_str().unwrap().to_owned();
            proptest::prop_assert!(
                ["invalid_grant", "invalid_request"].contains(&error.as_str()),
                "{}", error
            );
            let start = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("client_id", "tv")
                .append_pair("scope", &scope)
                .finish();
            let response = f.start(None, &start).await;
            proptest::prop_assert!(
                [200, 400].contains(&response.status().as_u16()),
                "{}", response.body()
            );
            Ok(())
        })?;
    }
}
