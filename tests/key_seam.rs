//! Key material lives in a seam of its own, apart from the one-time values, and rests encrypted
//! under the host's key when it gives one: whoever reads the database without that key cannot
//! open a sign-in form or sign a token, and a node without it (or with another) refuses the
//! material instead of using it.
#![cfg(feature = "sqlite")]

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::*;
use grantor::clock::UnixTime;
use grantor::signin::Step;
use grantor::sql::SqliteStore;
use grantor::store::{KeyEncryptionKey, KeyStore, SingleUseStore};
use grantor::{ErrorCode, Password};

fn sqlite_url(dir: &std::path::Path) -> String {
    format!("sqlite:{}", dir.join("grantor.db").display())
}

const KEK: [u8; 32] = [0x5a; 32];

/// A node whose sealing keys live in `keys` (encrypted under `kek` when given), every other
/// seam in memory.
fn node(keys: &SqliteStore, kek: Option<[u8; 32]>) -> Fixture {
    let keys: Arc<dyn KeyStore> = Arc::new(keys.clone());
    fixture_with(move |builder| {
        let builder = builder.keys(keys);
        match kek {
            Some(kek) => builder.encrypt_keys_at_rest(KeyEncryptionKey::from_bytes(kek)),
            None => builder.keys_in_clear(),
        }
    })
}

const QUERY: &str = "response_type=code&client_id=demo-client&redirect_uri=http%3A%2F%2F127.0.0.1%3A8081%2Fcallback&state=s";

