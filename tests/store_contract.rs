//! The store contract, one suite run against every store: in-memory, SQLite (feature `sqlite`,
//! a fresh database file per test) and PostgreSQL (feature `postgres`, a fresh schema per test
//! in the database `GRANTOR_TEST_POSTGRES_URL` names).
//!
//! `contract!` makes a `memory`, a `sqlite` and a `postgres` test of every rule, so
//! `cargo test --test store_contract sqlite` runs one store. Without `GRANTOR_TEST_POSTGRES_URL`
//! the `postgres` tests say `skipped: GRANTOR_TEST_POSTGRES_URL not set` on stderr (past the
//! test harness's capture) and do nothing: a skip, never a silent pass. `.ci/run` sets it.
//!
//! `throughput::*` run 300 concurrent code exchanges on each store and print exchanges per
//! second (`GRANTOR_THROUGHPUT_EXCHANGES=2000 cargo test --release --all-features --test
//! store_contract throughput -- --nocapture` to measure; nothing here asserts a time).

use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use grantor::*;

const NOW: UnixTime = UnixTime::from_secs(1_800_000_000);

/// One store under test, whatever holds it.
#[async_trait]
trait Store: Send + Sync {
    fn clients(&self) -> &dyn ClientStore;
    fn users(&self) -> &dyn UserStore;
    fn tokens(&self) -> Arc<dyn TokenIssuer>;
    async fn insert_client(&self, client: &Client);
    async fn remove_client(&self, client_id: &str) -> bool;
    /// `Err` when the account is refused (not an email, taken).
    async fn add_user(&self, username: &str, password: &Password) -> Result<User, String>;
    async fn purge(&self, now: UnixTime);
    /// How many access tokens, refresh tokens and codes (tombstones included) are held.
    async fn counts(&self) -> (usize, usize, usize);
    /// SQL stores: every value of every row of grantor's tables, as bytes.
    async fn raw_values(&self) -> Vec<Vec<u8>>;
    /// SQL stores: applies the migrations again.
    async fn migrate(&self) -> Result<(), StoreError>;
    /// SQL stores: closes the pool, as if the database had gone.
    async fn close(&self);
}

// ---------------------------------------------------------------------------------------------
// The stores

#[derive(Default)]
struct Memory {
    clients: MemoryClientStore,
    users: MemoryUserStore,
    tokens: Arc<MemoryTokenIssuer>,
}

