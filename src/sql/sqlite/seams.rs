//! Every seam on [`SqliteStore`]: the statements of [`text`], in the order the PostgreSQL store
//! runs them (see [`crate::sql`] for why each is atomic). Writes go to the writer thread whole
//! ([`SqliteStore::write`]), reads run where they are asked ([`SqliteStore::read`]).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::Connection;

use super::{SqliteStore, row, rows, run};
use crate::client::{Client, ClientId, SecretVerifier};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::sql::columns::{AuthorizationColumns, ClientColumns, secs};
use crate::sql::rows::{
    AccessRow, AccountRow, AttemptsRow, ClaimsRow, ClientRow, CodeRow, CodeStateRow, GenerationRow,
    LastRotationRow, NextGrantRow, RefreshRow, ScopeRow, SessionGrantRow, SessionRow, UserRow,
    UserSessionGrantRow, UserSessionRow, ValueRow,
};
use crate::sql::{REPLAY_MEMORY, text};
use crate::store::{
    AccessGrant, Account, Actor, Admin, AdminError, AttemptCounter, Attempts, Authorization,
    ClientStore, CodeGrant, CodeRedemption, ConsentStore, Family, FamilyId, KeyStore,
    MAX_SESSION_GRANTS, MAX_SESSIONS_PER_USER, NewTokens, Purge, RefreshGrant, Rotation, Session,
    SessionStore, SignInFacts, SingleUseStore, TokenIssuer, User, UserAdmin, UserClaims, UserId,
    UserSession, UserSessionStore, UserStore, username_key,
};

/// [`MAX_SESSION_GRANTS`] as a grant number's distance.
const KEPT_GRANTS: i64 = MAX_SESSION_GRANTS as i64;
/// The other live sessions a user keeps beside a new one.
const KEPT_OTHER_SESSIONS: i64 = MAX_SESSIONS_PER_USER as i64 - 1;

#[async_trait]
impl ClientStore for SqliteStore {
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError> {
        let client_id = client_id.to_owned();
        let found: Option<ClientRow> = self
            .read(move |conn| row(conn, text::FIND_CLIENT, &[&client_id]))
            .await?;
        found.map(|row| row.into_client().map(Arc::new)).transpose()
    }
}

#[async_trait]
impl UserStore for SqliteStore {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        let Some(key) = username_key(username) else {
            return Ok(None);
        };
        let found: Option<AccountRow> = self
            .read(move |conn| row(conn, text::FIND_ACCOUNT_BY_KEY, &[&key.as_str()]))
            .await?;
        Ok(found.map(|row| Account::new(row.user.into_user(), row.password_hash)))
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        let id = id.as_str().to_owned();
        let found: Option<UserRow> = self
            .read(move |conn| row(conn, text::FIND_USER_BY_ID, &[&id]))
            .await?;
        Ok(found.map(UserRow::into_user))
    }

    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        let id = id.as_str().to_owned();
        let found: Option<ClaimsRow> = self
            .read(move |conn| row(conn, text::FIND_CLAIMS, &[&id]))
            .await?;
        found
            .map(|row| match row.claims {
                None => Ok(UserClaims::new()),
                Some(stored) => UserClaims::from_stored(&stored)
                    .ok_or_else(|| StoreError::failed("a stored user's claims are malformed")),
            })
            .transpose()
    }
}

#[async_trait]
impl Admin for SqliteStore {
    async fn register_client(&self, client: &Client) -> Result<(), AdminError> {
        if self.write_client(text::INSERT_CLIENT, client).await? {
            Ok(())
        } else {
            Err(AdminError::ClientIdTaken)
        }
    }

    async fn replace_client(&self, client: &Client) -> Result<bool, StoreError> {
        self.write_client(text::REPLACE_CLIENT, client).await
    }

    async fn rotate_client_secret(
        &self,
        client_id: &str,
        secret: &SecretVerifier,
        retire_until: UnixTime,
    ) -> Result<bool, StoreError> {
        let client_id = client_id.to_owned();
        let stored = secret.to_stored();
        let done = self
            .write(move |conn| {
                run(
                    conn,
                    text::ROTATE_CLIENT_SECRET,
                    &[&client_id, &stored, &secs(retire_until)],
                )
            })
            .await?;
        Ok(done > 0)
    }

