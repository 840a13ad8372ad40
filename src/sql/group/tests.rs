//! Group commit on a SQLite file: writes share commits, every answered write is on disk, a
//! failing write takes nobody else's with it, and a dropped one leaves nothing.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use super::Outcome;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::sql::{SqliteStore, text};
use crate::store::{
    Authorization, Family, FamilyId, Jti, NewTokens, SingleUseStore, StoreErrorKind, TokenIssuer,
};

/// A database file of its own, removed (with its WAL) when the test ends.
struct File(PathBuf);

impl File {
    fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "grantor-group-{name}-{}-{n}.sqlite3",
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
    let access = SecretDigest::of(&format!("group commit test token {n} {:?}", now()));
    let mut id = [0u8; 16];
    id.copy_from_slice(&access.as_bytes()[..16]);
    let authorization = Authorization::new(
        ClientId::new("client").expect("a client id"),
        None,
        Scope::parse("read").expect("a scope"),
    );
    let issued_at = now();
    let tokens = NewTokens::new(
        Family::New(FamilyId::from_bytes(id)),
        authorization,
        issued_at,
        access,
        Jti::new(format!("jti-{n}")),
        issued_at.plus(Duration::from_secs(3600)),
    );
    (tokens, access)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_share_commits_and_every_answered_one_is_on_disk() {
    let file = File::new("share");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let group = store.group().expect("a file store commits in groups");
    let before = group.commits().await;
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
    let commits = group.commits().await - before;
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
async fn a_failing_write_fails_alone_and_the_rest_of_its_batch_is_kept() {
    let file = File::new("failing");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for n in 0..40 {
        let store = store.clone();
        // Two writes fail (tokens for a family that does not exist) among 38 that succeed: each
        // rolls back at most one batch, so a write runs at most three times.
        if n == 10 || n == 25 {
            let (mut tokens, _) = new_family_token(n);
            tokens.family = Family::Existing(FamilyId::from_bytes([n as u8; 16]));
            bad.push(tokio::spawn(
                async move { store.insert_tokens(tokens).await },
            ));
        } else {
            let (tokens, digest) = new_family_token(n);
            good.push((
                digest,
                tokio::spawn(async move { store.insert_tokens(tokens).await }),
            ));
        }
    }
    for task in bad {
        let error = task
            .await
            .expect("no panic")
            .expect_err("an unknown family");
        assert_eq!(error.kind(), StoreErrorKind::Failed);
    }
    for (digest, task) in good {
        task.await
            .expect("no panic")
            .expect("kept despite its batch");
        let found = store
            .find_access_token(&digest, now())
            .await
            .expect("a lookup");
        assert!(
            found.is_some(),
            "a write rolled back with a failing one ran again"
        );
    }
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_dropped_halfway_leaves_nothing_and_the_next_one_goes_through() {
    let file = File::new("dropped");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let group = store.group().expect("a file store commits in groups");
    let now = now();
    let later = now.plus(Duration::from_secs(60));

    // A writer runs a statement in the open batch, then its future goes away before it hands
    // the transaction back.
    let mut member = group.join().await.expect("the writer connection");
    sqlx::query(text::INSERT_ONCE)
        .bind("dropped")
        .bind(b"half".as_slice())
        .bind(later.as_secs() as i64)
        .bind(now.as_secs() as i64)
        .execute(member.connection())
        .await
        .expect("a statement");
    drop(member);

    assert!(
        store
            .insert_once("next", b"whole", later, now)
            .await
            .expect("the next write"),
        "the next write is kept"
    );
    assert_eq!(
        store.peek("next", now).await.expect("a read"),
        Some(b"whole".to_vec())
    );
    assert_eq!(
        store.peek("dropped", now).await.expect("a read"),
        None,
        "nothing of the dropped write is kept"
    );
    store.close().await;
    let reopened = SqliteStore::connect(&file.url()).await.expect("reopened");
    assert_eq!(reopened.peek("dropped", now).await.expect("a read"), None);
    assert!(reopened.peek("next", now).await.expect("a read").is_some());
    reopened.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_dropped_halfway_rolls_back_the_batch_it_was_in() {
    let file = File::new("dropped-batch");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let group = store.group().expect("a file store commits in groups");
    let now = now();
    let later = now.plus(Duration::from_secs(60));
    let put = |key: &'static str| {
        sqlx::query(text::INSERT_ONCE)
            .bind(key)
            .bind(b"value".as_slice())
            .bind(later.as_secs() as i64)
            .bind(now.as_secs() as i64)
    };

    // The first writer runs its statement and hands the transaction back, waiting for the
    // commit; the second runs its own in the same transaction and is dropped before handing it
    // back, so sqlx rolls the transaction back, the first writer's statement with it.
    let mut first = group.join().await.expect("the writer connection");
    put("first")
        .execute(first.connection())
        .await
        .expect("a statement");
    let (group, batch) = first.hand_back();
    let mut second = group.join().await.expect("the writer connection");
    put("second")
        .execute(second.connection())
        .await
        .expect("a statement");
    drop(second);

    assert!(
        matches!(group.committed(&batch).await, Outcome::RolledBack),
        "the first writer is told to run its statements again"
    );
    for key in ["first", "second"] {
        assert_eq!(store.peek(key, now).await.expect("a read"), None);
    }
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_cannot_get_the_connection_in_time_is_unavailable() {
    let file = File::new("busy");
    let store = SqliteStore::connect(&file.url()).await.expect("a store");
    let group = store.group().expect("a file store commits in groups");
    let now = now();
    // Another writer holds the connection for longer than the acquire timeout.
    let member = group.join().await.expect("the writer connection");
    let started = std::time::Instant::now();
    let error = store
        .insert_once("waiting", b"value", now.plus(Duration::from_secs(60)), now)
        .await
        .expect_err("no connection in time");
    assert_eq!(error.kind(), StoreErrorKind::Unavailable);
    assert!(started.elapsed() >= crate::sql::ACQUIRE_TIMEOUT);
    drop(member);
    assert!(
        store
            .insert_once("next", b"value", now.plus(Duration::from_secs(60)), now)
            .await
            .expect("the connection is free again")
    );
    store.close().await;
}
