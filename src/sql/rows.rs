//! The rows the statements of [`super::text`] answer, decoded by column name, and the records
//! rebuilt (and checked) from them. A row that does not make a valid record is a
//! [`StoreError::failed`]: the database holds something grantor never wrote.

use crate::audience::Audience;
use crate::client::{
    Approval, Client, ClientId, ClientKeys, GrantType, OpenIdClient, SecretVerifier,
};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::store::{
    AccessGrant, Actor, Attempts, Authorization, CodeGrant, Consent, FamilyId, JwkThumbprint,
    RefreshGrant, Session, SignInFacts, User, UserAuthentication, UserId, UserSession,
};

fn corrupt(what: &str) -> StoreError {
    StoreError::failed(format!("the database holds a malformed {what}"))
}

pub(crate) fn time(secs: i64) -> UnixTime {
    UnixTime::from_secs(u64::try_from(secs).unwrap_or(0))
}

fn family_id(bytes: &[u8]) -> Result<FamilyId, StoreError> {
    let bytes = <[u8; 16]>::try_from(bytes).map_err(|_| corrupt("family id"))?;
    Ok(FamilyId::from_bytes(bytes))
}

fn user(id: Option<String>, username: Option<String>) -> Result<Option<User>, StoreError> {
    match (id, username) {
        (Some(id), Some(username)) => Ok(Some(User::new(UserId::new(id), username))),
        (None, None) => Ok(None),
        _ => Err(corrupt("user reference")),
    }
}

/// A registered client.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct ClientRow {
    client_id: String,
    name: String,
    secret_verifier: Option<String>,
    redirect_uris: String,
    grant_types: String,
    scopes: String,
    default_scope: String,
    approval_required: bool,
    audiences: String,
    resources: String,
    registration_token: Option<Vec<u8>>,
    dpop_bound: bool,
    par_required: bool,
    previous_secret_verifier: Option<String>,
    previous_secret_expires_at: Option<i64>,
    jwks: Option<String>,
    jwks_uri: Option<String>,
    openid: Option<String>,
}

