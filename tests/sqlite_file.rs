//! The SQLite file is kept to the user who runs the server (examples/README.md, "Under attack, part
//! 3"): created `0600`, narrowed to `0600` when it was readable by others, and refused when the
//! path is a link or a file another user owns (planted in a shared directory such as `/tmp`).
#![cfg(all(unix, feature = "sqlite"))]

mod common;

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::Path;

use common::fresh_dir;

use grantor::sql::SqliteStore;
use grantor::store::{Purge as _, StoreErrorKind};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o777
}

fn url(path: &Path) -> String {
    format!("sqlite:{}", path.display())
}

#[tokio::test]
async fn a_new_database_file_and_its_wal_are_readable_by_this_user_only() {
    let dir = fresh_dir("sqlite_new");
    let path = dir.join("grantor.db");
    let store = SqliteStore::connect(&url(&path)).await.unwrap();
    // A write, so the write-ahead log exists.
    store
        .purge_expired(grantor::clock::UnixTime::from_secs(1))
        .await
        .unwrap();
    assert_eq!(mode(&path), 0o600);
    let wal = dir.join("grantor.db-wal");
    if wal.exists() {
        assert_eq!(
            mode(&wal),
            0o600,
            "SQLite gives the log the database's mode"
        );
    }
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_existing_file_readable_by_others_is_narrowed_to_this_user() {
    let dir = fresh_dir("sqlite_narrow");
    let path = dir.join("grantor.db");
    std::fs::write(&path, b"").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let store = SqliteStore::connect(&url(&path)).await.unwrap();
    assert_eq!(mode(&path), 0o600);
    store.close().await;
    // Opening it again keeps it as it is.
    let store = SqliteStore::connect(&url(&path)).await.unwrap();
    assert_eq!(mode(&path), 0o600);
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_link_or_a_file_another_user_owns_is_refused() {
    let dir = fresh_dir("sqlite_planted");
    let target = dir.join("elsewhere.db");
    std::fs::write(&target, b"").unwrap();
    let link = dir.join("grantor.db");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let error = SqliteStore::connect(&url(&link)).await.unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Failed);
    assert!(error.to_string().contains("not a regular file"), "{error}");

    // Another user's file: only root can make one here.
    let planted = dir.join("planted.db");
    std::fs::write(&planted, b"").unwrap();
    if std::fs::metadata(&planted).unwrap().uid() == 0 {
        std::os::unix::fs::chown(&planted, Some(65_534), Some(65_534)).unwrap();
        let error = SqliteStore::connect(&url(&planted)).await.unwrap_err();
        assert!(
            error.to_string().contains("owned by another user"),
            "{error}"
        );
    } else {
        eprintln!("not root: the foreign-owner case needs root to make another user's file");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Everything logged at `warn` or above on this thread while `work` runs.
async fn warnings<F: std::future::Future>(work: F) -> (F::Output, String) {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let output = work.await;
    let logged = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    (output, logged)
}

#[tokio::test]
async fn companions_planted_beside_a_new_file_are_refused_when_links_and_narrowed_when_ours() {
    let dir = fresh_dir("sqlite_companions");
    // A link where the log of a file that does not exist yet will be: refused, nothing opened.
    let path = dir.join("grantor.db");
    let elsewhere = dir.join("readable-by-the-planter");
    std::fs::write(&elsewhere, b"").unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join("grantor.db-wal")).unwrap();
    let error = SqliteStore::connect(&url(&path)).await.unwrap_err();
    assert!(error.to_string().contains("grantor.db-wal"), "{error}");
    assert!(error.to_string().contains("not a regular file"), "{error}");
    assert_eq!(std::fs::metadata(&elsewhere).unwrap().len(), 0);

    // A shared-memory index readable by everyone beside a new file: narrowed before use.
    let path = dir.join("second.db");
    let shm = dir.join("second.db-shm");
    std::fs::write(&shm, b"").unwrap();
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (store, logged) = warnings(SqliteStore::connect(&url(&path))).await;
    let store = store.unwrap();
    store
        .purge_expired(grantor::clock::UnixTime::from_secs(1))
        .await
        .unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let file = dir.join(format!("second.db{suffix}"));
        if file.exists() {
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
    }
    assert!(logged.contains("second.db-shm"), "{logged}");
    store.close().await;

    // Another user's log beside a new file: only root can make one here.
    let path = dir.join("third.db");
    let wal = dir.join("third.db-wal");
    std::fs::write(&wal, b"").unwrap();
    if std::fs::metadata(&wal).unwrap().uid() == 0 {
        std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o666)).unwrap();
        std::os::unix::fs::chown(&wal, Some(65_534), Some(65_534)).unwrap();
        let error = SqliteStore::connect(&url(&path)).await.unwrap_err();
        assert!(error.to_string().contains("third.db-wal"), "{error}");
        assert!(
            error.to_string().contains("owned by another user"),
            "{error}"
        );
    } else {
        eprintln!("not root: the foreign-owner case needs root to make another user's file");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn narrowing_a_hosts_own_file_and_changing_its_journal_mode_are_logged() {
    let dir = fresh_dir("sqlite_host_file");
    let path = dir.join("host.db");
    {
        // The host's own database, in SQLite's default rollback-journal mode.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE host_things (id INTEGER PRIMARY KEY)")
            .unwrap();
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (store, logged) = warnings(SqliteStore::connect(&url(&path))).await;
    let store = store.unwrap();
    assert_eq!(mode(&path), 0o600);
    assert!(logged.contains("host.db"), "{logged}");
    assert!(
        logged.contains("0600") && logged.contains("644"),
        "{logged}"
    );
    store.close().await;
    let conn = rusqlite::Connection::open(&path).unwrap();
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    let _ = std::fs::remove_dir_all(&dir);
}