/// The rows of the key table, as someone who reads the database file sees them.
async fn key_rows(store: &SqliteStore) -> Vec<(String, Vec<u8>)> {
    store
        .read_with(|conn| {
            let mut statement =
                conn.prepare("SELECT name, material FROM grantor_keys ORDER BY name")?;
            let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn sealing_keys_rest_encrypted_under_the_hosts_key_and_open_on_every_node_that_has_it() {
    let dir = fresh_dir("key_seam_encrypted");
    let keys = SqliteStore::connect(&sqlite_url(&dir)).await.unwrap();
    let first = node(&keys, Some(KEK));
    let Step::SignIn(page) = first.server.begin_sign_in(&authorize_request(QUERY)).await else {
        panic!("expected the sign-in page");
    };

    // The database holds one key, and only as ciphertext: version byte, 24-byte nonce, the
    // 32-byte key and a 16-byte tag.
    let rows = key_rows(&keys).await;
    assert_eq!(
        rows.len(),
        1,
        "{:?}",
        rows.iter().map(|r| &r.0).collect::<Vec<_>>()
    );
    let (name, material) = &rows[0];
    assert!(name.starts_with("grantor:seal:"), "{name}");
    assert_eq!(material.len(), 1 + 24 + 32 + 16);
    // Nothing of it went to the single-use values.
    assert_eq!(
        keys.peek(name, UnixTime::from_secs(START)).await.unwrap(),
        None
    );

    // Another node with the same key opens the form sealed by the first.
    let second = node(&keys, Some(KEK));
    let step = second
        .server
        .sign_in(
            &page.session,
            &page.csrf,
            ALICE,
            &Password::new(ALICE_PASSWORD),
        )
        .await;
    assert!(matches!(step, Step::Approve(_)), "{step:?}");

    // A node with another key, or none, refuses the material rather than use it or replace it:
    // 503 (its log says to give the key the material was sealed with), naming no secret,
    // never a form sealed under material it could not authenticate.
    for other in [Some([0x33; 32]), None] {
        let stranger = node(&keys, other);
        let step = stranger
            .server
            .begin_sign_in(&authorize_request(QUERY))
            .await;
        let Step::Error(error) = step else {
            panic!("a node without the key sealed a form: {step:?}");
        };
        assert_eq!(error.code(), ErrorCode::TemporarilyUnavailable);
        assert_eq!(error.status(), 503);
        let cause = std::error::Error::source(&error).map(ToString::to_string);
        let cause = cause.unwrap_or_default();
        assert!(cause.contains("encrypt_keys_at_rest"), "{cause}");
        assert!(!error.description().contains("grantor:seal"), "{error:?}");
    }
    keys.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn without_a_key_encryption_key_the_key_table_holds_the_key_itself() {
    // The host's explicit choice (`keys_in_clear`): the material is secret at rest, in the clear.
    let dir = fresh_dir("key_seam_plain");
    let keys = SqliteStore::connect(&sqlite_url(&dir)).await.unwrap();
    let f = node(&keys, None);
    let step = f.server.begin_sign_in(&authorize_request(QUERY)).await;
    assert!(matches!(step, Step::SignIn(_)), "{step:?}");
    let rows = key_rows(&keys).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].1.len(), 32, "a bare 32-byte key");
    keys.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn keys_kept_before_the_key_table_existed_move_there_on_upgrade() {
    use grantor::sql::rusqlite::{Connection, params};
    use sha2::{Digest as _, Sha384};
    let dir = fresh_dir("key_seam_upgrade");
    let url = sqlite_url(&dir);
    // A database as the previous version left it: migrations up to 11, recorded as sqlx
    // records them, keys in the single-use table beside a one-time value.
    let conn = Connection::open(dir.join("grantor.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, \
         installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, success BOOLEAN NOT NULL, \
         checksum BLOB NOT NULL, execution_time BIGINT NOT NULL)",
    )
    .unwrap();
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(manifest.join("src/sql/migrations/sqlite"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    for file in &files[..11] {
        let name = file.file_name().unwrap().to_str().unwrap();
        let (version, rest) = name.split_once('_').unwrap();
        let sql = std::fs::read_to_string(file).unwrap();
        conn.execute_batch(&sql).unwrap();
        conn.execute(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, \
             execution_time) VALUES (?1, ?2, TRUE, ?3, 1)",
            params![
                version.parse::<i64>().unwrap(),
                rest.trim_end_matches(".sql").replace('_', " "),
                Sha384::digest(sql.as_bytes()).as_slice()
            ],
        )
        .unwrap();
    }
    let far = (START + 86_400) as i64;
    for (key, value) in [
        ("grantor:seal:20833", vec![1u8; 32]),
        ("grantor:jwk:EdDSA:20833", b"a signing key".to_vec()),
        ("grantor:dpop-nonce:7", b"a nonce".to_vec()),
        ("grantor:par:abc", b"a pushed request".to_vec()),
    ] {
        conn.execute(
            "INSERT INTO grantor_single_use (key, value, expires_at) VALUES ($1, $2, $3)",
            params![key, value, far],
        )
        .unwrap();
    }
    drop(conn);

    let store = SqliteStore::connect(&url).await.unwrap();
    let now = UnixTime::from_secs(START);
    assert_eq!(
        store.find_key("grantor:seal:20833", now).await.unwrap(),
        Some(vec![1u8; 32])
    );
    assert_eq!(
        store
            .find_key("grantor:jwk:EdDSA:20833", now)
            .await
            .unwrap(),
        Some(b"a signing key".to_vec()),
        "tokens signed before the upgrade keep verifying"
    );
    assert!(
        store
            .find_key("grantor:dpop-nonce:7", now)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(store.peek("grantor:seal:20833", now).await.unwrap(), None);
    assert_eq!(
        store.peek("grantor:par:abc", now).await.unwrap(),
        Some(b"a pushed request".to_vec()),
        "one-time values stay where they were"
    );
    assert_eq!(store.find_key("grantor:par:abc", now).await.unwrap(), None);
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// `.store(...)` fills only the seams not given: a key seam set before it is kept.
#[tokio::test]
async fn a_key_seam_given_before_the_store_is_kept() {
    let dir = fresh_dir("key_seam_order");
    let keys = SqliteStore::connect(&sqlite_url(&dir)).await.unwrap();
    let rest = grantor::MemoryStore::new();
    let server = grantor::AuthorizationServer::builder()
        .issuer(ISSUER)
        .keys(Arc::new(keys.clone()))
        .store(rest.clone())
        .keys_in_clear()
        .build()
        .unwrap();
    grantor::store::Admin::register_client(
        &rest,
        &grantor::client::Client::public("app")
            .redirect_uri(REDIRECT)
            .grant_types([grantor::client::GrantType::AuthorizationCode])
            .scopes("profile")
            .build()
            .unwrap(),
    )
    .await
    .unwrap();
    let query = format!(
        "response_type=code&client_id=app&redirect_uri={REDIRECT_ENCODED}&scope=profile\
         &code_challenge={CHALLENGE}&code_challenge_method=S256"
    );
    let step = server.begin_sign_in(&authorize_request(&query)).await;
    assert!(matches!(step, Step::SignIn(_)), "{step:?}");
    let rows = key_rows(&keys).await;
    assert_eq!(rows.len(), 1, "the sealing key went to the key seam given");
    let now = UnixTime::from(std::time::SystemTime::now());
    let in_memory = rest.find_key(&rows[0].0, now).await.unwrap();
    assert!(
        in_memory.is_none(),
        "nothing went to the store's own key seam"
    );
    keys.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Turning encryption on over a database whose keys rest in the clear fails nothing: the clear
/// sealing key is never used again, a fresh one is made and kept encrypted beside it, and the
/// sign-in goes on.
#[tokio::test]
async fn turning_encryption_on_replaces_keys_kept_in_the_clear_without_an_error() {
    let dir = fresh_dir("key_seam_turned_on");
    let keys = SqliteStore::connect(&sqlite_url(&dir)).await.unwrap();
    let before = node(&keys, None);
    let step = before.server.begin_sign_in(&authorize_request(QUERY)).await;
    assert!(matches!(step, Step::SignIn(_)), "{step:?}");
    let clear = key_rows(&keys).await;
    assert_eq!(clear.len(), 1);

    let after = node(&keys, Some(KEK));
    let Step::SignIn(page) = after.server.begin_sign_in(&authorize_request(QUERY)).await else {
        panic!("expected the sign-in page");
    };
    // Another node with the key opens the form: both found the same fresh key.
    let other = node(&keys, Some(KEK));
    let step = other
        .server
        .sign_in(
            &page.session,
            &page.csrf,
            ALICE,
            &Password::new(ALICE_PASSWORD),
        )
        .await;
    assert!(matches!(step, Step::Approve(_)), "{step:?}");
    let rows = key_rows(&keys).await;
    let names: Vec<_> = rows.iter().map(|r| &r.0).collect();
    assert_eq!(rows.len(), 2, "{names:?}");
    assert_eq!(rows[0], clear[0], "the clear key is left to expire, unused");
    let (name, material) = &rows[1];
    assert_eq!(name, &format!("{}:resealed", clear[0].0));
    assert_eq!(material.len(), 1 + 24 + 32 + 16, "kept encrypted");
    keys.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