impl ClientRow {
    /// The client, through the same checks as at registration.
    pub(crate) fn into_client(self) -> Result<Client, StoreError> {
        let builder = match self.secret_verifier {
            Some(stored) => Client::confidential(
                &self.client_id,
                SecretVerifier::from_stored(&stored).map_err(|_| corrupt("secret verifier"))?,
            ),
            None => match (self.jwks, self.jwks_uri) {
                (Some(jwks), _) => Client::private_key_jwt(
                    &self.client_id,
                    ClientKeys::jwks(&jwks).map_err(|_| corrupt("jwks"))?,
                ),
                (None, Some(uri)) => Client::private_key_jwt(
                    &self.client_id,
                    ClientKeys::jwks_uri(&uri).map_err(|_| corrupt("jwks_uri"))?,
                ),
                (None, None) => Client::public(&self.client_id),
            },
        };
        let uris: Vec<String> =
            serde_json::from_str(&self.redirect_uris).map_err(|_| corrupt("redirect URI list"))?;
        let grants = self
            .grant_types
            .split_whitespace()
            .map(|name| {
                GrantType::ALL
                    .into_iter()
                    .find(|g| g.as_str() == name)
                    .ok_or_else(|| corrupt("grant type"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let audiences: Vec<String> =
            serde_json::from_str(&self.audiences).map_err(|_| corrupt("audience list"))?;
        let resources: Vec<String> =
            serde_json::from_str(&self.resources).map_err(|_| corrupt("resource list"))?;
        let approval = if self.approval_required {
            Approval::Required
        } else {
            Approval::NotRequired
        };
        let builder = audiences
            .into_iter()
            .fold(builder, |b, audience| b.resource_server(audience));
        let builder = resources
            .into_iter()
            .fold(builder, |b, resource| b.resource(resource));
        let builder = match (
            self.previous_secret_verifier,
            self.previous_secret_expires_at,
        ) {
            (Some(stored), Some(until)) => builder.retiring_secret(
                SecretVerifier::from_stored(&stored)
                    .map_err(|_| corrupt("previous secret verifier"))?,
                UnixTime::from_secs(u64::try_from(until).unwrap_or(0)),
            ),
            _ => builder,
        };
        let builder = match self.registration_token {
            Some(bytes) => {
                let bytes = <[u8; 32]>::try_from(bytes)
                    .map_err(|_| corrupt("registration access token digest"))?;
                builder.registration_access_token(SecretDigest::from_bytes(bytes))
            }
            None => builder,
        };
        // Checked when the client was registered (an administrator may have allowed insecure
        // redirect URIs); a stored client loads as it was kept.
        uris.into_iter()
            .fold(builder, |b, uri| b.redirect_uri(uri))
            .allow_insecure_redirect_uris()
            .name(self.name)
            .grant_types(grants)
            .scopes(self.scopes)
            .default_scope(self.default_scope)
            .approval(approval)
            .require_dpop(self.dpop_bound)
            .require_pushed_requests(self.par_required)
            .openid(match self.openid {
                Some(stored) => {
                    OpenIdClient::from_stored(&stored).ok_or_else(|| corrupt("OpenID members"))?
                }
                None => OpenIdClient::default(),
            })
            .build()
            .map_err(|e| StoreError::failed(format!("a stored client is invalid: {e}")))
    }
}

/// When a self-registered client was last used (NULL: not recorded).
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct LastUsedRow {
    pub(crate) last_used: Option<i64>,
}

/// A client's id alone.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct ClientIdRow {
    pub(crate) client_id: String,
}

/// A user account's claims, as one JSON object (NULL: none kept).
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct ClaimsRow {
    pub(crate) claims: Option<String>,
}

/// A user account without its password hash.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct UserRow {
    id: String,
    username: String,
}

impl UserRow {
    pub(crate) fn into_user(self) -> User {
        User::new(UserId::new(self.id), self.username)
    }
}

/// A user account with its password hash, for authentication.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct AccountRow {
    #[cfg_attr(feature = "postgres", sqlx(flatten))]
    pub(crate) user: UserRow,
    pub(crate) password_hash: String,
}

/// Who authorized what: a family's columns, or a code's own copy of them.
#[derive(Clone)]
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct AuthorizationRow {
    client_id: String,
    user_id: Option<String>,
    username: Option<String>,
    scope: String,
    audience: String,
    /// How the user signed in, a JSON object (NULL: no sign-in, or kept before migration 17).
    authentication: Option<String>,
}

impl AuthorizationRow {
    fn into_authorization(self) -> Result<Authorization, StoreError> {
        let authentication = self
            .authentication
            .map(|stored| {
                UserAuthentication::from_stored(&stored).ok_or_else(|| corrupt("authentication"))
            })
            .transpose()?;
        Ok(Authorization::new(
            ClientId::new(&self.client_id).map_err(|_| corrupt("client id"))?,
            user(self.user_id, self.username)?,
            Scope::parse(&self.scope).map_err(|_| corrupt("scope"))?,
        )
        .with_audience(Audience::from_stored(&self.audience).ok_or_else(|| corrupt("audience"))?)
        .with_authentication(authentication))
    }
}

/// An authorization code this caller just redeemed.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct CodeRow {
    family_id: Vec<u8>,
    #[cfg_attr(feature = "postgres", sqlx(flatten))]
    authorization: AuthorizationRow,
    redirect_uri: String,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    issued_at: i64,
    expires_at: i64,
    openid: Option<String>,
    jkt: Option<String>,
}

impl CodeRow {
    pub(crate) fn into_grant(self) -> Result<(FamilyId, CodeGrant), StoreError> {
        let code_challenge = match (self.code_challenge, self.code_challenge_method) {
            (None, None) => None,
            (Some(challenge), Some(method)) => Some(
                CodeChallenge::new(&challenge, Some(&method), true)
                    .map_err(|_| corrupt("code challenge"))?,
            ),
            _ => return Err(corrupt("code challenge")),
        };
        let grant = CodeGrant::new(
            self.authorization.into_authorization()?,
            self.redirect_uri,
            code_challenge,
            time(self.issued_at),
            time(self.expires_at),
        )
        .with_openid(
            self.openid
                .map(|stored| {
                    SignInFacts::from_stored(&stored).ok_or_else(|| corrupt("sign-in facts"))
                })
                .transpose()?,
        )
        .bound_to(thumbprint(self.jkt.as_deref())?);
        Ok((family_id(&self.family_id)?, grant))
    }
}

/// A code another caller redeemed, or that could not be redeemed.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct CodeStateRow {
    family_id: Vec<u8>,
    pub(crate) redeemed: bool,
}

impl CodeStateRow {
    pub(crate) fn family(&self) -> Result<FamilyId, StoreError> {
        family_id(&self.family_id)
    }
}

