//! A database of its own for one test, on SQLite (a temporary file) or on PostgreSQL (a
//! database made in the cluster `GRANTOR_TEST_POSTGRES_URL` names; without it the PostgreSQL
//! tests say `skipped` on stderr and do nothing), with the `grantor` command run against it and
//! the server and seams a test reads it through.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

#[cfg(feature = "postgres")]
use grantor::sql::PostgresStore;
use grantor::sql::SqliteStore;
use grantor::store::{
    Admin, ClientActivity, ConsentStore, KeyStore, TokenIssuer, UserSessionStore, UserStore,
};
use grantor::{AuthorizationServer, AuthorizationServerBuilder};

/// Where a test's database lives.
pub enum Db {
    Sqlite(PathBuf),
    #[cfg(feature = "postgres")]
    Postgres {
        base: String,
        name: String,
    },
}

/// The environment variables the command reads secrets from: never inherited by a test.
const SECRETS: [&str; 3] = [
    "GRANTOR_DATABASE_URL",
    "GRANTOR_KEY_ENCRYPTION_KEY",
    "GRANTOR_NEW_KEY_ENCRYPTION_KEY",
];

impl Db {
    pub fn sqlite(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "grantor-admin-cli-{name}-{}.sqlite3",
            std::process::id()
        ));
        let db = Self::Sqlite(path);
        db.remove_file();
        db
    }

    #[cfg(feature = "postgres")]
    /// A fresh PostgreSQL database, or `None` (said on stderr) without a cluster to make it in.
    pub async fn postgres(name: &str) -> Option<Self> {
        use grantor::sql::sqlx::Connection as _;
        let Ok(url) = std::env::var("GRANTOR_TEST_POSTGRES_URL") else {
            eprintln!("skipped: GRANTOR_TEST_POSTGRES_URL not set ({name})");
            return None;
        };
        let (base, _) = url.rsplit_once('/').expect("a database URL");
        let name = format!("grantor_admin_cli_{name}_{}", std::process::id());
        let mut admin = grantor::sql::sqlx::postgres::PgConnection::connect(&url)
            .await
            .expect("the test cluster");
        for statement in [
            format!("DROP DATABASE IF EXISTS {name}"),
            format!("CREATE DATABASE {name}"),
        ] {
            grantor::sql::sqlx::query(&statement)
                .execute(&mut admin)
                .await
                .expect("a database of the test's own");
        }
        let _ = admin.close().await;
        Some(Self::Postgres {
            base: base.to_owned(),
            name,
        })
    }

    pub fn url(&self) -> String {
        match self {
            Self::Sqlite(path) => format!("sqlite:{}", path.display()),
            #[cfg(feature = "postgres")]
            Self::Postgres { base, name } => format!("{base}/{name}"),
        }
    }

    /// Runs `grantor --database <this> args…` with `stdin` on its standard input and `env`
    /// (and no secret of the test's own environment).
    pub fn run_with(&self, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_grantor"));
        command.arg("--database").arg(self.url()).args(args);
        for variable in SECRETS {
            command.env_remove(variable);
        }
        command.envs(env.iter().copied());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the grantor command starts");
        let mut input = child.stdin.take().expect("its standard input");
        input.write_all(stdin.as_bytes()).expect("written");
        drop(input);
        child.wait_with_output().expect("it ends")
    }

    /// Runs the command with `env`, which must succeed; answers its standard output.
    pub fn ok_env(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        let output = self.run_with(args, "", env);
        assert!(
            output.status.success(),
            "grantor {args:?}: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("UTF-8 output")
    }

    pub fn ok(&self, args: &[&str]) -> String {
        self.ok_env(args, &[])
    }

    pub fn ok_with(&self, args: &[&str], stdin: &str) -> String {
        let output = self.run_with(args, stdin, &[]);
        assert!(output.status.success(), "grantor {args:?}: {output:?}");
        String::from_utf8(output.stdout).expect("UTF-8 output")
    }

    /// The store on this database, as the server opens it.
    pub async fn store(&self) -> Store {
        match self {
            Self::Sqlite(_) => Store::Sqlite(SqliteStore::connect(&self.url()).await.unwrap()),
            #[cfg(feature = "postgres")]
            Self::Postgres { .. } => {
                Store::Postgres(PostgresStore::connect(&self.url()).await.unwrap())
            }
        }
    }

    /// Removes the database (the stores on it closed first).
    pub async fn remove(self) {
        match &self {
            Self::Sqlite(_) => self.remove_file(),
            #[cfg(feature = "postgres")]
            Self::Postgres { base, name } => {
                use grantor::sql::sqlx::Connection as _;
                let url = std::env::var("GRANTOR_TEST_POSTGRES_URL").unwrap_or_default();
                let Ok(mut admin) = grantor::sql::sqlx::postgres::PgConnection::connect(&url).await
                else {
                    return;
                };
                let drop = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                let _ = grantor::sql::sqlx::query(&drop).execute(&mut admin).await;
                let _ = (admin.close().await, base);
            }
        }
    }

    fn remove_file(&self) {
        if let Self::Sqlite(path) = self {
            for suffix in ["", "-wal", "-shm"] {
                let mut path = path.clone().into_os_string();
                path.push(suffix);
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Every seam the tests read or prepare state through.
pub trait Seams:
    UserStore
    + UserSessionStore
    + ConsentStore
    + KeyStore
    + TokenIssuer
    + ClientActivity
    + Admin
    + Send
    + Sync
{
}

impl<S> Seams for S where
    S: UserStore
        + UserSessionStore
        + ConsentStore
        + KeyStore
        + TokenIssuer
        + ClientActivity
        + Admin
        + Send
        + Sync
{
}

/// grantor's SQL store on a test's database.
pub enum Store {
    Sqlite(SqliteStore),
    #[cfg(feature = "postgres")]
    Postgres(PostgresStore),
}

impl Store {
    pub fn seams(&self) -> &dyn Seams {
        match self {
            Self::Sqlite(store) => store,
            #[cfg(feature = "postgres")]
            Self::Postgres(store) => store,
        }
    }

    /// A server over this store at `https://auth.example`, as `configure` sets it up.
    pub fn server(
        &self,
        configure: impl FnOnce(AuthorizationServerBuilder) -> AuthorizationServerBuilder,
    ) -> AuthorizationServer {
        let builder = AuthorizationServer::builder().issuer("https://auth.example");
        let builder = match self {
            Self::Sqlite(store) => builder.store(store.clone()),
            #[cfg(feature = "postgres")]
            Self::Postgres(store) => builder.store(store.clone()),
        };
        configure(builder).build().expect("a server")
    }

    pub async fn close(self) {
        match self {
            Self::Sqlite(store) => store.close().await,
            #[cfg(feature = "postgres")]
            Self::Postgres(store) => store.close().await,
        }
    }
}

/// Runs `$test` (an async fn taking a [`Db`]) on a SQLite file and on a PostgreSQL database,
/// as two tests named `sqlite` and `postgres` in a module named after it.
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let db = $crate::databases::Db::sqlite(stringify!($test));
                super::$test(&db).await;
                db.remove().await;
            }

            #[cfg(feature = "postgres")]
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some(db) = $crate::databases::Db::postgres(stringify!($test)).await else {
                    return;
                };
                super::$test(&db).await;
                db.remove().await;
            }
        }
    )*};
}
pub(crate) use on_both_stores;
