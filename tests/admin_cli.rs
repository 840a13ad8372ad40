//! The `grantor` command (feature `cli`) against a temporary SQLite file: every subcommand, its
//! output and exit status, and what it leaves in the store, checked through grantor's own
//! endpoints.

mod common;
#[path = "admin_cli/databases.rs"]
mod databases;
#[path = "admin_cli/operators.rs"]
mod operators;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::{basic, token_request};
use grantor::AuthorizationServer;
use grantor::sql::SqliteStore;
use grantor::store::UserStore as _;

/// A database file of its own, removed (with its WAL) when the test ends.
struct Database(PathBuf);

impl Database {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "grantor-admin-cli-{name}-{}.sqlite3",
            std::process::id()
        ));
        let database = Self(path);
        database.remove();
        database
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

    /// Runs `grantor --database <this> args…` with `stdin` on its standard input.
    fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_grantor"))
            .arg("--database")
            .arg(self.url())
            .args(args)
            .env_remove("GRANTOR_DATABASE_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the grantor command starts");
        child
            .stdin
            .take()
            .expect("its standard input")
            .write_all(stdin.as_bytes())
            .expect("written");
        child.wait_with_output().expect("it ends")
    }

    /// Runs the command, which must succeed; answers its standard output.
    fn ok(&self, args: &[&str]) -> String {
        self.ok_with(args, "")
    }

    fn ok_with(&self, args: &[&str], stdin: &str) -> String {
        let output = self.run(args, stdin);
        assert!(
            output.status.success(),
            "grantor {args:?}: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("UTF-8 output")
    }

    async fn server(&self) -> (AuthorizationServer, SqliteStore) {
        let store = SqliteStore::connect(&self.url()).await.expect("the store");
        let server = AuthorizationServer::builder()
            .issuer("https://auth.example")
            .store(store.clone())
            .keys_in_clear()
            .build()
            .expect("a server");
        (server, store)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The value of `name: value` in the command's output.
fn field<'a>(output: &'a str, name: &str) -> &'a str {
    output
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no {name} in {output:?}"))
}

async fn client_credentials_status(server: &AuthorizationServer, id: &str, secret: &str) -> u16 {
    let request = token_request(Some(&basic(id, secret)), "grant_type=client_credentials");
    server.token(&request).await.status().as_u16()
}

