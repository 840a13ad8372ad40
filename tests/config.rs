//! The builder applies grantor's safe defaults and refuses incoherent configurations; secrets stay
//! out of every `Debug` output.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use grantor::store::{AccessToken, Account, UserAdmin as _, UserStore as _};
use grantor::*;
use grantor::{client::*, settings::*, store::*};

fn builder() -> AuthorizationServerBuilder {
    AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(MemoryStore::new())
}

#[test]
fn issuer_and_stores_are_required() {
    let no_issuer = AuthorizationServer::builder()
        .clients(Arc::new(MemoryStore::new()))
        .build();
    assert_eq!(no_issuer.unwrap_err(), ConfigError::Missing("issuer"));
    let no_stores = AuthorizationServer::builder().issuer(ISSUER).build();
    assert_eq!(no_stores.unwrap_err(), ConfigError::Missing("clients"));
    assert!(builder().build().is_ok());
}

#[test]
fn state_every_node_shares_is_never_silently_this_processs_memory() {
    let store = Arc::new(MemoryStore::new());
    let seams = || {
        AuthorizationServer::builder()
            .issuer(ISSUER)
            .clients(store.clone())
            .users(store.clone())
            .tokens(store.clone())
    };
    assert_eq!(
        seams().build().unwrap_err(),
        ConfigError::SharedState("sessions")
    );
    let sessions = seams().sessions(store.clone());
    assert_eq!(
        sessions.build().unwrap_err(),
        ConfigError::SharedState("attempt_counter")
    );
    let counted = seams()
        .sessions(store.clone())
        .attempt_counter(store.clone());
    assert_eq!(
        counted.build().unwrap_err(),
        ConfigError::SharedState("single_use")
    );
    let single = seams()
        .sessions(store.clone())
        .attempt_counter(store.clone())
        .single_use(store.clone());
    assert_eq!(
        single.build().unwrap_err(),
        ConfigError::SharedState("keys")
    );
    let keyed = || {
        seams()
            .sessions(store.clone())
            .attempt_counter(store.clone())
            .single_use(store.clone())
            .keys(store.clone())
    };
    assert_eq!(
        keyed().build().unwrap_err(),
        ConfigError::SharedState("user_sessions")
    );
    assert_eq!(
        keyed().user_sessions(store.clone()).build().unwrap_err(),
        ConfigError::SharedState("consents")
    );
    let all = keyed().user_sessions(store.clone()).consents(store.clone());
    assert!(all.build().is_ok());
    assert!(seams().single_node().build().is_ok());
}

#[test]
fn issuer_must_be_an_http_url_without_query_or_fragment() {
    for bad in [
        "auth.example",
        "ftp://auth.example",
        "https://auth.example/?a=b",
        "https://auth.example/#f",
        "https://user:pw@auth.example",
    ] {
        assert_eq!(
            builder().issuer(bad).build().unwrap_err(),
            ConfigError::Issuer,
            "{bad}"
        );
    }
    let server = builder()
        .issuer("https://auth.example/tenant")
        .build()
        .unwrap();
    assert_eq!(server.issuer(), "https://auth.example/tenant");
}

/// Plain HTTP loses the sign-in cookie's `Secure` and `__Host-` and puts tokens on the network
/// in the clear: only loopback hosts get it without the host saying it is meant.
#[test]
fn an_http_issuer_needs_a_loopback_host_or_an_explicit_opt_in() {
    for loopback in [
        "http://127.0.0.1:8080",
        "http://127.7.0.1",
        "http://[::1]:8080",
        "http://localhost:3000/auth",
        "http://LOCALHOST",
    ] {
        assert!(builder().issuer(loopback).build().is_ok(), "{loopback}");
    }
    for public in [
        "http://auth.example",
        "http://0.0.0.0:8080",
        "http://192.168.1.10",
        "http://localhost.example",
    ] {
        assert_eq!(
            builder().issuer(public).build().unwrap_err(),
            ConfigError::InsecureIssuer,
            "{public}"
        );
        let meant = builder().issuer(public).insecure_http_issuer().build();
        assert!(meant.is_ok(), "{public}");
    }
}

