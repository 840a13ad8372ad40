//! The events seam (`AuthorizationServerBuilder::events`): what a code flow with a replay, a
//! refresh and its reuse, a revocation, sign-ins and refused client credentials report, and
//! that no event carries a secret.

mod common;

use std::sync::Arc;

use common::*;
use grantor::client::*;
use grantor::clock::Clock as _;
use grantor::events::{Event, EventKind};
use serde_json::Value;

fn setup() -> (Fixture, Arc<KeptEvents>) {
    let kept = Arc::new(KeptEvents::default());
    let f = fixture_with(|b| b.events(kept.clone()));
    (f, kept)
}

fn kinds(events: &[Event]) -> Vec<EventKind> {
    events.iter().map(|event| event.kind).collect()
}

fn json(response: &http::Response<String>) -> Value {
    assert_eq!(response.status(), 200, "{}", response.body());
    serde_json::from_str(response.body()).unwrap()
}

#[tokio::test]
async fn a_code_flow_with_a_replay_reports_the_issue_then_the_replay_of_the_same_family() {
    let (f, kept) = setup();
    let id = f.fast_id.clone();
    let basic = basic(&id, &f.fast_secret);
    let code = f.code(&id, "&scope=profile").await;
    let body = format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
    let tokens = json(&f.token(Some(&basic), &body).await);

    let issued = kept.take();
    assert_eq!(
        kinds(&issued),
        [EventKind::TokenIssued(GrantType::AuthorizationCode)]
    );
    let issued = &issued[0];
    assert_eq!(
        issued.client_id.as_ref().map(ClientId::as_str),
        Some(id.as_str())
    );
    assert_eq!(issued.user_id.as_ref(), Some(f.alice.id()));
    assert_eq!(
        issued.jti.as_ref().map(|jti| jti.as_str()),
        tokens["jti"].as_str(),
        "the event names the token the client got"
    );
    assert_eq!(issued.at, f.clock.now());
    let family = issued.family.expect("the code's family");

    // The same code again: refused, and its family revoked.
    let replay = f.token(Some(&basic), &body).await;
    assert_error(&replay, 400, "invalid_grant");
    let replayed = kept.take();
    assert_eq!(kinds(&replayed), [EventKind::CodeReplayed]);
    assert_eq!(
        replayed[0].family,
        Some(family),
        "the family the code started"
    );
    assert_eq!(
        replayed[0].client_id.as_ref().map(ClientId::as_str),
        Some(id.as_str())
    );
    assert!(
        !f.access_is_active(tokens["access_token"].as_str().unwrap())
            .await
    );

    let shown = format!("{issued:?}{replayed:?}");
    for secret in [
        code.as_str(),
        tokens["access_token"].as_str().unwrap(),
        tokens["refresh_token"].as_str().unwrap(),
        f.fast_secret.as_str(),
    ] {
        assert!(!shown.contains(secret), "an event shows a secret");
    }
}

#[tokio::test]
async fn a_refresh_its_reuse_and_a_revocation_are_reported() {
    let (f, kept) = setup();
    let basic = basic(&f.fast_id, &f.fast_secret);
    let first = f.fast_tokens().await;
    let family = kept.take()[0].family;
    let old_refresh = first["refresh_token"].as_str().unwrap().to_owned();
    let body = format!("grant_type=refresh_token&refresh_token={old_refresh}");
    let second = json(&f.token(Some(&basic), &body).await);

    let refreshed = kept.take();
    assert_eq!(kinds(&refreshed), [EventKind::TokenRefreshed]);
    assert_eq!(refreshed[0].family, family);
    assert_eq!(refreshed[0].user_id.as_ref(), Some(f.alice.id()));
    assert_eq!(
        refreshed[0].jti.as_ref().map(|jti| jti.as_str()),
        second["jti"].as_str()
    );

    // The rotated token again (no grace period by default): reuse, the family revoked.
    let reuse = f.token(Some(&basic), &body).await;
    assert_error(&reuse, 400, "invalid_grant");
    let reused = kept.take();
    assert_eq!(kinds(&reused), [EventKind::RefreshReuseDetected]);
    assert_eq!(reused[0].family, family);

    // A fresh grant's access token revoked by its client (RFC 7009).
    let third = f.fast_tokens().await;
    kept.take();
    let token = third["access_token"].as_str().unwrap();
    let response = f.revoke(Some(&basic), &format!("token={token}")).await;
    assert_eq!(response.status(), 200);
    let revoked = kept.take();
    assert_eq!(kinds(&revoked), [EventKind::TokenRevoked]);
    assert_eq!(
        revoked[0].jti.as_ref().map(|jti| jti.as_str()),
        third["jti"].as_str()
    );
    assert_eq!(revoked[0].user_id.as_ref(), Some(f.alice.id()));
}

#[tokio::test]
async fn sign_ins_throttling_and_refused_clients_are_reported_without_naming_accounts() {
    let (f, kept) = setup();
    let basic = basic(&f.fast_id, &f.fast_secret);
    let good =
        format!("grant_type=password&username=alice%40example.com&password={ALICE_PASSWORD}");
    json(&f.token(Some(&basic), &good).await);
    assert_eq!(
        kinds(&kept.take()),
        [
            EventKind::SignInSucceeded,
            EventKind::TokenIssued(GrantType::Password)
        ]
    );

    let wrong = "grant_type=password&username=alice%40example.com&password=not-it";
    let mut refusals = Vec::new();
    for _ in 0..12 {
        f.token(Some(&basic), wrong).await;
        refusals.extend(kept.take());
    }
    assert_eq!(refusals[0].kind, EventKind::SignInFailed);
    assert_eq!(
        refusals.last().map(|event| event.kind),
        Some(EventKind::AccountThrottled),
        "the account is throttled after repeated failures"
    );
    assert!(
        refusals.iter().all(|event| event.user_id.is_none()),
        "a failed sign-in never names the account"
    );
    assert!(refusals.iter().all(|event| event.kind.is_refusal()));

    let refused = f
        .token(
            Some(&common::basic(&f.fast_id, "not-the-secret")),
            "grant_type=client_credentials",
        )
        .await;
    assert_error(&refused, 401, "invalid_client");
    let events = kept.take();
    assert_eq!(kinds(&events), [EventKind::ClientAuthenticationFailed]);
    assert_eq!(
        events[0].client_id.as_ref().map(ClientId::as_str),
        Some(f.fast_id.as_str())
    );
    assert!(!format!("{events:?}").contains("not-the-secret"));
}