/// An active access token and its family's authorization.
#[derive(Clone)]
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct AccessRow {
    family_id: Vec<u8>,
    #[cfg_attr(feature = "postgres", sqlx(flatten))]
    authorization: AuthorizationRow,
    issued_at: i64,
    expires_at: i64,
    jkt: Option<String>,
    /// The RFC 8693 §4.1 `act` claim as JSON text (NULL: no actor).
    act: Option<String>,
}

/// An [`AccessRow`] with the digest it was found by, for lookups of many tokens at once.
#[cfg(feature = "postgres")]
#[derive(sqlx::FromRow)]
pub(crate) struct DigestAccessRow {
    pub(crate) digest: Vec<u8>,
    #[sqlx(flatten)]
    pub(crate) row: AccessRow,
}

impl AccessRow {
    /// When the token expires, in seconds since the epoch.
    #[cfg(feature = "postgres")]
    pub(crate) fn expires_at(&self) -> i64 {
        self.expires_at
    }

    pub(crate) fn into_grant(self) -> Result<AccessGrant, StoreError> {
        Ok(AccessGrant::new(
            self.authorization.into_authorization()?,
            family_id(&self.family_id)?,
            time(self.issued_at),
            time(self.expires_at),
        )
        .bound_to(thumbprint(self.jkt.as_deref())?)
        .acting(
            self.act
                .map(|act| Actor::from_stored(&act).ok_or_else(|| corrupt("actor")))
                .transpose()?,
        ))
    }
}

/// A DPoP key's thumbprint as the `jkt` column holds it (NULL: unbound).
fn thumbprint(jkt: Option<&str>) -> Result<Option<JwkThumbprint>, StoreError> {
    jkt.map(|text| JwkThumbprint::parse(text).ok_or_else(|| corrupt("key thumbprint")))
        .transpose()
}

/// A live refresh token, its generation and its family's current one.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct RefreshRow {
    family_id: Vec<u8>,
    #[cfg_attr(feature = "postgres", sqlx(flatten))]
    authorization: AuthorizationRow,
    generation: i64,
    current_generation: i64,
    issued_at: i64,
    expires_at: i64,
    family_ends_at: Option<i64>,
    jkt: Option<String>,
}

impl RefreshRow {
    pub(crate) fn family(&self) -> Result<FamilyId, StoreError> {
        family_id(&self.family_id)
    }

    /// Whether the token was rotated: its family has moved past its generation.
    pub(crate) fn rotated(&self) -> bool {
        self.generation != self.current_generation
    }

    pub(crate) fn into_grant(self) -> Result<RefreshGrant, StoreError> {
        let rotated = self.rotated();
        Ok(RefreshGrant::new(
            self.authorization.into_authorization()?,
            family_id(&self.family_id)?,
            rotated,
            time(self.issued_at),
            time(self.expires_at),
        )
        .with_family_end(self.family_ends_at.map(time))
        .bound_to(thumbprint(self.jkt.as_deref())?))
    }
}

/// A refresh token's generation and its family's last rotation.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct LastRotationRow {
    generation: i64,
    replaced_generation: Option<i64>,
    rotated_at: Option<i64>,
    current_access: Option<Vec<u8>>,
}

impl LastRotationRow {
    /// The access token the last rotation issued, if the token is the one that rotation
    /// replaced and it happened at or after `since`: what a retry must revoke.
    pub(crate) fn retry_of(self, since: i64) -> Option<Vec<u8>> {
        let replaced = self.replaced_generation == Some(self.generation);
        let recent = self.rotated_at.is_some_and(|at| at >= since);
        self.current_access.filter(|_| replaced && recent)
    }
}

/// A family's refresh generation.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct GenerationRow {
    pub(crate) generation: i64,
}

/// A live sign-in session.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct SessionRow {
    request: String,
    csrf: Vec<u8>,
    user_id: Option<String>,
    username: Option<String>,
    expires_at: i64,
}

impl SessionRow {
    pub(crate) fn into_session(self) -> Result<Session, StoreError> {
        let csrf = <[u8; 32]>::try_from(self.csrf).map_err(|_| corrupt("CSRF token digest"))?;
        let session = Session::new(
            self.request,
            SecretDigest::from_bytes(csrf),
            time(self.expires_at),
        );
        Ok(match user(self.user_id, self.username)? {
            Some(user) => session.signed_in(user),
            None => session,
        })
    }
}

/// A key's attempts in its window.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct AttemptsRow {
    count: i64,
    resets_at: i64,
}

