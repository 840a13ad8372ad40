//! Between records and rows: column values for what the stores keep, and records rebuilt (and
//! checked) from what they read back.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::client::{Approval, Client, ClientId, GrantType, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::store::{Authorization, FamilyId, User};

/// Maps a sqlx error to the store's two kinds; `transient` says which database error codes
/// (SQLSTATE or SQLite result codes) mean "try again later".
pub(crate) fn store_error(error: sqlx::Error, transient: fn(&str) -> bool) -> StoreError {
    let unavailable = match &error {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| transient(&code)),
        _ => false,
    };
    if unavailable {
        StoreError::unavailable(error)
    } else {
        StoreError::failed(error)
    }
}

pub(crate) fn migrate_error(
    error: sqlx::migrate::MigrateError,
    transient: fn(&str) -> bool,
) -> StoreError {
    match error {
        sqlx::migrate::MigrateError::Execute(error) => store_error(error, transient),
        other => StoreError::failed(other),
    }
}

pub(crate) fn corrupt(what: &str) -> StoreError {
    StoreError::failed(format!("the database holds a malformed {what}"))
}

/// Unix seconds as a column value (saturating: far-future times stay far in the future).
pub(crate) fn secs(time: UnixTime) -> i64 {
    i64::try_from(time.as_secs()).unwrap_or(i64::MAX)
}

pub(crate) fn time(secs: i64) -> UnixTime {
    UnixTime::from_secs(u64::try_from(secs).unwrap_or(0))
}

pub(crate) fn family_key(family: FamilyId) -> [u8; 16] {
    family.0.to_be_bytes()
}

pub(crate) fn family_id(bytes: &[u8]) -> Result<FamilyId, StoreError> {
    let bytes = <[u8; 16]>::try_from(bytes).map_err(|_| corrupt("family id"))?;
    Ok(FamilyId(u128::from_be_bytes(bytes)))
}

pub(crate) fn new_family_id() -> Result<FamilyId, StoreError> {
    Ok(FamilyId(u128::from_be_bytes(
        crate::secret::random_bytes::<16>()?,
    )))
}

pub(crate) fn scope(text: &str) -> Result<Scope, StoreError> {
    Scope::parse(text).map_err(|_| corrupt("scope"))
}

pub(crate) fn authorization(
    client_id: &str,
    user_id: Option<String>,
    username: Option<String>,
    scope_text: &str,
) -> Result<Authorization, StoreError> {
    let user = match (user_id, username) {
        (Some(id), Some(username)) => Some(User::new(crate::store::UserId::new(id), username)),
        (None, None) => None,
        _ => return Err(corrupt("user reference")),
    };
    Ok(Authorization {
        client_id: ClientId::new(client_id).map_err(|_| corrupt("client id"))?,
        user,
        scope: scope(scope_text)?,
    })
}

/// The columns of an authorization: client id, user id, username, scope.
pub(crate) fn authorization_columns(a: &Authorization) -> (&str, Option<&str>, Option<&str>, &str) {
    let user = a.user.as_ref();
    (
        a.client_id.as_str(),
        user.map(|u| u.id().as_str()),
        user.map(|u| u.username()),
        a.scope.as_str(),
    )
}

pub(crate) fn new_jti() -> Result<String, StoreError> {
    Ok(URL_SAFE_NO_PAD.encode(crate::secret::random_bytes::<16>()?))
}

pub(crate) fn code_challenge(
    challenge: Option<String>,
    method: Option<String>,
) -> Result<Option<CodeChallenge>, StoreError> {
    match (challenge, method) {
        (None, None) => Ok(None),
        (Some(challenge), Some(method)) => CodeChallenge::new(&challenge, Some(&method), true)
            .map(Some)
            .map_err(|_| corrupt("code challenge")),
        _ => Err(corrupt("code challenge")),
    }
}

/// A client as its row's columns.
pub(crate) struct ClientColumns {
    pub(crate) secret_verifier: Option<String>,
    pub(crate) redirect_uris: String,
    pub(crate) grant_types: String,
    pub(crate) approval_required: bool,
}

impl ClientColumns {
    pub(crate) fn of(client: &Client) -> Self {
        let grant_types: Vec<&str> = GrantType::ALL
            .iter()
            .filter(|g| client.allows(**g))
            .map(|g| g.as_str())
            .collect();
        Self {
            secret_verifier: client.secret().map(SecretVerifier::to_stored),
            // A JSON array of strings cannot fail to serialize.
            redirect_uris: serde_json::to_string(client.redirect_uris()).unwrap_or_default(),
            grant_types: grant_types.join(" "),
            approval_required: client.approval() == Approval::Required,
        }
    }
}

/// A client rebuilt from its row's columns, through the same checks as at registration.
#[allow(clippy::too_many_arguments)]
pub(crate) fn client_from_columns(
    client_id: &str,
    name: String,
    secret_verifier: Option<String>,
    redirect_uris: &str,
    grant_types: &str,
    scopes: String,
    default_scope: String,
    approval_required: bool,
) -> Result<Client, StoreError> {
    let builder = match secret_verifier {
        Some(stored) => Client::confidential(
            client_id,
            SecretVerifier::from_stored(&stored).map_err(|_| corrupt("secret verifier"))?,
        ),
        None => Client::public(client_id),
    };
    let uris: Vec<String> =
        serde_json::from_str(redirect_uris).map_err(|_| corrupt("redirect URI list"))?;
    let grants = grant_types
        .split_whitespace()
        .map(|name| {
            GrantType::ALL
                .into_iter()
                .find(|g| g.as_str() == name)
                .ok_or_else(|| corrupt("grant type"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    uris.into_iter()
        .fold(builder, |b, uri| b.redirect_uri(uri))
        .name(name)
        .grant_types(grants)
        .scopes(scopes)
        .default_scope(default_scope)
        .approval(if approval_required {
            Approval::Required
        } else {
            Approval::NotRequired
        })
        .build()
        .map_err(|e| StoreError::failed(format!("a stored client is invalid: {e}")))
}
