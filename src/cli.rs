//! The administrator's command for grantor's SQL stores (feature `cli`): the `grantor` binary
//! (`cargo install grantor --features cli`), or [`Admin`] mounted as a subcommand of the host's
//! own binary, so that the commands run from the host's crate against the host's database.
//!
//! ```text
//! grantor --database sqlite:/var/lib/auth/grantor.db client add my-app \
//!     --grant authorization_code --grant refresh_token \
//!     --redirect-uri https://app.example/cb --scope "profile email"
//! grantor client list                       # the database from GRANTOR_DATABASE_URL
//! grantor client rotate-secret my-app --overlap 86400
//! grantor client remove my-app
//! echo 'a long passphrase' | grantor user add alice@example.com
//! echo 'another passphrase' | grantor user set-password alice@example.com
//! grantor user set-claims alice@example.com '{"name": "Alice", "email": "alice@example.com"}'
//! grantor user end-sessions alice@example.com
//! grantor user consents alice@example.com
//! grantor user forget-consent alice@example.com my-app
//! grantor keys list
//! grantor keys rotate
//! GRANTOR_NEW_KEY_ENCRYPTION_KEY=… grantor keys reseal
//! grantor purge
//! grantor migrate                           # before a rolling deploy
//! ```
//!
//! A confidential client's secret is generated (256 bits from grantor's CSPRNG), printed once
//! and kept only as its SHA-256 verifier. Passwords are read from the first line of standard
//! input, never from the command line (where other users of the machine could read them), and
//! kept only as Argon2id hashes. The database is `sqlite:PATH` (created and migrated if
//! missing) or, with the `postgres` feature, `postgres://…`; migrations are applied first.
//!
//! `client list` shows each client's tier (administered, self-registered, metadata-document)
//! and, for a self-registered one, its last recorded use; `client forget-idle` deletes the
//! self-registered clients unused for longer than `--idle-for`, with their tokens.
//!
//! **Sessions and consents.** `user end-sessions` ends every single sign-on session of a
//! user. Mounted in the host's binary it goes through
//! [`AuthorizationServer::end_user_sessions`](crate::AuthorizationServer::end_user_sessions),
//! which does what the server's logout does for
//! each session: a logout token to each client issued tokens in it that registered a
//! back-channel logout URI, whose refresh tokens of the session are revoked. Alone, the
//! command has no issuer, signing keys nor outbound to send logout tokens with: it ends the
//! sessions in the store (the browsers must sign in again), sends nothing, revokes nothing,
//! and says so on standard error. `user consents` lists a user's remembered approvals and
//! `user forget-consent` forgets one, alone or mounted alike.
//!
//! **Signing keys.** `keys list` shows the JWT signing keys (ID tokens, JWT access tokens) in
//! the key table: `kid`, algorithm, when it was made (or its period starts) and whether it is
//! current, next, retiring or retired; never their material. `keys rotate` makes a fresh key
//! current now for each algorithm in use, and replaces the next period's too (it is published
//! already, so it was as exposed); the keys replaced stay published as a scheduled rotation
//! keeps them, so what they signed verifies until it expires, and every node signs with the
//! new key within `grantor::jwt::ROTATION_CHECK` (a minute). Both need the `jwt`
//! feature. Keys encrypted at rest are opened with the key-encryption key from `--key-file` or
//! `GRANTOR_KEY_ENCRYPTION_KEY` (mounted, the server's own).
//!
//! **Re-sealing.** `keys reseal` (needs `--database`) seals every piece of key material under
//! a new key-encryption key, read from `--new-key-file` or `GRANTOR_NEW_KEY_ENCRYPTION_KEY`;
//! the old one from `--key-file` or `GRANTOR_KEY_ENCRYPTION_KEY`, none for a database written
//! in the clear (`keys_in_clear`), whose material it seals. Key-encryption keys never come
//! from the command line and are never printed. Every piece is opened before any is written,
//! so a wrong old key changes nothing; a piece already under the new key is left, so a run
//! cut short can be run again. Stop the servers first (a key one makes meanwhile would rest
//! under the old key), then start them with the new key: one started with the old key answers
//! 503 naming the key it needs.
//!
//! Exit status: 0 done, 1 refused (unknown client or user, a taken id or username, an invalid
//! client), 2 a usage error, 3 the database failed.
//!
//! # In the host's own binary
//!
//! Mounted, the commands run against the host's own server, built as the host serves it:
//! users are added, their passwords reset and their claims set through the same seams the
//! server reads them from (the host's own user store, if it has one), and clients are
//! registered, rotated and removed through its client registry. A server that reads users from
//! a store it cannot write (a host `UserStore` without [`user_admin`](crate::AuthorizationServerBuilder::user_admin))
//! refuses `user add` with exit status 1 and says why; nothing is written anywhere else.
//! `client list`, `keys reseal`, `purge` and `migrate` maintain grantor's SQL store itself and
//! need `--database`.
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! use clap::Parser as _;
//! use grantor::{AuthorizationServer, MemoryStore};
//!
//! #[derive(clap::Parser)]
//! enum Cli {
//!     /// Serves the application.
//!     Serve,
//!     /// Administers the authorization server's clients and users.
//!     Auth(grantor::cli::Admin),
//! }
//!
//! /// The server as the host builds it to serve (its own user store, grantor's for the rest).
//! fn server() -> AuthorizationServer {
//!     AuthorizationServer::builder()
//!         .issuer("https://auth.example")
//!         .store(MemoryStore::new())
//!         .build()
//!         .unwrap()
//! }
//!
//! #[tokio::main]
//! async fn main() -> ExitCode {
//!     match Cli::parse() {
//!         Cli::Serve => ExitCode::SUCCESS, // the host's server
//!         Cli::Auth(admin) => admin.run(&server()).await,
//!     }
//! }
//! ```
//!
//! `my-app auth user add carol@example.com` then adds Carol where the server reads her;
//! `my-app auth --database sqlite:auth.sqlite3 client list` lists the clients of that file (a
//! relative SQLite path is the caller's working directory's, and the command says which file
//! it opened).