    async fn remove_client(&self, client_id: &str) -> Result<bool, StoreError> {
        let client_id = client_id.to_owned();
        let done = self
            .write(move |conn| run(conn, text::DELETE_CLIENT, &[&client_id]))
            .await?;
        Ok(done > 0)
    }
}

#[async_trait]
impl UserAdmin for SqliteStore {
    async fn insert_user(&self, user: &User, password_hash: &str) -> Result<(), AdminError> {
        let key = username_key(user.username()).ok_or(AdminError::InvalidUsername)?;
        let id = user.id().as_str().to_owned();
        let username = user.username().to_owned();
        let hash = password_hash.to_owned();
        let done = self
            .write(move |conn| {
                run(
                    conn,
                    text::INSERT_USER,
                    &[&id, &username, &key.as_str(), &hash],
                )
            })
            .await?;
        if done == 0 {
            return Err(AdminError::UsernameTaken);
        }
        Ok(())
    }

    async fn set_password_hash(
        &self,
        user: &UserId,
        password_hash: &str,
    ) -> Result<bool, StoreError> {
        let id = user.as_str().to_owned();
        let hash = password_hash.to_owned();
        let done = self
            .write(move |conn| run(conn, text::SET_PASSWORD_HASH, &[&id, &hash]))
            .await?;
        Ok(done > 0)
    }

    async fn set_claims(&self, user: &UserId, claims: &UserClaims) -> Result<bool, StoreError> {
        let id = user.as_str().to_owned();
        let stored = claims.to_stored();
        let done = self
            .write(move |conn| run(conn, text::SET_CLAIMS, &[&id, &stored]))
            .await?;
        Ok(done > 0)
    }
}

#[async_trait]
impl Purge for SqliteStore {
    async fn purge_expired(&self, now: UnixTime) -> Result<u64, StoreError> {
        let mut deleted = 0;
        // Each statement a write of its own: a long purge does not hold back other writes as
        // one transaction would.
        for statement in text::PURGE {
            deleted += self
                .write(move |conn| run(conn, statement, &[&secs(now)]))
                .await?;
        }
        // Parts of entries counted above (a session's grants), so that every store answers
        // the same count for the same entries.
        for statement in text::PURGE_PARTS {
            self.write(move |conn| run(conn, statement, &[&secs(now)]))
                .await?;
        }
        Ok(deleted)
    }
}

impl SqliteStore {
    /// Every registered client, ordered by id: for an administrator (the request path looks
    /// clients up one by one).
    pub async fn clients(&self) -> Result<Vec<Client>, StoreError> {
        let found: Vec<ClientRow> = self
            .read(|conn| rows(conn, text::LIST_CLIENTS, &[]))
            .await?;
        found.into_iter().map(ClientRow::into_client).collect()
    }

    /// The account with this username (matched in any case), if any.
    pub async fn find_user_by_username(&self, username: &str) -> Result<Option<User>, StoreError> {
        let Some(key) = username_key(username) else {
            return Ok(None);
        };
        let found: Option<UserRow> = self
            .read(move |conn| row(conn, text::FIND_USER_BY_KEY, &[&key.as_str()]))
            .await?;
        Ok(found.map(UserRow::into_user))
    }

