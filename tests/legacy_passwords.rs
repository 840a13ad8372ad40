//! A host's own user table, as an older application left it: integer ids, handles instead of
//! email addresses, and password hashes in bcrypt, scrypt, PBKDF2 and Argon2i. Through grantor's
//! public API only: every user signs in through the password grant, the sign-in page and the
//! device page, each leaves with an Argon2id hash, a wrong password changes nothing, and the
//! server writes accounts only where it reads them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use base64::Engine as _;
use grantor::client::{Approval, Client, ClientSecret, GrantType, SecretVerifier};
use grantor::settings::{DeviceFlow, Usernames};
use grantor::signin::Step;
use grantor::store::contract::{self, KnownAccount};
use grantor::store::{
    Account, Admin as _, AdminError, StoreError, User, UserAdmin, UserClaims, UserId, UserStore,
};
use grantor::store::{KnownHashes, PasswordVerifier, Verification};
use grantor::{AuthorizationServer, Decision, MemoryStore, Password};

// Hashes of "correct horse" as the host's earlier applications wrote them (Python's bcrypt,
// Werkzeug, Django and argon2-cffi, each library's own hashing call with a small cost).
const PASSWORD: &str = "correct horse";
const HASHES: [(&str, &str); 5] = [
    (
        "rails_user",
        "$2b$04$We.s4GBTXoIH0XhVIkL/z.FLs5rV1.ptJCsPJncUYFWW/F42uJbsq",
    ),
    (
        "flask_user",
        "scrypt:1024:8:1$ZihRn8yX$bb8d4480a29398df67674093cdbc8368f08c7a6aaa4953b720474939d9714c8e6001c125d96f80f58e9099cb67573a580c2204233bdfff4227fdd43d957171b7",
    ),
    (
        "django_user",
        "pbkdf2_sha256$1000$seasalt$mQnueSakb748zqBAC1tmWVZsZbi2zPGZarEzTGdfmso=",
    ),
    (
        "werkzeug_user",
        "pbkdf2:sha256:1000$yv5WnhuZ$9253bb187fb1a3a92c6002f13a33198495dfa0a00db2d0acaf4706259ee92b1d",
    ),
    (
        "sodium_user",
        "$argon2i$v=19$m=1024,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$DvOFzkGfq+KnIJd6iT3E79g7tvGBhMTX1w99hbpDw54",
    ),
];

const ISSUER: &str = "http://127.0.0.1:8080";
const REDIRECT: &str = "http://127.0.0.1:8081/callback";

/// The host's `users` table: an integer key, a handle, a hash column.
#[derive(Default)]
struct HostUsers {
    rows: Mutex<BTreeMap<i64, (String, String)>>,
}

impl HostUsers {
    fn with_legacy_rows() -> Arc<Self> {
        let users = Self::default();
        for (i, (handle, hash)) in HASHES.iter().enumerate() {
            let id = 1000 + i as i64;
            let row = (handle.to_string(), hash.to_string());
            users.rows.lock().unwrap().insert(id, row);
        }
        Arc::new(users)
    }

    fn hash_of(&self, handle: &str) -> String {
        let rows = self.rows.lock().unwrap();
        let row = rows.values().find(|(h, _)| h == handle).unwrap();
        row.1.clone()
    }

    fn user(id: i64, handle: &str) -> User {
        User::new(UserId::new(id.to_string()), handle)
    }
}

#[async_trait]
impl UserStore for HostUsers {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        let key = username.trim().to_ascii_lowercase();
        let rows = self.rows.lock().unwrap();
        let found = rows.iter().find(|(_, (handle, _))| *handle == key);
        Ok(found.map(|(id, (handle, hash))| Account::new(Self::user(*id, handle), hash.clone())))
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        let Ok(id) = id.as_str().parse::<i64>() else {
            return Ok(None);
        };
        let rows = self.rows.lock().unwrap();
        Ok(rows.get(&id).map(|(handle, _)| Self::user(id, handle)))
    }

    /// Computed from the row, not stored whole.
    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        let user = self.find_user(id).await?;
        Ok(user.map(|user| UserClaims::new().name(user.username())))
    }
}

