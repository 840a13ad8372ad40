//! The sign-in flow a host's pages drive: sessions, CSRF, throttling, and the redirect at the
//! end. A wrong password never reaches the client.

mod common;

use std::time::Duration;

use common::*;
use grantor::signin::{SignInPage, SignInProblem};
use grantor::*;
use grantor::{settings::*, signin::*};

fn query(client: &str) -> String {
    format!(
        "response_type=code&client_id={client}&redirect_uri={REDIRECT_ENCODED}&state=st&scope=email"
    )
}

async fn start(flow: &AuthorizationServer, client: &str) -> SignInPage {
    match flow.begin_sign_in(&authorize_request(&query(client))).await {
        Step::SignIn(page) => page,
        other => panic!("expected the sign-in page, got {other:?}"),
    }
}

fn password(value: &str) -> Password {
    Password::new(value)
}

#[tokio::test]
async fn a_valid_request_seals_itself_into_the_form_and_opens_no_session() {
    let f = fixture();
    let flow = f.server.clone();
    let page = start(&flow, "demo-client").await;
    assert_eq!(page.client_name, "Demo Client");
    assert_eq!(page.scope.as_str(), "email");
    assert_eq!(page.session.len(), 22);
    assert!(
        page.csrf.len() > 100,
        "the sealed request: {}",
        page.csrf.len()
    );
    // Sealed: neither the client nor anything else of the request reads through.
    assert!(!page.csrf.contains("demo-client") && !page.csrf.contains("redirect_uri"));
    assert!(page.problem.is_none());
    let other = start(&flow, "demo-client").await;
    assert_ne!(other.session, page.session);
    // Nothing was kept: there is no session to answer from before the sign-in.
    let step = flow
        .answer_approval(&page.session, &page.csrf, Decision::Approve)
        .await;
    assert!(matches!(step, Step::Error(_)), "{step:?}");
}

#[tokio::test]
async fn signing_in_issues_a_new_session_id_and_csrf_token_and_the_planted_ones_die() {
    let f = fixture();
    let flow = f.server.clone();
    // An attacker starts a sign-in and plants its cookie and form in the victim's browser.
    let planted = start(&flow, "demo-client").await;
    let step = flow
        .sign_in(
            &planted.session,
            &planted.csrf,
            ALICE,
            &password(ALICE_PASSWORD),
        )
        .await;
    let Step::Approve(approval) = step else {
        panic!("expected the approval page, got {step:?}");
    };
    assert_ne!(approval.session, planted.session);
    assert_ne!(approval.csrf, planted.csrf);
    assert_eq!(approval.session.len(), 22);
    // What the attacker knows answers nothing: not the approval, not another sign-in.
    let step = flow
        .answer_approval(&planted.session, &planted.csrf, Decision::Approve)
        .await;
    assert!(matches!(step, Step::Error(_)), "{step:?}");
    let step = flow
        .answer_approval(&planted.session, &approval.csrf, Decision::Approve)
        .await;
    assert!(matches!(step, Step::Error(_)), "{step:?}");
    let step = flow
        .sign_in(
            &planted.session,
            &planted.csrf,
            ALICE,
            &password(ALICE_PASSWORD),
        )
        .await;
    assert!(matches!(step, Step::Error(_)), "{step:?}");
    // The new ones carry the user's decision.
    let step = flow
        .answer_approval(&approval.session, &approval.csrf, Decision::Approve)
        .await;
    let Step::Respond(response) = step else {
        panic!("expected the redirect, got {step:?}");
    };
    assert!(redirect(&response).query.contains_key("code"));
}

#[tokio::test]
async fn a_wrong_password_shows_the_page_again_and_never_redirects() {
    let f = fixture();
    let flow = f.server.clone();
    let page = start(&flow, "plain-client").await;
    let step = flow
        .sign_in(&page.session, &page.csrf, ALICE, &password("wrong"))
        .await;
    let Step::SignIn(again) = step else {
        panic!("expected the sign-in page again, got {step:?}");
    };
    assert_eq!(again.problem, Some(SignInProblem::WrongCredentials));
    assert_eq!(again.session, page.session);
    // The session survives the mistake.
    let step = flow
        .sign_in(&page.session, &page.csrf, ALICE, &password(ALICE_PASSWORD))
        .await;
    assert!(matches!(step, Step::Respond(_)), "{step:?}");
}

#[tokio::test]
async fn a_client_needing_approval_gets_the_approval_page_then_the_code() {
    let f = fixture();
    let flow = f.server.clone();
    let page = start(&flow, "demo-client").await;
    let step = flow
        .sign_in(&page.session, &page.csrf, ALICE, &password(ALICE_PASSWORD))
        .await;
    let Step::Approve(approval) = step else {
        panic!("expected the approval page, got {step:?}");
    };
    assert_eq!(approval.username, ALICE);
    assert_eq!(approval.client_name, "Demo Client");
    assert_eq!(approval.scope.as_str(), "email");
    let Step::Respond(response) = flow
        .answer_approval(&approval.session, &approval.csrf, Decision::Approve)
        .await
    else {
        panic!("expected the redirect");
    };
    let r = redirect(&response);
    assert_eq!(r.base, REDIRECT);
    assert_eq!(r.query["state"], "st");
    let body = format!(
        "grant_type=authorization_code&code={}&redirect_uri={REDIRECT_ENCODED}",
        r.query["code"]
    );
    let tokens = assert_tokens(&f.token(Some(&f.demo_basic()), &body).await);
    assert_eq!(tokens["scope"], "email");
    // The session is spent.
    let again = flow
        .answer_approval(&approval.session, &approval.csrf, Decision::Approve)
        .await;
    assert!(matches!(again, Step::Error(_)), "{again:?}");
}

