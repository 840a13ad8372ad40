//! acr and amr through the browser's pages ([`Site`]): a request that asks for a class only the
//! second factor reaches gets the code page after the password; the code is throttled and
//! single-use; a session signed in with the password alone is asked for the code only; an
//! essential class out of reach is refused; and a host's own sign-in steps finish a pending
//! authorization through the interaction API with the same guarantees.

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use common::browser::Browser;
use common::*;
use grantor::clock::{Clock as _, UnixTime};
use grantor::settings::{AcrLevels, OpenIdConnect};
use grantor::signin::{Authentication, Site, Step};
use grantor::store::{SecondFactor, StoreError, User};
use http::{Request, Response};

const PASSWORD_ACR: &str = "urn:grantor:acr:password";
const MFA: &str = "urn:grantor:acr:mfa";
const MFA_ENCODED: &str = "urn%3Agrantor%3Aacr%3Amfa";

/// Alice's authenticator shows `123456` during the current 30-second step, `654321` during the
/// one before; Bob has none.
struct Authenticator;

#[async_trait]
impl SecondFactor for Authenticator {
    async fn enrolled(&self, user: &User) -> Result<bool, StoreError> {
        Ok(user.username() == ALICE)
    }

    async fn verify(
        &self,
        user: &User,
        code: &str,
        now: UnixTime,
    ) -> Result<Option<u64>, StoreError> {
        let step = now.as_secs() / 30;
        Ok(match (user.username() == ALICE, code) {
            (true, "123456") => Some(step),
            (true, "654321") => Some(step - 1),
            _ => None,
        })
    }
}

fn levels() -> AcrLevels {
    AcrLevels::new([PASSWORD_ACR, MFA])
        .password(PASSWORD_ACR)
        .second_factor(MFA)
}

fn mfa_fixture() -> Fixture {
    fixture_with(|b| {
        b.openid_connect(OpenIdConnect::default())
            .acr_levels(levels())
            .second_factor(Arc::new(Authenticator))
    })
}

fn query(f: &Fixture, extra: &str) -> String {
    format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}&scope=openid%20email\
         &state=st&nonce=n-1{extra}",
        f.fast_id
    )
}

/// The ID token the redirect's code is exchanged for, its claims decoded (the signature is
/// the OpenID tests' business).
async fn id_token_claims(f: &Fixture, redirected: &Response<String>) -> serde_json::Value {
    assert_eq!(redirected.status(), 303, "{}", redirected.body());
    let code = redirect(redirected).query["code"].clone();
    let body = format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), &body).await);
    let id_token = tokens["id_token"].as_str().expect("an ID token");
    let payload = id_token.split('.').nth(1).unwrap();
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&payload).unwrap()
}

#[tokio::test]
async fn asked_for_mfa_alice_enters_her_code_after_the_password() {
    let f = mfa_fixture();
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&query(&f, &format!("&acr_values={MFA_ENCODED}")))
        .await;
    let code_page = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    assert_eq!(code_page.status(), 200, "{}", code_page.body());
    assert_eq!(code_page.headers()["cache-control"], "no-store");
    assert!(
        code_page.headers().contains_key("set-cookie"),
        "a new form, a new cookie"
    );
    let wrong = browser.enter_code(&code_page, "000000").await;
    assert_eq!(wrong.status(), 400);
    assert!(wrong.body().contains("not right"), "{}", wrong.body());
    let redirected = browser.enter_code(&wrong, "123456").await;
    let claims = id_token_claims(&f, &redirected).await;
    assert_eq!(claims["acr"], MFA);
    assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp"]));
    assert_eq!(claims["auth_time"], f.clock.now().as_secs());
}

#[tokio::test]
async fn without_acr_values_the_password_is_enough() {
    let f = mfa_fixture();
    let mut browser = Browser::new(&f);
    let page = browser.authorize(&query(&f, "")).await;
    let redirected = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    let claims = id_token_claims(&f, &redirected).await;
    assert_eq!(claims["acr"], PASSWORD_ACR);
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]));
}