#[async_trait]
impl UserAdmin for HostUsers {
    /// The table assigns the id: grantor's minted one is not kept.
    async fn insert_user(&self, user: &User, password_hash: &str) -> Result<User, AdminError> {
        let mut rows = self.rows.lock().unwrap();
        let handle = user.username().to_ascii_lowercase();
        if rows.values().any(|(h, _)| *h == handle) {
            return Err(AdminError::UsernameTaken);
        }
        let id = rows.keys().next_back().map_or(1, |last| last + 1);
        rows.insert(id, (handle.clone(), password_hash.to_owned()));
        Ok(Self::user(id, &handle))
    }

    async fn set_password_hash(&self, user: &UserId, hash: &str) -> Result<bool, StoreError> {
        let Ok(id) = user.as_str().parse::<i64>() else {
            return Ok(false);
        };
        let mut rows = self.rows.lock().unwrap();
        Ok(rows
            .get_mut(&id)
            .map(|row| row.1 = hash.to_owned())
            .is_some())
    }

    async fn set_claims(&self, _: &UserId, _: &UserClaims) -> Result<bool, StoreError> {
        Ok(false)
    }
}

/// Handles of 3 to 32 lowercase letters, digits or `_`, in any case.
fn handles() -> Usernames {
    Usernames::custom("Username", |name| {
        let ok = (3..=32).contains(&name.len())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        ok.then(|| name.to_ascii_lowercase())
    })
}

struct Host {
    server: AuthorizationServer,
    users: Arc<HostUsers>,
}

fn host(
    configure: impl FnOnce(grantor::AuthorizationServerBuilder) -> grantor::AuthorizationServerBuilder,
) -> Host {
    let users = HostUsers::with_legacy_rows();
    let store = MemoryStore::new();
    let secret =
        SecretVerifier::digest(&ClientSecret::new("app-secret-app-secret-app-secret-x")).unwrap();
    let app = Client::confidential("app", secret)
        .redirect_uri(REDIRECT)
        .grant_types([GrantType::Password, GrantType::AuthorizationCode])
        .scopes("profile")
        .approval(Approval::NotRequired)
        .build()
        .unwrap();
    let tv = Client::public("tv")
        .grant_types([GrantType::DeviceCode])
        .scopes("profile")
        .build()
        .unwrap();
    futures_block(async {
        store.register_client(&app).await.unwrap();
        store.register_client(&tv).await.unwrap();
    });
    let builder = AuthorizationServer::builder()
        .issuer(ISSUER)
        .insecure_http_issuer()
        .users(users.clone())
        .user_admin(users.clone())
        .usernames(handles())
        .device_flow(DeviceFlow::new())
        .store(store);
    Host {
        server: configure(builder).build().unwrap(),
        users,
    }
}

fn futures_block<F: std::future::Future>(future: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(future))
}