use std::io::BufRead as _;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::{Args, Parser};

mod commands;

use crate::Password;
use crate::client::{Approval, Client, ClientCredentials, GrantType};
use crate::clock::UnixTime;
use crate::server::AuthorizationServer;
use crate::sql::SqliteStore;
use crate::store::{
    Account, Admin as _, AdminError, ClientActivity as _, ConsentStore as _, MAX_CLAIMS_BYTES,
    Purge as _, StoreError, TokenIssuer as _, User, UserAdmin as _, UserClaims,
    UserSessionStore as _,
};
use commands::{AddClient, ClientCommand, Command, KeysCommand, UserCommand};
use mounted::{Served, on_server};
use print::{describe, print_consents};

/// Prints one line of the command's output. A closed standard output (`grantor client list |
/// head -1`) only stops the printing, where `println!` would panic.
macro_rules! say {
    ($($line:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($line)*);
    }};
}

mod keys;
mod mounted;
mod print;

/// The `grantor` command: [`Admin`] as a binary of its own.
#[derive(Parser)]
#[command(name = "grantor", version)]
struct Cli {
    #[command(flatten)]
    admin: Admin,
}

/// Administers an authorization server's clients and users, and grantor's SQL stores (purging
/// what expired, migrations). Mount it as a subcommand of the host's binary (see the
/// [module docs](self)) and call [`Admin::run`] with the host's server.
#[derive(Args)]
pub struct Admin {
    /// The database: `sqlite:PATH` (created if missing) or `postgres://…` (feature
    /// `postgres`). Mounted in a host's binary, only `client list`, `keys reseal`, `purge` and
    /// `migrate` need it: the other commands go through the host's server.
    #[arg(long, env = "GRANTOR_DATABASE_URL", hide_env_values = true)]
    database: Option<String>,
    #[command(subcommand)]
    command: Command,
}

