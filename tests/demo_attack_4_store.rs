//! The demo servers' SQLite file and key material under "Hostile clients 4", over real HTTP on
//! loopback, each check against `axum_server` and `actix_server`:
//!
//! - turning key encryption on (`GRANTOR_KEY_ENCRYPTION_KEY`) for a database whose keys rest
//!   in the clear answers no error: the clear keys are replaced by fresh encrypted ones, and a
//!   sign-in and a token request succeed at once; a wrong key-encryption key, or none over
//!   encrypted keys, answers 503 (never 500) and the log says what to do;
//! - another local user's files planted beside a new SQLite file (a link where its write-ahead
//!   log will be) stop the demo from starting, rather than let the log leak the signing key.

mod demo;

use std::time::Duration;

use demo::http::*;
use demo::{Launch, Server};

each_framework! {
    turning_key_encryption_on_for_an_existing_database_answers_no_error => encryption_turned_on;
    a_link_planted_where_the_sqlite_log_will_be_stops_the_demo => planted_log;
}

/// A key-encryption key, as `openssl rand -base64 32` prints one.
const KEY: &str = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=";
const OTHER_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// A directory of this test's own.
fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("grantor-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// The demo over `store` with JWT access tokens (signed with a key of the key seam), and
/// `GRANTOR_KEY_ENCRYPTION_KEY` set to `key` if any.
fn start(framework: &str, store: &str, key: Option<&str>) -> Server {
    let args = ["--store", store, "--access-tokens", "jwt"];
    let mut launch = Launch::new(&args);
    if let Some(key) = key {
        launch.env = vec![("GRANTOR_KEY_ENCRYPTION_KEY", key)];
    }
    Server::launch(framework, &launch)
}

async fn encryption_turned_on(framework: &str) {
    let dir = fresh_dir(&format!("kek-{framework}"));
    let store = format!("sqlite:{}", dir.join("grantor.sqlite3").display());
    let code_request = [
        ("response_type", "code"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("state", "s"),
    ];

    // Keys in the clear, as the demo keeps them without a key: a signing key, and today's key
    // that seals sign-in forms.
    let server = start(framework, &store, None);
    let base = server.base.clone();
    let tokens = password_grant(&base, DEMO, ALICE, "profile").await;
    assert_eq!(me(&base, Some(access_token(&tokens))).await.status, 200);
    let page = get(&browser(), &authorize_url(&base, &code_request)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    server.kill();
    drop(server);

    // Encryption turned on: no request fails for it.
    let server = start(framework, &store, Some(KEY));
    let base = server.base.clone();
    let tokens = password_grant(&base, DEMO, ALICE, "profile").await;
    let me_now = me(&base, Some(access_token(&tokens))).await;
    assert_eq!(me_now.status, 200, "{}", me_now.body);
    let http = browser();
    let signed_in = sign_in_via_authorize(&http, &base, &code_request, ALICE).await;
    assert!(
        signed_in.status < 500,
        "{}: {}",
        signed_in.status,
        signed_in.body
    );
    let log = server.log_with("replaced by a fresh key").await;
    assert!(log.contains("replaced by a fresh key"), "{log}");
    assert!(!log.contains(KEY), "the key-encryption key is never logged");
    server.kill();
    drop(server);

    // Another key-encryption key: 503 and a log that says what to do, never 500.
    let server = start(framework, &store, Some(OTHER_KEY));
    refused_with_a_hint(&server, "does not open under the key-encryption key").await;
    server.kill();
    drop(server);

    // Keys made encrypted, then no key-encryption key at all: the same.
    let store = format!("sqlite:{}", dir.join("encrypted.sqlite3").display());
    let server = start(framework, &store, Some(KEY));
    password_grant(&server.base, DEMO, ALICE, "profile").await;
    server.kill();
    drop(server);
    let server = start(framework, &store, None);
    refused_with_a_hint(&server, "no key-encryption key was given").await;
    server.kill();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A token request that needs the signing key answers 503 `temporarily_unavailable`, and the
/// log says `hint` and what to call, naming no key-encryption key.
async fn refused_with_a_hint(server: &Server, hint: &str) {
    let refused = token(
        &server.base,
        Some(DEMO),
        &[
            ("grant_type", "password"),
            ("username", ALICE.0),
            ("password", ALICE.1),
            ("scope", "profile"),
        ],
    )
    .await;
    assert_oauth_error(&refused, 503, "temporarily_unavailable");
    let log = server.log_with(hint).await;
    assert!(
        log.contains(hint) && log.contains("encrypt_keys_at_rest"),
        "{log}"
    );
    assert!(!log.contains(KEY) && !log.contains(OTHER_KEY), "{log}");
}

async fn planted_log(framework: &str) {
    let dir = fresh_dir(&format!("planted-{framework}"));
    let file = dir.join("grantor.sqlite3");
    // Where the write-ahead log of a file not made yet will be: a link to a file the
    // planter reads.
    let elsewhere = dir.join("readable-by-the-planter");
    std::fs::write(&elsewhere, b"").expect("a file");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&elsewhere, dir.join("grantor.sqlite3-wal")).expect("a link");
    let binary = demo::example(&format!("{framework}_server"));
    let mut child = std::process::Command::new(binary)
        .args(["--addr", &format!("127.0.0.1:{}", demo::free_port())])
        .args(["--store", &format!("sqlite:{}", file.display())])
        .env_remove("GRANTOR_STORE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the demo runs");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("a child") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the demo started beside a planted log");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut said = String::new();
    use std::io::Read as _;
    child
        .stderr
        .take()
        .expect("piped stderr")
        .read_to_string(&mut said)
        .expect("its stderr");
    assert!(!status.success());
    assert!(said.contains("grantor.sqlite3-wal"), "{said}");
    assert_eq!(std::fs::metadata(&elsewhere).expect("the file").len(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}
