//! The writer thread on a SQLite file: writes share commits, every answered write is on disk, a
//! failing or panicking write takes nobody else's with it and leaves nothing of itself, a
//! closed store answers unavailable, and a writer that does not answer in time makes callers
//! unavailable rather than wait. And a database of an earlier schema migrates with its tokens.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use super::{SqliteOptions, SqliteStore, run};
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::sql::columns::secs;
use crate::sql::text;
use crate::store::{
    Authorization, Family, FamilyId, Jti, NewRefreshToken, NewTokens, Purge as _, Rotation,
    SingleUseStore, StoreErrorKind, TokenIssuer,
};

/// A database file of its own, removed (with its WAL) when the test ends.
struct File(PathBuf);

impl File {
    fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "grantor-writer-{name}-{}-{n}.sqlite3",
            std::process::id()
        ));
        let file = Self(path);
        file.remove();
        file
    }

    fn url(&self) -> String {
        format!("sqlite:{}", self.0.display())
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for File {
    fn drop(&mut self) {
        self.remove();
    }
}

fn now() -> UnixTime {
    UnixTime::from(SystemTime::now())
}

/// A client credentials token in a new family, told apart by `n`.
fn new_family_token(n: usize) -> (NewTokens, SecretDigest) {
    let access = SecretDigest::of(&format!("writer test token {n} {:?}", now()));
    let mut id = [0u8; 16];
    id.copy_from_slice(&access.as_bytes()[..16]);
    (
        token_in(Family::New(FamilyId::from_bytes(id)), access, n),
        access,
    )
}

/// An access token `access` of client `client` with scope `read`, in `family`, for an hour.
fn token_in(family: Family, access: SecretDigest, n: usize) -> NewTokens {
    let authorization = Authorization::new(
        ClientId::new("client").expect("a client id"),
        None,
        Scope::parse("read").expect("a scope"),
    );
    let issued_at = now();
    NewTokens::new(
        family,
        authorization,
        issued_at,
        access,
        Jti::new(format!("jti-{n}")),
        issued_at.plus(Duration::from_secs(3600)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_share_commits_and_every_answered_one_is_on_disk() {
    let file = File::new("share");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let before = store.commits();
    const WRITES: usize = 64;
    let mut tasks = Vec::new();
    let mut digests = Vec::new();
    for n in 0..WRITES {
        let (tokens, digest) = new_family_token(n);
        digests.push(digest);
        let store = store.clone();
        tasks.push(tokio::spawn(
            async move { store.insert_tokens(tokens).await },
        ));
    }
    for task in tasks {
        task.await
            .expect("no panic")
            .expect("the write is answered");
    }
    let commits = store.commits() - before;
    assert!(
        commits < WRITES as u64,
        "{WRITES} concurrent writes took {commits} commits"
    );
    store.close().await;

    let reopened = SqliteStore::connect(&file.url()).await.expect("reopened");
    for digest in &digests {
        let found = reopened
            .find_access_token(digest, now())
            .await
            .expect("a lookup");
        assert!(found.is_some(), "an answered write is in the file");
    }
    reopened.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_write_fails_alone_and_leaves_nothing_of_itself() {
    let file = File::new("failing");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let mut tasks = Vec::new();
    let mut good = Vec::new();
    for n in 0..40 {
        let store = store.clone();
        if n == 10 || n == 25 {
            // Its first statement succeeds (a family), its second fails: the family must go.
            let (tokens, _) = new_family_token(n);
            let id = tokens.family.id();
            tasks.push(tokio::spawn(async move {
                let written = store
                    .write(move |conn| {
                        run(
                            conn,
                            text::INSERT_FAMILY,
                            &[
                                &id.to_bytes().as_slice(),
                                &"client",
                                &None::<&str>,
                                &None::<&str>,
                                &"read",
                                &i64::MAX,
                                &"",
                                &None::<&str>,
                            ],
                        )?;
                        Err::<(), _>(StoreError::failed("the second statement failed"))
                    })
                    .await;
                (Some(id), written.is_err())
            }));
        } else {
            let (tokens, digest) = new_family_token(n);
            good.push(digest);
            tasks.push(tokio::spawn(async move {
                (None, store.insert_tokens(tokens).await.is_ok())
            }));
        }
    }
    let mut failed_families = Vec::new();
    for task in tasks {
        let (family, as_expected) = task.await.expect("no panic");
        assert!(as_expected, "each write answers its own outcome");
        failed_families.extend(family);
    }
    for digest in &good {
        assert!(
            store
                .find_access_token(digest, now())
                .await
                .expect("a lookup")
                .is_some(),
            "the other writes of the batch are kept"
        );
    }
    for family in failed_families {
        let id = family.to_bytes().to_vec();
        let rows: i64 = store
            .read_with(move |conn| {
                conn.query_row(
                    "SELECT COUNT(*) FROM grantor_families WHERE id = ?1",
                    [id],
                    |row| row.get(0),
                )
            })
            .await
            .expect("a count");
        assert_eq!(rows, 0, "nothing of a failed write stays");
    }
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_write_fails_alone_and_the_writer_carries_on() {
    let file = File::new("panic");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let panicked: Result<(), StoreError> = store
        .write(|conn| {
            run(conn, text::CLEAR_ATTEMPTS, &[&"key"])?;
            panic!("a bug in a write");
        })
        .await;
    assert!(panicked.is_err(), "the panicking write fails");
    let kept = store
        .insert_once("after", b"v", now().plus(Duration::from_secs(60)), now())
        .await
        .expect("the writer still writes");
    assert!(kept);
    assert_eq!(
        store.peek("after", now()).await.expect("a read"),
        Some(b"v".to_vec())
    );
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_that_does_not_answer_in_time_makes_callers_unavailable() {
    let file = File::new("slow");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let slow = store.clone();
    let holder = tokio::spawn(async move {
        slow.write(|_| {
            std::thread::sleep(crate::sql::bounds::ACQUIRE_TIMEOUT + Duration::from_millis(500));
            Ok(())
        })
        .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let waited = store
        .insert_once("late", b"v", now().plus(Duration::from_secs(60)), now())
        .await;
    let error = waited.expect_err("no answer within the acquire timeout");
    assert_eq!(error.kind(), StoreErrorKind::Unavailable);
    let _ = holder.await;
    store.close().await;
}

#[tokio::test]
async fn a_closed_store_answers_unavailable_and_reopens_with_everything_committed() {
    let file = File::new("closed");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let (tokens, digest) = new_family_token(1);
    store.insert_tokens(tokens).await.expect("a write");
    store.close().await;
    let (tokens, _) = new_family_token(2);
    let write = store.insert_tokens(tokens).await.expect_err("closed");
    assert_eq!(write.kind(), StoreErrorKind::Unavailable);
    let read = store.find_access_token(&digest, now()).await;
    assert_eq!(
        read.expect_err("closed").kind(),
        StoreErrorKind::Unavailable
    );
    let reopened = SqliteStore::connect(&file.url()).await.expect("reopened");
    assert!(
        reopened
            .find_access_token(&digest, now())
            .await
            .expect("a read")
            .is_some()
    );
    reopened.close().await;
}

#[tokio::test]
async fn an_in_memory_database_reads_what_it_wrote() {
    let store = SqliteStore::connect_with(SqliteOptions::in_memory())
        .await
        .expect("a store");
    let (tokens, digest) = new_family_token(3);
    store.insert_tokens(tokens).await.expect("a write");
    let found = store
        .find_access_token(&digest, now())
        .await
        .expect("a read");
    assert!(found.is_some());
    // Migrating again changes nothing.
    store.migrate().await.expect("migrations are idempotent");
    store.close().await;
}

/// How a build of migration 20 kept an access token: keyed by its digest, naming its family by
/// the family's id.
const INSERT_ACCESS_BEFORE_21: &str = "INSERT INTO grantor_access_tokens \
    (digest, family_id, scope, jti, issued_at, expires_at, audience, jkt, act) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// Writes, on a database of migration 20 (before the token tables were laid out by issue), a
/// family with an access and a refresh token, and a revoked family with an access token, as
/// a build of that schema did; answers the live family and the three tokens' digests.
fn write_before_issue_order(path: &std::path::Path) -> (FamilyId, [SecretDigest; 3]) {
    let conn = rusqlite::Connection::open(path).expect("the file");
    super::migrate::run_through(&conn, 20).expect("migrations 1 to 20");
    let issued_at = secs(now());
    let expires_at = secs(now().plus(Duration::from_secs(3600)));
    let live = FamilyId::from_bytes([7; 16]);
    let revoked = FamilyId::from_bytes([9; 16]);
    let access = SecretDigest::of("an access token from before migration 21");
    let refresh = SecretDigest::of("a refresh token from before migration 21");
    let access_of_revoked = SecretDigest::of("a revoked family's access token");
    for (family, token) in [(live, access), (revoked, access_of_revoked)] {
        let family = family.to_bytes();
        run(
            &conn,
            text::INSERT_FAMILY,
            &[
                &family.as_slice(),
                &"client",
                &None::<&str>,
                &None::<&str>,
                &"read",
                &expires_at,
                &"",
                &None::<&str>,
            ],
        )
        .expect("a family");
        run(
            &conn,
            INSERT_ACCESS_BEFORE_21,
            &[
                &token.as_bytes().as_slice(),
                &family.as_slice(),
                &"read",
                &"jti-before",
                &issued_at,
                &expires_at,
                &"",
                &None::<&str>,
                &None::<&str>,
            ],
        )
        .expect("an access token");
    }
    run(
        &conn,
        text::INSERT_REFRESH,
        &[
            &refresh.as_bytes().as_slice(),
            &live.to_bytes().as_slice(),
            &0_i64,
            &issued_at,
            &expires_at,
            &None::<&str>,
        ],
    )
    .expect("a refresh token");
    run(
        &conn,
        text::REVOKE_FAMILY,
        &[&revoked.to_bytes().as_slice()],
    )
    .expect("a revocation");
    (live, [access, refresh, access_of_revoked])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_issued_before_the_issue_order_migration_stay_valid_after_it() {
    let file = File::new("migrate21");
    let (family, [access, refresh, access_of_revoked]) = write_before_issue_order(&file.0);
    let store = SqliteStore::connect(&file.url()).await.expect("migrated");

    let found = store
        .find_access_token(&access, now())
        .await
        .expect("a lookup")
        .expect("the access token issued before the migration is still valid");
    assert_eq!(found.family, family);
    assert_eq!(found.authorization.client_id.as_str(), "client");
    assert_eq!(found.authorization.scope.as_str(), "read");
    let revoked = store.find_access_token(&access_of_revoked, now()).await;
    assert!(
        revoked.expect("a lookup").is_none(),
        "a revoked family stays revoked"
    );

    // The refresh token from before rotates, and its successor's access token is found.
    let next_access = SecretDigest::of("the successor access token");
    let successor = token_in(Family::Existing(family), next_access, 21).with_refresh_token(
        NewRefreshToken::new(
            SecretDigest::of("the successor refresh token"),
            now().plus(Duration::from_secs(3600)),
        ),
    );
    let rotated = store.rotate_refresh_token(&refresh, successor, None).await;
    assert_eq!(rotated.expect("a rotation"), Rotation::Rotated);
    let next = store.find_access_token(&next_access, now()).await;
    assert_eq!(next.expect("a lookup").expect("kept").family, family);

    // Revoking the family reaches the token from before, and purging later leaves nothing.
    store.revoke_family(family).await.expect("a revocation");
    let gone = store.find_access_token(&access, now()).await;
    assert!(gone.expect("a lookup").is_none());
    let purged = store
        .purge_expired(now().plus(Duration::from_secs(86_400)))
        .await
        .expect("a purge");
    assert_eq!(
        purged, 7,
        "three access tokens, two refresh tokens and two families"
    );
    store.close().await;
}

#[test]
fn urls_parse_or_are_refused_with_a_reason() {
    assert!(SqliteOptions::from_url("sqlite::memory:").is_ok());
    assert!(SqliteOptions::from_url("sqlite:/tmp/a.db").is_ok());
    assert!(SqliteOptions::from_url("sqlite:///tmp/a.db").is_ok());
    for bad in ["postgres://x", "sqlite:", "sqlite:a.db?mode=ro"] {
        assert!(SqliteOptions::from_url(bad).is_err(), "{bad}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_write_of_one_statement_fails_alone_and_leaves_nothing_of_itself() {
    let file = File::new("failing-statement");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let twice = FamilyId::from_bytes([5; 16]);
    let mut tasks = Vec::new();
    let mut good = Vec::new();
    for n in 0..40 {
        let store = store.clone();
        if n == 10 || n == 25 {
            // One statement of two rows, the second breaking the uniqueness of family ids
            // after the first is written: SQLite backs out the first, with no savepoint.
            tasks.push(tokio::spawn(async move {
                let written = store
                    .write_statement(move |conn| {
                        run(
                            conn,
                            "INSERT INTO grantor_families (id, client_id, scope, expires_at) \
                             VALUES ($1, 'client', 'read', $2), ($1, 'client', 'read', $2)",
                            &[&twice.to_bytes().as_slice(), &i64::MAX],
                        )
                    })
                    .await;
                written.is_err()
            }));
        } else {
            let (tokens, digest) = new_family_token(n);
            good.push(digest);
            tasks.push(tokio::spawn(async move {
                store.insert_tokens(tokens).await.is_ok()
            }));
        }
    }
    for task in tasks {
        assert!(
            task.await.expect("no panic"),
            "each write answers its own outcome"
        );
    }
    for digest in &good {
        let found = store.find_access_token(digest, now()).await;
        assert!(
            found.expect("a lookup").is_some(),
            "the other writes of the batch are kept"
        );
    }
    let id = twice.to_bytes().to_vec();
    let rows: i64 = store
        .read_with(move |conn| {
            conn.query_row(
                "SELECT COUNT(*) FROM grantor_families WHERE id = ?1",
                [id],
                |row| row.get(0),
            )
        })
        .await
        .expect("a count");
    assert_eq!(rows, 0, "nothing of a failed statement stays");
    store.close().await;
}

/// How a build of migration 21 kept an access token: naming its family's row by the family's id.
const INSERT_ACCESS_BEFORE_22: &str = "INSERT INTO grantor_access_tokens \
    (digest, family, scope, jti, issued_at, expires_at, audience, jkt, act) \
    SELECT $1, seq, $3, $4, $5, $6, $7, $8, $9 FROM grantor_families WHERE id = $2";

/// Writes, on a database of migration 21, a client credentials token (a family row of its own
/// and the token) and a family with an access and a refresh token, as a build of that schema
/// did; answers the two families and the three tokens' digests.
fn write_before_tokens_alone(path: &std::path::Path) -> ([FamilyId; 2], [SecretDigest; 3]) {
    let conn = rusqlite::Connection::open(path).expect("the file");
    super::migrate::run_through(&conn, 21).expect("migrations 1 to 21");
    let issued_at = secs(now());
    let expires_at = secs(now().plus(Duration::from_secs(3600)));
    let alone = FamilyId::from_bytes([3; 16]);
    let refreshed = FamilyId::from_bytes([4; 16]);
    let client_credentials = SecretDigest::of("a client credentials token from before 22");
    let access = SecretDigest::of("an access token from before migration 22");
    let refresh = SecretDigest::of("a refresh token from before migration 22");
    for (family, token) in [(alone, client_credentials), (refreshed, access)] {
        let family = family.to_bytes();
        run(
            &conn,
            text::INSERT_FAMILY,
            &[
                &family.as_slice(),
                &"client",
                &None::<&str>,
                &None::<&str>,
                &"read",
                &expires_at,
                &"",
                &None::<&str>,
            ],
        )
        .expect("a family");
        run(
            &conn,
            INSERT_ACCESS_BEFORE_22,
            &[
                &token.as_bytes().as_slice(),
                &family.as_slice(),
                &"read",
                &"jti-before",
                &issued_at,
                &expires_at,
                &"",
                &None::<&str>,
                &None::<&str>,
            ],
        )
        .expect("an access token");
    }
    run(
        &conn,
        text::INSERT_REFRESH,
        &[
            &refresh.as_bytes().as_slice(),
            &refreshed.to_bytes().as_slice(),
            &0_i64,
            &issued_at,
            &expires_at,
            &None::<&str>,
        ],
    )
    .expect("a refresh token");
    ([alone, refreshed], [client_credentials, access, refresh])
}

/// Rows of the families table.
async fn families(store: &SqliteStore) -> i64 {
    store
        .read_with(|conn| {
            conn.query_row("SELECT COUNT(*) FROM grantor_families", [], |row| {
                row.get(0)
            })
        })
        .await
        .expect("a count")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_issued_before_tokens_were_kept_alone_stay_valid_and_new_ones_need_no_family_row() {
    let file = File::new("migrate22");
    let ([alone, refreshed], [client_credentials, access, refresh]) =
        write_before_tokens_alone(&file.0);
    let store = SqliteStore::connect(&file.url()).await.expect("migrated");
    for (token, family) in [(client_credentials, alone), (access, refreshed)] {
        let found = store
            .find_access_token(&token, now())
            .await
            .expect("a lookup")
            .expect("a token issued before the migration is still valid");
        assert_eq!(found.family, family);
        assert_eq!(found.authorization.client_id.as_str(), "client");
        assert_eq!(found.authorization.scope.as_str(), "read");
    }

    // A token issued alone now is one row: no family row is added, and it is found with its
    // family and authorization.
    assert_eq!(families(&store).await, 2);
    let (tokens, digest) = new_family_token(22);
    let family = tokens.family.id();
    store.insert_tokens(tokens).await.expect("a write");
    assert_eq!(families(&store).await, 2, "no family row for a token alone");
    let found = store.find_access_token(&digest, now()).await;
    let found = found.expect("a lookup").expect("the new token is found");
    assert_eq!(found.family, family);
    assert_eq!(found.authorization.client_id.as_str(), "client");
    assert!(found.authorization.user.is_none());
    // A token alone in a family whose id a family row has is refused, and not kept.
    let taken = SecretDigest::of("a token in a family id taken");
    let refused = store
        .insert_tokens(token_in(Family::New(refreshed), taken, 24))
        .await;
    assert!(refused.is_err(), "a family id taken is refused");
    let kept = store.find_access_token(&taken, now()).await;
    assert!(kept.expect("a lookup").is_none());

    // The refresh token from before rotates in its family.
    let next_access = SecretDigest::of("the successor access token of 22");
    let successor = token_in(Family::Existing(refreshed), next_access, 23).with_refresh_token(
        NewRefreshToken::new(
            SecretDigest::of("the successor refresh token of 22"),
            now().plus(Duration::from_secs(3600)),
        ),
    );
    let rotated = store.rotate_refresh_token(&refresh, successor, None).await;
    assert_eq!(rotated.expect("a rotation"), Rotation::Rotated);

    // Revoking a family reaches the token from before; revoking the client, the new one and
    // the rotated family.
    store.revoke_family(alone).await.expect("a revocation");
    let gone = store.find_access_token(&client_credentials, now()).await;
    assert!(gone.expect("a lookup").is_none());
    let revoked = store.revoke_client("client").await.expect("a revocation");
    assert_eq!(revoked, 2, "the refreshed family and the new token's own");
    for token in [digest, next_access, access] {
        let gone = store.find_access_token(&token, now()).await;
        assert!(gone.expect("a lookup").is_none());
    }
    store.close().await;
}
