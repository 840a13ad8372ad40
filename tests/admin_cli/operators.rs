//! The operator's commands on SQLite and PostgreSQL alike: clients listed with their tier and
//! last use and idle ones forgotten, a user's sessions ended (alone, and mounted with
//! back-channel logout), consents listed and forgotten, signing keys listed and rotated early,
//! key material re-sealed from the clear and from one key-encryption key to another.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser as _;
use grantor::audience::Audience;
use grantor::client::{Client, ClientId, GrantType};
use grantor::clock::UnixTime;
use grantor::jwt::{JwtAccessTokens, SigningAlgorithm};
use grantor::outbound::{Delivery, Outbound, OutboundPost};
use grantor::settings::OpenIdConnect;
use grantor::store::{
    Authorization, Consent, Family, FamilyId, Jti, KeyEncryptionKey, NewRefreshToken, NewTokens,
    SecretDigest, User, UserSession,
};
use grantor::{AuthorizationServer, AuthorizationServerBuilder, Scope};

use super::common::{basic, token_request};
use super::databases::{Db, on_both_stores};
use super::field;

on_both_stores![
    client_list_shows_each_clients_tier_and_last_use,
    idle_self_registered_clients_are_forgotten,
    a_users_sessions_end_in_the_store_alone,
    mounted_a_users_sessions_end_with_back_channel_logout,
    a_users_consents_are_listed_and_one_forgotten,
    signing_keys_are_listed_and_rotated_early,
    key_material_written_in_the_clear_is_sealed_then_resealed,
];

/// The host's parser with the commands mounted.
#[derive(clap::Parser)]
enum HostCli {
    Auth(grantor::cli::Admin),
}

async fn mounted(server: &AuthorizationServer, args: &[&str]) -> ExitCode {
    let args = ["my-app", "auth"].iter().chain(args);
    let HostCli::Auth(admin) = HostCli::try_parse_from(args).expect("the commands parse");
    admin.run(server).await
}

fn now() -> UnixTime {
    UnixTime::from(std::time::SystemTime::now())
}

/// A client that registered itself (it holds a registration access token).
fn self_registered(id: &str) -> Client {
    Client::public(id)
        .grant_types([GrantType::AuthorizationCode])
        .redirect_uri("https://app.example/cb")
        .registration_access_token(SecretDigest::of("a registration access token"))
        .build()
        .expect("a client")
}

async fn client_list_shows_each_clients_tier_and_last_use(db: &Db) {
    db.ok(&[
        "client",
        "add",
        "admin-app",
        "--grant",
        "client_credentials",
    ]);
    let store = db.store().await;
    let seams = store.seams();
    seams
        .register_client(&self_registered("mcp-a"))
        .await
        .unwrap();
    seams
        .register_client(&self_registered("mcp-b"))
        .await
        .unwrap();
    // 2027-01-15T08:00:00Z
    seams
        .touch_client("mcp-a", UnixTime::from_secs(1_800_000_000 + 3_600))
        .await
        .unwrap();
    store.close().await;

    let listed = db.ok(&["client", "list"]);
    let tail = |id: &str| -> Vec<String> {
        let line = listed.lines().find(|line| line.starts_with(id)).unwrap();
        line.split('\t').skip(6).map(str::to_owned).collect()
    };
    assert_eq!(tail("admin-app"), ["administered", "-"], "{listed}");
    assert_eq!(
        tail("mcp-a"),
        ["self-registered", "2027-01-15T09:00:00Z"],
        "{listed}"
    );
    assert_eq!(
        tail("mcp-b"),
        ["self-registered", "-"],
        "no use recorded yet"
    );
}

async fn idle_self_registered_clients_are_forgotten(db: &Db) {
    db.ok(&[
        "client",
        "add",
        "admin-app",
        "--grant",
        "client_credentials",
    ]);
    let store = db.store().await;
    let seams = store.seams();
    for id in ["idle", "busy"] {
        seams.register_client(&self_registered(id)).await.unwrap();
    }
    let long_ago = now().minus(Duration::from_secs(90 * 86_400));
    seams.touch_client("idle", long_ago).await.unwrap();
    seams.touch_client("busy", now()).await.unwrap();
    store.close().await;

    let forgot = db.ok(&["client", "forget-idle", "--idle-for", "86400"]);
    assert_eq!(field(&forgot, "forgotten"), "1");
    let listed = db.ok(&["client", "list"]);
    let ids: Vec<&str> = listed
        .lines()
        .filter_map(|line| line.split('\t').next())
        .collect();
    assert_eq!(ids, ["admin-app", "busy"], "the idle one went, no other");
    let again = db.ok(&["client", "forget-idle", "--idle-for", "86400"]);
    assert_eq!(field(&again, "forgotten"), "0");
}