/// Why a command failed, and its exit status.
enum Failure {
    /// The store refused (1).
    Refused(String),
    /// The database failed (3).
    Store(StoreError),
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

impl From<AdminError> for Failure {
    fn from(error: AdminError) -> Self {
        match error {
            AdminError::Store(error) => Self::Store(error),
            refused => Self::Refused(refused.to_string()),
        }
    }
}

/// The database's scheme only: its URL may carry a password.
impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let database = self.database.as_deref().unwrap_or_default();
        let scheme = database.split(':').next().unwrap_or_default();
        f.debug_struct("Admin")
            .field("database", &format_args!("{scheme}:…"))
            .finish_non_exhaustive()
    }
}

/// The `grantor` binary: parses the process's arguments, runs the command on a runtime of its
/// own, and answers the exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("grantor: cannot start: {error}");
            return ExitCode::from(3);
        }
    };
    runtime.block_on(cli.admin.answer(None))
}

impl Admin {
    /// Runs the command against `server` (inside the host's tokio runtime), printing its
    /// answers on standard output and why it failed on standard error; answers the exit
    /// status. Users and clients change through the seams `server` reads (see the
    /// [module docs](self)); `client list`, `purge` and `migrate` need `--database`.
    pub async fn run(self, server: &AuthorizationServer) -> ExitCode {
        self.answer(Some(server)).await
    }

    async fn answer(self, server: Option<&AuthorizationServer>) -> ExitCode {
        // A password on the command line shows in `ps` to every user of the machine: it goes
        // in the environment (GRANTOR_DATABASE_URL) instead.
        if let Some(database) = &self.database {
            let from_environment =
                std::env::var("GRANTOR_DATABASE_URL").is_ok_and(|url| url == *database);
            if has_password(database) && !from_environment {
                eprintln!(
                    "grantor: a database URL with a password is refused on the command line \
                     (other users see it in ps); set GRANTOR_DATABASE_URL instead"
                );
                return ExitCode::from(1);
            }
        }
        let done = match server {
            Some(server) => match on_server(server, self.command).await {
                Ok(Served::Done) => Ok(()),
                Ok(Served::Store(command)) => run(self.database, command).await,
                Err(failure) => Err(failure),
            },
            None => run(self.database, self.command).await,
        };
        match done {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure::Refused(why)) => {
                eprintln!("grantor: {why}");
                ExitCode::from(1)
            }
            Err(Failure::Store(error)) => {
                eprintln!("grantor: the database failed: {error}");
                ExitCode::from(3)
            }
        }
    }
}

/// Whether `url` carries a password (`scheme://user:password@host/…`).
fn has_password(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|url| url.password().is_some())
}

/// Runs `$body` with `$store` bound to the store the URL names.
macro_rules! with_store {
    ($database:expr, |$store:ident| $body:expr) => {{
        let database: &str = $database;
        #[cfg(feature = "postgres")]
        if database.starts_with("postgres:") || database.starts_with("postgresql:") {
            let $store = crate::sql::PostgresStore::connect(database).await?;
            let done = $body;
            $store.close().await;
            return done;
        }
        if !database.starts_with("sqlite:") {
            return Err(Failure::Refused(format!(
                "unsupported database URL (expected sqlite:PATH{})",
                if cfg!(feature = "postgres") {
                    " or postgres://…"
                } else {
                    "; PostgreSQL needs the postgres feature"
                }
            )));
        }
        let $store = SqliteStore::connect(&sqlite_url(database)?).await?;
        let done = $body;
        $store.close().await;
        done
    }};
}

/// `sqlite:PATH` with a relative path made absolute against the working directory, said on
/// standard error, so that the caller sees which file the command opened.
fn sqlite_url(database: &str) -> Result<String, Failure> {
    let path = database
        .strip_prefix("sqlite://")
        .or_else(|| database.strip_prefix("sqlite:"))
        .unwrap_or(database);
    if path == ":memory:" || std::path::Path::new(path).is_absolute() {
        return Ok(database.to_owned());
    }
    let here = std::env::current_dir()
        .map_err(|error| Failure::Refused(format!("no working directory: {error}")))?;
    let absolute = here.join(path);
    eprintln!("grantor: database {}", absolute.display());
    Ok(format!("sqlite:{}", absolute.display()))
}