#[tokio::test]
async fn a_client_is_added_listed_rotated_and_removed() {
    let db = Database::new("clients");
    let added = db.ok(&[
        "client",
        "add",
        "reporting",
        "--name",
        "Reporting job",
        "--grant",
        "client_credentials",
        "--scope",
        "read write",
    ]);
    assert_eq!(field(&added, "client_id"), "reporting");
    let secret = field(&added, "client_secret").to_owned();
    assert_eq!(secret.len(), 43, "256 bits in base64url");

    db.ok(&[
        "client",
        "add",
        "spa",
        "--public",
        "--grant",
        "authorization_code",
        "--redirect-uri",
        "https://spa.example/cb",
    ]);
    let listed = db.ok(&["client", "list"]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(
        lines,
        [
            "reporting\tconfidential\tReporting job\tclient_credentials\tread write\t\t\
             administered\t-",
            "spa\tpublic\tspa\tauthorization_code\t\thttps://spa.example/cb\tadministered\t-",
        ]
    );
    assert!(!listed.contains(&secret), "a listing never shows a secret");

    {
        let (server, store) = db.server().await;
        assert_eq!(
            client_credentials_status(&server, "reporting", &secret).await,
            200
        );
        store.close().await;
    }

    let rotated = db.ok(&["client", "rotate-secret", "reporting", "--overlap", "0"]);
    let fresh = field(&rotated, "client_secret").to_owned();
    assert_ne!(fresh, secret);
    {
        let (server, store) = db.server().await;
        assert_eq!(
            client_credentials_status(&server, "reporting", &fresh).await,
            200
        );
        assert_eq!(
            client_credentials_status(&server, "reporting", &secret).await,
            401
        );
        store.close().await;
    }

    // Its tokens die with it: the two client-credentials grants above.
    let removed = db.ok(&["client", "remove", "reporting"]);
    assert_eq!(field(&removed, "revoked_families"), "2");
    assert_eq!(db.ok(&["client", "list"]).lines().count(), 1);
    let again = db.run(&["client", "remove", "reporting"], "");
    assert_eq!(
        again.status.code(),
        Some(1),
        "removing an unknown client is refused"
    );
}

#[tokio::test]
async fn a_client_takes_its_openid_members_and_client_secret_post() {
    let db = Database::new("openid_clients");
    let added = db.ok(&[
        "client",
        "add",
        "rp",
        "--grant",
        "client_credentials",
        "--scope",
        "read",
        "--secret-in-body",
        "--id-token-alg",
        "ES256",
        "--post-logout-redirect-uri",
        "https://rp.example/bye",
        "--backchannel-logout-uri",
        "https://rp.example/backchannel",
    ]);
    let secret = field(&added, "client_secret").to_owned();
    let (server, store) = db.server().await;
    let client = grantor::store::ClientStore::find_client(&store, "rp")
        .await
        .unwrap()
        .expect("the client");
    assert!(client.sends_secret_in_body());
    assert_eq!(
        client.id_token_signing_algorithm(),
        Some(grantor::settings::SigningAlgorithm::ES256)
    );
    assert_eq!(
        client.post_logout_redirect_uris(),
        ["https://rp.example/bye"]
    );
    assert_eq!(
        client.backchannel_logout_uri(),
        Some("https://rp.example/backchannel")
    );
    // The secret in the body works; HTTP Basic is refused to it.
    let in_body = token_request(
        None,
        &format!("grant_type=client_credentials&client_id=rp&client_secret={secret}"),
    );
    assert_eq!(server.token(&in_body).await.status(), 200);
    assert_eq!(client_credentials_status(&server, "rp", &secret).await, 401);
    store.close().await;
}

#[tokio::test]
async fn invalid_or_taken_clients_are_refused_with_status_1() {
    let db = Database::new("refused");
    // The code grant needs a redirect URI.
    let invalid = db.run(
        &["client", "add", "app", "--grant", "authorization_code"],
        "",
    );
    assert_eq!(invalid.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&invalid.stderr).contains("invalid client"));
    db.ok(&["client", "add", "app", "--grant", "client_credentials"]);
    let taken = db.run(
        &["client", "add", "app", "--grant", "client_credentials"],
        "",
    );
    assert_eq!(taken.status.code(), Some(1));
    let rotate = db.run(&["client", "rotate-secret", "nobody"], "");
    assert_eq!(rotate.status.code(), Some(1));
    let usage = db.run(&["client", "add", "app"], "");
    assert_eq!(usage.status.code(), Some(2), "no --grant is a usage error");
}

#[tokio::test]
async fn plain_http_redirect_uris_need_the_administrators_opt_in() {
    let db = Database::new("http-redirects");
    let add = |id: &'static str, extra: &'static [&'static str]| {
        let mut args = vec![
            "client",
            "add",
            id,
            "--grant",
            "authorization_code",
            "--redirect-uri",
            "http://app.example/cb",
        ];
        args.extend_from_slice(extra);
        args
    };
    let refused = db.run(&add("plain", &[]), "");
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("http on a loopback host"), "{stderr}");
    db.ok(&add("plain", &["--allow-insecure-redirect-uris"]));
    // The client it added loads and serves its redirect URI.
    let (server, _store) = db.server().await;
    let request = http::Request::get(
        "/api/oauth/authorize?response_type=code&client_id=plain\
         &redirect_uri=http%3A%2F%2Fapp.example%2Fcb&code_challenge_method=S256\
         &code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    )
    .body(String::new())
    .unwrap();
    let step = server.authorize(&request).await;
    assert!(matches!(step, grantor::Authorize::SignIn(_)), "{step:?}");
}

#[tokio::test]
async fn users_are_added_and_their_passwords_reset_from_standard_input() {
    let db = Database::new("users");
    let added = db.ok_with(
        &["user", "add", "Alice@Example.com"],
        "correct horse battery staple\n",
    );
    let id = field(&added, "user_id").to_owned();
    assert!(!added.contains("staple"), "the password is never printed");
    {
        let store = SqliteStore::connect(&db.url()).await.unwrap();
        let user = signs_in(&store, "correct horse battery staple")
            .await
            .expect("the password authenticates");
        assert_eq!(user.id().as_str(), id);
        store.close().await;
    }

    db.ok_with(
        &["user", "set-password", "alice@example.com"],
        "a different passphrase\r\n",
    );
    {
        let store = SqliteStore::connect(&db.url()).await.unwrap();
        assert!(
            signs_in(&store, "correct horse battery staple")
                .await
                .is_none()
        );
        assert!(signs_in(&store, "a different passphrase").await.is_some());
        store.close().await;
    }

    let taken = db.run(&["user", "add", "alice@example.com"], "another one\n");
    assert_eq!(taken.status.code(), Some(1));
    let nobody = db.run(&["user", "set-password", "bob@example.com"], "x\n");
    assert_eq!(nobody.status.code(), Some(1));
    // A password an administrator sets has at least 8 characters, on add and on reset.
    for args in [
        &["user", "add", "carol@example.com"][..],
        &["user", "set-password", "alice@example.com"][..],
    ] {
        let weak = db.run(args, "12345\n");
        assert_eq!(weak.status.code(), Some(1), "{args:?}");
        let said = String::from_utf8_lossy(&weak.stderr);
        assert!(said.contains("at least 8 characters"), "{said}");
        assert!(!said.contains("12345"), "the password is never printed");
    }
    let empty = db.run(&["user", "add", "carol@example.com"], "");
    assert_eq!(
        empty.status.code(),
        Some(1),
        "no password on standard input"
    );
}