#[async_trait]
impl Store for Memory {
    fn clients(&self) -> &dyn ClientStore {
        &self.clients
    }
    fn users(&self) -> &dyn UserStore {
        &self.users
    }
    fn tokens(&self) -> Arc<dyn TokenIssuer> {
        self.tokens.clone()
    }
    async fn insert_client(&self, client: &Client) {
        self.register(client.clone());
    }
    async fn remove_client(&self, client_id: &str) -> bool {
        self.remove_client(client_id)
    }
    async fn add_user(&self, username: &str, password: &Password) -> Result<User, String> {
        self.users
            .add(username, password)
            .map_err(|e| e.to_string())
    }
    async fn purge(&self, now: UnixTime) {
        self.tokens.purge_expired(now);
    }
    async fn counts(&self) -> (usize, usize, usize) {
        self.tokens.len()
    }
    async fn raw_values(&self) -> Vec<Vec<u8>> {
        unreachable!("the memory store has no rows")
    }
    async fn migrate(&self) -> Result<(), StoreError> {
        unreachable!("the memory store has no migrations")
    }
    async fn close(&self) {
        unreachable!("the memory store has no pool")
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
const TABLES: [&str; 6] = [
    "grantor_clients",
    "grantor_users",
    "grantor_families",
    "grantor_codes",
    "grantor_access_tokens",
    "grantor_refresh_tokens",
];

/// Implements [`Store`] for one SQL store type.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! sql_store {
    ($store:ty) => {
        #[async_trait]
        impl Store for $store {
            fn clients(&self) -> &dyn ClientStore {
                self
            }
            fn users(&self) -> &dyn UserStore {
                self
            }
            fn tokens(&self) -> Arc<dyn TokenIssuer> {
                Arc::new(self.clone())
            }
            async fn insert_client(&self, client: &Client) {
                self.insert_client(client).await.unwrap();
            }
            async fn remove_client(&self, client_id: &str) -> bool {
                self.remove_client(client_id).await.unwrap()
            }
            async fn add_user(&self, username: &str, password: &Password) -> Result<User, String> {
                self.add_user(username, password)
                    .await
                    .map_err(|e| e.to_string())
            }
            async fn purge(&self, now: UnixTime) {
                self.purge_expired(now).await.unwrap();
            }
            async fn counts(&self) -> (usize, usize, usize) {
                let mut counts = [0usize; 3];
                let tables = [
                    "grantor_access_tokens",
                    "grantor_refresh_tokens",
                    "grantor_codes",
                ];
                for (count, table) in counts.iter_mut().zip(tables) {
                    let n: i64 = sql::sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
                        .fetch_one(self.pool())
                        .await
                        .unwrap();
                    *count = n as usize;
                }
                (counts[0], counts[1], counts[2])
            }
            async fn raw_values(&self) -> Vec<Vec<u8>> {
                use sql::sqlx::Row as _;
                let mut values = Vec::new();
                for table in TABLES {
                    let rows = sql::sqlx::query(&format!("SELECT * FROM {table}"))
                        .fetch_all(self.pool())
                        .await
                        .unwrap();
                    for row in rows {
                        for i in 0..row.len() {
                            let value = if let Ok(text) = row.try_get::<Option<String>, _>(i) {
                                text.map(String::into_bytes)
                            } else if let Ok(bytes) = row.try_get::<Option<Vec<u8>>, _>(i) {
                                bytes
                            } else if let Ok(n) = row.try_get::<Option<i64>, _>(i) {
                                n.map(|n| n.to_string().into_bytes())
                            } else if let Ok(b) = row.try_get::<Option<bool>, _>(i) {
                                b.map(|b| b.to_string().into_bytes())
                            } else {
                                panic!("{table} column {i} has an unexpected type");
                            };
                            values.extend(value);
                        }
                    }
                }
                values
            }
            async fn migrate(&self) -> Result<(), StoreError> {
                self.migrate().await
            }
            async fn close(&self) {
                self.pool().close().await;
            }
        }
    };
}

#[cfg(feature = "sqlite")]
sql_store!(sql::SqliteStore);
#[cfg(feature = "postgres")]
sql_store!(sql::PostgresStore);

/// A store for one test, and what to clean up after it.
struct Fixture {
    store: Box<dyn Store>,
    cleanup: Cleanup,
}

enum Cleanup {
    Nothing,
    #[cfg(feature = "sqlite")]
    Files(std::path::PathBuf),
    #[cfg(feature = "postgres")]
    Schema(String, String),
}

/// A name no other test of this run (or of a concurrent run) uses.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn unique_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Says on the terminal, past the test harness's output capture, that a test did not run.
#[cfg(feature = "postgres")]
fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}

impl Fixture {
    fn memory() -> Self {
        Self {
            store: Box::new(Memory::default()),
            cleanup: Cleanup::Nothing,
        }
    }

    #[cfg(feature = "sqlite")]
    async fn sqlite() -> Self {
        let path = std::env::temp_dir().join(format!("{}.db", unique_name("grantor_contract")));
        let store = sql::SqliteStore::connect(&format!("sqlite:{}", path.display()))
            .await
            .unwrap();
        Self {
            store: Box::new(store),
            cleanup: Cleanup::Files(path),
        }
    }

    /// A store in a fresh schema of the test database, or `None` (said on stderr) without one.
    #[cfg(feature = "postgres")]
    async fn postgres(test: &str) -> Option<Self> {
        use sql::sqlx::Connection as _;
        use sql::sqlx::postgres::{PgConnectOptions, PgConnection};
        use std::str::FromStr as _;
        let Ok(url) = std::env::var("GRANTOR_TEST_POSTGRES_URL") else {
            skipped(test, "GRANTOR_TEST_POSTGRES_URL not set");
            return None;
        };
        let schema = unique_name("grantor_contract");
        let mut admin = PgConnection::connect(&url).await.unwrap();
        sql::sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut admin)
            .await
            .unwrap();
        admin.close().await.unwrap();
        let options = PgConnectOptions::from_str(&url)
            .unwrap()
            .options([("search_path", schema.as_str())]);
        let store = sql::PostgresStore::connect_with(options).await.unwrap();
        Some(Self {
            store: Box::new(store),
            cleanup: Cleanup::Schema(url, schema),
        })
    }

    async fn finish(self) {
        drop(self.store);
        match self.cleanup {
            Cleanup::Nothing => {}
            #[cfg(feature = "sqlite")]
            Cleanup::Files(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut name = path.clone().into_os_string();
                    name.push(suffix);
                    let _ = std::fs::remove_file(name);
                }
            }
            #[cfg(feature = "postgres")]
            Cleanup::Schema(url, schema) => {
                use sql::sqlx::Connection as _;
                let mut admin = sql::sqlx::postgres::PgConnection::connect(&url)
                    .await
                    .unwrap();
                sql::sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
                    .execute(&mut admin)
                    .await
                    .unwrap();
                let _ = admin.close().await;
            }
        }
    }
}

