//! A host that keeps its accounts in a user store of its own and grantor's SQLite store for
//! everything else, written as a downstream crate would: only grantor's public API. Its store
//! passes the users rules of the store contract, a store that breaks one is named with the
//! rule it broke, and a server over both signs the host's users in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use grantor::client::{Client, ClientCredentials, GrantType};
use grantor::store::{
    Account, AdminError, StoreError, UserAdmin, UserClaims, UserStore, contract, username_key,
};
use grantor::store::{User, UserId};
use grantor::{AuthorizationServer, Password};

/// The host's own accounts: by username key, each with its id and hash.
#[derive(Default)]
struct HostUsers {
    accounts: Mutex<HashMap<String, Account>>,
    /// Each account's OpenID Connect claims.
    claims: Mutex<HashMap<UserId, UserClaims>>,
    /// A deliberately broken store for the test that the contract catches it: usernames
    /// matched exactly, not by their key.
    case_sensitive: bool,
}

impl HostUsers {
    fn key(&self, username: &str) -> Option<String> {
        if self.case_sensitive {
            username.contains('@').then(|| username.to_owned())
        } else {
            username_key(username)
        }
    }

    fn accounts(&self) -> std::sync::MutexGuard<'_, HashMap<String, Account>> {
        self.accounts.lock().unwrap()
    }
}

#[async_trait]
impl UserStore for HostUsers {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        let Some(key) = self.key(username) else {
            return Ok(None);
        };
        Ok(self.accounts().get(&key).cloned())
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        let accounts = self.accounts();
        let found = accounts.values().find(|a| a.user().id() == id);
        Ok(found.map(|a| a.user().clone()))
    }

    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        if self.find_user(id).await?.is_none() {
            return Ok(None);
        }
        let claims = self.claims.lock().unwrap();
        Ok(Some(claims.get(id).cloned().unwrap_or_default()))
    }
}

#[async_trait]
impl UserAdmin for HostUsers {
    async fn insert_user(&self, user: &User, password_hash: &str) -> Result<User, AdminError> {
        let key = self
            .key(user.username())
            .ok_or(AdminError::InvalidUsername)?;
        let mut accounts = self.accounts();
        if accounts.contains_key(&key) || accounts.values().any(|a| a.user().id() == user.id()) {
            return Err(AdminError::UsernameTaken);
        }
        accounts.insert(key, Account::new(user.clone(), password_hash));
        Ok(user.clone())
    }

    async fn set_password_hash(
        &self,
        user: &UserId,
        password_hash: &str,
    ) -> Result<bool, StoreError> {
        let mut accounts = self.accounts();
        let Some(account) = accounts.values_mut().find(|a| a.user().id() == user) else {
            return Ok(false);
        };
        *account = Account::new(account.user().clone(), password_hash);
        Ok(true)
    }

    async fn set_claims(&self, user: &UserId, claims: &UserClaims) -> Result<bool, StoreError> {
        if self.find_user(user).await?.is_none() {
            return Ok(false);
        }
        self.claims
            .lock()
            .unwrap()
            .insert(user.clone(), claims.clone());
        Ok(true)
    }
}

#[tokio::test]
async fn a_hosts_own_user_store_keeps_the_users_rules() {
    contract::users(|| async { HostUsers::default() }).await;
}

#[tokio::test]
async fn a_user_store_that_breaks_a_rule_is_named_with_the_rule() {
    let run = tokio::spawn(contract::users(|| async {
        HostUsers {
            case_sensitive: true,
            ..HostUsers::default()
        }
    }));
    let panic = run.await.unwrap_err().into_panic();
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .unwrap_or_default();
    assert!(
        message.contains("users_authenticate_by_case_insensitive_email_and_password"),
        "{message}"
    );
    assert!(
        message.contains("the username in another case"),
        "{message}"
    );
}

#[tokio::test]
async fn the_hosts_users_sign_in_beside_grantors_sqlite_store() {
    let dir = std::env::temp_dir().join(format!(
        "grantor_host_users_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("grantor.db").display());
    let sqlite = grantor::sql::SqliteStore::connect(&url).await.unwrap();
    let creds = ClientCredentials::generate().unwrap();
    let client = Client::confidential(creds.client_id.as_str(), creds.verifier)
        .grant_types([GrantType::Password])
        .scopes("profile")
        .build()
        .unwrap();
    grantor::store::Admin::register_client(&sqlite, &client)
        .await
        .unwrap();
    let users = Arc::new(HostUsers::default());
    let server = AuthorizationServer::builder()
        .issuer("https://auth.example")
        .users(users.clone())
        .user_admin(users.clone())
        .store(sqlite.clone())
        .keys_in_clear()
        .build()
        .unwrap();
    let alice = server
        .add_user("Alice@Example.com", &Password::new("alice-password-1"))
        .await
        .unwrap();
    // The account went to the host's store, not to SQLite.
    let kept = users.find_account("alice@example.com").await.unwrap();
    assert_eq!(kept.map(Account::into_user), Some(alice.clone()));
    assert!(
        sqlite
            .find_account("alice@example.com")
            .await
            .unwrap()
            .is_none()
    );

    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        creds.client_id,
        creds.secret.expose_secret()
    ));
    let sign_in = |password: &str| {
        http::Request::post("/api/oauth/token")
            .header("authorization", format!("Basic {basic}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "grant_type=password&username=alice%40example.com&password={password}"
            ))
            .unwrap()
    };
    let response = server.token(&sign_in("alice-password-1")).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let body: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    assert_eq!(body["scope"], "profile");
    let wrong = server.token(&sign_in("not-her-password")).await;
    assert_eq!(wrong.status(), 400);
    assert!(wrong.body().contains("invalid_grant"), "{}", wrong.body());
    sqlite.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
