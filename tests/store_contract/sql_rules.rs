//! Rules about what the SQL stores keep at rest and how they fail, beyond the contract.

use std::time::{Duration, Instant};

use grantor::client::{Client, ClientCredentials, GrantType};
use grantor::store::{
    Account, AdminError, CodeRedemption, Family, Rotation, SecretDigest, Session, StoreErrorKind,
};
use grantor::{ErrorCode, OAuthError, Password};

use super::fixtures::{
    NOW, SqlStore, TABLES, at, authorization, code_grant, family_id, secret, tokens, user_session,
};

fn client() -> (Client, String) {
    let creds = ClientCredentials::generate().unwrap();
    let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
        .grant_types([GrantType::ClientCredentials])
        .build()
        .unwrap();
    (client, creds.secret.expose_secret().to_owned())
}

pub async fn only_digests_and_verifiers_are_at_rest<S: SqlStore>(store: &S) {
    let mut secrets: Vec<(String, SecretDigest)> = Vec::new();
    let code = secret("code");
    let family = family_id();
    let grant = code_grant();
    store.insert_code(&code.1, family, grant).await.unwrap();
    let redeemed = store.redeem_code(&code.1, NOW).await.unwrap();
    assert!(matches!(redeemed, CodeRedemption::Redeemed { .. }));
    secrets.push(code);
    let (first, first_secrets) = tokens(Family::Existing(family));
    store.insert_tokens(first).await.unwrap();
    let (second, second_secrets) = tokens(Family::Existing(family));
    let rotation = store.rotate_refresh_token(&first_secrets[1].1, second, None);
    assert_eq!(rotation.await.unwrap(), Rotation::Rotated);
    secrets.extend(first_secrets.into_iter().chain(second_secrets));
    let (session_id, csrf) = (secret("session"), secret("csrf"));
    let session = Session::new("pending".to_owned(), csrf.1, at(60));
    store
        .insert_session(&session_id.1, session, NOW)
        .await
        .unwrap();
    secrets.extend([session_id, csrf]);
    let cookie = secret("signed-in browser");
    let signed_in = store.insert_user_session(&cookie.1, user_session(at(3600)), NOW);
    signed_in.await.unwrap();
    let client_id = authorization().client_id;
    let granted = store.add_session_grant(&cookie.1, &client_id, family, NOW);
    assert!(granted.await.unwrap());
    secrets.push(cookie);
    let (client, client_secret) = client();
    store.register_client(&client).await.unwrap();
    let password = "a-password-at-rest-1";
    let account = Account::generate("rest@example.com", &Password::new(password)).unwrap();
    let user = account.user().clone();
    store
        .insert_user(&user, account.password_hash())
        .await
        .unwrap();
    let changed = "a-changed-password-2";
    let changed_hash = grantor::hash::hash_password(changed).unwrap();
    let changed_ok = store.set_password_hash(user.id(), &changed_hash).await;
    assert!(changed_ok.unwrap());
    store
        .record_attempt("sign-in:rest@example.com", Duration::from_secs(60), NOW)
        .await
        .unwrap();
    assert!(
        store
            .insert_once("dpop:jti-1", b"seen", at(60), NOW)
            .await
            .unwrap()
    );

    let values = store.raw_values().await;
    let contains =
        |haystack: &[u8], needle: &[u8]| haystack.windows(needle.len()).any(|w| w == needle);
    let clear = secrets.iter().map(|(s, _)| s.as_str());
    for secret in clear.chain([client_secret.as_str(), password, changed]) {
        for value in &values {
            assert!(
                !contains(value, secret.as_bytes()),
                "a secret is stored in the clear"
            );
        }
    }
    for (_, digest) in &secrets {
        assert!(
            values.iter().any(|v| v.as_slice() == digest.as_bytes()),
            "each code, token, session id, CSRF token and cookie is kept as its SHA-256 digest"
        );
    }
    let hashes = values
        .iter()
        .filter(|v| v.starts_with(b"$argon2id$"))
        .count();
    assert_eq!(hashes, 1, "the password is kept as an Argon2id hash");
    assert!(
        values.iter().any(|v| v.starts_with(b"sha256:")),
        "the generated client secret is kept as its digest verifier"
    );
}

