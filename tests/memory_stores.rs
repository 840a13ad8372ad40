//! The in-memory seams hold their contract under concurrency: single use is single, rotation
//! happens once, revocation reaches the whole family.

use std::sync::Arc;
use std::time::Duration;

use grantor::*;

const NOW: UnixTime = UnixTime::from_secs(1_800_000_000);

fn authorization() -> Authorization {
    Authorization {
        client_id: ClientId::new("client").unwrap(),
        user: Some(User::new(UserId::new("u1"), "alice@example.com")),
        scope: Scope::parse("profile").unwrap(),
    }
}

fn code_grant() -> CodeGrant {
    CodeGrant {
        authorization: authorization(),
        redirect_uri: "https://app.example/cb".to_owned(),
        code_challenge: None,
        issued_at: NOW,
        expires_at: NOW.plus(Duration::from_secs(60)),
    }
}

fn new_tokens(family: Option<FamilyId>, refresh: bool) -> NewTokens {
    NewTokens {
        authorization: authorization(),
        family,
        issued_at: NOW,
        access_expires_at: NOW.plus(Duration::from_secs(3600)),
        refresh_expires_at: refresh.then(|| NOW.plus(Duration::from_secs(86_400))),
    }
}

fn refresh_request() -> Refresh {
    Refresh {
        access_scope: Scope::parse("profile").unwrap(),
        issued_at: NOW,
        access_expires_at: NOW.plus(Duration::from_secs(3600)),
        refresh_expires_at: NOW.plus(Duration::from_secs(86_400)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_code_redeemed_by_200_tasks_at_once_is_won_by_exactly_one() {
    let issuer = Arc::new(MemoryTokenIssuer::new());
    let code = issuer.issue_code(code_grant()).await.unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(200));
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (issuer, code, barrier) = (issuer.clone(), code.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                issuer.redeem_code(&code, NOW).await.unwrap()
            })
        })
        .collect();
    let (mut won, mut replayed) = (0, 0);
    for task in tasks {
        match task.await.unwrap() {
            CodeRedemption::Redeemed { .. } => won += 1,
            CodeRedemption::Replayed { .. } => replayed += 1,
            CodeRedemption::Invalid => panic!("a live code answered Invalid"),
        }
    }
    assert_eq!((won, replayed), (1, 199));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refresh_token_used_at_once_by_many_rotates_once() {
    for racers in [2, 100] {
        let issuer = Arc::new(MemoryTokenIssuer::new());
        let issued = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
        let refresh = issued.refresh_token.unwrap();
        let barrier = Arc::new(tokio::sync::Barrier::new(racers));
        let tasks: Vec<_> = (0..racers)
            .map(|_| {
                let (issuer, refresh, barrier) = (issuer.clone(), refresh.clone(), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    issuer
                        .rotate_refresh_token(&refresh, refresh_request())
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut rotated = 0;
        for task in tasks {
            match task.await.unwrap() {
                Rotation::Rotated(_) => rotated += 1,
                Rotation::Reused | Rotation::Invalid => {}
            }
        }
        assert_eq!(rotated, 1, "{racers} racers");
    }
}

#[tokio::test]
async fn a_replayed_code_names_the_family_to_revoke() {
    let issuer = MemoryTokenIssuer::new();
    let code = issuer.issue_code(code_grant()).await.unwrap();
    let CodeRedemption::Redeemed { family, .. } = issuer.redeem_code(&code, NOW).await.unwrap()
    else {
        panic!("first redemption wins");
    };
    let tokens = issuer
        .issue_tokens(new_tokens(Some(family), true))
        .await
        .unwrap();
    assert_eq!(tokens.family, family);
    let CodeRedemption::Replayed { family: replayed } =
        issuer.redeem_code(&code, NOW).await.unwrap()
    else {
        panic!("second redemption is a replay");
    };
    assert_eq!(replayed, family);
    issuer.revoke_family(family).await.unwrap();
    let access = issuer
        .find_access_token(&tokens.access_token, NOW)
        .await
        .unwrap();
    assert!(access.is_none());
    let refresh = tokens.refresh_token.unwrap();
    assert!(
        issuer
            .find_refresh_token(&refresh, NOW)
            .await
            .unwrap()
            .is_none()
    );
    let rotation = issuer
        .rotate_refresh_token(&refresh, refresh_request())
        .await
        .unwrap();
    assert!(matches!(rotation, Rotation::Invalid));
}

#[tokio::test]
async fn expired_codes_and_tokens_are_not_found() {
    let issuer = MemoryTokenIssuer::new();
    let code = issuer.issue_code(code_grant()).await.unwrap();
    let late = NOW.plus(Duration::from_secs(60));
    assert!(matches!(
        issuer.redeem_code(&code, late).await.unwrap(),
        CodeRedemption::Invalid
    ));
    let tokens = issuer.issue_tokens(new_tokens(None, false)).await.unwrap();
    assert!(tokens.refresh_token.is_none());
    let found = issuer
        .find_access_token(&tokens.access_token, NOW)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.jti, tokens.jti);
    assert_eq!(found.authorization, authorization());
    assert_eq!(found.issued_at, NOW);
    let expired = NOW.plus(Duration::from_secs(3600));
    let gone = issuer
        .find_access_token(&tokens.access_token, expired)
        .await
        .unwrap();
    assert!(gone.is_none());
}

#[tokio::test]
async fn purging_drops_what_has_expired_and_keeps_the_rest() {
    let issuer = MemoryTokenIssuer::new();
    let short = issuer.issue_tokens(new_tokens(None, false)).await.unwrap();
    let mut long = new_tokens(None, true);
    long.access_expires_at = NOW.plus(Duration::from_secs(7200));
    let long = issuer.issue_tokens(long).await.unwrap();
    assert_eq!(issuer.len(), (2, 1, 0));
    let later = NOW.plus(Duration::from_secs(3600));
    issuer.purge_expired(later);
    assert_eq!(issuer.len(), (1, 1, 0));
    assert!(
        issuer
            .find_access_token(&short.access_token, NOW)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        issuer
            .find_access_token(&long.access_token, later)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn tokens_and_jtis_are_unique_and_not_each_other() {
    let issuer = MemoryTokenIssuer::new();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..500 {
        let tokens = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
        let access = tokens.access_token.expose_secret().to_owned();
        assert_ne!(access, tokens.jti);
        assert!(seen.insert(access));
        assert!(seen.insert(tokens.jti));
        assert!(seen.insert(tokens.refresh_token.unwrap().expose_secret().to_owned()));
    }
}

#[tokio::test]
async fn users_authenticate_by_case_insensitive_email_and_password() {
    let users = MemoryUserStore::new();
    let bob = users
        .add("Bob@Example.com", &Password::new("bob-password-2"))
        .unwrap();
    let right = Password::new("bob-password-2");
    let found = users.authenticate("bob@example.COM", &right).await.unwrap();
    assert_eq!(found.as_ref(), Some(&bob));
    let wrong = users
        .authenticate("bob@example.com", &Password::new("nope"))
        .await
        .unwrap();
    assert_eq!(wrong, None);
    let unknown = users.authenticate("eve@example.com", &right).await.unwrap();
    assert_eq!(unknown, None);
    assert_eq!(users.find_user(bob.id()).await.unwrap(), Some(bob));
    assert!(users.add("not-an-email", &right).is_err());
    assert!(users.add("BOB@example.com", &right).is_err());
}