    /// Runs [`text::INSERT_CLIENT`] or [`text::REPLACE_CLIENT`] for `client`; answers whether a
    /// row changed. Only its secret's verifier is stored.
    async fn write_client(
        &self,
        statement: &'static str,
        client: &Client,
    ) -> Result<bool, StoreError> {
        let columns = ClientColumns::of(client);
        let openid = client.openid().to_stored();
        let id = client.id().as_str().to_owned();
        let name = client.name().to_owned();
        let scopes = client.scopes().as_str().to_owned();
        let default_scope = client.default_scope().as_str().to_owned();
        let dpop = client.requires_dpop();
        let par = client.requires_pushed_requests();
        let done = self
            .write(move |conn| {
                run(
                    conn,
                    statement,
                    &[
                        &id,
                        &name,
                        &columns.secret_verifier,
                        &columns.redirect_uris,
                        &columns.grant_types,
                        &scopes,
                        &default_scope,
                        &columns.approval_required,
                        &columns.audiences,
                        &columns.resources,
                        &columns.registration_token.as_ref().map(|d| &d[..]),
                        &dpop,
                        &par,
                        &columns.previous_secret_verifier,
                        &columns.previous_secret_expires_at,
                        &columns.jwks,
                        &columns.jwks_uri,
                        &openid,
                    ],
                )
            })
            .await?;
        Ok(done > 0)
    }
}