pub async fn migrations_are_idempotent<S: SqlStore>(store: &S) {
    store.migrate_again().await.unwrap();
    store.migrate_again().await.unwrap();
    let (client, _) = client();
    store.register_client(&client).await.unwrap();
    store.migrate_again().await.unwrap();
    let found = store.find_client(client.id().as_str()).await.unwrap();
    assert!(found.is_some(), "migrating again keeps the data");
}

pub async fn purging_later_empties_every_table_but_clients_and_users<S: SqlStore>(store: &S) {
    let (client, _) = client();
    store.register_client(&client).await.unwrap();
    let account = Account::generate("purge@example.com", &Password::new("purge-password-1"));
    let account = account.unwrap();
    store
        .insert_user(account.user(), account.password_hash())
        .await
        .unwrap();
    let (code, family) = (secret("code"), family_id());
    let grant = code_grant();
    store.insert_code(&code.1, family, grant).await.unwrap();
    store
        .insert_tokens(tokens(Family::New(family_id())).0)
        .await
        .unwrap();
    let session = Session::new("pending".to_owned(), secret("csrf").1, at(60));
    store
        .insert_session(&secret("session").1, session, NOW)
        .await
        .unwrap();
    store
        .record_attempt("k", Duration::from_secs(60), NOW)
        .await
        .unwrap();
    assert!(store.insert_once("k", b"v", at(60), NOW).await.unwrap());
    let cookie = secret("signed-in browser").1;
    let signed_in = store.insert_user_session(&cookie, user_session(at(3600)), NOW);
    signed_in.await.unwrap();
    let client_id = authorization().client_id;
    let granted = store.add_session_grant(&cookie, &client_id, family, NOW);
    assert!(granted.await.unwrap());
    let user = account.user().id();
    let scope = grantor::Scope::parse("openid").unwrap();
    let approved = grantor::store::Consent::new(scope, grantor::audience::Audience::default());
    let remembered = store.remember_consent(user, &client_id, &approved, at(3600), NOW);
    remembered.await.unwrap();
    for table in TABLES {
        assert!(store.rows(table).await > 0, "{table} holds nothing");
    }
    let purged = store.purge_expired(at(86_400)).await.unwrap();
    assert_eq!(
        purged, 10,
        "families, code, tokens, session, window, value, signed-in browser (its grant uncounted) \
         and approval"
    );
    for table in TABLES {
        let kept = matches!(table, "grantor_clients" | "grantor_users");
        assert_eq!(store.rows(table).await > 0, kept, "{table}");
    }
}

pub async fn a_database_gone_is_unavailable_not_a_panic<S: SqlStore>(store: &S) {
    let (first, secrets) = tokens(Family::New(family_id()));
    store.insert_tokens(first).await.unwrap();
    store.close().await;
    let started = Instant::now();
    let unavailable =
        |error: grantor::store::StoreError| error.kind() == StoreErrorKind::Unavailable;
    assert!(unavailable(store.find_client("any").await.unwrap_err()));
    let grant = code_grant();
    let code = secret("code").1;
    let inserted = store.insert_code(&code, family_id(), grant).await;
    assert!(unavailable(inserted.unwrap_err()));
    let found = store.find_access_token(&secrets[0].1, NOW).await;
    assert!(unavailable(found.unwrap_err()));
    let (next, _) = tokens(Family::Existing(family_id()));
    let rotated = store.rotate_refresh_token(&secrets[1].1, next, None).await;
    assert!(unavailable(rotated.unwrap_err()));
    let session = Session::new("pending".to_owned(), secret("csrf").1, at(60));
    let kept = store
        .insert_session(&secret("session").1, session, NOW)
        .await;
    assert!(unavailable(kept.unwrap_err()));
    let taken = store.take_session(&secret("session").1, NOW).await;
    assert!(unavailable(taken.unwrap_err()));
    let counted = store
        .record_attempt("k", Duration::from_secs(60), NOW)
        .await;
    assert!(unavailable(counted.unwrap_err()));
    assert!(unavailable(
        store.insert_once("k", b"v", at(60), NOW).await.unwrap_err()
    ));
    assert!(unavailable(store.take("k", NOW).await.unwrap_err()));
    let cookie = secret("signed-in browser").1;
    let signed_in = store.insert_user_session(&cookie, user_session(at(3600)), NOW);
    assert!(unavailable(signed_in.await.unwrap_err()));
    let found = store.find_user_session(&cookie, NOW).await;
    assert!(unavailable(found.unwrap_err()));
    let ended = store.end_user_session(&cookie, NOW).await;
    assert!(unavailable(ended.unwrap_err()));
    let (user, client_id) = (grantor::store::UserId::new("u1"), authorization().client_id);
    let consent = store.find_consent(&user, &client_id, NOW).await;
    assert!(unavailable(consent.unwrap_err()));
    assert!(unavailable(store.purge_expired(NOW).await.unwrap_err()));
    let (client, _) = client();
    let Err(AdminError::Store(refused)) = store.register_client(&client).await else {
        panic!("registering on a closed pool");
    };
    assert!(unavailable(refused));
    let error = store.find_account("a@example.com").await.unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Unavailable);
    // The wire sees only the code, never the cause.
    let wire = OAuthError::from(error);
    assert_eq!(wire.code(), ErrorCode::TemporarilyUnavailable);
    assert!(!wire.description().contains("pool"));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "closed is answered at once"
    );
}