#[tokio::test]
async fn bob_without_a_factor_gets_the_password_class_or_access_denied_when_essential() {
    let f = mfa_fixture();
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&query(&f, &format!("&acr_values={MFA_ENCODED}")))
        .await;
    let redirected = browser.sign_in(&page, (BOB, BOB_PASSWORD)).await;
    let claims = id_token_claims(&f, &redirected).await;
    assert_eq!(
        claims["acr"], PASSWORD_ACR,
        "voluntary: what the sign-in reached"
    );

    let essential = format!(r#"{{"id_token":{{"acr":{{"essential":true,"value":"{MFA}"}}}}}}"#);
    let essential: String = url::form_urlencoded::byte_serialize(essential.as_bytes()).collect();
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&query(&f, &format!("&claims={essential}")))
        .await;
    let refused = browser.sign_in(&page, (BOB, BOB_PASSWORD)).await;
    let query = redirect(&refused).query;
    assert_eq!(query["error"], "access_denied");
    assert_eq!(query["state"], "st");
}

#[tokio::test]
async fn a_code_once_accepted_is_never_accepted_again() {
    let f = mfa_fixture();
    for attempt in 0..2 {
        let mut browser = Browser::new(&f);
        let page = browser
            .authorize(&query(&f, &format!("&acr_values={MFA_ENCODED}")))
            .await;
        let code_page = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
        let answer = browser.enter_code(&code_page, "123456").await;
        match attempt {
            0 => assert_eq!(answer.status(), 303, "{}", answer.body()),
            _ => assert!(
                answer.body().contains("not right"),
                "replayed: {}",
                answer.body()
            ),
        }
    }
}

#[tokio::test]
async fn wrong_codes_are_throttled_per_account() {
    let f = mfa_fixture();
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&query(&f, &format!("&acr_values={MFA_ENCODED}")))
        .await;
    let mut page = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    for _ in 0..5 {
        page = browser.enter_code(&page, "000000").await;
        assert!(page.body().contains("not right"), "{}", page.body());
    }
    let throttled = browser.enter_code(&page, "123456").await;
    assert!(
        throttled.body().contains("Too many wrong codes"),
        "{}",
        throttled.body()
    );
    // Another browser, the same account: throttled too, until the window passes.
    f.clock.advance(std::time::Duration::from_secs(601));
    let accepted = browser.enter_code(&throttled, "654321").await;
    assert!(
        accepted.body().contains("expired") || accepted.status() == 303,
        "{}",
        accepted.body()
    );
}

#[tokio::test]
async fn a_session_signed_in_with_the_password_is_asked_for_the_code_alone() {
    let f = mfa_fixture();
    let mut browser = Browser::new(&f);
    let page = browser.authorize(&query(&f, "")).await;
    let redirected = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    assert_eq!(redirected.status(), 303);
    f.clock.advance(std::time::Duration::from_secs(60));
    let code_page = browser
        .authorize(&query(&f, &format!("&acr_values={MFA_ENCODED}")))
        .await;
    assert!(
        !code_page.body().contains("name=\"password\""),
        "{}",
        code_page.body()
    );
    let redirected = browser.enter_code(&code_page, "123456").await;
    let claims = id_token_claims(&f, &redirected).await;
    assert_eq!(claims["acr"], MFA);
    assert_eq!(claims["auth_time"], f.clock.now().as_secs());
    // The stepped-up session answers the next request for mfa without a step.
    let again = browser
        .authorize(&query(&f, &format!("&acr_values={MFA_ENCODED}")))
        .await;
    assert_eq!(again.status(), 303, "{}", again.body());
    // prompt=none, where the step would be needed: interaction_required.
    let mut other = Browser::new(&f);
    let page = other.authorize(&query(&f, "")).await;
    other.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    let none = other
        .authorize(&query(
            &f,
            &format!("&acr_values={MFA_ENCODED}&prompt=none"),
        ))
        .await;
    assert_eq!(redirect(&none).query["error"], "interaction_required");
}