#[test]
fn code_lifetime_is_capped_at_ten_minutes() {
    let too_long = builder().code_lifetime(MAX_CODE_LIFETIME + Duration::from_secs(1));
    assert_eq!(too_long.build().unwrap_err(), ConfigError::CodeLifetime);
    let zero = builder().code_lifetime(Duration::ZERO);
    assert_eq!(zero.build().unwrap_err(), ConfigError::CodeLifetime);
    assert!(builder().code_lifetime(MAX_CODE_LIFETIME).build().is_ok());
    let zero_access = builder().access_token_lifetime(Duration::from_millis(10));
    assert_eq!(zero_access.build().unwrap_err(), ConfigError::ZeroLifetime);
}

#[test]
fn limits_and_realm_are_checked() {
    let inverted = builder().max_body_bytes(10).max_parameter_bytes(20);
    assert_eq!(inverted.build().unwrap_err(), ConfigError::Limits);
    let quoted = builder().realm("a\"b");
    assert_eq!(quoted.build().unwrap_err(), ConfigError::Realm);
}

#[tokio::test]
async fn the_realm_names_the_basic_challenge() {
    let f = fixture_with(|b| b.realm("grantor demo"));
    let response = f.token(None, "grant_type=client_credentials").await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Basic realm=\"grantor demo\""
    );
}

#[tokio::test]
async fn lifetimes_come_from_the_builder() {
    let f = fixture_with(|b| b.access_token_lifetime(Duration::from_secs(120)));
    let response = f
        .token(Some(&f.fast_basic()), "grant_type=client_credentials")
        .await;
    assert_eq!(json(&response)["expires_in"], 120);
    let access = json(&response)["access_token"].as_str().unwrap().to_owned();
    f.clock.advance(Duration::from_secs(119));
    assert!(f.access_is_active(&access).await);
    f.clock.advance(Duration::from_secs(1));
    assert!(!f.access_is_active(&access).await);
}

#[tokio::test]
async fn secrets_never_appear_in_debug_output() {
    let f = fixture();
    let creds = ClientCredentials::generate().unwrap();
    let pending = f
        .pending(&format!(
            "response_type=code&client_id=demo-client&redirect_uri={REDIRECT_ENCODED}&state=s"
        ))
        .await;
    let response = f
        .token(Some(&f.fast_basic()), "grant_type=client_credentials")
        .await;
    let access = json(&response)["access_token"].as_str().unwrap().to_owned();
    let rendered = format!(
        "{creds:?} {:?} {pending:?} {:?} {:?} {:?}",
        f.server,
        AccessToken::new(access.clone()),
        Password::new(ALICE_PASSWORD),
        grantor::store::ClientStore::find_client(&f.store, "demo-client")
            .await
            .unwrap(),
    );
    for secret in [
        creds.secret.expose_secret(),
        access.as_str(),
        ALICE_PASSWORD,
        "demo-secret",
        &f.fast_secret,
        "$argon2id$",
    ] {
        assert!(!rendered.contains(secret), "{secret} leaked: {rendered}");
    }
}