impl AttemptsRow {
    pub(crate) fn into_attempts(self) -> Attempts {
        let count = u32::try_from(self.count.max(0)).unwrap_or(u32::MAX);
        Attempts::new(count, time(self.resets_at))
    }
}

/// A single-use value.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct ValueRow {
    pub(crate) value: Vec<u8>,
}

impl ValueRow {
    /// The value as the digest a signed-in browser is kept under.
    pub(crate) fn into_session_digest(self) -> Result<SecretDigest, StoreError> {
        let digest: [u8; 32] = self
            .value
            .try_into()
            .map_err(|_| corrupt("session digest"))?;
        Ok(SecretDigest::from_bytes(digest))
    }
}

/// What one kind of single-use value holds: rows, and bytes of values.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct HeldRow {
    pub(crate) held: i64,
    pub(crate) bytes: i64,
}

impl HeldRow {
    /// Whether one more value of `bytes` bytes fits the bound of its kind.
    pub(crate) fn has_room_for(&self, bytes: i64) -> bool {
        let room = Room::for_value(0);
        self.held < room.max_held && self.bytes.saturating_add(bytes) <= room.max_bytes
    }
}

/// The bound of a kind of one-time value, and the bytes of the value to keep, as the insert
/// statement binds them.
#[derive(Clone, Copy)]
pub(crate) struct Room {
    pub(crate) max_held: i64,
    pub(crate) bytes: i64,
    pub(crate) max_bytes: i64,
}

impl Room {
    pub(crate) fn for_value(bytes: usize) -> Self {
        use crate::store::{SINGLE_USE_BYTES_PER_KIND, SINGLE_USE_PER_KIND};
        Self {
            max_held: i64::try_from(SINGLE_USE_PER_KIND).unwrap_or(i64::MAX),
            bytes: i64::try_from(bytes).unwrap_or(i64::MAX),
            max_bytes: i64::try_from(SINGLE_USE_BYTES_PER_KIND).unwrap_or(i64::MAX),
        }
    }
}

/// The refusal of a one-time value whose kind is full (503 `temporarily_unavailable`).
pub(crate) fn full(kind: &str) -> crate::error::StoreError {
    crate::error::StoreError::unavailable(format!(
        "too many one-time values of kind `{kind}` are held; try again later"
    ))
}

/// A signed-in browser, without its grants.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct UserSessionRow {
    user_id: String,
    username: String,
    sid: String,
    auth_time: i64,
    /// The authentication methods, a JSON array of strings.
    amr: String,
    /// The authentication context class (NULL: none named).
    acr: Option<String>,
    expires_at: i64,
}

impl UserSessionRow {
    /// The session, with `grants` (oldest first).
    pub(crate) fn into_session(
        self,
        grants: Vec<(ClientId, FamilyId)>,
    ) -> Result<UserSession, StoreError> {
        let amr: Vec<String> =
            serde_json::from_str(&self.amr).map_err(|_| corrupt("authentication method list"))?;
        let user = User::new(UserId::new(self.user_id), self.username);
        Ok(UserSession::new(
            user,
            self.sid,
            time(self.auth_time),
            amr,
            time(self.expires_at),
        )
        .with_acr(self.acr)
        .with_grants(grants))
    }
}

/// A client and the family of its tokens, as one grant of a session.
fn session_grant(client_id: &str, family: &[u8]) -> Result<(ClientId, FamilyId), StoreError> {
    let client = ClientId::new(client_id).map_err(|_| corrupt("client id"))?;
    Ok((client, family_id(family)?))
}

/// A signed-in browser with one of its grants, or with none (the grant's columns NULL): what
/// [`FIND_USER_SESSION`](super::text::FIND_USER_SESSION) answers, a row per grant.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct UserSessionGrantRow {
    #[cfg_attr(feature = "postgres", sqlx(flatten))]
    session: UserSessionRow,
    client_id: Option<String>,
    family_id: Option<Vec<u8>>,
}

impl UserSessionGrantRow {
    /// The session these rows (in the order of its grants) describe; `None` for no row.
    pub(crate) fn into_session(rows: Vec<Self>) -> Result<Option<UserSession>, StoreError> {
        let mut grants = Vec::with_capacity(rows.len());
        let mut session = None;
        for row in rows {
            match (&row.client_id, &row.family_id) {
                (Some(client), Some(family)) => grants.push(session_grant(client, family)?),
                (None, None) => {}
                _ => return Err(corrupt("session grant")),
            }
            session.get_or_insert(row.session);
        }
        session.map(|s| s.into_session(grants)).transpose()
    }
}

