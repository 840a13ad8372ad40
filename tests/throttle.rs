//! The per-account throttle under concurrency and hostile input: every guess is counted before
//! its password is hashed, so concurrent guesses cannot slip past the limit together, and a
//! username that cannot be an email address costs no hash at all.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use common::*;
use grantor::store::{Account, StoreError, UserStore};
use grantor::*;
use grantor::{settings::*, store::*};

/// The fixture's accounts, counting the password checks that reach them.
struct Counting {
    store: MemoryStore,
    checks: AtomicUsize,
}

#[async_trait]
impl UserStore for Counting {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        self.checks.fetch_add(1, Ordering::SeqCst);
        self.store.find_account(username).await
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        self.store.find_user(id).await
    }
}

fn counting_fixture(limit: u32) -> (Fixture, Arc<Counting>) {
    let f = fixture();
    let users = Arc::new(Counting {
        store: f.store.clone(),
        checks: AtomicUsize::new(0),
    });
    let server = AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(f.store.clone())
        .users(users.clone())
        .sign_in_throttle(SignInThrottle::new(limit, Duration::from_secs(600)))
        .clock(Arc::new(f.clock.clone()))
        .build()
        .unwrap();
    (Fixture { server, ..f }, users)
}

fn password_grant(username: &str, password: &str) -> String {
    format!(
        "grant_type=password&username={}&password={}",
        username.replace('@', "%40"),
        password
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_guesses_at_one_account_are_all_counted_before_any_hash() {
    let (f, users) = counting_fixture(10);
    let f = Arc::new(f);
    let basic = f.fast_basic();
    let mut guesses = Vec::new();
    for i in 0..60 {
        let f = f.clone();
        let basic = basic.clone();
        // The right password comes last, while the wrong guesses are still in flight.
        let (secret, delay) = if i == 59 {
            (BOB_PASSWORD.to_owned(), Duration::from_millis(100))
        } else {
            (format!("wrong-{i}"), Duration::ZERO)
        };
        guesses.push(tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            f.token(Some(&basic), &password_grant(BOB, &secret)).await
        }));
    }
    let (mut throttled, mut checked) = (0, 0);
    for guess in guesses {
        let response = guess.await.unwrap();
        let body = json(&response);
        match body["error_description"].as_str() {
            Some(d) if d.starts_with("too many failed sign-ins") => throttled += 1,
            _ => checked += 1,
        }
    }
    assert_eq!(checked, 10, "exactly the limit reached the password check");
    assert_eq!(throttled, 50);
    assert_eq!(users.checks.load(Ordering::SeqCst), 10);
}

#[tokio::test]
async fn a_malformed_username_is_refused_before_any_count_or_hash() {
    let (f, users) = counting_fixture(2);
    let long = format!("{}@example.com", "a".repeat(300));
    for username in ["alice", "", "@example.com", "alice@", long.as_str()] {
        let response = f
            .token(Some(&f.fast_basic()), &password_grant(username, "x"))
            .await;
        // An empty username is a missing parameter; any other that cannot be an email is
        // answered as a wrong password is (the credentials are invalid).
        let expected = if username.is_empty() {
            "invalid_request"
        } else {
            "invalid_grant"
        };
        assert_error(&response, 400, expected);
    }
    assert_eq!(users.checks.load(Ordering::SeqCst), 0);
    // Nothing was counted against Alice either.
    let response = f
        .token(
            Some(&f.fast_basic()),
            &password_grant(ALICE, ALICE_PASSWORD),
        )
        .await;
    assert_tokens(&response);
}