/// Makes a `memory`, `sqlite` and `postgres` test of each rule.
macro_rules! contract {
    ($($rule:ident),* $(,)?) => {$(
        mod $rule {
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn memory() {
                let fixture = super::Fixture::memory();
                super::$rule(&*fixture.store).await;
                fixture.finish().await;
            }

            sql_tests!($rule);
        }
    )*};
}

/// Makes only the `sqlite` and `postgres` tests of each rule (rules about rows at rest).
macro_rules! sql_contract {
    ($($rule:ident),* $(,)?) => {$(
        mod $rule {
            sql_tests!($rule);
        }
    )*};
}

macro_rules! sql_tests {
    ($rule:ident) => {
        #[cfg(feature = "sqlite")]
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn sqlite() {
            let fixture = super::Fixture::sqlite().await;
            super::$rule(&*fixture.store).await;
            fixture.finish().await;
        }

        #[cfg(feature = "postgres")]
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn postgres() {
            let test = concat!(stringify!($rule), "::postgres");
            let Some(fixture) = super::Fixture::postgres(test).await else {
                return;
            };
            super::$rule(&*fixture.store).await;
            fixture.finish().await;
        }
    };
}

contract! {
    a_code_redeemed_by_100_tasks_at_once_is_won_by_exactly_one,
    a_replayed_code_names_its_family_and_revoking_it_kills_its_tokens,
    a_refresh_token_used_at_once_by_many_rotates_once,
    rotation_hands_on_the_family_and_reuse_revokes_it,
    revoking_a_family_or_an_access_token_reaches_only_it,
    expired_codes_and_tokens_are_not_found,
    purging_drops_what_expired_or_was_revoked_and_keeps_the_rest,
    codes_and_tokens_carry_what_was_granted,
    issuing_into_an_unknown_family_fails,
    codes_tokens_and_jtis_are_unique_and_not_each_other,
    users_authenticate_by_case_insensitive_email_and_password,
    clients_round_trip,
}

sql_contract! {
    only_digests_and_verifiers_are_at_rest,
    migrations_are_idempotent,
    a_database_gone_is_unavailable_not_a_panic,
}

// ---------------------------------------------------------------------------------------------
// The rules

fn authorization() -> Authorization {
    Authorization {
        client_id: ClientId::new("client").unwrap(),
        user: Some(User::new(UserId::new("u1"), "alice@example.com")),
        scope: Scope::parse("profile email").unwrap(),
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

fn refresh_request(scope: &str) -> Refresh {
    Refresh {
        access_scope: Scope::parse(scope).unwrap(),
        issued_at: NOW,
        access_expires_at: NOW.plus(Duration::from_secs(3600)),
        refresh_expires_at: NOW.plus(Duration::from_secs(86_400)),
    }
}

/// Asserts that nothing of a revoked family works any more: its access tokens are not found,
/// and its refresh token is neither found nor rotated.
async fn assert_family_dead(
    issuer: &dyn TokenIssuer,
    access_tokens: &[&AccessToken],
    refresh: &RefreshToken,
) {
    for access in access_tokens {
        let found = issuer.find_access_token(access, NOW).await.unwrap();
        assert!(
            found.is_none(),
            "an access token of a revoked family is found"
        );
    }
    let found = issuer.find_refresh_token(refresh, NOW).await.unwrap();
    assert!(
        found.is_none(),
        "a refresh token of a revoked family is found"
    );
    let rotation = issuer
        .rotate_refresh_token(refresh, refresh_request("profile"))
        .await
        .unwrap();
    assert!(matches!(rotation, Rotation::Invalid));
}

async fn redeem(tokens: &dyn TokenIssuer, code: &AuthorizationCode, at: UnixTime) -> &'static str {
    match tokens.redeem_code(code, at).await.unwrap() {
        CodeRedemption::Redeemed { .. } => "redeemed",
        CodeRedemption::Replayed { .. } => "replayed",
        CodeRedemption::Invalid => "invalid",
    }
}

async fn a_code_redeemed_by_100_tasks_at_once_is_won_by_exactly_one(store: &dyn Store) {
    let issuer = store.tokens();
    let code = issuer.issue_code(code_grant()).await.unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(100));
    let tasks: Vec<_> = (0..100)
        .map(|_| {
            let (issuer, code, barrier) = (issuer.clone(), code.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                issuer.redeem_code(&code, NOW).await.unwrap()
            })
        })
        .collect();
    let (mut won, mut replayed, mut families) = (0, 0, Vec::new());
    for task in tasks {
        match task.await.unwrap() {
            CodeRedemption::Redeemed { family, .. } => {
                won += 1;
                families.push(family);
            }
            CodeRedemption::Replayed { family } => {
                replayed += 1;
                families.push(family);
            }
            CodeRedemption::Invalid => panic!("a live code answered Invalid"),
        }
    }
    assert_eq!((won, replayed), (1, 99));
    families.dedup();
    assert_eq!(families.len(), 1, "every answer names the same family");
}