/// Adds `username` through the command: their user.
async fn add_user(db: &Db, username: &str) -> User {
    db.ok_with(&["user", "add", username], "correct horse battery staple\n");
    let store = db.store().await;
    let account = store.seams().find_account(username).await.unwrap();
    store.close().await;
    account.expect("the account").into_user()
}

/// Keeps a session of `user`, signed in now for an hour, with `grants`: its cookie's digest.
async fn sign_in(
    store: &dyn super::databases::Seams,
    user: &User,
    grants: Vec<(ClientId, FamilyId)>,
) -> SecretDigest {
    let cookie = SecretDigest::of(&format!("cookie {} {:?}", user.username(), grants));
    let session = UserSession::new(
        user.clone(),
        format!("sid-{}", grants.len()),
        now(),
        vec!["pwd".to_owned()],
        now().plus(Duration::from_secs(3_600)),
    )
    .with_grants(grants);
    store
        .insert_user_session(&cookie, session, now())
        .await
        .unwrap();
    cookie
}

async fn a_users_sessions_end_in_the_store_alone(db: &Db) {
    let alice = add_user(db, "alice@example.com").await;
    let bob = add_user(db, "bob@example.com").await;
    let store = db.store().await;
    let seams = store.seams();
    let phone = sign_in(seams, &alice, Vec::new()).await;
    let laptop = sign_in(seams, &alice, vec![(client("rp"), family(1))]).await;
    let bobs = sign_in(seams, &bob, Vec::new()).await;

    let output = db.run_with(&["user", "end-sessions", "Alice@example.com"], "", &[]);
    assert!(output.status.success(), "{output:?}");
    let said = String::from_utf8_lossy(&output.stdout);
    assert_eq!(field(&said, "sessions_ended"), "2");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no logout token was sent"), "{stderr}");
    for cookie in [phone, laptop] {
        let found = seams.find_user_session(&cookie, now()).await.unwrap();
        assert!(found.is_none(), "alice's browser is still signed in");
    }
    let found = seams.find_user_session(&bobs, now()).await.unwrap();
    assert!(found.is_some(), "bob's session ended too");
    store.close().await;

    let nobody = db.run_with(&["user", "end-sessions", "carol@example.com"], "", &[]);
    assert_eq!(nobody.status.code(), Some(1), "an unknown user");
}

fn client(id: &str) -> ClientId {
    ClientId::new(id).unwrap()
}

fn family(n: u8) -> FamilyId {
    FamilyId::from_bytes([n; 16])
}

/// Logout tokens a mounted server posts, kept to read.
#[derive(Default)]
struct Posted(Mutex<Vec<OutboundPost>>);

impl Outbound for Posted {
    fn post(&self, post: OutboundPost, done: Box<dyn FnOnce(Delivery) + Send>) {
        self.0.lock().unwrap().push(post);
        done(Delivery::Delivered);
    }
}

/// The claims of a compact JWS, unverified.
fn claims_of(token: &str) -> serde_json::Value {
    part_of(token, 1)
}

/// The header of a compact JWS.
fn header_of(token: &str) -> serde_json::Value {
    part_of(token, 0)
}

