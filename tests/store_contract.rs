//! The store contract (`grantor::store::contract`, feature `test-util`) run against every store
//! grantor ships, through the same public entry point a host's own store uses: in-memory,
//! SQLite (feature `sqlite`, a fresh database file per rule) and PostgreSQL (feature `postgres`,
//! a fresh schema per rule in the database `GRANTOR_TEST_POSTGRES_URL` names). Then rules only
//! the SQL stores have (what is at rest, migrations, purging every table, a database gone), the
//! contract's races from threads for the memory store, and the throughput printouts.
//!
//! `cargo test --features sqlite,test-util --test store_contract sqlite` runs one store. Without
//! `GRANTOR_TEST_POSTGRES_URL` the PostgreSQL tests say `skipped: GRANTOR_TEST_POSTGRES_URL not
//! set` on stderr (past the test harness's capture) and do nothing: a skip, never a silent pass.
//! `.ci/run` sets it.
//!
//! `throughput::*` run 300 concurrent code exchanges on each store and print exchanges per
//! second (`GRANTOR_THROUGHPUT_EXCHANGES=2000 cargo test --release --all-features --test
//! store_contract throughput -- --nocapture` to measure; nothing here asserts a time).

#[path = "store_contract/fixtures.rs"]
mod fixtures;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[path = "store_contract/sql_rules.rs"]
mod sql_rules;
#[path = "store_contract/threads.rs"]
mod threads;

use std::io::Write as _;
use std::sync::Arc;
use std::time::Instant;

use fixtures::NOW;
use grantor::MemoryStore;
use grantor::store::contract::{self, ContractStore};
use grantor::store::{CodeRedemption, Family};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_store_keeps_the_contract() {
    contract::run(|| async { MemoryStore::new() }).await;
}