#[tokio::test]
async fn a_success_clears_the_account_and_failures_past_the_limit_wait_for_the_window() {
    let (f, users) = counting_fixture(3);
    let basic = f.fast_basic();
    for _ in 0..2 {
        let response = f.token(Some(&basic), &password_grant(ALICE, "wrong")).await;
        assert_error(&response, 400, "invalid_grant");
    }
    assert_tokens(
        &f.token(Some(&basic), &password_grant(ALICE, ALICE_PASSWORD))
            .await,
    );
    for _ in 0..3 {
        f.token(Some(&basic), &password_grant(ALICE, "wrong")).await;
    }
    let refused = f
        .token(Some(&basic), &password_grant(ALICE, ALICE_PASSWORD))
        .await;
    assert_error(&refused, 400, "invalid_grant");
    assert_eq!(
        users.checks.load(Ordering::SeqCst),
        6,
        "the refused one was not hashed"
    );
    f.clock.advance(Duration::from_secs(600));
    assert_tokens(
        &f.token(Some(&basic), &password_grant(ALICE, ALICE_PASSWORD))
            .await,
    );
}

#[tokio::test]
async fn failed_client_authentications_are_throttled_per_client_id() {
    let f =
        fixture_with(|b| b.client_auth_throttle(SignInThrottle::new(3, Duration::from_secs(300))));
    let body = "grant_type=password&username=alice%40example.com&password=alice-password-1";
    // demo-client authenticated once before the attack; plain-client never did.
    assert_tokens(&f.token(Some(&f.demo_basic()), body).await);
    for client in ["demo-client", "plain-client"] {
        let wrong = basic(client, "wrong-secret");
        for _ in 0..3 {
            let response = f.token(Some(&wrong), body).await;
            assert_error(&response, 401, "invalid_client");
            assert_eq!(
                json(&response)["error_description"],
                "client authentication failed"
            );
        }
        let refused = f.token(Some(&wrong), body).await;
        assert_error(&refused, 401, "invalid_client");
        assert_eq!(
            json(&refused)["error_description"],
            "too many failed authentications for this client; try again later"
        );
    }
    // A client this node verified recently keeps working; one it never did waits the window.
    assert_tokens(&f.token(Some(&f.demo_basic()), body).await);
    let plain = basic("plain-client", "plain-secret");
    assert_error(&f.token(Some(&plain), body).await, 401, "invalid_client");
    // Generated (SHA-256) secrets are not throttled: they cannot be guessed.
    assert_tokens(&f.token(Some(&f.fast_basic()), body).await);
    f.clock.advance(Duration::from_secs(300));
    assert_tokens(&f.token(Some(&plain), body).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_username_refused_unchecked_in_a_flood_is_not_counted() {
    const LIMIT: u32 = 5;
    let f = fixture();
    let mut pools = grantor::hash::HashingPools::default();
    pools.user_threads = 1;
    pools.dummy_queue_per_thread = 1;
    let server = AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(f.store.clone())
        .hashing_pools(pools)
        .sign_in_throttle(SignInThrottle::new(LIMIT, Duration::from_secs(600)))
        .clock(Arc::new(f.clock.clone()))
        .build()
        .unwrap();
    let f = Arc::new(Fixture { server, ..f });
    let basic = f.fast_basic();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Unknown usernames, each tried once, keep the one dummy place taken.
    let mut flood = Vec::new();
    for task in 0..32 {
        let (f, basic, stop) = (f.clone(), basic.clone(), stop.clone());
        flood.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let username = format!("flood-{task}-{i}@example.com");
                f.token(Some(&basic), &password_grant(&username, "x")).await;
                i += 1;
            }
        }));
    }
    let target = "nobody@example.com";
    let (mut unchecked, mut checked) = (0, 0);
    for _ in 0..2_000 {
        let response = f.token(Some(&basic), &password_grant(target, "x")).await;
        match response.status().as_u16() {
            503 => unchecked += 1,
            _ => {
                assert_error(&response, 400, "invalid_grant");
                checked += 1;
            }
        }
        if unchecked > LIMIT {
            break;
        }
    }
    stop.store(true, Ordering::SeqCst);
    for task in flood {
        task.await.unwrap();
    }
    assert!(unchecked > LIMIT, "the flood kept the dummy queue full");
    assert!(checked < LIMIT, "few of the target's attempts were hashed");
    // Only the hashed attempts counted: the account is not throttled.
    let response = f.token(Some(&basic), &password_grant(target, "x")).await;
    assert_error(&response, 400, "invalid_grant");
    let description = json(&response)["error_description"].to_string();
    assert!(!description.contains("too many"), "{description}");
}