/// A statement stuck behind another transaction's lock is cancelled by the store's
/// `statement_timeout` and answered as unavailable (503) in bounded time, never held.
#[cfg(feature = "postgres")]
pub async fn a_statement_stuck_behind_a_lock_is_unavailable_within_the_timeout(
    store: &grantor::sql::PostgresStore,
) {
    use grantor::store::{Admin as _, ClientStore as _};
    use sqlx::Connection as _;
    let (client, _) = client();
    store.register_client(&client).await.unwrap();
    let mut holder = store.pool().acquire().await.unwrap();
    let mut lock = holder.begin().await.unwrap();
    sqlx::query("LOCK TABLE grantor_clients IN ACCESS EXCLUSIVE MODE")
        .persistent(false)
        .execute(&mut *lock)
        .await
        .unwrap();
    let started = Instant::now();
    let stuck = store.find_client(client.id().as_str()).await.unwrap_err();
    let waited = started.elapsed();
    assert_eq!(stuck.kind(), StoreErrorKind::Unavailable, "{stuck}");
    let timeout = grantor::sql::STATEMENT_TIMEOUT;
    assert!(waited >= timeout, "cancelled by the timeout: {waited:?}");
    assert!(waited < timeout + Duration::from_secs(5), "{waited:?}");
    assert_eq!(
        OAuthError::from(stuck).code(),
        ErrorCode::TemporarilyUnavailable
    );
    lock.rollback().await.unwrap();
    assert!(
        store
            .find_client(client.id().as_str())
            .await
            .unwrap()
            .is_some()
    );
}

/// Concurrent writes of new families, each with one access token (what client credentials
/// requests make): every one is kept, and one that fails (its family id already taken) fails
/// alone, whether the store batches them into one transaction (SQLite) or one statement
/// (PostgreSQL).
pub async fn concurrent_new_families_are_kept_and_a_failing_one_fails_alone<S: SqlStore>(
    store: &S,
) {
    use grantor::store::{Jti, NewTokens};
    // An access token for an hour in a new family, and its digest.
    let access_only = |family| {
        let (_, access) = secret("access");
        let jti = Jti::new(super::fixtures::unique_name("jti"));
        let record = NewTokens::new(
            Family::New(family),
            authorization(),
            NOW,
            access,
            jti,
            at(3600),
        );
        (record, access)
    };
    let taken = family_id();
    store.insert_tokens(access_only(taken).0).await.unwrap();
    let mut tasks = Vec::new();
    for n in 0..48 {
        let family = if n % 20 == 7 { taken } else { family_id() };
        let (record, access) = access_only(family);
        let store = store.clone();
        tasks.push((
            family == taken,
            access,
            tokio::spawn(async move { store.insert_tokens(record).await }),
        ));
    }
    let mut kept = 0;
    for (duplicate, access, task) in tasks {
        let outcome = task.await.unwrap();
        let found = store.find_access_token(&access, NOW).await.unwrap();
        if duplicate {
            assert!(outcome.is_err(), "a family id taken is refused");
            assert!(found.is_none(), "nothing of a refused write stays");
        } else {
            outcome.unwrap();
            assert!(found.is_some(), "every other write is kept");
            kept += 1;
        }
    }
    assert_eq!(kept, 45);
}

