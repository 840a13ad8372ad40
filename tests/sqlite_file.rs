//! The SQLite file is kept to the user who runs the server (CONTRACT.md "Under attack, part
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