fn part_of(token: &str, part: usize) -> serde_json::Value {
    use base64::Engine as _;
    let payload = token.split('.').nth(part).expect("a JWS");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

/// Keeps a refresh token in `family` for `client`, issued to `user`: its digest.
async fn refresh_token(
    store: &dyn super::databases::Seams,
    family: FamilyId,
    client: &ClientId,
    user: &User,
) -> SecretDigest {
    let refresh = SecretDigest::of(&format!("refresh {family:?}"));
    let authorization = Authorization::new(
        client.clone(),
        Some(user.clone()),
        Scope::parse("openid").unwrap(),
    );
    let tokens = NewTokens::new(
        Family::New(family),
        authorization,
        now(),
        SecretDigest::of(&format!("access {family:?}")),
        Jti::new(format!("jti {family:?}")),
        now().plus(Duration::from_secs(600)),
    )
    .with_refresh_token(NewRefreshToken::new(
        refresh,
        now().plus(Duration::from_secs(86_400)),
    ));
    store.insert_tokens(tokens).await.unwrap();
    refresh
}

async fn mounted_a_users_sessions_end_with_back_channel_logout(db: &Db) {
    db.ok(&[
        "client",
        "add",
        "rp",
        "--grant",
        "authorization_code",
        "--redirect-uri",
        "https://rp.example/cb",
        "--backchannel-logout-uri",
        "https://rp.example/backchannel",
    ]);
    db.ok(&[
        "client",
        "add",
        "quiet",
        "--grant",
        "authorization_code",
        "--redirect-uri",
        "https://quiet.example/cb",
    ]);
    let alice = add_user(db, "alice@example.com").await;
    let store = db.store().await;
    let seams = store.seams();
    let (rp, quiet) = (client("rp"), client("quiet"));
    let rp_refresh = refresh_token(seams, family(1), &rp, &alice).await;
    let quiet_refresh = refresh_token(seams, family(2), &quiet, &alice).await;
    let cookie = sign_in(seams, &alice, vec![(rp, family(1)), (quiet, family(2))]).await;
    let posted = Arc::new(Posted::default());
    let outbound: Arc<dyn Outbound> = posted.clone();
    let server = store.server(|b| {
        b.keys_in_clear()
            .openid_connect(OpenIdConnect::default())
            .outbound(outbound)
    });

    let ended = mounted(&server, &["user", "end-sessions", "alice@example.com"]).await;
    assert_eq!(ended, ExitCode::SUCCESS);
    let found = seams.find_user_session(&cookie, now()).await.unwrap();
    assert!(found.is_none(), "the session still lives");
    let posts = posted.0.lock().unwrap().clone();
    assert_eq!(posts.len(), 1, "one logout token, to the client that asked");
    assert_eq!(posts[0].url, "https://rp.example/backchannel");
    let (name, token) = &posts[0].form[0];
    assert_eq!(*name, "logout_token");
    let claims = claims_of(token);
    assert_eq!(claims["sid"], "sid-2");
    assert_eq!(claims["aud"], "rp");
    assert_eq!(claims["sub"], alice.id().as_str());
    // As the server's logout: the refresh tokens of the client it told go.
    let gone = seams.find_refresh_token(&rp_refresh, now()).await.unwrap();
    assert!(
        gone.is_none(),
        "the logged-out client's refresh token lives"
    );
    let kept = seams
        .find_refresh_token(&quiet_refresh, now())
        .await
        .unwrap();
    assert!(
        kept.is_some(),
        "a client without back-channel logout keeps its tokens"
    );
    store.close().await;
}

async fn a_users_consents_are_listed_and_one_forgotten(db: &Db) {
    let alice = add_user(db, "alice@example.com").await;
    let store = db.store().await;
    let seams = store.seams();
    let until = now().plus(Duration::from_secs(3_600));
    let api = Audience::from_resources(["https://api.example/"]).unwrap();
    for (id, scope, audience) in [
        ("photos", "openid profile", Audience::default()),
        ("calendar", "openid", api),
    ] {
        let consent = Consent::new(Scope::parse(scope).unwrap(), audience);
        seams
            .remember_consent(alice.id(), &client(id), &consent, until, now())
            .await
            .unwrap();
    }

    let listed = db.ok(&["user", "consents", "alice@example.com"]);
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        [
            "calendar\topenid\thttps://api.example/",
            "photos\topenid profile\t"
        ]
    );
    db.ok(&["user", "forget-consent", "alice@example.com", "photos"]);
    let found = seams
        .find_consent(alice.id(), &client("photos"), now())
        .await
        .unwrap();
    assert!(found.is_none(), "the approval is still remembered");
    let again = db.run_with(
        &["user", "forget-consent", "alice@example.com", "photos"],
        "",
        &[],
    );
    assert_eq!(again.status.code(), Some(1), "forgetting twice");
    let server = store.server(AuthorizationServerBuilder::keys_in_clear);
    let listed = mounted(&server, &["user", "consents", "alice@example.com"]).await;
    assert_eq!(listed, ExitCode::SUCCESS);
    let forget = ["user", "forget-consent", "alice@example.com", "calendar"];
    assert_eq!(mounted(&server, &forget).await, ExitCode::SUCCESS);
    assert!(seams.consents(alice.id(), now()).await.unwrap().is_empty());
    assert_eq!(mounted(&server, &forget).await, ExitCode::from(1));
    store.close().await;
}

