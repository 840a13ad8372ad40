//! The demo deployment of the contract: its clients and users, seeded into whichever store was
//! chosen, and the hourly purge.

use std::time::Duration;

use grantor::store::{
    Account, AttemptCounter, ClientStore, ConsentStore, KeyStore, Purge, SessionStore,
    SingleUseStore, TokenIssuer, UserAdmin, UserSessionStore, UserStore,
};
use grantor::*;
use grantor::{client::*, clock::*, store::*};

use super::settings::StoreChoice;

pub(crate) const REDIRECTS: [&str; 2] = [
    "http://127.0.0.1:8081/callback",
    "http://localhost:8081/callback",
];

/// Where a logout may send the browser back, for every seeded client (examples/README.md part 3).
pub(crate) const LOGGED_OUT: [&str; 2] = [
    "http://127.0.0.1:8081/logged-out",
    "http://localhost:8081/logged-out",
];

/// The names of the seeded clients below, which no self-registered client may take or imitate
/// (`RegistrationPolicy::reserved_client_names`).
pub(crate) const CLIENT_NAMES: [&str; 7] = [
    "Demo Client",
    "Plain Client",
    "Public Client",
    "Device Client",
    "Demo API",
    "Post Client",
    "Service Client",
];

/// The contract's clients (only secret verifiers are kept); `api-server` serves `audience`.
fn demo_clients(audience: &str) -> Result<Vec<Client>, Box<dyn std::error::Error>> {
    let with_redirects = |b: ClientBuilder| {
        let b = LOGGED_OUT
            .iter()
            .fold(b, |b, uri| b.post_logout_redirect_uri(*uri));
        REDIRECTS
            .iter()
            .fold(b, |b, uri| b.redirect_uri(*uri))
            .scopes("profile email")
    };
    let demo_secret = SecretVerifier::argon2id(&ClientSecret::new("demo-secret"))?;
    let plain_secret = SecretVerifier::argon2id(&ClientSecret::new("plain-secret"))?;
    let api_secret = SecretVerifier::argon2id(&ClientSecret::new("api-secret"))?;
    let service_secret = SecretVerifier::argon2id(&ClientSecret::new("service-secret"))?;
    let post_secret = SecretVerifier::argon2id(&ClientSecret::new("post-secret"))?;
    Ok(vec![
        with_redirects(Client::confidential("demo-client", demo_secret))
            .name("Demo Client")
            .grant_types([
                GrantType::AuthorizationCode,
                GrantType::Implicit,
                GrantType::Password,
                GrantType::RefreshToken,
                GrantType::ClientCredentials,
            ])
            .approval(Approval::Required)
            .build()?,
        with_redirects(Client::confidential("plain-client", plain_secret))
            .name("Plain Client")
            .grant_types([GrantType::AuthorizationCode, GrantType::Password])
            .approval(Approval::NotRequired)
            .build()?,
        with_redirects(Client::public("public-client"))
            .name("Public Client")
            .grant_types([GrantType::AuthorizationCode])
            .approval(Approval::NotRequired)
            .build()?,
        // A TV-style app: the device authorization grant (RFC 8628).
        with_redirects(Client::public("device-client"))
            .name("Device Client")
            .grant_types([GrantType::DeviceCode, GrantType::RefreshToken])
            .approval(Approval::Required)
            .build()?,
        // The demo API's resource server: no grant, may introspect its audience's tokens.
        Client::confidential("api-server", api_secret)
            .name("Demo API")
            .resource_server(audience)
            .build()?,
        // The one client that sends its secret in the body (`client_secret_post`); HTTP Basic
        // is refused to it (examples/README.md part 3).
        with_redirects(Client::confidential("post-client", post_secret))
            .name("Post Client")
            .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
            .approval(Approval::NotRequired)
            .secret_in_body(true)
            .build()?,
        // A backend that exchanges users' tokens (RFC 8693) under the demo's exchange policy.
        with_redirects(Client::confidential("service-client", service_secret))
            .name("Service Client")
            .grant_types([
                GrantType::ClientCredentials,
                GrantType::TokenExchange,
                GrantType::JwtBearer,
            ])
            .approval(Approval::NotRequired)
            .build()?,
    ])
}

/// The contract's users and their passwords (only Argon2id hashes are kept).
const USERS: [(&str, &str); 2] = [
    ("alice@example.com", "alice-password-1"),
    ("bob@example.com", "bob-password-2"),
];

/// Every seam the demo needs, and the admin API to seed it.
pub trait DemoStore:
    ClientStore
    + UserStore
    + TokenIssuer
    + SessionStore
    + AttemptCounter
    + SingleUseStore
    + KeyStore
    + UserSessionStore
    + ConsentStore
    + Admin
    + ClientActivity
    + UserAdmin
    + Purge
    + Clone
    + 'static
{
}