/// A grant a session's end took with it, and its place among them.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct SessionGrantRow {
    pub(crate) seq: i64,
    client_id: String,
    family_id: Vec<u8>,
}

impl SessionGrantRow {
    pub(crate) fn into_grant(self) -> Result<(ClientId, FamilyId), StoreError> {
        session_grant(&self.client_id, &self.family_id)
    }
}

/// The number a new grant of a session takes, and the session's expiry (which the grant
/// shares).
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct NextGrantRow {
    pub(crate) last_grant: i64,
    pub(crate) expires_at: i64,
}

/// A remembered approval: its scope and audience (NULL: kept before audiences were, the
/// default audience).
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct ConsentRow {
    scope: String,
    audience: Option<String>,
}

impl ConsentRow {
    pub(crate) fn into_consent(self) -> Result<Consent, StoreError> {
        let scope = Scope::parse(&self.scope).map_err(|_| corrupt("scope"))?;
        let audience = match self.audience.as_deref() {
            None => Audience::default(),
            Some(stored) => Audience::from_stored(stored).ok_or_else(|| corrupt("audience"))?,
        };
        Ok(Consent::new(scope, audience))
    }
}

/// A key's name and expiry.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct KeyNameRow {
    name: String,
    expires_at: i64,
}

impl KeyNameRow {
    pub(crate) fn into_name(self) -> (String, UnixTime) {
        (self.name, time(self.expires_at))
    }
}

/// A remembered approval with its client: a row of a user's listing.
#[cfg_attr(feature = "postgres", derive(sqlx::FromRow))]
pub(crate) struct ClientConsentRow {
    client_id: String,
    #[cfg_attr(feature = "postgres", sqlx(flatten))]
    consent: ConsentRow,
}

impl ClientConsentRow {
    pub(crate) fn into_consent(self) -> Result<(ClientId, Consent), StoreError> {
        let client = ClientId::new(self.client_id).map_err(|_| corrupt("client id"))?;
        Ok((client, self.consent.into_consent()?))
    }
}

#[cfg(feature = "sqlite")]
mod lite {
    use super::*;
    use crate::sql::sqlite::from_lite;

    from_lite!(ClientRow {
        client_id,
        name,
        secret_verifier,
        redirect_uris,
        grant_types,
        scopes,
        default_scope,
        approval_required,
        audiences,
        resources,
        registration_token,
        dpop_bound,
        par_required,
        previous_secret_verifier,
        previous_secret_expires_at,
        jwks,
        jwks_uri,
        openid,
    });
    from_lite!(ClaimsRow { claims });
    from_lite!(LastUsedRow { last_used });
    from_lite!(ClientIdRow { client_id });
    from_lite!(UserRow { id, username });
    from_lite!(AccountRow { password_hash; user });
    from_lite!(AuthorizationRow {
        client_id,
        user_id,
        username,
        scope,
        audience,
        authentication
    });
    from_lite!(CodeRow {
        family_id,
        redirect_uri,
        code_challenge,
        code_challenge_method,
        issued_at,
        expires_at,
        openid,
        jkt;
        authorization
    });
    from_lite!(CodeStateRow {
        family_id,
        redeemed
    });
    from_lite!(AccessRow { family_id, issued_at, expires_at, jkt, act; authorization });
    from_lite!(RefreshRow {
        family_id,
        generation,
        current_generation,
        issued_at,
        expires_at,
        family_ends_at,
        jkt;
        authorization
    });
    from_lite!(LastRotationRow {
        generation,
        replaced_generation,
        rotated_at,
        current_access
    });
    from_lite!(GenerationRow { generation });
    from_lite!(SessionRow {
        request,
        csrf,
        user_id,
        username,
        expires_at
    });
    from_lite!(AttemptsRow { count, resets_at });
    from_lite!(ValueRow { value });
    from_lite!(HeldRow { held, bytes });
    from_lite!(UserSessionRow {
        user_id,
        username,
        sid,
        auth_time,
        amr,
        acr,
        expires_at
    });
    from_lite!(UserSessionGrantRow { client_id, family_id; session });
    from_lite!(SessionGrantRow {
        seq,
        client_id,
        family_id
    });
    from_lite!(NextGrantRow {
        last_grant,
        expires_at
    });
    from_lite!(ConsentRow { scope, audience });
    from_lite!(ClientConsentRow { client_id; consent });
    from_lite!(KeyNameRow { name, expires_at });
}