#[tokio::test]
async fn discovery_lists_the_classes() {
    let f = mfa_fixture();
    let metadata = json(&f.server.metadata());
    assert_eq!(
        metadata["acr_values_supported"],
        serde_json::json!([PASSWORD_ACR, MFA])
    );
}

async fn sign_in_page(f: &Fixture, extra: &str) -> grantor::signin::SignInPage {
    let request = authorize_request(&query(f, extra));
    match f.server.begin_sign_in(&request).await {
        Step::SignIn(page) => page,
        other => panic!("expected the sign-in page, got {other:?}"),
    }
}

#[tokio::test]
async fn a_hosts_own_steps_finish_the_sign_in_once_with_its_cookie() {
    let f = mfa_fixture();
    let page = sign_in_page(&f, &format!("&acr_values={MFA_ENCODED}")).await;
    let passkey = || {
        Authentication::new(f.alice.id().clone())
            .methods(["hwk", "user"])
            .acr(MFA)
    };
    // Another browser's cookie opens nothing.
    let step = f
        .server
        .finish_sign_in("another-cookie", &page.csrf, passkey())
        .await;
    assert!(matches!(step, Step::Error(_)), "{step:?}");
    let step = f
        .server
        .finish_sign_in(&page.session, &page.csrf, passkey())
        .await;
    let Step::Respond(redirected) = step else {
        panic!("expected the redirect, got {step:?}");
    };
    let claims = id_token_claims(&f, &redirected).await;
    assert_eq!(claims["acr"], MFA);
    assert_eq!(claims["amr"], serde_json::json!(["hwk", "user"]));
    assert_eq!(claims["sub"], f.alice.id().as_str());
    // The form served once.
    let again = f
        .server
        .finish_sign_in(&page.session, &page.csrf, passkey())
        .await;
    assert!(matches!(again, Step::Error(_)), "{again:?}");
}

#[tokio::test]
async fn a_hosts_sign_in_short_of_an_essential_class_is_refused_and_nonsense_is_an_error() {
    let f = mfa_fixture();
    let essential = format!(r#"{{"id_token":{{"acr":{{"essential":true,"values":["{MFA}"]}}}}}}"#);
    let essential: String = url::form_urlencoded::byte_serialize(essential.as_bytes()).collect();
    let page = sign_in_page(&f, &format!("&claims={essential}")).await;
    let password_only = Authentication::new(f.alice.id().clone())
        .methods(["pwd"])
        .acr(PASSWORD_ACR);
    let step = f
        .server
        .finish_sign_in(&page.session, &page.csrf, password_only)
        .await;
    let Step::Respond(refused) = step else {
        panic!("expected the redirect, got {step:?}");
    };
    assert_eq!(redirect(&refused).query["error"], "access_denied");

    let page = sign_in_page(&f, "").await;
    let unknown_class = Authentication::new(f.alice.id().clone()).acr("urn:other:acr");
    let step = f
        .server
        .finish_sign_in(&page.session, &page.csrf, unknown_class)
        .await;
    assert!(matches!(step, Step::Error(_)), "{step:?}");
    let nobody = Authentication::new(grantor::store::UserId::new("nobody"));
    let step = f
        .server
        .finish_sign_in(&page.session, &page.csrf, nobody)
        .await;
    assert!(matches!(step, Step::Error(_)), "{step:?}");
}

#[tokio::test]
async fn malformed_acr_requests_are_invalid_request() {
    let f = mfa_fixture();
    let mut browser = Browser::new(&f);
    let too_many = ["a"; 9].join("%20");
    for extra in [
        format!("&acr_values={too_many}"),
        "&claims=not-json".to_owned(),
    ] {
        let answer = browser.authorize(&query(&f, &extra)).await;
        assert_eq!(
            redirect(&answer).query["error"],
            "invalid_request",
            "{extra}"
        );
    }
}

#[tokio::test]
async fn a_host_that_signs_people_in_itself_serves_none_of_grantors_forms() {
    let f = mfa_fixture();
    let site = Site::new(&f.server).host_sign_in("/my/login");
    assert_eq!(site.sign_in_at(), "/my/login");
    assert!(!site.serves_own_forms());
    let page = sign_in_page(&f, "").await;
    let body = format!(
        "csrf={}&username=alice%40example.com&password={ALICE_PASSWORD}",
        page.csrf
    );
    for path in ["/signin", "/signin/second-factor"] {
        let request = Request::post(path)
            .header("cookie", format!("grantor-signin={}", page.session))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.clone().into_bytes())
            .unwrap();
        let answer = match path {
            "/signin" => site.sign_in(&request).await,
            _ => site.second_factor(&request).await,
        };
        assert_eq!(answer.status(), 404, "{path}");
    }
    // The form was not spent: the host's own steps still finish it.
    let alice = Authentication::new(f.alice.id().clone()).methods(["pwd"]);
    let step = f
        .server
        .finish_sign_in(&page.session, &page.csrf, alice)
        .await;
    assert!(matches!(step, Step::Respond(_)), "{step:?}");
}