/// Two nodes (`a`, `b`) over one database, 32 tasks at once: each of 8 codes is redeemed by
/// 32 callers and each of 8 refresh tokens rotated by 32 callers, half on each node. Exactly
/// one caller wins each, the others are told it was spent, and no caller gets an error (under
/// `SERIALIZABLE` the conflicts are retried inside the store).
#[cfg(feature = "postgres")]
pub async fn races_between_two_nodes_have_one_winner_and_no_failure(
    a: &grantor::sql::PostgresStore,
    b: &grantor::sql::PostgresStore,
) {
    use grantor::store::TokenIssuer as _;
    const RACERS: usize = 32;
    const ROUNDS: usize = 8;
    for _ in 0..ROUNDS {
        let code = secret("code").1;
        a.insert_code(&code, family_id(), code_grant())
            .await
            .unwrap();
        let (first, [_, (_, refresh)]) = tokens(Family::New(family_id()));
        let family = first.family.id();
        a.insert_tokens(first).await.unwrap();
        let mut tasks = Vec::new();
        for n in 0..RACERS {
            let node = if n % 2 == 0 { a.clone() } else { b.clone() };
            let (successor, _) = tokens(Family::Existing(family));
            tasks.push(tokio::spawn(async move {
                let redeemed = node.redeem_code(&code, NOW).await;
                let rotated = node.rotate_refresh_token(&refresh, successor, None).await;
                (redeemed, rotated)
            }));
        }
        let (mut redeemed, mut rotated) = (0, 0);
        for task in tasks {
            let (redemption, rotation) = task.await.unwrap();
            match redemption.expect("no failure under SERIALIZABLE") {
                CodeRedemption::Redeemed { .. } => redeemed += 1,
                CodeRedemption::Replayed { .. } => {}
                other => panic!("a live code read as {other:?}"),
            }
            match rotation.expect("no failure under SERIALIZABLE") {
                Rotation::Rotated => rotated += 1,
                Rotation::Reused { .. } => {}
                other => panic!("a race read as {other:?}"),
            }
        }
        assert_eq!(redeemed, 1, "one caller redeems the code");
        assert_eq!(rotated, 1, "one caller rotates the refresh token");
    }
}

/// A hot row on two nodes under `SERIALIZABLE`: 32 clients counting attempts on one key at
/// once, half on each node (a flood of sign-ins against one account), each node with a pool
/// wide enough for all of its writers to collide at once, four times over. Every conflict is
/// retried until it wins, so every call is answered and each sees a different count.
#[cfg(feature = "postgres")]
pub async fn a_hot_row_on_two_nodes_answers_every_writer(
    a: &grantor::sql::PostgresStore,
    b: &grantor::sql::PostgresStore,
) {
    use grantor::sql::PostgresStore;
    use grantor::sql::sqlx::postgres::PgPoolOptions;
    use grantor::store::AttemptCounter as _;
    const CLIENTS: u32 = 32;
    const ROUNDS: u32 = 4;
    let mut nodes = Vec::new();
    for node in [a, b] {
        let options = node.pool().connect_options().as_ref().clone();
        let pool = PgPoolOptions::new()
            .max_connections(CLIENTS / 2)
            .connect_with(options)
            .await
            .unwrap();
        nodes.push(PostgresStore::from_pool(pool).with_pooling(node.pooling()));
    }
    let key = format!("sign-in:hot:{}", secret("hot").0);
    let mut tasks = Vec::new();
    for n in 0..CLIENTS * ROUNDS {
        let node = nodes[n as usize % 2].clone();
        let key = key.clone();
        tasks.push(tokio::spawn(async move {
            node.record_attempt(&key, Duration::from_secs(600), NOW)
                .await
        }));
    }
    let mut counts = Vec::new();
    for task in tasks {
        let attempts = task.await.unwrap();
        counts.push(attempts.expect("no failure under SERIALIZABLE").count);
    }
    for node in nodes {
        node.close().await;
    }
    counts.sort_unstable();
    assert_eq!(counts, (1..=CLIENTS * ROUNDS).collect::<Vec<u32>>());
}