/// The claims of `user set-claims`, at most [`MAX_CLAIMS_BYTES`] as JSON.
fn read_claims(claims: &str) -> Result<UserClaims, Failure> {
    let claims = UserClaims::from_stored(claims)
        .ok_or_else(|| Failure::Refused("the claims must be a JSON object".to_owned()))?;
    let kept = claims.to_stored();
    if kept.len() > MAX_CLAIMS_BYTES {
        return Err(Failure::Refused(format!(
            "the claims take {} bytes as JSON, past the {MAX_CLAIMS_BYTES} kept",
            kept.len()
        )));
    }
    Ok(claims)
}

async fn run(database: Option<String>, command: Command) -> Result<(), Failure> {
    let Some(database) = database else {
        return Err(Failure::Refused(
            "no database: give --database or set GRANTOR_DATABASE_URL".to_owned(),
        ));
    };
    with_store!(&database, |store| match command {
        Command::Client(ClientCommand::Add(add)) => add_client(&store, add).await,
        Command::Client(ClientCommand::List) => {
            for client in store.clients().await? {
                let last_used = store.client_last_used(client.id().as_str()).await?;
                say!("{}", describe(&client, last_used));
            }
            Ok(())
        }
        Command::Client(ClientCommand::RotateSecret { client_id, overlap }) => {
            let fresh = ClientCredentials::generate()?;
            let until = now().plus(Duration::from_secs(overlap));
            if !store
                .rotate_client_secret(&client_id, &fresh.verifier, until)
                .await?
            {
                return Err(Failure::Refused(format!(
                    "no confidential client {client_id:?}"
                )));
            }
            say!("client_id: {client_id}");
            say!("client_secret: {}", fresh.secret.expose_secret());
            Ok(())
        }
        Command::Client(ClientCommand::ForgetIdle { idle_for }) => {
            let idle = crate::grant::idle::IdleClients {
                activity: &store,
                registry: &store,
                tokens: crate::store::seam::TokenSeam::Host(&store),
                events: &crate::events::TracingEvents,
                lifetime: Duration::from_secs(idle_for),
                recent: &crate::grant::idle::RecentUses::default(),
            };
            say!("forgotten: {}", idle.sweep(now()).await?);
            Ok(())
        }
        Command::Client(ClientCommand::Remove { client_id }) => {
            if store.remove_client(&client_id).await? {
                // Its tokens die with it (as RFC 7592 §2.3 deletion does).
                let revoked = store.revoke_client(&client_id).await?;
                say!("revoked_families: {revoked}");
                Ok(())
            } else {
                Err(Failure::Refused(format!("no client {client_id:?}")))
            }
        }
        Command::User(UserCommand::Add { username }) => {
            let password = read_password()?;
            let account = Account::generate(&username, &password)?;
            store
                .insert_user(account.user(), account.password_hash())
                .await?;
            let user = account.into_user();
            say!("user_id: {}", user.id().as_str());
            Ok(())
        }
        Command::User(UserCommand::SetPassword { username }) => {
            let password = read_password()?;
            crate::store::check_password(&password)?;
            let user = store
                .find_user_by_username(&username)
                .await?
                .ok_or_else(|| Failure::Refused(format!("no user {username:?}")))?;
            let phc = crate::hash::hash_password(password.expose_secret())?;
            store.set_password_hash(user.id(), &phc).await?;
            Ok(())
        }
        Command::User(UserCommand::SetClaims { username, claims }) => {
            let claims = read_claims(&claims)?;
            let kept = claims.to_stored();
            let user = store
                .find_user_by_username(&username)
                .await?
                .ok_or_else(|| Failure::Refused(format!("no user {username:?}")))?;
            if !store.set_claims(user.id(), &claims).await? {
                return Err(Failure::Refused(format!("no user {username:?}")));
            }
            say!("claims: {kept}");
            Ok(())
        }
        Command::User(UserCommand::EndSessions { username }) => {
            let user = store_user(&store, &username).await?;
            let ended = store.end_user_sessions(user.id(), now()).await?;
            eprintln!(
                "grantor: without the host's server, no logout token was sent and no token \
                 revoked (mount the command in the host's binary for back-channel logout)"
            );
            say!("sessions_ended: {}", ended.len());
            Ok(())
        }
        Command::User(UserCommand::Consents { username }) => {
            let user = store_user(&store, &username).await?;
            print_consents(&store.consents(user.id(), now()).await?);
            Ok(())
        }
        Command::User(UserCommand::ForgetConsent {
            username,
            client_id,
        }) => {
            let user = store_user(&store, &username).await?;
            let client = client_id_of(&client_id)?;
            if store.forget_consent(user.id(), &client).await? {
                Ok(())
            } else {
                Err(no_consent(&username, &client_id))
            }
        }
        Command::Keys(KeysCommand::List(kek)) => {
            keys::list(&*keys::sealed(&store, &kek)?).await
        }
        Command::Keys(KeysCommand::Rotate(kek)) => {
            keys::rotate(&*keys::sealed(&store, &kek)?).await
        }
        Command::Keys(KeysCommand::Reseal { old, new_key_file }) => {
            keys::reseal(&store, &old, new_key_file).await
        }
        Command::Migrate => {
            // Connecting migrated it; asked again, so that a URL through a pooler in
            // transaction mode is refused with where to run the migrations instead.
            store.migrate().await?;
            say!("migrated: yes");
            Ok(())
        }
        Command::Purge => {
            let purged = store.purge_expired(now()).await?;
            say!("purged: {purged}");
            Ok(())
        }
    })
}