/// A server with JWT access tokens signed by rotating ES256 keys, its keys resting as
/// `rest` says.
fn jwt_server(
    store: &super::databases::Store,
    rest: impl FnOnce(AuthorizationServerBuilder) -> AuthorizationServerBuilder,
) -> AuthorizationServer {
    let tokens = JwtAccessTokens::rotating(SigningAlgorithm::ES256, Duration::from_secs(86_400));
    store.server(|b| rest(b.jwt_access_tokens(tokens)))
}

/// A client-credentials access token of `reporting`: the token and its `kid`.
async fn access_token(server: &AuthorizationServer, secret: &str) -> (String, String) {
    let request = token_request(
        Some(&basic("reporting", secret)),
        "grant_type=client_credentials",
    );
    let response = server.token(&request).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let body: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    let token = body["access_token"].as_str().unwrap().to_owned();
    let kid = header_of(&token)["kid"].as_str().expect("a kid").to_owned();
    (token, kid)
}

/// The status of a request to a resource carrying `token`.
async fn bearer_status(server: &AuthorizationServer, token: &str) -> u16 {
    let request = http::Request::get("/api/thing")
        .header("authorization", format!("Bearer {token}"))
        .body(String::new())
        .unwrap();
    match server.bearer(&request, None).await {
        Ok(_) => 200,
        Err(refusal) => refusal.status().as_u16(),
    }
}

/// The `kid`s the server publishes, or the status when it cannot.
async fn published_kids(server: &AuthorizationServer) -> Result<Vec<String>, u16> {
    let jwks = server.jwks().await;
    if jwks.status() != 200 {
        return Err(jwks.status().as_u16());
    }
    let jwks: serde_json::Value = serde_json::from_str(jwks.body()).unwrap();
    let keys = jwks["keys"].as_array().unwrap();
    Ok(keys
        .iter()
        .map(|key| key["kid"].as_str().unwrap().to_owned())
        .collect())
}

fn reporting_client(db: &Db) -> String {
    let added = db.ok(&[
        "client",
        "add",
        "reporting",
        "--grant",
        "client_credentials",
    ]);
    field(&added, "client_secret").to_owned()
}

async fn signing_keys_are_listed_and_rotated_early(db: &Db) {
    // Before any server signed, there is no key to rotate: refused, and said why.
    let refused = db.run_with(&["keys", "rotate"], "", &[]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(why.contains("nothing to rotate"), "{why}");

    let secret = reporting_client(db);
    let store = db.store().await;
    let (old_token, old_kid) = {
        let server = jwt_server(&store, AuthorizationServerBuilder::keys_in_clear);
        // Published: today's key and tomorrow's, made.
        published_kids(&server).await.unwrap();
        access_token(&server, &secret).await
    };

    let listed = db.ok(&["keys", "list"]);
    let lines: Vec<Vec<&str>> = listed.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 2, "today's key and tomorrow's: {listed}");
    assert_eq!(lines[0][0], old_kid);
    assert_eq!((lines[0][1], lines[0][3]), ("ES256", "current"));
    assert!(
        lines[0][2].ends_with("T00:00:00Z"),
        "a day's start: {listed}"
    );
    assert_eq!((lines[1][1], lines[1][3]), ("ES256", "next"));
    assert!(!listed.contains("\"d\""), "never key material");

    let rotated = db.ok(&["keys", "rotate"]);
    let new_kid = rotated.split('\t').next().unwrap().to_owned();
    assert_ne!(new_kid, old_kid);
    assert!(rotated.trim_end().ends_with("current"), "{rotated}");

    // A server that starts now signs with the new key; the old one still verifies.
    let server = jwt_server(&store, AuthorizationServerBuilder::keys_in_clear);
    let (_, kid) = access_token(&server, &secret).await;
    assert_eq!(kid, new_kid);
    assert_eq!(bearer_status(&server, &old_token).await, 200);
    let published = published_kids(&server).await.unwrap();
    assert!(published.contains(&old_kid) && published.contains(&new_kid));
    let listed = db.ok(&["keys", "list"]);
    let state = |kid: &str| {
        let line = listed.lines().find(|l| l.starts_with(kid)).unwrap();
        line.rsplit('\t').next().unwrap().to_owned()
    };
    assert_eq!(state(&old_kid), "retiring");
    assert_eq!(state(&new_kid), "current");
    // Mounted, through the server's own key seam.
    assert_eq!(
        mounted(&server, &["keys", "rotate"]).await,
        ExitCode::SUCCESS
    );
    let server = jwt_server(&store, AuthorizationServerBuilder::keys_in_clear);
    let (_, kid) = access_token(&server, &secret).await;
    assert_ne!(kid, new_kid, "rotated again");
    store.close().await;
}