#[tokio::test]
async fn deny_redirects_access_denied() {
    let f = fixture();
    let flow = f.server.clone();
    let page = start(&flow, "demo-client").await;
    let Step::Approve(approval) = flow
        .sign_in(&page.session, &page.csrf, BOB, &password(BOB_PASSWORD))
        .await
    else {
        panic!("expected the approval page");
    };
    let Step::Respond(response) = flow
        .answer_approval(&approval.session, &approval.csrf, Decision::Deny)
        .await
    else {
        panic!("expected the redirect");
    };
    assert_eq!(redirect(&response).query["error"], "access_denied");
}

#[tokio::test]
async fn forms_need_the_right_csrf_token_and_a_live_session() {
    let f = fixture();
    let flow = f.server.clone();
    let page = start(&flow, "demo-client").await;
    let right = password(ALICE_PASSWORD);
    for (session, csrf) in [
        (page.session.as_str(), "forged"),
        (page.session.as_str(), ""),
        ("unknown", page.csrf.as_str()),
        (page.csrf.as_str(), page.session.as_str()),
    ] {
        let step = flow.sign_in(session, csrf, ALICE, &right).await;
        let Step::Error(error) = step else {
            panic!("expected an error page, got {step:?}");
        };
        assert_eq!(error.code(), ErrorCode::InvalidRequest);
        assert_eq!(error.status(), 400);
    }
    let early = flow
        .answer_approval(&page.session, &page.csrf, Decision::Approve)
        .await;
    assert!(
        matches!(early, Step::Error(_)),
        "approval before sign-in: {early:?}"
    );
    f.clock.advance(Duration::from_secs(600));
    let late = flow.sign_in(&page.session, &page.csrf, ALICE, &right).await;
    assert!(matches!(late, Step::Error(_)), "expired session: {late:?}");
}

#[tokio::test]
async fn invalid_requests_never_open_a_session() {
    let f = fixture();
    let flow = f.server.clone();
    let unknown = flow
        .begin_sign_in(&authorize_request(&query("nobody")))
        .await;
    assert!(matches!(unknown, Step::Error(_)), "{unknown:?}");
    let admin = format!("{}%20admin", query("demo-client"));
    let Step::Respond(response) = flow.begin_sign_in(&authorize_request(&admin)).await else {
        panic!("expected an error redirect");
    };
    assert_eq!(redirect(&response).query["error"], "invalid_scope");
}

#[tokio::test]
async fn repeated_wrong_passwords_throttle_the_account_at_the_page_and_the_token_endpoint() {
    let f = fixture_with(|b| b.sign_in_throttle(SignInThrottle::new(3, Duration::from_secs(300))));
    let flow = f.server.clone();
    let page = start(&flow, "plain-client").await;
    for _ in 0..3 {
        let step = flow
            .sign_in(&page.session, &page.csrf, BOB, &password("guess"))
            .await;
        assert!(matches!(
            step,
            Step::SignIn(SignInPage {
                problem: Some(SignInProblem::WrongCredentials),
                ..
            })
        ));
    }
    // Now even the right password is refused without being checked.
    let step = flow
        .sign_in(&page.session, &page.csrf, BOB, &password(BOB_PASSWORD))
        .await;
    let Step::SignIn(SignInPage {
        problem: Some(SignInProblem::Throttled(wait)),
        ..
    }) = step
    else {
        panic!("expected the throttled page, got {step:?}");
    };
    assert_eq!(wait, Duration::from_secs(300));
    let grant = format!("grant_type=password&username={BOB}&password={BOB_PASSWORD}");
    let response = f.token(Some(&f.demo_basic()), &grant).await;
    assert_error(&response, 400, "invalid_grant");
    assert!(
        json(&response)["error_description"]
            .as_str()
            .unwrap()
            .contains("too many")
    );
    // Other accounts are unaffected; the account recovers once the window passes.
    let alice = format!("grant_type=password&username={ALICE}&password={ALICE_PASSWORD}");
    assert_tokens(&f.token(Some(&f.demo_basic()), &alice).await);
    f.clock.advance(Duration::from_secs(300));
    assert_tokens(&f.token(Some(&f.demo_basic()), &grant).await);
}

#[tokio::test]
async fn pages_and_steps_never_show_the_session_id_csrf_token_or_code_in_debug() {
    let f = fixture();
    let flow = f.server.clone();
    let page = start(&flow, "plain-client").await;
    let shown = format!("{page:?} {:?}", Step::SignIn(page.clone()));
    assert!(
        !shown.contains(&page.session) && !shown.contains(&page.csrf),
        "{shown}"
    );
    assert!(shown.contains("SignInPage"), "{shown}");
    let step = flow
        .sign_in(&page.session, &page.csrf, ALICE, &password(ALICE_PASSWORD))
        .await;
    let Step::Respond(response) = &step else {
        panic!("expected the redirect, got {step:?}");
    };
    let code = redirect(response).query["code"].clone();
    let shown = format!("{step:?}");
    assert!(!shown.contains(&code), "{shown}");
    assert!(shown.contains("303"), "{shown}");
}