async fn add_client<S: crate::store::Admin + ?Sized>(
    store: &S,
    add: AddClient,
) -> Result<(), Failure> {
    let credentials = (!add.public)
        .then(ClientCredentials::generate)
        .transpose()?;
    let builder = match &credentials {
        Some(credentials) => Client::confidential(&add.client_id, credentials.verifier.clone()),
        None => Client::public(&add.client_id),
    };
    let mut builder = builder
        .name(add.name.unwrap_or_else(|| add.client_id.clone()))
        .grant_types(add.grants.into_iter().map(GrantType::from))
        .scopes(add.scope)
        .approval(if add.no_approval {
            Approval::NotRequired
        } else {
            Approval::Required
        });
    for uri in add.redirect_uris {
        builder = builder.redirect_uri(uri);
    }
    for uri in add.post_logout_redirect_uris {
        builder = builder.post_logout_redirect_uri(uri);
    }
    if let Some(uri) = add.backchannel_logout_uri {
        builder = builder.backchannel_logout_uri(uri);
    }
    if let Some(alg) = add.id_token_alg {
        builder = builder.id_token_signing_algorithm(alg.into());
    }
    builder = builder.secret_in_body(add.secret_in_body);
    if add.allow_insecure_redirect_uris {
        builder = builder.allow_insecure_redirect_uris();
    }
    let client = builder
        .build()
        .map_err(|error| Failure::Refused(format!("invalid client: {error}")))?;
    store.register_client(&client).await?;
    say!("client_id: {}", add.client_id);
    if let Some(credentials) = credentials {
        say!("client_secret: {}", credentials.secret.expose_secret());
    }
    Ok(())
}

/// The user `username` names in grantor's own store.
async fn store_user<S: crate::store::UserStore>(
    store: &S,
    username: &str,
) -> Result<User, Failure> {
    let found = store.find_account(username).await?;
    found
        .map(Account::into_user)
        .ok_or_else(|| Failure::Refused(format!("no user {username:?}")))
}

fn client_id_of(client_id: &str) -> Result<crate::client::ClientId, Failure> {
    crate::client::ClientId::new(client_id)
        .map_err(|_| Failure::Refused(format!("no client {client_id:?}")))
}

fn no_consent(username: &str, client_id: &str) -> Failure {
    Failure::Refused(format!(
        "no approval of {username:?} for the client {client_id:?} is remembered"
    ))
}

/// The first line of standard input, without its line ending.
fn read_password() -> Result<Password, Failure> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|error| Failure::Refused(format!("cannot read the password: {error}")))?;
    let password = line.trim_end_matches(['\r', '\n']);
    if password.is_empty() {
        return Err(Failure::Refused("no password on standard input".to_owned()));
    }
    Ok(Password::new(password))
}

fn now() -> UnixTime {
    UnixTime::from(SystemTime::now())
}