/// The host's own user store, given before `store`, is the one users sign in against and the
/// one the server adds users to; the store supplies every other seam. The same holds with the
/// calls the other way round. Without the host's user admin seam, adding a user is refused
/// rather than written where sign-in never looks.
#[tokio::test]
async fn a_user_store_given_before_the_store_is_kept() {
    let host_users = Arc::new(MemoryStore::new());
    let rest = MemoryStore::new();
    let creds = ClientCredentials::generate().unwrap();
    let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
        .grant_types([GrantType::Password])
        .scopes("profile")
        .build()
        .unwrap();
    rest.register_client(&client).await.unwrap();
    let dave = Account::generate("dave@example.com", &Password::new("dave-password-4")).unwrap();
    rest.insert_user(dave.user(), dave.password_hash())
        .await
        .unwrap();
    let basic = basic(creds.client_id.as_str(), creds.secret.expose_secret());
    let users_first = AuthorizationServer::builder()
        .issuer(ISSUER)
        .users(host_users.clone())
        .user_admin(host_users.clone())
        .store(rest.clone())
        .build()
        .unwrap();
    let users_last = AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(rest.clone())
        .users(host_users.clone())
        .build()
        .unwrap();
    users_first
        .add_user("carol@example.com", &Password::new("carol-password-3"))
        .await
        .unwrap();
    assert!(
        host_users
            .find_account("carol@example.com")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        rest.find_account("carol@example.com")
            .await
            .unwrap()
            .is_none()
    );
    for server in [users_first, users_last] {
        let password = |user: &str, pw: &str| {
            token_request(
                Some(&basic),
                &format!("grant_type=password&username={user}&password={pw}"),
            )
        };
        let carol = server
            .token(&password("carol%40example.com", "carol-password-3"))
            .await;
        assert_eq!(carol.status(), 200, "{}", carol.body());
        // The store's own users are not the server's: its user seam is the host's.
        let dave = server
            .token(&password("dave%40example.com", "dave-password-4"))
            .await;
        assert_error(&dave, 400, "invalid_grant");
    }
    let no_user_admin = AuthorizationServer::builder()
        .issuer(ISSUER)
        .users(host_users)
        .store(rest.clone())
        .build()
        .unwrap();
    let refused = no_user_admin
        .add_user("erin@example.com", &Password::new("erin-password-5"))
        .await;
    assert!(
        matches!(refused, Err(AdminError::NoUserAdmin)),
        "{refused:?}"
    );
    assert!(
        rest.find_account("erin@example.com")
            .await
            .unwrap()
            .is_none()
    );
}

/// A host's own key seam over its database: durable, as every key store is unless it says not.
struct HostKeys(MemoryStore);

#[async_trait::async_trait]
impl KeyStore for HostKeys {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: clock::UnixTime,
        now: clock::UnixTime,
    ) -> Result<bool, StoreError> {
        self.0.insert_key(name, material, expires_at, now).await
    }

    async fn find_key(
        &self,
        name: &str,
        now: clock::UnixTime,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.find_key(name, now).await
    }
}

#[tokio::test]
async fn a_durable_key_store_needs_an_explicit_choice_of_how_keys_rest() {
    let durable = || builder_with_keys(Arc::new(HostKeys(MemoryStore::new())));
    let refused = durable().build().unwrap_err();
    assert_eq!(refused, ConfigError::KeysAtRest);
    // The error says exactly what to call.
    let said = refused.to_string();
    assert!(said.contains(".encrypt_keys_at_rest("), "{said}");
    assert!(said.contains(".keys_in_clear()"), "{said}");
    assert!(durable().keys_in_clear().build().is_ok());
    let key = KeyEncryptionKey::from_bytes([7; 32]);
    assert!(durable().encrypt_keys_at_rest(key.clone()).build().is_ok());
    let both = durable().encrypt_keys_at_rest(key).keys_in_clear().build();
    assert_eq!(both.unwrap_err(), ConfigError::KeysAtRestTwice);
    // The memory store, and the state of one node in this process's memory, need no choice.
    assert!(builder().build().is_ok());
    let store = Arc::new(MemoryStore::new());
    let one_node = AuthorizationServer::builder()
        .issuer(ISSUER)
        .clients(store.clone())
        .users(store.clone())
        .tokens(store)
        .single_node();
    assert!(one_node.build().is_ok());

    #[cfg(feature = "sqlite")]
    {
        // An SQLite file is durable; an SQLite database in memory is not.
        let dir = fresh_dir("config_keys_at_rest");
        let url = format!("sqlite:{}", dir.join("grantor.db").display());
        let file = grantor::sql::SqliteStore::connect(&url).await.unwrap();
        let sqlite = || {
            AuthorizationServer::builder()
                .issuer(ISSUER)
                .store(file.clone())
        };
        assert_eq!(sqlite().build().unwrap_err(), ConfigError::KeysAtRest);
        assert!(sqlite().keys_in_clear().build().is_ok());
        file.close().await;
        let in_memory = grantor::sql::SqliteStore::connect("sqlite::memory:")
            .await
            .unwrap();
        let in_memory = AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(in_memory);
        assert!(in_memory.build().is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn builder_with_keys(keys: Arc<dyn KeyStore>) -> AuthorizationServerBuilder {
    AuthorizationServer::builder()
        .issuer(ISSUER)
        .keys(keys)
        .store(MemoryStore::new())
}