async fn a_replayed_code_names_its_family_and_revoking_it_kills_its_tokens(store: &dyn Store) {
    let issuer = store.tokens();
    let code = issuer.issue_code(code_grant()).await.unwrap();
    let CodeRedemption::Redeemed { family, grant } = issuer.redeem_code(&code, NOW).await.unwrap()
    else {
        panic!("the first redemption wins");
    };
    assert_eq!(grant.authorization, authorization());
    let tokens = issuer
        .issue_tokens(new_tokens(Some(family), true))
        .await
        .unwrap();
    assert_eq!(tokens.family, family);
    // Replays are recognized past the code's expiry too.
    for at in [NOW, NOW.plus(Duration::from_secs(600))] {
        let CodeRedemption::Replayed { family: replayed } =
            issuer.redeem_code(&code, at).await.unwrap()
        else {
            panic!("a second redemption is a replay");
        };
        assert_eq!(replayed, family);
    }
    let access = &tokens.access_token;
    assert!(
        issuer
            .find_access_token(access, NOW)
            .await
            .unwrap()
            .is_some()
    );
    issuer.revoke_family(family).await.unwrap();
    let refresh = tokens.refresh_token.as_ref().unwrap();
    assert_family_dead(&*issuer, &[access], refresh).await;
    // Revoking twice, or a family nobody knows, is fine.
    issuer.revoke_family(family).await.unwrap();
    issuer.revoke_family(FamilyId(7)).await.unwrap();
}

async fn a_refresh_token_used_at_once_by_many_rotates_once(store: &dyn Store) {
    for racers in [2, 100] {
        let issuer = store.tokens();
        let issued = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
        let refresh = issued.refresh_token.unwrap();
        let barrier = Arc::new(tokio::sync::Barrier::new(racers));
        let tasks: Vec<_> = (0..racers)
            .map(|_| {
                let (issuer, refresh, barrier) = (issuer.clone(), refresh.clone(), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    issuer
                        .rotate_refresh_token(&refresh, refresh_request("profile"))
                        .await
                        .unwrap()
                })
            })
            .collect();
        let (mut rotated, mut reused) = (0, 0);
        for task in tasks {
            match task.await.unwrap() {
                Rotation::Rotated(_) => rotated += 1,
                Rotation::Reused => reused += 1,
                Rotation::Invalid => {}
            }
        }
        assert_eq!(rotated, 1, "{racers} racers");
        assert!(reused >= 1, "{racers} racers: a loser saw the reuse");
        // The losers' reuse revoked the family: the winner's tokens are dead too.
        let found = issuer.find_access_token(&issued.access_token, NOW).await;
        assert!(found.unwrap().is_none(), "{racers} racers");
    }
}

async fn rotation_hands_on_the_family_and_reuse_revokes_it(store: &dyn Store) {
    let issuer = store.tokens();
    let first = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
    let old = first.refresh_token.clone().unwrap();
    let found = issuer.find_refresh_token(&old, NOW).await.unwrap().unwrap();
    assert!(!found.rotated);
    assert_eq!(found.authorization, authorization());
    assert_eq!(found.family, first.family);
    assert_eq!(found.issued_at, NOW);
    assert_eq!(found.expires_at, NOW.plus(Duration::from_secs(86_400)));

    // A narrower access scope; the refresh token keeps the family's.
    let Rotation::Rotated(second) = issuer
        .rotate_refresh_token(&old, refresh_request("email"))
        .await
        .unwrap()
    else {
        panic!("a current refresh token rotates");
    };
    assert_eq!(second.family, first.family);
    assert_eq!(second.scope.as_str(), "email");
    let access = issuer
        .find_access_token(&second.access_token, NOW)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(access.authorization.scope.as_str(), "email");
    assert_eq!(access.authorization.user, authorization().user);
    let new = second.refresh_token.clone().unwrap();
    let found = issuer.find_refresh_token(&new, NOW).await.unwrap().unwrap();
    assert!(!found.rotated);
    assert_eq!(found.authorization.scope, authorization().scope);
    let found = issuer.find_refresh_token(&old, NOW).await.unwrap().unwrap();
    assert!(found.rotated, "the old token reads as rotated");

    // The successor rotates in turn.
    let Rotation::Rotated(third) = issuer
        .rotate_refresh_token(&new, refresh_request("profile"))
        .await
        .unwrap()
    else {
        panic!("the successor rotates");
    };
    // Reuse of a rotated token revokes the whole family.
    let reuse = issuer
        .rotate_refresh_token(&old, refresh_request("profile"))
        .await
        .unwrap();
    assert!(matches!(reuse, Rotation::Reused));
    let accesses = [
        &first.access_token,
        &second.access_token,
        &third.access_token,
    ];
    let newest = third.refresh_token.as_ref().unwrap();
    assert_family_dead(&*issuer, &accesses, newest).await;
    let unknown = RefreshToken::new("never-issued");
    let rotation = issuer
        .rotate_refresh_token(&unknown, refresh_request("profile"))
        .await
        .unwrap();
    assert!(matches!(rotation, Rotation::Invalid));
}

