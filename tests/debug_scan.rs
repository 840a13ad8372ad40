//! Nothing secret in `Debug`: every public value that holds a secret (a client secret, a
//! password, a code, a token, a session id, a CSRF token, a sealed form, the client's `state`)
//! is formatted, plainly and pretty-printed, and none of the secrets may appear.

mod common;

use common::*;
use grantor::signin::ApprovalPage;
use grantor::store::{AccessToken, AuthorizationCode, RefreshToken, Session};
use grantor::*;
use grantor::{client::*, clock::*, settings::*, signin::*};

const STATE: &str = "client-state-that-is-private";

/// Asserts that no secret appears in any of `shown`.
fn assert_hidden(secrets: &[&str], shown: &[String]) {
    for text in shown {
        for secret in secrets.iter().filter(|s| s.len() >= 8) {
            assert!(!text.contains(secret), "{secret:?} appears in {text}");
        }
    }
}

fn both(value: &impl std::fmt::Debug) -> [String; 2] {
    [format!("{value:?}"), format!("{value:#?}")]
}

#[tokio::test]
async fn no_public_value_shows_a_secret_in_debug() {
    let f = fixture();
    let mut shown = Vec::new();
    let mut secrets: Vec<String> = vec![
        ALICE_PASSWORD.into(),
        "demo-secret".into(),
        STATE.into(),
        f.fast_secret.clone(),
    ];

    // Secret newtypes and credentials.
    let creds = ClientCredentials::generate().unwrap();
    secrets.push(creds.secret.expose_secret().to_owned());
    shown.extend(both(&creds));
    shown.extend(both(&ClientSecret::new("demo-secret")));
    shown.extend(both(&Password::new(ALICE_PASSWORD)));
    shown.extend(both(
        &SecretVerifier::argon2id(&ClientSecret::new("demo-secret")).unwrap(),
    ));
    for token in [
        "an-access-token-value",
        "a-refresh-token-value",
        "a-code-value-1234",
    ] {
        secrets.push(token.into());
    }
    shown.extend(both(&AccessToken::new("an-access-token-value")));
    shown.extend(both(&RefreshToken::new("a-refresh-token-value")));
    shown.extend(both(&AuthorizationCode::new("a-code-value-1234")));

    // The sign-in flow: pages, steps, the approval, the redirect with a code.
    let flow = f.server.clone();
    let query = format!(
        "response_type=code&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&state={STATE}"
    );
    let pending = f.pending(&query).await;
    shown.extend(both(&pending));
    let step = flow.begin_sign_in(&authorize_request(&query)).await;
    let Step::SignIn(page) = &step else {
        panic!("expected the sign-in page");
    };
    secrets.extend([page.session.clone(), page.csrf.clone()]);
    shown.extend(both(&step));
    let (session, csrf) = (page.session.clone(), page.csrf.clone());
    let step = flow
        .sign_in(&session, &csrf, ALICE, &Password::new(ALICE_PASSWORD))
        .await;
    let Step::Approve(ApprovalPage {
        session: approval_session,
        csrf: approval_csrf,
        ..
    }) = &step
    else {
        panic!("expected the approval page");
    };
    secrets.extend([approval_session.clone(), approval_csrf.clone()]);
    shown.extend(both(&step));
    let (approval_session, approval_csrf) = (approval_session.clone(), approval_csrf.clone());
    let step = flow
        .answer_approval(&approval_session, &approval_csrf, Decision::Approve)
        .await;
    let Step::Respond(response) = &step else {
        panic!("expected the redirect");
    };
    let code = redirect(response).query["code"].clone();
    secrets.push(code.clone());
    shown.extend(both(&step));
    // The response itself: its Location is marked sensitive.
    shown.extend(both(response));

    // An error redirect carrying the client's state.
    let bad = format!("{query}&scope=admin");
    let outcome = f.server.authorize(&authorize_request(&bad)).await;
    assert!(matches!(outcome, Authorize::Redirect(_)));
    shown.extend(both(&outcome));

    // A session as the store keeps it.
    let session = Session::new(
        format!(r#"{{"state":"{STATE}"}}"#),
        grantor::store::SecretDigest::of(&approval_csrf),
        UnixTime::from_secs(1),
    );
    shown.extend(both(&session));

    // Servers, flows, builders, stores, settings.
    shown.extend(both(&f.server));
    shown.extend(both(&flow));
    shown.extend(both(&f.store));
    shown.extend(both(&SignInThrottle::default()));
    shown.extend(both(&AuthorizationServer::builder().issuer(ISSUER)));

    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    assert_hidden(&secrets, &shown);

    // The pairwise secret, alone and inside the OpenID Connect settings: none of its bytes
    // (238 each), in any form.
    let pairwise = PairwiseSecret::from_bytes([238; 32]);
    let openid = OpenIdConnect::default().pairwise_secret(pairwise.clone());
    for text in both(&pairwise).iter().chain(&both(&openid)) {
        assert!(!text.contains("238") && !text.contains("7u7u"), "{text}");
    }
}