/// Each seam's rules alone, as a host that keeps only some seams itself runs them: each
/// runner asks only for its seam's traits, and together they are the rules of the whole run.
#[tokio::test]
async fn the_memory_store_keeps_each_seams_rules_alone() {
    contract::clients(|| async { MemoryStore::new() }).await;
    contract::users(|| async { MemoryStore::new() }).await;
    contract::tokens(|| async { MemoryStore::new() }).await;
    contract::shared_state(|| async { MemoryStore::new() }).await;
    contract::keys(|| async { MemoryStore::new() }).await;
    contract::sign_on(|| async { MemoryStore::new() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_memory_store_keeps_single_use_steps_across_threads() {
    threads::single_use_steps_hold_across_threads(MemoryStore::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_memory_store_leaves_one_live_pair_under_concurrent_retries() {
    threads::concurrent_retries_leave_one_live_pair_across_threads(MemoryStore::new()).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_store_keeps_the_contract() {
    let files = fixtures::SqliteFiles::new();
    contract::run(|| files.fresh()).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_store_keeps_the_contract() {
    use futures_util::FutureExt as _;
    let test = "the_postgres_store_keeps_the_contract";
    let Some(schemas) = fixtures::PostgresSchemas::from_env(test) else {
        return;
    };
    let run = std::panic::AssertUnwindSafe(contract::run(|| schemas.fresh()));
    let outcome = run.catch_unwind().await;
    schemas.drop_all().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// Under `SERIALIZABLE`, PostgreSQL aborts transactions that conflict (40001) and deadlocks
/// (40P01); the store runs them again, so the contract holds as it does at the default
/// isolation, and races between two nodes still have exactly one winner and no failure.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_store_keeps_the_contract_under_serializable() {
    use futures_util::FutureExt as _;
    let test = "the_postgres_store_keeps_the_contract_under_serializable";
    let Some(schemas) = fixtures::PostgresSchemas::from_env(test) else {
        return;
    };
    let run = std::panic::AssertUnwindSafe(async {
        contract::run(|| async { schemas.fresh_serializable().await.0 }).await;
        let (a, b) = schemas.fresh_serializable().await;
        sql_rules::races_between_two_nodes_have_one_winner_and_no_failure(&a, &b).await;
        sql_rules::a_hot_row_on_two_nodes_answers_every_writer(&a, &b).await;
    });
    let outcome = run.catch_unwind().await;
    schemas.drop_all().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// Migrations apart from connecting (rolling deploys): `open` refuses a database without the
/// schema this build needs and opens one `connect` (or `migrate`) made; a database a newer build
/// migrated (a migration this build does not know) opens and connects.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_opens_without_migrating_and_takes_a_newer_schema() {
    use grantor::store::StoreErrorKind;
    let files = fixtures::SqliteFiles::new();
    let url = files.new_url();
    let refused = grantor::sql::SqliteStore::open(&url).await.unwrap_err();
    assert_eq!(refused.kind(), StoreErrorKind::Failed);
    assert!(refused.to_string().contains("grantor migrate"), "{refused}");
    let store = grantor::sql::SqliteStore::connect(&url).await.unwrap();
    store
        .write_with(|conn| {
            conn.execute(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, \
                 execution_time) VALUES (9999, 'from a newer build', TRUE, x'00', 1)",
                [],
            )
        })
        .await
        .unwrap();
    store.close().await;
    grantor::sql::SqliteStore::open(&url)
        .await
        .unwrap()
        .close()
        .await;
    grantor::sql::SqliteStore::connect(&url)
        .await
        .unwrap()
        .close()
        .await;
}

/// The same on PostgreSQL.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_opens_without_migrating_and_takes_a_newer_schema() {
    use grantor::store::StoreErrorKind;
    let test = "postgres_opens_without_migrating_and_takes_a_newer_schema";
    let Some(schemas) = fixtures::PostgresSchemas::from_env(test) else {
        return;
    };
    let options = schemas.empty().await;
    let refused = grantor::sql::PostgresStore::open_with(options.clone())
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), StoreErrorKind::Failed);
    assert!(refused.to_string().contains("grantor migrate"), "{refused}");
    let store = grantor::sql::PostgresStore::connect_with(options.clone())
        .await
        .unwrap();
    grantor::sql::sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (9999, 'from a newer build', TRUE, '\\x00', 1)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    store.close().await;
    grantor::sql::PostgresStore::open_with(options.clone())
        .await
        .unwrap()
        .close()
        .await;
    grantor::sql::PostgresStore::connect_with(options)
        .await
        .unwrap()
        .close()
        .await;
    schemas.drop_all().await;
}

/// A read replica for token checks: checks ask it first and the primary when it knows no such
/// token or fails; finding a token for anything else asks the primary alone. Two schemas stand
/// in for the primary and the replica, so that what each holds is known.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn token_checks_ask_the_read_replica_first_and_the_primary_on_a_miss() {
    use fixtures::{NOW, family_id, tokens};
    use grantor::store::{Family, TokenIssuer as _};
    let test = "token_checks_ask_the_read_replica_first_and_the_primary_on_a_miss";
    let Some(schemas) = fixtures::PostgresSchemas::from_env(test) else {
        return;
    };
    let replica = schemas.fresh().await;
    let primary = schemas
        .fresh()
        .await
        .with_read_replica(replica.pool().clone());
    let (only_on_replica, [(_, on_replica), _]) = tokens(Family::New(family_id()));
    replica.insert_tokens(only_on_replica).await.unwrap();
    let (only_on_primary, [(_, on_primary), _]) = tokens(Family::New(family_id()));
    primary.insert_tokens(only_on_primary).await.unwrap();

    assert!(
        primary
            .check_access_token(&on_replica, NOW)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        primary
            .check_access_token(&on_primary, NOW)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        primary
            .find_access_token(&on_replica, NOW)
            .await
            .unwrap()
            .is_none(),
        "nothing but a check reads the replica"
    );
    // The replica gone: checks are answered by the primary.
    replica.close().await;
    assert!(
        primary
            .check_access_token(&on_primary, NOW)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        primary
            .check_access_token(&on_replica, NOW)
            .await
            .unwrap()
            .is_none()
    );
    primary.close().await;
    schemas.drop_all().await;
}

/// Makes a `sqlite` and a `postgres` test of each SQL-only rule, each on a fresh store.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! sql_rules {
    ($($rule:ident),* $(,)?) => {$(
        mod $rule {
            #[cfg(feature = "sqlite")]
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let files = crate::fixtures::SqliteFiles::new();
                crate::sql_rules::$rule(&files.fresh().await).await;
            }

            #[cfg(feature = "postgres")]
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let test = concat!(stringify!($rule), "::postgres");
                let Some(schemas) = crate::fixtures::PostgresSchemas::from_env(test) else {
                    return;
                };
                let store = schemas.fresh().await;
                crate::sql_rules::$rule(&store).await;
                drop(store);
                schemas.drop_all().await;
            }
        }
    )*};
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
sql_rules! {
    only_digests_and_verifiers_are_at_rest,
    migrations_are_idempotent,
    purging_later_empties_every_table_but_clients_and_users,
    a_database_gone_is_unavailable_not_a_panic,
    concurrent_new_families_are_kept_and_a_failing_one_fails_alone,
    one_time_values_are_bounded_per_kind_by_counters_kept_in_step,
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_stuck_behind_a_lock_is_unavailable_within_the_timeout() {
    let test = "a_statement_stuck_behind_a_lock_is_unavailable_within_the_timeout";
    let Some(schemas) = crate::fixtures::PostgresSchemas::from_env(test) else {
        return;
    };
    let store = schemas.fresh().await;
    sql_rules::a_statement_stuck_behind_a_lock_is_unavailable_within_the_timeout(&store).await;
    drop(store);
    schemas.drop_all().await;
}

// ---------------------------------------------------------------------------------------------
// Concurrent code exchanges: all succeed; the rate is printed, never asserted

/// Keeps `n` codes, then redeems each and keeps its tokens (access and refresh) from 16 tasks
/// at once: the store work of one authorization code exchange. Prints exchanges per second.
async fn code_exchange_throughput<S: ContractStore + Clone>(store: S, name: &str) {
    // Enough to show the store holds up under 16 concurrent exchanges; set
    // GRANTOR_THROUGHPUT_EXCHANGES (say 2000) and run with --nocapture to measure.
    let n = std::env::var("GRANTOR_THROUGHPUT_EXCHANGES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let mut codes = Vec::with_capacity(n);
    for _ in 0..n {
        let (_, code) = fixtures::secret("code");
        let grant = fixtures::code_grant();
        store
            .insert_code(&code, fixtures::family_id(), grant)
            .await
            .unwrap();
        codes.push(code);
    }
    let codes = Arc::new(std::sync::Mutex::new(codes));
    let started = Instant::now();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (store, codes) = (store.clone(), codes.clone());
            tokio::spawn(async move {
                loop {
                    let Some(code) = codes.lock().unwrap().pop() else {
                        return;
                    };
                    let CodeRedemption::Redeemed { family, .. } =
                        store.redeem_code(&code, NOW).await.unwrap()
                    else {
                        panic!("fresh codes redeem");
                    };
                    let (tokens, _) = fixtures::tokens(Family::Existing(family));
                    store.insert_tokens(tokens).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed();
    let _ = writeln!(
        std::io::stderr(),
        "code exchange throughput, {name}: {n} exchanges in {:.2} s = {:.0}/s (16 concurrent)",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64()
    );
}

mod throughput {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn memory() {
        let store = grantor::MemoryStore::new();
        super::code_exchange_throughput(store, "memory").await;
    }

    #[cfg(feature = "sqlite")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let files = crate::fixtures::SqliteFiles::new();
        super::code_exchange_throughput(files.fresh().await, "sqlite (file, WAL)").await;
    }

    #[cfg(feature = "postgres")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        let Some(schemas) = crate::fixtures::PostgresSchemas::from_env("throughput::postgres")
        else {
            return;
        };
        super::code_exchange_throughput(schemas.fresh().await, "postgres").await;
        schemas.drop_all().await;
    }
}

/// Behind pgbouncer (`GRANTOR_TEST_POSTGRES_POOLER`), a URL without `pooler=transaction` is
/// refused at connect with what to add, and one with it connects without migrating and is
/// refused a migration with where to run it.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_pooler_in_transaction_mode_is_named_in_the_url() {
    let Ok(pooler) = std::env::var("GRANTOR_TEST_POSTGRES_POOLER") else {
        fixtures::skipped(
            "a_pooler_in_transaction_mode_is_named_in_the_url",
            "GRANTOR_TEST_POSTGRES_POOLER not set",
        );
        return;
    };
    let Some(schemas) =
        fixtures::PostgresSchemas::from_env("a_pooler_in_transaction_mode_is_named_in_the_url")
    else {
        return;
    };
    let store = schemas.fresh().await;
    let database = store
        .pool()
        .connect_options()
        .get_database()
        .unwrap()
        .to_owned();
    let url = format!("{}/{database}", pooler.trim_end_matches('/'));
    let refused = grantor::sql::PostgresStore::connect(&url)
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("pooler=transaction"),
        "{refused}"
    );
    let through = grantor::sql::PostgresStore::connect(&format!("{url}?pooler=transaction"))
        .await
        .unwrap();
    assert_eq!(through.pooling(), grantor::sql::Pooling::Transaction);
    let refused = through.migrate().await.unwrap_err();
    assert!(refused.to_string().contains("grantor migrate"), "{refused}");
    through.close().await;
    store.close().await;
    schemas.drop_all().await;
}