async fn revoking_a_family_or_an_access_token_reaches_only_it(store: &dyn Store) {
    let issuer = store.tokens();
    let doomed = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
    let kept = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
    assert_ne!(doomed.family, kept.family);
    issuer.revoke_family(doomed.family).await.unwrap();
    let found = issuer.find_access_token(&doomed.access_token, NOW).await;
    assert!(found.unwrap().is_none());
    let found = issuer.find_access_token(&kept.access_token, NOW).await;
    assert!(found.unwrap().is_some());
    let refresh = kept.refresh_token.clone().unwrap();
    assert!(
        issuer
            .find_refresh_token(&refresh, NOW)
            .await
            .unwrap()
            .is_some()
    );

    // One access token revoked: the rest of its family stays.
    let sibling = issuer
        .issue_tokens(new_tokens(Some(kept.family), false))
        .await
        .unwrap();
    issuer
        .revoke_access_token(&kept.access_token)
        .await
        .unwrap();
    let found = issuer.find_access_token(&kept.access_token, NOW).await;
    assert!(found.unwrap().is_none());
    let found = issuer.find_access_token(&sibling.access_token, NOW).await;
    assert!(found.unwrap().is_some());
    let rotation = issuer
        .rotate_refresh_token(&refresh, refresh_request("profile"))
        .await
        .unwrap();
    assert!(matches!(rotation, Rotation::Rotated(_)));
    // Revoking an unknown token is fine.
    issuer
        .revoke_access_token(&AccessToken::new("never-issued"))
        .await
        .unwrap();
}

async fn expired_codes_and_tokens_are_not_found(store: &dyn Store) {
    let issuer = store.tokens();
    let code = issuer.issue_code(code_grant()).await.unwrap();
    assert_eq!(
        redeem(&*issuer, &code, NOW.plus(Duration::from_secs(60))).await,
        "invalid"
    );
    let unknown = AuthorizationCode::new("never-issued");
    assert_eq!(redeem(&*issuer, &unknown, NOW).await, "invalid");

    let tokens = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
    let almost = NOW.plus(Duration::from_secs(3599));
    let expired = NOW.plus(Duration::from_secs(3600));
    let access = &tokens.access_token;
    assert!(
        issuer
            .find_access_token(access, almost)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        issuer
            .find_access_token(access, expired)
            .await
            .unwrap()
            .is_none()
    );
    let refresh = tokens.refresh_token.unwrap();
    let refresh_end = NOW.plus(Duration::from_secs(86_400));
    let found = issuer.find_refresh_token(&refresh, expired).await.unwrap();
    assert!(
        found.is_some(),
        "the refresh token outlives the access token"
    );
    let found = issuer
        .find_refresh_token(&refresh, refresh_end)
        .await
        .unwrap();
    assert!(found.is_none());
    let mut late = refresh_request("profile");
    late.issued_at = refresh_end;
    let rotation = issuer.rotate_refresh_token(&refresh, late).await.unwrap();
    assert!(matches!(rotation, Rotation::Invalid));
}