#[tokio::test]
async fn a_users_claims_are_set_from_a_json_object() {
    let db = Database::new("claims");
    db.ok_with(
        &["user", "add", "alice@example.com"],
        "correct horse battery staple\n",
    );
    let claims = r#"{"name": "Alice Example", "email": "alice@example.com",
        "email_verified": true, "sub": "someone-else", "groups": ["admins"]}"#;
    let set = db.ok(&["user", "set-claims", "alice@example.com", claims]);
    assert!(!field(&set, "claims").contains("someone-else"), "{set}");
    {
        let store = SqliteStore::connect(&db.url()).await.unwrap();
        let user = store
            .find_user_by_username("alice@example.com")
            .await
            .unwrap()
            .expect("alice");
        let kept = store.claims(user.id()).await.unwrap().expect("her claims");
        assert_eq!(kept.get("name"), Some(&serde_json::json!("Alice Example")));
        assert_eq!(kept.get("email_verified"), Some(&serde_json::json!(true)));
        assert_eq!(kept.get("groups"), Some(&serde_json::json!(["admins"])));
        assert_eq!(kept.get("sub"), None, "grantor's own claims are dropped");
        store.close().await;
    }
    // Not an object, no such user, or past 8 KiB: refused with status 1, nothing changed.
    let too_big = format!(r#"{{"name": "{}"}}"#, "a".repeat(9 * 1024));
    for (args, why) in [
        (
            ["user", "set-claims", "alice@example.com", "[1, 2]"],
            "a JSON object",
        ),
        (
            ["user", "set-claims", "alice@example.com", "{"],
            "a JSON object",
        ),
        (["user", "set-claims", "bob@example.com", "{}"], "no user"),
        (
            ["user", "set-claims", "alice@example.com", &too_big],
            "bytes as JSON",
        ),
    ] {
        let refused = db.run(&args, "");
        assert_eq!(refused.status.code(), Some(1), "{args:?}");
        let said = String::from_utf8_lossy(&refused.stderr);
        assert!(said.contains(why), "{said}");
    }
    let store = SqliteStore::connect(&db.url()).await.unwrap();
    let user = store
        .find_user_by_username("alice@example.com")
        .await
        .unwrap()
        .expect("alice");
    let kept = store.claims(user.id()).await.unwrap().expect("her claims");
    assert_eq!(kept.get("name"), Some(&serde_json::json!("Alice Example")));
    store.close().await;
}

#[tokio::test]
async fn purge_reports_what_it_deleted_and_bad_urls_are_refused() {
    let db = Database::new("purge");
    let purged = db.ok(&["purge"]);
    assert_eq!(field(&purged, "purged"), "0");
    let output = Command::new(env!("CARGO_BIN_EXE_grantor"))
        .args(["--database", "mysql://localhost/x", "purge"])
        .env_remove("GRANTOR_DATABASE_URL")
        .output()
        .expect("it runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unsupported database URL"));

    // A password on the command line is visible in `ps`: refused before anything connects,
    // without repeating it.
    let output = Command::new(env!("CARGO_BIN_EXE_grantor"))
        .args([
            "--database",
            "postgres://admin:hunter2-secret@localhost/x",
            "purge",
        ])
        .env_remove("GRANTOR_DATABASE_URL")
        .output()
        .expect("it runs");
    assert_eq!(output.status.code(), Some(1));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("GRANTOR_DATABASE_URL"), "{said}");
    assert!(!said.contains("hunter2-secret"), "{said}");
}

/// Alice's account, if `password` verifies against the hash the store keeps for it.
async fn signs_in(store: &SqliteStore, password: &str) -> Option<grantor::store::User> {
    let account = store.find_account("alice@example.com").await.unwrap()?;
    grantor::hash::verify_password(account.password_hash(), password).then(|| account.into_user())
}