fn password_grant(username: &str, password: &str) -> http::Request<String> {
    let basic =
        base64::engine::general_purpose::STANDARD.encode("app:app-secret-app-secret-app-secret-x");
    let body = form_urlencoded(&[
        ("grant_type", "password"),
        ("username", username),
        ("password", password),
        ("scope", "profile"),
    ]);
    http::Request::post("/api/oauth/token")
        .header("authorization", format!("Basic {basic}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .unwrap()
}

fn form_urlencoded(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}={}",
                url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
            )
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn is_argon2id(hash: &str) -> bool {
    hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_legacy_hash_signs_in_by_the_password_grant_and_leaves_as_argon2id() {
    let host = host(|b| b);
    for (handle, old) in HASHES {
        let wrong = host
            .server
            .token(&password_grant(handle, "correct horsf"))
            .await;
        assert_eq!(wrong.status(), 400, "{handle}: {}", wrong.body());
        assert!(wrong.body().contains("invalid_grant"), "{}", wrong.body());
        assert_eq!(
            host.users.hash_of(handle),
            old,
            "a wrong password changed {handle}"
        );

        // The handle in another case is the same account.
        let upper = handle.to_ascii_uppercase();
        let response = host.server.token(&password_grant(&upper, PASSWORD)).await;
        assert_eq!(response.status(), 200, "{handle}: {}", response.body());
        let upgraded = host.users.hash_of(handle);
        assert!(is_argon2id(&upgraded), "{handle} kept {upgraded}");
        assert!(grantor::hash::verify_password(&upgraded, PASSWORD));
        // And it signs in with the new hash, which is kept as it is.
        let again = host.server.token(&password_grant(handle, PASSWORD)).await;
        assert_eq!(again.status(), 200, "{handle}: {}", again.body());
        assert_eq!(host.users.hash_of(handle), upgraded);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_names_the_hosts_integer_id_as_its_subject() {
    let host = host(|b| b);
    let response = host
        .server
        .token(&password_grant("django_user", PASSWORD))
        .await;
    let body: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    let token = body["access_token"].as_str().unwrap();
    let request = http::Request::get("/api/me")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap();
    let grant = host.server.bearer(&request, None).await.unwrap();
    let user = grant.authorization.user.unwrap();
    assert_eq!(user.id().as_str(), "1002");
    assert_eq!(user.username(), "django_user");
}

#[tokio::test(flavor = "multi_thread")]
async fn upgrades_can_be_turned_off() {
    let host = host(|b| b.rehash_passwords(false));
    let (handle, old) = HASHES[0];
    let response = host.server.token(&password_grant(handle, PASSWORD)).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(host.users.hash_of(handle), old);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_the_rule_refuses_is_a_wrong_password_and_costs_no_lookup() {
    let host = host(|b| b);
    for name in ["carol@example.com", "x", "a b"] {
        let response = host.server.token(&password_grant(name, PASSWORD)).await;
        assert_eq!(response.status(), 400, "{name}");
        assert!(
            response.body().contains("invalid_grant"),
            "{}",
            response.body()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_users_sign_in_on_the_page_and_leave_as_argon2id() {
    let host = host(|b| b);
    for (handle, _) in HASHES {
        let query = format!(
            "response_type=code&client_id=app&redirect_uri={}&scope=profile&state=s",
            url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>()
        );
        let request = http::Request::get(format!("/api/oauth/authorize?{query}"))
            .body(Vec::new())
            .unwrap();
        let Step::SignIn(page) = host.server.begin_sign_in(&request).await else {
            panic!("expected the sign-in page");
        };
        assert!(!page.usernames.are_email());
        let wrong = host
            .server
            .sign_in(
                &page.session,
                &page.csrf,
                handle,
                &Password::new("nope nope"),
            )
            .await;
        assert!(matches!(wrong, Step::SignIn(_)), "{wrong:?}");
        let step = host
            .server
            .sign_in(&page.session, &page.csrf, handle, &Password::new(PASSWORD))
            .await;
        let Step::Respond(response) = step else {
            panic!("expected the redirect with a code, got {step:?}");
        };
        let location = response.headers()["location"].to_str().unwrap();
        assert!(location.contains("code="), "{location}");
        assert!(is_argon2id(&host.users.hash_of(handle)), "{handle}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_users_approve_a_device_from_its_page_and_leave_as_argon2id() {
    let host = host(|b| b);
    for (handle, _) in HASHES {
        let request = http::Request::post("/api/oauth/device_authorization")
            .header("content-type", "application/x-www-form-urlencoded")
            .body("client_id=tv&scope=profile".to_owned())
            .unwrap();
        let started = host.server.device_authorization(&request).await;
        assert_eq!(started.status(), 200, "{}", started.body());
        let started: serde_json::Value = serde_json::from_str(started.body()).unwrap();
        let user_code = started["user_code"].as_str().unwrap();
        let step = host
            .server
            .enter_user_code_signed_in(user_code, handle, &Password::new(PASSWORD))
            .await;
        let Step::Approve(approval) = step else {
            panic!("expected the approval page, got {step:?}");
        };
        assert_eq!(approval.username, handle);
        let step = host
            .server
            .answer_approval(&approval.session, &approval.csrf, Decision::Approve)
            .await;
        assert!(
            matches!(step, Step::DeviceAnswered(Decision::Approve)),
            "{step:?}"
        );
        assert!(is_argon2id(&host.users.hash_of(handle)), "{handle}");
    }
}

/// A directory that knows one user and checks passwords itself (as an LDAP bind would).
struct Directory;

impl PasswordVerifier for Directory {
    fn verify(&self, account: &Account, password: &Password) -> Result<Verification, StoreError> {
        if account.user().username() == "rails_user" {
            let right = password.expose_secret() == "from the directory";
            return Ok(if right {
                Verification::Match
            } else {
                Verification::Mismatch
            });
        }
        KnownHashes.verify(account, password)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hosts_own_verifier_decides_and_is_not_upgraded_unasked() {
    let host = host(|b| b.password_verifier(Arc::new(Directory)));
    let (handle, old) = HASHES[0];
    let ok = host
        .server
        .token(&password_grant(handle, "from the directory"))
        .await;
    assert_eq!(ok.status(), 200, "{}", ok.body());
    assert_eq!(host.users.hash_of(handle), old, "Match asks for no upgrade");
    let refused = host.server.token(&password_grant(handle, PASSWORD)).await;
    assert_eq!(refused.status(), 400);
    let other = host
        .server
        .token(&password_grant("django_user", PASSWORD))
        .await;
    assert_eq!(other.status(), 200, "{}", other.body());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_added_user_gets_the_id_the_hosts_table_assigns() {
    let host = host(|b| b);
    let carol = host
        .server
        .add_user("Carol_1", &Password::new("carol-password-1"))
        .await
        .unwrap();
    assert_eq!(carol.id().as_str(), "1005");
    let response = host
        .server
        .token(&password_grant("carol_1", "carol-password-1"))
        .await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let refused = host
        .server
        .add_user("carol@example.com", &Password::new("carol-password-1"))
        .await;
    assert!(
        matches!(refused, Err(AdminError::InvalidUsername)),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn users_set_after_a_store_are_never_written_to_the_stores_table() {
    // `.store(memory).users(mine)`: the memory store's user admin writes where the server does
    // not read, so the server must refuse to add users rather than answer success.
    for users_last in [true, false] {
        let users = HostUsers::with_legacy_rows();
        let memory = MemoryStore::new();
        let builder = AuthorizationServer::builder().issuer("https://auth.example");
        let builder = if users_last {
            builder.store(memory.clone()).users(users.clone())
        } else {
            builder.users(users.clone()).store(memory.clone())
        };
        let server = builder.build().unwrap();
        let added = server
            .add_user("dave@example.com", &Password::new("dave-password-1"))
            .await;
        assert!(
            matches!(added, Err(AdminError::NoUserAdmin)),
            "users last: {users_last}: {added:?}"
        );
        let message = added.unwrap_err().to_string();
        assert!(message.contains("user_admin"), "{message}");
        assert!(
            memory
                .find_account("dave@example.com")
                .await
                .unwrap()
                .is_none()
        );
    }
}

#[tokio::test]
async fn the_hosts_table_keeps_the_lookup_rules_of_the_contract() {
    let users = HostUsers::with_legacy_rows();
    let known: Vec<KnownAccount<'_>> = HASHES
        .iter()
        .map(|(username, _)| KnownAccount {
            username,
            password: PASSWORD,
        })
        .collect();
    contract::user_lookups_with(&*users, &handles(), &KnownHashes, &known).await;
}

/// The same table, with `find_user` broken the way a string/integer mix-up breaks it.
struct ForgetfulById(Arc<HostUsers>);

#[async_trait]
impl UserStore for ForgetfulById {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        self.0.find_account(username).await
    }

    async fn find_user(&self, _: &UserId) -> Result<Option<User>, StoreError> {
        Ok(None)
    }
}

#[tokio::test]
async fn a_broken_lookup_is_named_with_the_rule_and_the_value() {
    let users = ForgetfulById(HostUsers::with_legacy_rows());
    let known = [KnownAccount {
        username: "django_user",
        password: PASSWORD,
    }];
    let run = tokio::spawn(async move {
        contract::user_lookups_with(&users, &handles(), &KnownHashes, &known).await;
    });
    let panic = run.await.unwrap_err().into_panic();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("find_user_finds_the_user_find_account_found"),
        "{message}"
    );
    assert!(message.contains("find_user(UserId(\"1002\"))"), "{message}");
    // The default rule (email addresses) refuses the handle before any lookup: said so.
    let users = HostUsers::with_legacy_rows();
    let run = tokio::spawn(async move {
        contract::user_lookups(&*users, &known).await;
    });
    let panic = run.await.unwrap_err().into_panic();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("every_username_follows_the_servers_username_rule"),
        "{message}"
    );
}