async fn purging_drops_what_expired_or_was_revoked_and_keeps_the_rest(store: &dyn Store) {
    let issuer = store.tokens();
    // A: an access token for an hour. B: an access token for two and a refresh token.
    let short = issuer.issue_tokens(new_tokens(None, false)).await.unwrap();
    let mut long = new_tokens(None, true);
    long.access_expires_at = NOW.plus(Duration::from_secs(7200));
    let long = issuer.issue_tokens(long).await.unwrap();
    // C: a redeemed code (a tombstone). D: a code never redeemed.
    let redeemed = issuer.issue_code(code_grant()).await.unwrap();
    assert_eq!(redeem(&*issuer, &redeemed, NOW).await, "redeemed");
    let _unredeemed = issuer.issue_code(code_grant()).await.unwrap();
    // E: a revoked family.
    let revoked = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
    issuer.revoke_family(revoked.family).await.unwrap();
    assert_eq!(store.counts().await, (3, 2, 2));

    store.purge(NOW).await;
    assert_eq!(store.counts().await, (2, 1, 2), "the revoked family went");

    let hour = NOW.plus(Duration::from_secs(3600));
    store.purge(hour).await;
    assert_eq!(
        store.counts().await,
        (1, 1, 1),
        "A and D went; C stays an hour"
    );
    assert_eq!(redeem(&*issuer, &redeemed, hour).await, "replayed");
    let found = issuer.find_access_token(&short.access_token, NOW).await;
    assert!(found.unwrap().is_none());

    let later = NOW.plus(Duration::from_secs(3660));
    store.purge(later).await;
    assert_eq!(store.counts().await, (1, 1, 0), "C's hour is over");
    assert_eq!(redeem(&*issuer, &redeemed, later).await, "invalid");
    let found = issuer.find_access_token(&long.access_token, later).await;
    assert!(found.unwrap().is_some());
    let refresh = long.refresh_token.unwrap();
    assert!(
        issuer
            .find_refresh_token(&refresh, later)
            .await
            .unwrap()
            .is_some()
    );

    store.purge(NOW.plus(Duration::from_secs(86_400))).await;
    assert_eq!(store.counts().await, (0, 0, 0));
}

async fn codes_and_tokens_carry_what_was_granted(store: &dyn Store) {
    let issuer = store.tokens();
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let challenge = CodeChallenge::new(
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        Some("S256"),
        false,
    )
    .unwrap();
    let mut grant = code_grant();
    grant.code_challenge = Some(challenge.clone());
    grant.authorization.scope = Scope::empty();
    let code = issuer.issue_code(grant).await.unwrap();
    let CodeRedemption::Redeemed { grant, family } = issuer.redeem_code(&code, NOW).await.unwrap()
    else {
        panic!("a fresh code redeems");
    };
    assert_eq!(grant.code_challenge.as_ref(), Some(&challenge));
    assert!(grant.code_challenge.unwrap().verify(verifier));
    assert_eq!(grant.redirect_uri, "https://app.example/cb");
    assert_eq!(grant.issued_at, NOW);
    assert_eq!(grant.expires_at, NOW.plus(Duration::from_secs(60)));
    assert!(grant.authorization.scope.is_empty());
    assert_eq!(grant.authorization.user, authorization().user);

    let mut request = new_tokens(Some(family), false);
    request.authorization.scope = Scope::empty();
    let tokens = issuer.issue_tokens(request).await.unwrap();
    let found = issuer
        .find_access_token(&tokens.access_token, NOW)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.jti, tokens.jti);
    assert_eq!(found.family, family);
    assert_eq!(found.issued_at, NOW);
    assert_eq!(found.expires_at, NOW.plus(Duration::from_secs(3600)));
    assert!(found.authorization.scope.is_empty());

    // A client acting for itself: no user.
    let mut request = new_tokens(None, false);
    request.authorization.user = None;
    let tokens = issuer.issue_tokens(request).await.unwrap();
    let found = issuer
        .find_access_token(&tokens.access_token, NOW)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.authorization.user, None);
    assert_eq!(found.authorization.client_id.as_str(), "client");
    assert_eq!(found.authorization.scope, authorization().scope);
}

async fn issuing_into_an_unknown_family_fails(store: &dyn Store) {
    let issuer = store.tokens();
    let error = issuer
        .issue_tokens(new_tokens(Some(FamilyId(42)), true))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Failed);
}

async fn codes_tokens_and_jtis_are_unique_and_not_each_other(store: &dyn Store) {
    let issuer = store.tokens();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..100 {
        let tokens = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
        let access = tokens.access_token.expose_secret().to_owned();
        assert_eq!(access.len(), 43);
        assert_ne!(access, tokens.jti.as_str());
        assert!(seen.insert(access));
        assert!(seen.insert(tokens.jti.to_string()));
        assert!(seen.insert(tokens.refresh_token.unwrap().expose_secret().to_owned()));
        let code = issuer.issue_code(code_grant()).await.unwrap();
        assert!(seen.insert(code.expose_secret().to_owned()));
    }
}