impl<S> DemoStore for S where
    S: ClientStore
        + UserStore
        + TokenIssuer
        + SessionStore
        + AttemptCounter
        + SingleUseStore
        + KeyStore
        + UserSessionStore
        + ConsentStore
        + Admin
        + ClientActivity
        + UserAdmin
        + Purge
        + Clone
        + 'static
{
}

/// Registers the contract's clients (re-registering them as they are) and adds the users that
/// are missing, so any number of demo processes can share one database.
async fn seed(store: &impl DemoStore, audience: &str) -> Result<(), Box<dyn std::error::Error>> {
    for client in demo_clients(audience)? {
        if !store.replace_client(&client).await? {
            match store.register_client(&client).await {
                // Another process registered it meanwhile: the same client.
                Ok(()) | Err(AdminError::ClientIdTaken) => {}
                Err(error) => return Err(error.into()),
            }
        }
    }
    for (username, password) in USERS {
        let account = Account::generate(username, &Password::new(password))?;
        match store
            .insert_user(account.user(), account.password_hash())
            .await
        {
            Ok(_) | Err(AdminError::UsernameTaken) => {}
            Err(error) => return Err(error.into()),
        }
        // The account another process added, if it won the race: its id, not ours.
        if let Some(kept) = store.find_account(username).await? {
            store
                .set_claims(kept.user().id(), &claims_of(username))
                .await?;
        }
    }
    Ok(())
}

/// The contract's OpenID Connect claims of each user (examples/README.md part 3).
fn claims_of(username: &str) -> UserClaims {
    let (given, verified) = match username {
        "alice@example.com" => ("Alice", true),
        _ => ("Bob", false),
    };
    UserClaims::new()
        .name(format!("{given} Example"))
        .given_name(given)
        .family_name("Example")
        .email(username, verified)
}

/// Deletes what expired, hourly, from a task of its own.
fn purge_hourly(store: impl DemoStore) {
    tokio::spawn(async move {
        let mut hourly = tokio::time::interval(Duration::from_secs(3600));
        loop {
            hourly.tick().await;
            match store
                .purge_expired(UnixTime::from(std::time::SystemTime::now()))
                .await
            {
                Ok(rows) => tracing::info!(rows, "purged what expired"),
                Err(error) => tracing::warn!(%error, "purging expired entries failed"),
            }
        }
    });
}

/// Opens (and for SQL, migrates) the chosen store, seeds it, starts its hourly purge, and
/// hands it to `builder` as every seam (its key seam holds the JWT signing keys too).
pub async fn open(
    choice: &StoreChoice,
    audience: &str,
    jwt: bool,
    builder: AuthorizationServerBuilder,
) -> Result<AuthorizationServerBuilder, Box<dyn std::error::Error>> {
    async fn ready(
        store: impl DemoStore,
        audience: &str,
        jwt: bool,
        builder: AuthorizationServerBuilder,
    ) -> Result<AuthorizationServerBuilder, Box<dyn std::error::Error>> {
        seed(&store, audience).await?;
        purge_hourly(store.clone());
        let builder = if jwt { jwt_keys(builder) } else { builder };
        Ok(builder.store(store))
    }
    match choice {
        StoreChoice::Memory => ready(MemoryStore::new(), audience, jwt, builder).await,
        #[cfg(feature = "sqlite")]
        StoreChoice::Sqlite(path) => {
            let options = grantor::sql::SqliteOptions::file(path);
            ready(
                grantor::sql::SqliteStore::connect_with(options).await?,
                audience,
                jwt,
                builder,
            )
            .await
        }
        #[cfg(feature = "postgres")]
        StoreChoice::Postgres(url) => {
            let store = grantor::sql::PostgresStore::connect(url).await?;
            // Token checks from a read replica first (bearer validation, introspection).
            let store = match std::env::var("GRANTOR_READ_REPLICA") {
                Ok(replica) => store.read_replica(&replica).await?,
                Err(_) => store,
            };
            ready(store, audience, jwt, builder).await
        }
        #[allow(unreachable_patterns)]
        other => Err(format!("this build has no {other} store").into()),
    }
}

/// With `--access-tokens jwt`, EdDSA keys rotated daily and shared through the store's key
/// seam; the demo's `/api/me` also checks revocation, so a revoked token stops at once.
#[cfg(feature = "jwt")]
fn jwt_keys(builder: AuthorizationServerBuilder) -> AuthorizationServerBuilder {
    use grantor::jwt::{JwtAccessTokens, SigningAlgorithm};
    let day = Duration::from_secs(86_400);
    builder.jwt_access_tokens(
        JwtAccessTokens::rotating(SigningAlgorithm::EdDSA, day).check_revocation(true),
    )
}

#[cfg(not(feature = "jwt"))]
fn jwt_keys(builder: AuthorizationServerBuilder) -> AuthorizationServerBuilder {
    builder
}
