//! The three seams, implemented once for every database by [`sql_store!`].

/// Implements the store for one database type. The bodies are identical for both databases;
/// they differ only in their migrator and in which error codes mean "try again later".
macro_rules! sql_store {
    ($db:ty, $migrator:expr, $transient:expr) => {
        impl $crate::sql::SqlStore<$db> {
            /// Applies pending migrations (versioned, idempotent; safe to run from many nodes at
            /// once).
            pub async fn migrate(&self) -> Result<(), $crate::error::StoreError> {
                let first = $migrator.run(&self.pool).await;
                match first {
                    Ok(()) => Ok(()),
                    // Another process may have applied the same migration between our check
                    // and our insert (SQLite has no migration lock): look again.
                    Err(_) => $migrator
                        .run(&self.pool)
                        .await
                        .map_err(|e| $crate::sql::columns::migrate_error(e, $transient)),
                }
            }

            /// Deletes expired codes (an hour past their expiry, once no replay needs them),
            /// expired tokens, families with nothing live left, and everything of revoked
            /// families; answers how many rows went. Call it now and then (say hourly); lookups
            /// never find expired rows anyway.
            pub async fn purge_expired(
                &self,
                now: $crate::clock::UnixTime,
            ) -> Result<u64, $crate::error::StoreError> {
                let mut deleted = 0;
                for statement in $crate::sql::text::PURGE {
                    let query = sqlx::query(statement);
                    let query = if statement.contains("$1") {
                        query.bind($crate::sql::columns::secs(now))
                    } else {
                        query
                    };
                    deleted += query
                        .execute(&self.pool)
                        .await
                        .map_err(Self::error)?
                        .rows_affected();
                }
                Ok(deleted)
            }

            /// Registers `client`, replacing any client with the same id. Only its secret's
            /// verifier is stored ([`SecretVerifier::to_stored`](crate::SecretVerifier::to_stored)).
            pub async fn insert_client(
                &self,
                client: &$crate::client::Client,
            ) -> Result<(), $crate::error::StoreError> {
                let columns = $crate::sql::columns::ClientColumns::of(client);
                sqlx::query($crate::sql::text::UPSERT_CLIENT)
                    .bind(client.id().as_str())
                    .bind(client.name())
                    .bind(columns.secret_verifier)
                    .bind(columns.redirect_uris)
                    .bind(columns.grant_types)
                    .bind(client.scopes().as_str())
                    .bind(client.default_scope().as_str())
                    .bind(columns.approval_required)
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(())
            }

            /// Removes the client registered under `client_id`; answers whether there was one.
            pub async fn remove_client(
                &self,
                client_id: &str,
            ) -> Result<bool, $crate::error::StoreError> {
                let done = sqlx::query($crate::sql::text::DELETE_CLIENT)
                    .bind(client_id)
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(done.rows_affected() > 0)
            }

            /// Adds an account with a random id, hashing `password` with Argon2id on grantor's
            /// hashing threads (slow by design). Usernames are email addresses, unique in any
            /// case.
            pub async fn add_user(
                &self,
                username: &str,
                password: &$crate::secret::Password,
            ) -> Result<$crate::store::User, $crate::sql::AddUserError> {
                if $crate::store::username_key(username).is_none() {
                    return Err($crate::sql::AddUserError::InvalidUsername);
                }
                let id = $crate::store::UserId::new($crate::sql::columns::new_jti()?);
                let secret = password.expose_secret().to_owned();
                let phc = $crate::hash::run_blocking(move || $crate::hash::hash_password(&secret))
                    .await??;
                self.insert_user(&$crate::store::User::new(id, username), &phc)
                    .await
            }

            /// Adds an account whose Argon2id hash (a PHC string) the host already has.
            pub async fn insert_user(
                &self,
                user: &$crate::store::User,
                password_hash: &str,
            ) -> Result<$crate::store::User, $crate::sql::AddUserError> {
                let key = $crate::store::username_key(user.username())
                    .ok_or($crate::sql::AddUserError::InvalidUsername)?;
                let done = sqlx::query($crate::sql::text::INSERT_USER)
                    .bind(user.id().as_str())
                    .bind(user.username())
                    .bind(key)
                    .bind(password_hash)
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                if done.rows_affected() == 0 {
                    return Err($crate::sql::AddUserError::Taken);
                }
                Ok(user.clone())
            }

            fn error(error: sqlx::Error) -> $crate::error::StoreError {
                $crate::sql::columns::store_error(error, $transient)
            }

            /// Mints an access token, and a refresh token of `generation` when asked, in
            /// `family` (which already covers their expiry).
            async fn mint(
                &self,
                family: $crate::store::FamilyId,
                access_scope: $crate::scope::Scope,
                issued_at: $crate::clock::UnixTime,
                access_expires_at: $crate::clock::UnixTime,
                refresh: Option<(i64, $crate::clock::UnixTime)>,
            ) -> Result<$crate::store::IssuedTokens, $crate::error::StoreError> {
                use $crate::secret::{AccessToken, RefreshToken, random_secret};
                let key = $crate::sql::columns::family_key(family);
                let access_token = AccessToken::new(random_secret()?);
                let jti = $crate::sql::columns::new_jti()?;
                sqlx::query($crate::sql::text::INSERT_ACCESS)
                    .bind(&access_token.digest().as_bytes()[..])
                    .bind(&key[..])
                    .bind(access_scope.as_str())
                    .bind(&jti)
                    .bind($crate::sql::columns::secs(issued_at))
                    .bind($crate::sql::columns::secs(access_expires_at))
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let refresh_token = match refresh {
                    None => None,
                    Some((generation, expires_at)) => {
                        let token = RefreshToken::new(random_secret()?);
                        sqlx::query($crate::sql::text::INSERT_REFRESH)
                            .bind(&token.digest().as_bytes()[..])
                            .bind(&key[..])
                            .bind(generation)
                            .bind($crate::sql::columns::secs(issued_at))
                            .bind($crate::sql::columns::secs(expires_at))
                            .execute(&self.pool)
                            .await
                            .map_err(Self::error)?;
                        Some(token)
                    }
                };
                Ok($crate::store::IssuedTokens {
                    access_token,
                    jti: $crate::store::Jti::new(jti),
                    refresh_token,
                    scope: access_scope,
                    family,
                })
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::ClientStore for $crate::sql::SqlStore<$db> {
            async fn find_client(
                &self,
                client_id: &str,
            ) -> Result<Option<std::sync::Arc<$crate::client::Client>>, $crate::error::StoreError>
            {
                use sqlx::Row as _;
                let Some(row) = sqlx::query($crate::sql::text::FIND_CLIENT)
                    .bind(client_id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?
                else {
                    return Ok(None);
                };
                let get = |e: sqlx::Error| Self::error(e);
                let id: String = row.try_get(0).map_err(get)?;
                let client = $crate::sql::columns::client_from_columns(
                    &id,
                    row.try_get(1).map_err(get)?,
                    row.try_get(2).map_err(get)?,
                    &row.try_get::<String, _>(3).map_err(get)?,
                    &row.try_get::<String, _>(4).map_err(get)?,
                    row.try_get(5).map_err(get)?,
                    row.try_get(6).map_err(get)?,
                    row.try_get(7).map_err(get)?,
                )?;
                Ok(Some(std::sync::Arc::new(client)))
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::UserStore for $crate::sql::SqlStore<$db> {
            async fn authenticate(
                &self,
                username: &str,
                password: &$crate::secret::Password,
            ) -> Result<Option<$crate::store::User>, $crate::error::StoreError> {
                use sqlx::Row as _;
                let found = match $crate::store::username_key(username) {
                    None => None,
                    Some(key) => sqlx::query($crate::sql::text::FIND_USER_BY_KEY)
                        .bind(key)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(Self::error)?,
                };
                let Some(row) = found else {
                    $crate::hash::verify_against_dummy(password.expose_secret()).await?;
                    return Ok(None);
                };
                let id: String = row.try_get(0).map_err(Self::error)?;
                let name: String = row.try_get(1).map_err(Self::error)?;
                let phc: String = row.try_get(2).map_err(Self::error)?;
                let verified =
                    $crate::hash::verify_password(&phc, password.expose_secret()).await?;
                Ok(
                    verified
                        .then(|| $crate::store::User::new($crate::store::UserId::new(id), name)),
                )
            }

            async fn find_user(
                &self,
                id: &$crate::store::UserId,
            ) -> Result<Option<$crate::store::User>, $crate::error::StoreError> {
                use sqlx::Row as _;
                let row = sqlx::query($crate::sql::text::FIND_USER_BY_ID)
                    .bind(id.as_str())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                row.map(|row| {
                    let id: String = row.try_get(0)?;
                    let name: String = row.try_get(1)?;
                    Ok($crate::store::User::new(
                        $crate::store::UserId::new(id),
                        name,
                    ))
                })
                .transpose()
                .map_err(Self::error)
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::TokenIssuer for $crate::sql::SqlStore<$db> {
            async fn issue_code(
                &self,
                grant: $crate::store::CodeGrant,
            ) -> Result<$crate::secret::AuthorizationCode, $crate::error::StoreError> {
                let code = $crate::secret::AuthorizationCode::new($crate::secret::random_secret()?);
                let family = $crate::sql::columns::new_family_id()?;
                let key = $crate::sql::columns::family_key(family);
                let forget_at = grant.expires_at.plus($crate::sql::REPLAY_MEMORY);
                let (client_id, user_id, username, scope) =
                    $crate::sql::columns::authorization_columns(&grant.authorization);
                // The family first: a code without its family would be refused as revoked.
                sqlx::query($crate::sql::text::INSERT_FAMILY)
                    .bind(&key[..])
                    .bind(client_id)
                    .bind(user_id)
                    .bind(username)
                    .bind(scope)
                    .bind($crate::sql::columns::secs(forget_at))
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let challenge = grant.code_challenge.as_ref();
                sqlx::query($crate::sql::text::INSERT_CODE)
                    .bind(&code.digest().as_bytes()[..])
                    .bind(&key[..])
                    .bind(client_id)
                    .bind(user_id)
                    .bind(username)
                    .bind(scope)
                    .bind(grant.redirect_uri.as_str())
                    .bind(challenge.map(|c| c.as_str()))
                    .bind(challenge.map(|c| c.method().as_str()))
                    .bind($crate::sql::columns::secs(grant.issued_at))
                    .bind($crate::sql::columns::secs(grant.expires_at))
                    .bind($crate::sql::columns::secs(forget_at))
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(code)
            }

            async fn redeem_code(
                &self,
                code: &$crate::secret::AuthorizationCode,
                now: $crate::clock::UnixTime,
            ) -> Result<$crate::store::CodeRedemption, $crate::error::StoreError> {
                use sqlx::Row as _;
                use $crate::store::CodeRedemption;
                let digest = code.digest();
                let redeemed = sqlx::query($crate::sql::text::REDEEM_CODE)
                    .bind(&digest.as_bytes()[..])
                    .bind($crate::sql::columns::secs(now))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                if let Some(row) = redeemed {
                    let decode = || -> Result<_, sqlx::Error> {
                        Ok((
                            row.try_get::<Vec<u8>, _>(0)?,
                            row.try_get::<String, _>(1)?,
                            row.try_get::<Option<String>, _>(2)?,
                            row.try_get::<Option<String>, _>(3)?,
                            row.try_get::<String, _>(4)?,
                            row.try_get::<String, _>(5)?,
                            row.try_get::<Option<String>, _>(6)?,
                            row.try_get::<Option<String>, _>(7)?,
                            row.try_get::<i64, _>(8)?,
                            row.try_get::<i64, _>(9)?,
                        ))
                    };
                    let (
                        family,
                        client_id,
                        user_id,
                        username,
                        scope,
                        redirect_uri,
                        challenge,
                        method,
                        issued_at,
                        expires_at,
                    ) = decode().map_err(Self::error)?;
                    let grant = $crate::store::CodeGrant {
                        authorization: $crate::sql::columns::authorization(
                            &client_id, user_id, username, &scope,
                        )?,
                        redirect_uri,
                        code_challenge: $crate::sql::columns::code_challenge(challenge, method)?,
                        issued_at: $crate::sql::columns::time(issued_at),
                        expires_at: $crate::sql::columns::time(expires_at),
                    };
                    return Ok(CodeRedemption::Redeemed {
                        grant,
                        family: $crate::sql::columns::family_id(&family)?,
                    });
                }
                // Not ours: redeemed before (a replay), or unknown, expired or revoked.
                let seen = sqlx::query($crate::sql::text::CODE_STATE)
                    .bind(&digest.as_bytes()[..])
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let Some(row) = seen else {
                    return Ok(CodeRedemption::Invalid);
                };
                let family: Vec<u8> = row.try_get(0).map_err(Self::error)?;
                let redeemed: bool = row.try_get(1).map_err(Self::error)?;
                Ok(if redeemed {
                    CodeRedemption::Replayed {
                        family: $crate::sql::columns::family_id(&family)?,
                    }
                } else {
                    CodeRedemption::Invalid
                })
            }

            async fn issue_tokens(
                &self,
                request: $crate::store::NewTokens,
            ) -> Result<$crate::store::IssuedTokens, $crate::error::StoreError> {
                use sqlx::Row as _;
                let until = request
                    .refresh_expires_at
                    .map_or(request.access_expires_at, |r| {
                        r.max(request.access_expires_at)
                    });
                let (family, generation) = match request.family {
                    Some(family) => {
                        let key = $crate::sql::columns::family_key(family);
                        let row = sqlx::query($crate::sql::text::EXTEND_FAMILY)
                            .bind(&key[..])
                            .bind($crate::sql::columns::secs(until))
                            .fetch_optional(&self.pool)
                            .await
                            .map_err(Self::error)?
                            .ok_or_else(|| {
                                $crate::error::StoreError::failed(
                                    "tokens asked for an unknown family",
                                )
                            })?;
                        (family, row.try_get::<i64, _>(0).map_err(Self::error)?)
                    }
                    None => {
                        let family = $crate::sql::columns::new_family_id()?;
                        let key = $crate::sql::columns::family_key(family);
                        let (client_id, user_id, username, scope) =
                            $crate::sql::columns::authorization_columns(&request.authorization);
                        sqlx::query($crate::sql::text::INSERT_FAMILY)
                            .bind(&key[..])
                            .bind(client_id)
                            .bind(user_id)
                            .bind(username)
                            .bind(scope)
                            .bind($crate::sql::columns::secs(until))
                            .execute(&self.pool)
                            .await
                            .map_err(Self::error)?;
                        (family, 0)
                    }
                };
                self.mint(
                    family,
                    request.authorization.scope,
                    request.issued_at,
                    request.access_expires_at,
                    request.refresh_expires_at.map(|at| (generation, at)),
                )
                .await
            }

            async fn find_refresh_token(
                &self,
                token: &$crate::secret::RefreshToken,
                now: $crate::clock::UnixTime,
            ) -> Result<Option<$crate::store::RefreshGrant>, $crate::error::StoreError> {
                use sqlx::Row as _;
                let row = sqlx::query($crate::sql::text::FIND_REFRESH)
                    .bind(&token.digest().as_bytes()[..])
                    .bind($crate::sql::columns::secs(now))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let Some(row) = row else {
                    return Ok(None);
                };
                let decode = || -> Result<_, sqlx::Error> {
                    Ok((
                        row.try_get::<Vec<u8>, _>(0)?,
                        row.try_get::<String, _>(1)?,
                        row.try_get::<Option<String>, _>(2)?,
                        row.try_get::<Option<String>, _>(3)?,
                        row.try_get::<String, _>(4)?,
                        row.try_get::<i64, _>(5)?,
                        row.try_get::<i64, _>(6)?,
                        row.try_get::<i64, _>(7)?,
                        row.try_get::<i64, _>(8)?,
                    ))
                };
                let (family, client_id, user_id, username, scope, own, current, issued, expires) =
                    decode().map_err(Self::error)?;
                Ok(Some($crate::store::RefreshGrant {
                    authorization: $crate::sql::columns::authorization(
                        &client_id, user_id, username, &scope,
                    )?,
                    family: $crate::sql::columns::family_id(&family)?,
                    rotated: own != current,
                    issued_at: $crate::sql::columns::time(issued),
                    expires_at: $crate::sql::columns::time(expires),
                }))
            }

            async fn rotate_refresh_token(
                &self,
                token: &$crate::secret::RefreshToken,
                request: $crate::store::Refresh,
            ) -> Result<$crate::store::Rotation, $crate::error::StoreError> {
                use sqlx::Row as _;
                use $crate::store::Rotation;
                let digest = token.digest();
                let now = $crate::sql::columns::secs(request.issued_at);
                let until = request.refresh_expires_at.max(request.access_expires_at);
                let rotated = sqlx::query($crate::sql::text::ROTATE)
                    .bind(&digest.as_bytes()[..])
                    .bind(now)
                    .bind($crate::sql::columns::secs(until))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                if let Some(row) = rotated {
                    let family: Vec<u8> = row.try_get(0).map_err(Self::error)?;
                    let generation: i64 = row.try_get(5).map_err(Self::error)?;
                    let tokens = self
                        .mint(
                            $crate::sql::columns::family_id(&family)?,
                            request.access_scope,
                            request.issued_at,
                            request.access_expires_at,
                            Some((generation, request.refresh_expires_at)),
                        )
                        .await?;
                    return Ok(Rotation::Rotated(tokens));
                }
                // Not ours: rotated before (reuse), or unknown, expired or revoked.
                let seen = sqlx::query($crate::sql::text::REFRESH_STATE)
                    .bind(&digest.as_bytes()[..])
                    .bind(now)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let Some(row) = seen else {
                    return Ok(Rotation::Invalid);
                };
                let family: Vec<u8> = row.try_get(0).map_err(Self::error)?;
                let own: i64 = row.try_get(1).map_err(Self::error)?;
                let current: i64 = row.try_get(2).map_err(Self::error)?;
                if own == current {
                    // The family was current but the rotation did not take: it was revoked or
                    // the token expired in between. Either way, not usable.
                    return Ok(Rotation::Invalid);
                }
                sqlx::query($crate::sql::text::REVOKE_FAMILY)
                    .bind(&family[..])
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(Rotation::Reused)
            }

            async fn find_access_token(
                &self,
                token: &$crate::secret::AccessToken,
                now: $crate::clock::UnixTime,
            ) -> Result<Option<$crate::store::AccessGrant>, $crate::error::StoreError> {
                use sqlx::Row as _;
                let row = sqlx::query($crate::sql::text::FIND_ACCESS)
                    .bind(&token.digest().as_bytes()[..])
                    .bind($crate::sql::columns::secs(now))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(Self::error)?;
                let Some(row) = row else {
                    return Ok(None);
                };
                let decode = || -> Result<_, sqlx::Error> {
                    Ok((
                        row.try_get::<Vec<u8>, _>(0)?,
                        row.try_get::<String, _>(1)?,
                        row.try_get::<Option<String>, _>(2)?,
                        row.try_get::<Option<String>, _>(3)?,
                        row.try_get::<String, _>(4)?,
                        row.try_get::<String, _>(5)?,
                        row.try_get::<i64, _>(6)?,
                        row.try_get::<i64, _>(7)?,
                    ))
                };
                let (family, client_id, user_id, username, scope, jti, issued, expires) =
                    decode().map_err(Self::error)?;
                Ok(Some($crate::store::AccessGrant {
                    authorization: $crate::sql::columns::authorization(
                        &client_id, user_id, username, &scope,
                    )?,
                    jti: $crate::store::Jti::new(jti),
                    family: $crate::sql::columns::family_id(&family)?,
                    issued_at: $crate::sql::columns::time(issued),
                    expires_at: $crate::sql::columns::time(expires),
                }))
            }

            async fn revoke_access_token(
                &self,
                token: &$crate::secret::AccessToken,
            ) -> Result<(), $crate::error::StoreError> {
                sqlx::query($crate::sql::text::DELETE_ACCESS)
                    .bind(&token.digest().as_bytes()[..])
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(())
            }

            async fn revoke_family(
                &self,
                family: $crate::store::FamilyId,
            ) -> Result<(), $crate::error::StoreError> {
                let key = $crate::sql::columns::family_key(family);
                sqlx::query($crate::sql::text::REVOKE_FAMILY)
                    .bind(&key[..])
                    .execute(&self.pool)
                    .await
                    .map_err(Self::error)?;
                Ok(())
            }
        }
    };
}