#[tokio::test]
async fn a_hosts_refused_attempt_shows_the_same_form_again_with_the_problem() {
    let f = mfa_fixture();
    let page = sign_in_page(&f, "&login_hint=alice%40example.com").await;
    let wrong = f
        .server
        .verify_password(ALICE, &grantor::Password::new("not her password"))
        .await
        .unwrap()
        .unwrap_err();
    let step = f
        .server
        .sign_in_again(&page.session, &page.csrf, wrong)
        .await;
    let Step::SignIn(again) = step else {
        panic!("expected the sign-in page, got {step:?}");
    };
    assert_eq!(again.csrf, page.csrf);
    assert_eq!(again.client_name, page.client_name);
    assert_eq!(again.login_hint.as_deref(), Some(ALICE));
    assert_eq!(
        again.problem,
        Some(grantor::signin::SignInProblem::WrongCredentials)
    );
    let stale = f
        .server
        .sign_in_again("another-cookie", &page.csrf, wrong)
        .await;
    assert!(matches!(stale, Step::Error(_)), "{stale:?}");
}

#[tokio::test]
async fn a_device_user_code_finishes_through_the_hosts_own_steps_too() {
    let f = fixture_with(|b| {
        b.acr_levels(levels())
            .device_flow(grantor::settings::DeviceFlow::new())
    });
    f.register(
        grantor::client::Client::public("tv")
            .grant_types([grantor::client::GrantType::DeviceCode])
            .scopes("profile")
            .build()
            .unwrap(),
    );
    let started = f
        .server
        .device_authorization(&post(
            "/api/oauth/device_authorization",
            None,
            "client_id=tv&scope=profile",
        ))
        .await;
    let user_code = json(&started)["user_code"].as_str().unwrap().to_owned();
    let Step::SignIn(page) = f.server.enter_user_code(&user_code).await else {
        panic!("expected the sign-in page");
    };
    let alice = Authentication::new(f.alice.id().clone())
        .methods(["pwd", "hwk"])
        .acr(MFA);
    let step = f
        .server
        .finish_sign_in(&page.session, &page.csrf, alice)
        .await;
    let Step::Approve(approval) = step else {
        panic!("a device flow is always confirmed: {step:?}");
    };
    let step = f
        .server
        .answer_approval(
            &approval.session,
            &approval.csrf,
            grantor::Decision::Approve,
        )
        .await;
    assert!(
        matches!(step, Step::DeviceAnswered(grantor::Decision::Approve)),
        "{step:?}"
    );
}

#[test]
fn a_second_factor_no_class_reaches_and_a_class_out_of_the_list_are_refused_at_build() {
    let built = grantor::AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(grantor::MemoryStore::new())
        .second_factor(Arc::new(Authenticator))
        .build();
    assert_eq!(
        built.unwrap_err(),
        grantor::ConfigError::SecondFactorUnreachable
    );
    let built = grantor::AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(grantor::MemoryStore::new())
        .acr_levels(AcrLevels::new([PASSWORD_ACR]).second_factor(MFA))
        .build();
    assert_eq!(built.unwrap_err(), grantor::ConfigError::AcrLevels);
}