async fn key_material_written_in_the_clear_is_sealed_then_resealed(db: &Db) {
    let secret = reporting_client(db);
    let store = db.store().await;
    let (token, kid) = {
        let server = jwt_server(&store, AuthorizationServerBuilder::keys_in_clear);
        published_kids(&server).await.unwrap();
        access_token(&server, &secret).await
    };
    let first = KeyEncryptionKey::generate_base64().unwrap();
    let second = KeyEncryptionKey::generate_base64().unwrap();
    let sealed_under = |encoded: &str| {
        let key = KeyEncryptionKey::from_base64(encoded).unwrap();
        move |b: AuthorizationServerBuilder| b.encrypt_keys_at_rest(key)
    };

    // No new key: refused, nothing changed.
    let refused = db.run_with(&["keys", "reseal"], "", &[]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("GRANTOR_NEW_KEY_ENCRYPTION_KEY"));

    let sealed = db.ok_env(
        &["keys", "reseal"],
        &[("GRANTOR_NEW_KEY_ENCRYPTION_KEY", &first)],
    );
    assert_eq!(field(&sealed, "sealed_from_clear"), "2", "{sealed}");
    assert!(!sealed.contains(&first), "the key is never printed");
    // The server with the key reads every key: the token still verifies, the key published.
    let server = jwt_server(&store, sealed_under(&first));
    assert_eq!(bearer_status(&server, &token).await, 200);
    assert!(published_kids(&server).await.unwrap().contains(&kid));
    // One that keeps keys in the clear refuses clearly: 503, never a 500.
    let clear = jwt_server(&store, AuthorizationServerBuilder::keys_in_clear);
    assert_eq!(published_kids(&clear).await, Err(503));
    assert_eq!(bearer_status(&clear, &token).await, 503);
    // Listing needs the key too.
    let listed = db.run_with(&["keys", "list"], "", &[]);
    assert_eq!(listed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&listed.stderr).contains("encrypt"));
    let listed = db.ok_env(&["keys", "list"], &[("GRANTOR_KEY_ENCRYPTION_KEY", &first)]);
    assert!(listed.starts_with(&kid), "{listed}");

    // From the first key to a second, the new one from a file.
    // A file of this test's own (each store's test runs beside the other's).
    static FILES: AtomicU32 = AtomicU32::new(0);
    let n = FILES.fetch_add(1, Ordering::Relaxed);
    let file = std::env::temp_dir().join(format!("grantor-kek-{}-{n}", std::process::id()));
    std::fs::write(&file, format!("{second}\n")).unwrap();
    let file_arg = file.display().to_string();
    let reseal = ["keys", "reseal", "--new-key-file", &file_arg];
    let wrong = KeyEncryptionKey::generate_base64().unwrap();
    let refused = db.run_with(&reseal, "", &[("GRANTOR_KEY_ENCRYPTION_KEY", &wrong)]);
    assert_eq!(refused.status.code(), Some(1), "a wrong old key");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("nothing was re-sealed"), "{said}");
    assert!(!said.contains(&wrong) && !said.contains(&second), "{said}");
    let resealed = db.ok_env(&reseal, &[("GRANTOR_KEY_ENCRYPTION_KEY", &first)]);
    assert_eq!(field(&resealed, "resealed"), "2", "{resealed}");
    let again = db.ok_env(&reseal, &[("GRANTOR_KEY_ENCRYPTION_KEY", &first)]);
    assert_eq!(
        field(&again, "sealed_already"),
        "2",
        "a second run: {again}"
    );
    let _ = std::fs::remove_file(&file);

    let server = jwt_server(&store, sealed_under(&second));
    assert_eq!(bearer_status(&server, &token).await, 200);
    let old = jwt_server(&store, sealed_under(&first));
    assert_eq!(
        published_kids(&old).await,
        Err(503),
        "the old key opens nothing"
    );
    store.close().await;
}