async fn users_authenticate_by_case_insensitive_email_and_password(store: &dyn Store) {
    let bob = store
        .add_user("Bob@Example.com", &Password::new("bob-password-2"))
        .await
        .unwrap();
    assert_eq!(bob.username(), "Bob@Example.com");
    let users = store.users();
    let right = Password::new("bob-password-2");
    let found = users.authenticate("bob@example.COM", &right).await.unwrap();
    assert_eq!(found.as_ref(), Some(&bob));
    let wrong = Password::new("nope");
    let found = users.authenticate("bob@example.com", &wrong).await.unwrap();
    assert_eq!(found, None);
    let found = users.authenticate("eve@example.com", &right).await.unwrap();
    assert_eq!(found, None, "unknown user");
    let found = users.authenticate("not an email", &right).await.unwrap();
    assert_eq!(found, None);
    assert_eq!(users.find_user(bob.id()).await.unwrap(), Some(bob.clone()));
    let nobody = users.find_user(&UserId::new("nobody")).await.unwrap();
    assert_eq!(nobody, None);
    assert!(store.add_user("not-an-email", &right).await.is_err());
    assert!(store.add_user("BOB@example.com", &right).await.is_err());
    let carol = store
        .add_user("carol@example.com", &Password::new("carol-password-3"))
        .await
        .unwrap();
    assert_ne!(carol.id(), bob.id());
}

async fn clients_round_trip(store: &dyn Store) {
    let creds = ClientCredentials::generate().unwrap();
    let chosen = SecretVerifier::argon2id(&ClientSecret::new("a chosen secret")).unwrap();
    let registered = [
        Client::confidential(creds.client_id.as_str(), creds.verifier.clone())
            .name("Generated")
            .redirect_uri("https://app.example/cb")
            .redirect_uri("https://app.example/other?a=1&b=%22two%22")
            .grant_types(GrantType::ALL)
            .scopes("profile email")
            .default_scope("profile")
            .build()
            .unwrap(),
        Client::confidential("chosen", chosen)
            .grant_types([GrantType::ClientCredentials, GrantType::Password])
            .scopes("reports")
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
        Client::public("public")
            .redirect_uri("http://127.0.0.1:8081/callback")
            .grant_types([GrantType::AuthorizationCode])
            .build()
            .unwrap(),
    ];
    for client in &registered {
        store.insert_client(client).await;
    }
    for client in &registered {
        let found = store
            .clients()
            .find_client(client.id().as_str())
            .await
            .unwrap()
            .unwrap();
        assert_same_client(&found, client);
    }
    assert!(
        store
            .clients()
            .find_client("nobody")
            .await
            .unwrap()
            .is_none()
    );

    // Registering again replaces.
    let renamed = Client::public("public")
        .name("Renamed")
        .redirect_uri("http://localhost:8081/callback")
        .grant_types([GrantType::AuthorizationCode, GrantType::Implicit])
        .scopes("email")
        .build()
        .unwrap();
    store.insert_client(&renamed).await;
    let found = store
        .clients()
        .find_client("public")
        .await
        .unwrap()
        .unwrap();
    assert_same_client(&found, &renamed);

    assert!(store.remove_client("public").await);
    assert!(!store.remove_client("public").await);
    assert!(
        store
            .clients()
            .find_client("public")
            .await
            .unwrap()
            .is_none()
    );
}

fn assert_same_client(found: &Client, expected: &Client) {
    assert_eq!(found.id(), expected.id());
    assert_eq!(found.name(), expected.name());
    assert_eq!(
        found.secret().map(SecretVerifier::to_stored),
        expected.secret().map(SecretVerifier::to_stored)
    );
    assert_eq!(found.is_public(), expected.is_public());
    assert_eq!(found.redirect_uris(), expected.redirect_uris());
    for grant in GrantType::ALL {
        assert_eq!(found.allows(grant), expected.allows(grant), "{grant:?}");
    }
    assert_eq!(found.scopes(), expected.scopes());
    assert_eq!(found.default_scope(), expected.default_scope());
    assert_eq!(found.approval(), expected.approval());
}

// ---------------------------------------------------------------------------------------------
// Rules about what SQL stores keep at rest and how they fail