#[async_trait]
impl TokenIssuer for SqliteStore {
    async fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError> {
        let code = *code;
        self.write(move |conn| {
            let forget_at = grant.expires_at.plus(REPLAY_MEMORY);
            let authorization = AuthorizationColumns::of(&grant.authorization);
            let challenge = grant.code_challenge.as_ref();
            let openid = grant.openid.as_ref().map(SignInFacts::to_stored);
            let jkt = grant.dpop_jkt.map(|jkt| jkt.to_string());
            // The family first: a code without its family would be refused as revoked. It lives
            // as long as the code's tombstone.
            insert_family(conn, family, &grant.authorization, forget_at)?;
            run(
                conn,
                text::INSERT_CODE,
                &[
                    &code.as_bytes().as_slice(),
                    &family.to_bytes().as_slice(),
                    &authorization.client_id,
                    &authorization.user_id,
                    &authorization.username,
                    &authorization.scope,
                    &grant.redirect_uri.as_str(),
                    &challenge.map(|c| c.as_str()),
                    &challenge.map(|c| c.method().as_str()),
                    &secs(grant.issued_at),
                    &secs(grant.expires_at),
                    &secs(forget_at),
                    &authorization.audience,
                    &openid,
                    &jkt,
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn redeem_code(
        &self,
        code: &SecretDigest,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError> {
        let code = *code;
        self.write(move |conn| {
            let digest = code.as_bytes().as_slice();
            let redeemed: Option<CodeRow> = row(conn, text::REDEEM_CODE, &[&digest, &secs(now)])?;
            if let Some(row) = redeemed {
                let (family, grant) = row.into_grant()?;
                return Ok(CodeRedemption::Redeemed { grant, family });
            }
            // Not ours: redeemed before (a replay), or unknown, expired or revoked.
            let seen: Option<CodeStateRow> = row(conn, text::CODE_STATE, &[&digest])?;
            Ok(match seen {
                Some(row) if row.redeemed => CodeRedemption::Replayed {
                    family: row.family()?,
                },
                _ => CodeRedemption::Invalid,
            })
        })
        .await
    }

    async fn insert_tokens(&self, tokens: NewTokens) -> Result<(), StoreError> {
        self.write(move |conn| {
            let generation = match tokens.family {
                Family::New(id) => {
                    insert_family(conn, id, &tokens.authorization, tokens.expires_at())?;
                    0
                }
                Family::Existing(id) => {
                    let extended: Option<GenerationRow> = row(
                        conn,
                        text::EXTEND_FAMILY,
                        &[&id.to_bytes().as_slice(), &secs(tokens.expires_at())],
                    )?;
                    extended
                        .ok_or_else(|| StoreError::failed("tokens asked for an unknown family"))?
                        .generation
                }
            };
            keep_tokens(conn, &tokens, generation)
        })
        .await
    }

    async fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError> {
        let token = *token;
        let found: Option<RefreshRow> = self
            .read(move |conn| {
                row(
                    conn,
                    text::FIND_REFRESH,
                    &[&token.as_bytes().as_slice(), &secs(now)],
                )
            })
            .await?;
        found.map(RefreshRow::into_grant).transpose()
    }

    async fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError> {
        let token = *token;
        // One write: the token is retired and its successor kept together, or neither.
        self.write(move |conn| {
            let now = secs(successor.issued_at);
            let family = successor.family.id();
            let digest = token.as_bytes().as_slice();
            let rotated: Option<GenerationRow> = row(
                conn,
                text::ROTATE,
                &[
                    &digest,
                    &now,
                    &family.to_bytes().as_slice(),
                    &secs(successor.expires_at()),
                    &successor.access_token.as_bytes().as_slice(),
                ],
            )?;
            if let Some(row) = rotated {
                keep_tokens(conn, &successor, row.generation)?;
                return Ok(Rotation::Rotated);
            }
            if let Some(since) = retry_since
                && let Some(rotation) = retry(conn, &token, &successor, secs(since))?
            {
                return Ok(rotation);
            }
            // Not ours: rotated before (reuse), or unknown, expired, revoked or of another
            // family. Nothing was written; grantor revokes after a reuse, the store does not.
            let seen: Option<RefreshRow> = row(conn, text::FIND_REFRESH, &[&digest, &now])?;
            match seen {
                Some(row) if row.rotated() && row.family()? == family => {
                    Ok(Rotation::Reused { family })
                }
                _ => Ok(Rotation::Invalid),
            }
        })
        .await
    }

    async fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        let token = *token;
        let found: Option<AccessRow> = self
            .read(move |conn| {
                row(
                    conn,
                    text::FIND_ACCESS,
                    &[&token.as_bytes().as_slice(), &secs(now)],
                )
            })
            .await?;
        found.map(AccessRow::into_grant).transpose()
    }

    async fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError> {
        let token = *token;
        self.write(move |conn| {
            run(conn, text::DELETE_ACCESS, &[&token.as_bytes().as_slice()]).map(|_| ())
        })
        .await
    }

    async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
        self.write(move |conn| {
            run(conn, text::REVOKE_FAMILY, &[&family.to_bytes().as_slice()]).map(|_| ())
        })
        .await
    }

    async fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError> {
        let client_id = client_id.to_owned();
        self.write(move |conn| run(conn, text::REVOKE_CLIENT, &[&client_id]))
            .await
    }
}

/// Starts family `id` for `authorization`, living until `expires_at`.
fn insert_family(
    conn: &Connection,
    id: FamilyId,
    authorization: &Authorization,
    expires_at: UnixTime,
) -> Result<(), StoreError> {
    let columns = AuthorizationColumns::of(authorization);
    run(
        conn,
        text::INSERT_FAMILY,
        &[
            &id.to_bytes().as_slice(),
            &columns.client_id,
            &columns.user_id,
            &columns.username,
            &columns.scope,
            &secs(expires_at),
            &columns.audience,
        ],
    )?;
    Ok(())
}

/// Inside the rotation's write: a retry of the rotation that replaced `token`, if it is one
/// (rotated at or after `since`): the access token that rotation issued goes, `successor` is
/// kept, and the answer is [`Rotation::Retried`]; [`Rotation::Invalid`] if a concurrent retry
/// won; `None` when it is no retry at all.
fn retry(
    conn: &Connection,
    token: &SecretDigest,
    successor: &NewTokens,
    since: i64,
) -> Result<Option<Rotation>, StoreError> {
    let now = secs(successor.issued_at);
    let family = successor.family.id().to_bytes();
    let digest = token.as_bytes().as_slice();
    let last: Option<LastRotationRow> = row(
        conn,
        text::FIND_LAST_ROTATION,
        &[&digest, &now, &family.as_slice()],
    )?;
    let Some(lost_access) = last.and_then(|row| row.retry_of(since)) else {
        return Ok(None);
    };
    let moved: Option<GenerationRow> = row(
        conn,
        text::RETRY_ROTATION,
        &[
            &digest,
            &now,
            &family.as_slice(),
            &secs(successor.expires_at()),
            &successor.access_token.as_bytes().as_slice(),
            &since,
            &lost_access.as_slice(),
        ],
    )?;
    let Some(moved) = moved else {
        return Ok(Some(Rotation::Invalid));
    };
    run(conn, text::DELETE_ACCESS, &[&lost_access.as_slice()])?;
    keep_tokens(conn, successor, moved.generation)?;
    Ok(Some(Rotation::Retried))
}

/// Keeps the access token of `tokens`, and its refresh token as `generation` of its family.
fn keep_tokens(conn: &Connection, tokens: &NewTokens, generation: i64) -> Result<(), StoreError> {
    let family = tokens.family.id().to_bytes();
    let issued_at = secs(tokens.issued_at);
    let access_jkt = tokens.jkt.map(|jkt| jkt.to_string());
    let actor = tokens.actor.as_ref().map(Actor::to_stored);
    run(
        conn,
        text::INSERT_ACCESS,
        &[
            &tokens.access_token.as_bytes().as_slice(),
            &family.as_slice(),
            &tokens.authorization.scope.as_str(),
            &tokens.jti.as_str(),
            &issued_at,
            &secs(tokens.access_expires_at),
            &tokens.authorization.audience.as_str(),
            &access_jkt,
            &actor,
        ],
    )?;
    if let (Some(ends_at), Some(_)) = (tokens.family_ends_at, &tokens.refresh_token) {
        run(
            conn,
            text::END_FAMILY,
            &[&family.as_slice(), &secs(ends_at)],
        )?;
    }
    if let Some(refresh) = &tokens.refresh_token {
        let jkt = refresh.jkt.map(|jkt| jkt.to_string());
        run(
            conn,
            text::INSERT_REFRESH,
            &[
                &refresh.digest.as_bytes().as_slice(),
                &family.as_slice(),
                &generation,
                &issued_at,
                &secs(refresh.expires_at),
                &jkt,
            ],
        )?;
    }
    Ok(())
}

#[async_trait]
impl SessionStore for SqliteStore {
    async fn insert_session(
        &self,
        id: &SecretDigest,
        session: Session,
        _now: UnixTime,
    ) -> Result<(), StoreError> {
        // Expired sessions are never found; `purge_expired` deletes them.
        let id = *id;
        self.write(move |conn| {
            let user = session.user.as_ref();
            run(
                conn,
                text::UPSERT_SESSION,
                &[
                    &id.as_bytes().as_slice(),
                    &session.authorization.as_str(),
                    &session.csrf.as_bytes().as_slice(),
                    &user.map(|u| u.id().as_str()),
                    &user.map(|u| u.username()),
                    &secs(session.expires_at),
                ],
            )
            .map(|_| ())
        })
        .await
    }

    async fn find_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        let id = *id;
        self.read(move |conn| session(conn, text::FIND_SESSION, &id, now))
            .await
    }

    async fn take_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<Session>, StoreError> {
        let id = *id;
        self.write(move |conn| session(conn, text::TAKE_SESSION, &id, now))
            .await
    }
}

/// The live session under `id`, as `statement` (a find or a take) answers it.
fn session(
    conn: &Connection,
    statement: &str,
    id: &SecretDigest,
    now: UnixTime,
) -> Result<Option<Session>, StoreError> {
    let found: Option<SessionRow> = row(conn, statement, &[&id.as_bytes().as_slice(), &secs(now)])?;
    found.map(SessionRow::into_session).transpose()
}

#[async_trait]
impl AttemptCounter for SqliteStore {
    async fn record_attempt(
        &self,
        key: &str,
        window: Duration,
        now: UnixTime,
    ) -> Result<Attempts, StoreError> {
        let key = key.to_owned();
        self.write(move |conn| {
            let counted: Option<AttemptsRow> = row(
                conn,
                text::RECORD_ATTEMPT,
                &[&key, &secs(now.plus(window)), &secs(now)],
            )?;
            counted
                .map(AttemptsRow::into_attempts)
                .ok_or_else(|| StoreError::failed("counting an attempt answered no row"))
        })
        .await
    }

    async fn attempts(&self, key: &str, now: UnixTime) -> Result<Option<Attempts>, StoreError> {
        let key = key.to_owned();
        let found: Option<AttemptsRow> = self
            .read(move |conn| row(conn, text::FIND_ATTEMPTS, &[&key, &secs(now)]))
            .await?;
        Ok(found.map(AttemptsRow::into_attempts))
    }

    async fn clear_attempts(&self, key: &str) -> Result<(), StoreError> {
        let key = key.to_owned();
        self.write(move |conn| run(conn, text::CLEAR_ATTEMPTS, &[&key]).map(|_| ()))
            .await
    }
}

#[async_trait]
impl SingleUseStore for SqliteStore {
    async fn insert_once(
        &self,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        self.insert_unless_live(text::INSERT_ONCE, key, value, expires_at, now)
            .await
    }

    async fn peek(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        let key = key.to_owned();
        self.read(move |conn| value(conn, text::PEEK, &key, now))
            .await
    }

    async fn take(&self, key: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        let key = key.to_owned();
        self.write(move |conn| value(conn, text::TAKE, &key, now))
            .await
    }
}

#[async_trait]
impl KeyStore for SqliteStore {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        self.insert_unless_live(text::INSERT_KEY, name, material, expires_at, now)
            .await
    }

    async fn find_key(&self, name: &str, now: UnixTime) -> Result<Option<Vec<u8>>, StoreError> {
        let name = name.to_owned();
        self.read(move |conn| value(conn, text::FIND_KEY, &name, now))
            .await
    }
}

impl SqliteStore {
    /// Keeps `value` under `key` with `statement` (an insert that takes over only an expired
    /// row): whether it was kept.
    async fn insert_unless_live(
        &self,
        statement: &'static str,
        key: &str,
        value: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let key = key.to_owned();
        let value = value.to_vec();
        let done = self
            .write(move |conn| {
                run(
                    conn,
                    statement,
                    &[&key, &value, &secs(expires_at), &secs(now)],
                )
            })
            .await?;
        Ok(done > 0)
    }
}

/// The live value under `key`, as `statement` (a peek or a take) answers it.
fn value(
    conn: &Connection,
    statement: &str,
    key: &str,
    now: UnixTime,
) -> Result<Option<Vec<u8>>, StoreError> {
    let found: Option<ValueRow> = row(conn, statement, &[&key, &secs(now)])?;
    Ok(found.map(|row| row.value))
}

#[async_trait]
impl UserSessionStore for SqliteStore {
    async fn insert_user_session(
        &self,
        id: &SecretDigest,
        session: UserSession,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        let id = *id;
        self.write(move |conn| {
            // Expired sessions are never found; `purge_expired` deletes them. A session arrives
            // with at most MAX_SESSION_GRANTS grants; should it carry more, the newest are
            // kept, as adding them one by one would.
            let skipped = session.grants.len().saturating_sub(MAX_SESSION_GRANTS);
            let grants = &session.grants[skipped..];
            // A list of strings cannot fail to serialize.
            let amr = serde_json::to_string(&session.amr).unwrap_or_default();
            let expires_at = secs(session.expires_at);
            let digest = id.as_bytes().as_slice();
            run(
                conn,
                text::UPSERT_USER_SESSION,
                &[
                    &digest,
                    &session.user.id().as_str(),
                    &session.user.username(),
                    &session.sid.as_str(),
                    &secs(session.auth_time),
                    &amr,
                    &expires_at,
                    &i64::try_from(grants.len()).unwrap_or(i64::MAX),
                ],
            )?;
            // A session kept under this digest before takes its grants with it.
            run(conn, text::FORGET_SESSION_GRANTS, &[&digest])?;
            for (number, (client, family)) in (1..).zip(grants) {
                insert_grant(conn, &id, number, client, *family, expires_at)?;
            }
            // The user's oldest sessions past the bound, and their grants.
            let forgotten: Vec<ValueRow> = rows(
                conn,
                text::FORGET_OLDEST_USER_SESSIONS,
                &[
                    &session.user.id().as_str(),
                    &digest,
                    &secs(now),
                    &KEPT_OTHER_SESSIONS,
                ],
            )?;
            for gone in forgotten {
                run(conn, text::FORGET_SESSION_GRANTS, &[&gone.value])?;
            }
            Ok(())
        })
        .await
    }

    async fn find_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        let id = *id;
        let found: Vec<UserSessionGrantRow> = self
            .read(move |conn| {
                rows(
                    conn,
                    text::FIND_USER_SESSION,
                    &[&id.as_bytes().as_slice(), &secs(now)],
                )
            })
            .await?;
        UserSessionGrantRow::into_session(found)
    }

    async fn add_session_grant(
        &self,
        id: &SecretDigest,
        client: &ClientId,
        family: FamilyId,
        now: UnixTime,
    ) -> Result<bool, StoreError> {
        let id = *id;
        let client = client.clone();
        self.write(move |conn| {
            let digest = id.as_bytes().as_slice();
            let next: Option<NextGrantRow> =
                row(conn, text::NEXT_SESSION_GRANT, &[&digest, &secs(now)])?;
            let Some(next) = next else {
                return Ok(false);
            };
            let number = next.last_grant;
            insert_grant(conn, &id, number, &client, family, next.expires_at)?;
            if number > KEPT_GRANTS {
                run(
                    conn,
                    text::FORGET_OLD_SESSION_GRANTS,
                    &[&digest, &(number - KEPT_GRANTS)],
                )?;
            }
            Ok(true)
        })
        .await
    }

    async fn end_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError> {
        let id = *id;
        self.write(move |conn| {
            let digest = id.as_bytes().as_slice();
            // The session's row first: the delete that removes it is the one caller that ends
            // it; the others find no row and take nothing.
            let ended: Option<UserSessionRow> =
                row(conn, text::END_USER_SESSION, &[&digest, &secs(now)])?;
            let Some(ended) = ended else {
                return Ok(None);
            };
            let mut grants: Vec<SessionGrantRow> =
                rows(conn, text::TAKE_SESSION_GRANTS, &[&digest])?;
            // `DELETE … RETURNING` answers rows in no particular order.
            grants.sort_by_key(|grant| grant.seq);
            let grants = grants
                .into_iter()
                .map(SessionGrantRow::into_grant)
                .collect::<Result<_, _>>()?;
            ended.into_session(grants).map(Some)
        })
        .await
    }
}

/// The grant numbered `number` of session `id`: `client` issued tokens of `family`, kept until
/// the session's `expires_at` (Unix seconds).
fn insert_grant(
    conn: &Connection,
    id: &SecretDigest,
    number: i64,
    client: &ClientId,
    family: FamilyId,
    expires_at: i64,
) -> Result<(), StoreError> {
    run(
        conn,
        text::INSERT_SESSION_GRANT,
        &[
            &id.as_bytes().as_slice(),
            &number,
            &client.as_str(),
            &family.to_bytes().as_slice(),
            &expires_at,
        ],
    )?;
    Ok(())
}

#[async_trait]
impl ConsentStore for SqliteStore {
    async fn remember_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        scope: &Scope,
        expires_at: UnixTime,
        _now: UnixTime,
    ) -> Result<(), StoreError> {
        // One statement: of concurrent approvals, the last to commit is kept whole. An expired
        // approval is never found; `purge_expired` deletes it.
        let user = user.as_str().to_owned();
        let client = client.clone();
        let scope = scope.as_str().to_owned();
        self.write(move |conn| {
            run(
                conn,
                text::UPSERT_CONSENT,
                &[&user, &client.as_str(), &scope, &secs(expires_at)],
            )
            .map(|_| ())
        })
        .await
    }

    async fn find_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        now: UnixTime,
    ) -> Result<Option<Scope>, StoreError> {
        let user = user.as_str().to_owned();
        let client = client.clone();
        let found: Option<ScopeRow> = self
            .read(move |conn| {
                row(
                    conn,
                    text::FIND_CONSENT,
                    &[&user, &client.as_str(), &secs(now)],
                )
            })
            .await?;
        found.map(ScopeRow::into_scope).transpose()
    }

    async fn forget_consent(&self, user: &UserId, client: &ClientId) -> Result<bool, StoreError> {
        let user = user.as_str().to_owned();
        let client = client.clone();
        let done = self
            .write(move |conn| run(conn, text::FORGET_CONSENT, &[&user, &client.as_str()]))
            .await?;
        Ok(done > 0)
    }
}