/// A host mounts the commands as a subcommand of its own binary: the same commands, run in the
/// host's runtime, through the host's server.
#[tokio::test]
async fn the_commands_mount_as_a_subcommand_of_the_hosts_binary() {
    use clap::Parser as _;
    use std::process::ExitCode;

    #[derive(clap::Parser)]
    enum HostCli {
        /// The host's own command.
        Serve,
        /// The authorization server's administration.
        Auth(grantor::cli::Admin),
    }

    let db = Database::new("mounted");
    let parsed = HostCli::try_parse_from([
        "my-app",
        "auth",
        "--database",
        &db.url(),
        "client",
        "add",
        "mounted-app",
        "--grant",
        "client_credentials",
    ])
    .expect("the host's parser takes the commands");
    let HostCli::Auth(admin) = parsed else {
        panic!("parsed as the host's own command");
    };
    let (server, store) = db.server().await;
    assert_eq!(admin.run(&server).await, ExitCode::SUCCESS);
    let clients = store.clients().await.unwrap();
    assert_eq!(clients.len(), 1);
    assert_eq!(clients[0].id().as_str(), "mounted-app");
    store.close().await;
    assert!(matches!(
        HostCli::try_parse_from(["my-app", "serve"]),
        Ok(HostCli::Serve)
    ));
}

/// Mounted over a server whose users are the host's own, `user add` never writes grantor's
/// table: without the host store's admin seam it refuses, saying why, with status 1.
#[tokio::test]
async fn a_mounted_user_add_refuses_rather_than_write_where_the_server_does_not_read() {
    use clap::Parser as _;
    use std::process::ExitCode;

    #[derive(clap::Parser)]
    enum HostCli {
        Auth(grantor::cli::Admin),
    }

    let db = Database::new("mounted-users");
    let store = SqliteStore::connect(&db.url()).await.unwrap();
    let host_users = std::sync::Arc::new(grantor::MemoryStore::new());
    let server = AuthorizationServer::builder()
        .issuer("https://auth.example")
        .store(store.clone())
        .users(host_users)
        .keys_in_clear()
        .build()
        .unwrap();
    let HostCli::Auth(admin) =
        HostCli::try_parse_from(["my-app", "auth", "user", "add", "carol@example.com"]).unwrap();
    assert_eq!(admin.run(&server).await, ExitCode::from(1));
    assert!(
        store
            .find_account("carol@example.com")
            .await
            .unwrap()
            .is_none()
    );
    // Commands that maintain grantor's store itself say what they need.
    let HostCli::Auth(admin) = HostCli::try_parse_from(["my-app", "auth", "purge"]).unwrap();
    assert_eq!(admin.run(&server).await, ExitCode::from(1));
    store.close().await;
}

/// A relative SQLite path is the caller's working directory's, and the command says which file
/// it opened.
#[test]
fn a_relative_path_is_the_callers_and_is_said() {
    let dir = std::env::temp_dir().join(format!("grantor-admin-cli-cwd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_grantor"))
        .args(["--database", "sqlite:relative.db", "client", "list"])
        .env_remove("GRANTOR_DATABASE_URL")
        .current_dir(&dir)
        .output()
        .expect("it runs");
    assert!(output.status.success(), "{output:?}");
    assert!(
        dir.join("relative.db").is_file(),
        "the file is in the caller's directory"
    );
    let said = String::from_utf8_lossy(&output.stderr);
    let expected = dir.join("relative.db");
    assert!(
        said.contains(&format!("database {}", expected.display())),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `grantor migrate` makes the schema, so that the nodes of a rolling deploy can open the store
/// without migrating.
#[tokio::test]
async fn migrate_makes_the_schema_the_nodes_open() {
    let db = Database::new("migrate");
    assert!(SqliteStore::open(&db.url()).await.is_err(), "no schema yet");
    let said = db.ok(&["migrate"]);
    assert_eq!(field(&said, "migrated"), "yes");
    SqliteStore::open(&db.url()).await.unwrap().close().await;
}

/// `grantor client list | head -1`: output to a pipe its reader closed ends the printing, not
/// in a panic.
#[tokio::test]
async fn a_closed_standard_output_is_no_panic() {
    let db = Database::new("closed-stdout");
    for id in ["one", "two", "three"] {
        db.ok(&["client", "add", id, "--grant", "client_credentials"]);
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_grantor"))
        .args(["--database", &db.url(), "client", "list"])
        .env_remove("GRANTOR_DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the grantor command starts");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("it ends");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(output.status.code(), Some(0), "{said}");
}