#[allow(dead_code)]
async fn only_digests_and_verifiers_are_at_rest(store: &dyn Store) {
    let issuer = store.tokens();
    let mut secrets: Vec<String> = Vec::new();
    let mut digests: Vec<SecretDigest> = Vec::new();
    let code = issuer.issue_code(code_grant()).await.unwrap();
    secrets.push(code.expose_secret().to_owned());
    digests.push(code.digest());
    let CodeRedemption::Redeemed { family, .. } = issuer.redeem_code(&code, NOW).await.unwrap()
    else {
        panic!("a fresh code redeems");
    };
    let tokens = issuer
        .issue_tokens(new_tokens(Some(family), true))
        .await
        .unwrap();
    let refresh = tokens.refresh_token.unwrap();
    let Rotation::Rotated(rotated) = issuer
        .rotate_refresh_token(&refresh, refresh_request("profile"))
        .await
        .unwrap()
    else {
        panic!("rotates");
    };
    for token in [&tokens.access_token, &rotated.access_token] {
        secrets.push(token.expose_secret().to_owned());
        digests.push(token.digest());
    }
    for token in [&refresh, rotated.refresh_token.as_ref().unwrap()] {
        secrets.push(token.expose_secret().to_owned());
        digests.push(token.digest());
    }
    let creds = ClientCredentials::generate().unwrap();
    secrets.push(creds.secret.expose_secret().to_owned());
    let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
        .grant_types([GrantType::ClientCredentials])
        .build()
        .unwrap();
    store.insert_client(&client).await;
    let password = "a-password-at-rest-1";
    secrets.push(password.to_owned());
    store
        .add_user("rest@example.com", &Password::new(password))
        .await
        .unwrap();

    let values = store.raw_values().await;
    let contains =
        |haystack: &[u8], needle: &[u8]| haystack.windows(needle.len()).any(|w| w == needle);
    for secret in &secrets {
        for value in &values {
            assert!(
                !contains(value, secret.as_bytes()),
                "a secret is stored in the clear"
            );
        }
    }
    for digest in &digests {
        assert!(
            values.iter().any(|v| v.as_slice() == digest.as_bytes()),
            "each code and token is kept as its SHA-256 digest"
        );
    }
    assert!(
        values.iter().any(|v| v.starts_with(b"$argon2id$")),
        "the password is kept as an Argon2id hash"
    );
    assert!(
        values.iter().any(|v| v.starts_with(b"sha256:")),
        "the generated secret is kept as its digest verifier"
    );
}

#[allow(dead_code)]
async fn migrations_are_idempotent(store: &dyn Store) {
    store.migrate().await.unwrap();
    store.migrate().await.unwrap();
    let creds = ClientCredentials::generate().unwrap();
    let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
        .grant_types([GrantType::ClientCredentials])
        .build()
        .unwrap();
    store.insert_client(&client).await;
    store.migrate().await.unwrap();
    let found = store.clients().find_client(creds.client_id.as_str()).await;
    assert!(found.unwrap().is_some(), "migrating again keeps the data");
}

#[allow(dead_code)]
async fn a_database_gone_is_unavailable_not_a_panic(store: &dyn Store) {
    let issuer = store.tokens();
    let tokens = issuer.issue_tokens(new_tokens(None, true)).await.unwrap();
    store.close().await;
    let started = Instant::now();
    let error = store.clients().find_client("any").await.unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Unavailable);
    let error = issuer.issue_code(code_grant()).await.unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Unavailable);
    let error = issuer
        .find_access_token(&tokens.access_token, NOW)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Unavailable);
    let refresh = tokens.refresh_token.unwrap();
    let error = issuer
        .rotate_refresh_token(&refresh, refresh_request("profile"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Unavailable);
    let password = Password::new("whatever-1");
    let error = store
        .users()
        .authenticate("a@example.com", &password)
        .await
        .unwrap_err();
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

// ---------------------------------------------------------------------------------------------
// Concurrent code exchanges: all succeed; the rate is printed, never asserted

/// Issues `n` codes, then redeems each and issues its tokens (access and refresh) from 16 tasks
/// at once: the store work of one authorization code exchange. Prints exchanges per second.
async fn code_exchange_throughput(store: &dyn Store, name: &str) {
    let issuer = store.tokens();
    // Enough to show the store holds up under 16 concurrent exchanges; set
    // GRANTOR_THROUGHPUT_EXCHANGES (say 2000) and run with --nocapture to measure.
    let n = std::env::var("GRANTOR_THROUGHPUT_EXCHANGES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let mut codes = Vec::with_capacity(n);
    for _ in 0..n {
        codes.push(issuer.issue_code(code_grant()).await.unwrap());
    }
    let codes = Arc::new(std::sync::Mutex::new(codes));
    let started = Instant::now();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (issuer, codes) = (issuer.clone(), codes.clone());
            tokio::spawn(async move {
                loop {
                    let Some(code) = codes.lock().unwrap().pop() else {
                        return;
                    };
                    let CodeRedemption::Redeemed { family, .. } =
                        issuer.redeem_code(&code, NOW).await.unwrap()
                    else {
                        panic!("fresh codes redeem");
                    };
                    issuer
                        .issue_tokens(new_tokens(Some(family), true))
                        .await
                        .unwrap();
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
        let fixture = super::Fixture::memory();
        super::code_exchange_throughput(&*fixture.store, "memory").await;
    }

    #[cfg(feature = "sqlite")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let fixture = super::Fixture::sqlite().await;
        super::code_exchange_throughput(&*fixture.store, "sqlite (file, WAL)").await;
        fixture.finish().await;
    }

    #[cfg(feature = "postgres")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        let Some(fixture) = super::Fixture::postgres("throughput::postgres").await else {
            return;
        };
        super::code_exchange_throughput(&*fixture.store, "postgres").await;
        fixture.finish().await;
    }
}