/// What the counters of `kind` say it holds (rows, bytes), and what its rows are.
async fn held<S: SqlStore>(store: &S, kind: &str) -> ((i64, i64), (i64, i64)) {
    let counted = (
        store
            .scalar(&format!(
                "SELECT CAST(COALESCE(SUM(held), 0) AS BIGINT) \
                 FROM grantor_single_use_kinds WHERE kind = '{kind}'"
            ))
            .await,
        store
            .scalar(&format!(
                "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) \
                 FROM grantor_single_use_kinds WHERE kind = '{kind}'"
            ))
            .await,
    );
    let rows = (
        store
            .scalar(&format!(
                "SELECT COUNT(*) FROM grantor_single_use WHERE kind = '{kind}'"
            ))
            .await,
        store
            .scalar(&format!(
                "SELECT CAST(COALESCE(SUM(length(value)), 0) AS BIGINT) \
                 FROM grantor_single_use WHERE kind = '{kind}'"
            ))
            .await,
    );
    (counted, rows)
}

/// Each kind of one-time value holds at most `SINGLE_USE_PER_KIND` values and
/// `SINGLE_USE_BYTES_PER_KIND` bytes, read from counters the database keeps (no count of the
/// table per insert): a full kind refuses with 503 and no other kind, evicts nothing live, and
/// makes room by dropping its own expired values.
pub async fn one_time_values_are_bounded_per_kind_by_counters_kept_in_step<S: SqlStore>(store: &S) {
    use grantor::store::{SINGLE_USE_BYTES_PER_KIND, SINGLE_USE_PER_KIND};
    let par = |n: u32| format!("grantor:par:value-{n}");
    // Counted on insert, take, take-over of an expired key and purge.
    for n in 0..4 {
        assert!(
            store
                .insert_once(&par(n), b"pushed", at(60), NOW)
                .await
                .unwrap()
        );
    }
    assert!(
        store
            .insert_once(&par(9), b"short", at(1), NOW)
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_once("grantor:dpop:proof", b"", at(60), NOW)
            .await
            .unwrap()
    );
    assert!(store.take(&par(0), NOW).await.unwrap().is_some());
    let later = at(2);
    assert!(
        store
            .insert_once(&par(9), b"a longer value", at(60), later)
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_once(&par(8), b"gone soon", at(3), NOW)
            .await
            .unwrap()
    );
    store.purge_expired(at(4)).await.unwrap();
    let (counted, rows) = held(store, "par").await;
    assert_eq!(counted, rows, "the counters follow the rows");
    assert_eq!(counted, (4, 18 + 14));
    let (counted, rows) = held(store, "dpop").await;
    assert_eq!((counted, rows), ((1, 0), (1, 0)));

    // Filled to the bound (as if by a flood), with one of them expired.
    let full = i64::try_from(SINGLE_USE_PER_KIND).unwrap() - 4;
    assert!(
        store
            .insert_once(&par(20), b"expired", at(5), NOW)
            .await
            .unwrap()
    );
    store
        .execute(&format!(
            "INSERT INTO grantor_single_use_kinds (kind, slot, held, bytes) \
             VALUES ('par', 99, {}, 0)",
            full - 1
        ))
        .await;
    let now = at(10);
    // The expired one makes room for one; then the kind is full.
    assert!(
        store
            .insert_once(&par(21), b"fits", at(60), now)
            .await
            .unwrap()
    );
    let refused = store.insert_once(&par(22), b"no room", at(60), now).await;
    assert_eq!(refused.unwrap_err().kind(), StoreErrorKind::Unavailable);
    // Nothing live was evicted, and other kinds are served.
    assert!(store.peek(&par(1), now).await.unwrap().is_some());
    assert!(store.peek(&par(21), now).await.unwrap().is_some());
    assert!(
        store
            .insert_once("grantor:device:flow", b"d", at(60), now)
            .await
            .unwrap()
    );
    // A taken value makes room again.
    assert!(store.take(&par(1), now).await.unwrap().is_some());
    assert!(
        store
            .insert_once(&par(22), b"room", at(60), now)
            .await
            .unwrap()
    );

    // Bytes bound the kind too.
    store
        .execute("DELETE FROM grantor_single_use_kinds WHERE slot = 99")
        .await;
    assert!(
        store
            .insert_once(&par(23), b"fits", at(60), now)
            .await
            .unwrap()
    );
    store
        .execute(&format!(
            "INSERT INTO grantor_single_use_kinds (kind, slot, held, bytes) \
             VALUES ('par', 99, 0, {SINGLE_USE_BYTES_PER_KIND})"
        ))
        .await;
    let refused = store
        .insert_once(&par(24), b"too many bytes", at(60), now)
        .await;
    assert_eq!(refused.unwrap_err().kind(), StoreErrorKind::Unavailable);
}
