//! The administrator's calls for user accounts: grantor checks the username, mints the id and
//! hashes the password on the server's hashing threads, then hands the account to the
//! builder's [`UserAdmin`](crate::store::UserAdmin) seam, which only stores.

use super::AuthorizationServer;
use crate::client::ClientId;
use crate::secret::Password;
use crate::store::{AdminError, StoreError, User, UserAdmin, UserClaims, UserId, check_password};

impl AuthorizationServer {
    /// Adds an account for `username` (an email address, unique in any case, unless the
    /// builder's [`usernames`](crate::AuthorizationServerBuilder::usernames) say otherwise)
    /// with a new random id, its password hashed with Argon2id on this server's hashing
    /// threads (slow by design), kept through the builder's
    /// [`user_admin`](crate::AuthorizationServerBuilder::user_admin) seam (set by
    /// [`store`](crate::AuthorizationServerBuilder::store) with the users), which answers the
    /// user as kept (under an id of its own, for a store that assigns ids).
    /// [`AdminError::NoUserAdmin`] when the server reads users from a store it cannot write,
    /// [`AdminError::InvalidUsername`] for a username the rule refuses,
    /// [`AdminError::WeakPassword`] for a password of fewer than 8 characters
    /// ([`check_password`](crate::store::check_password)), [`AdminError::UsernameTaken`] if an
    /// account has it in any case.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use grantor::{AuthorizationServer, MemoryStore, Password};
    ///
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// let alice = server.add_user("alice@example.com", &Password::new("alice-password-1")).await;
    /// assert_eq!(alice.unwrap().username(), "alice@example.com");
    /// let taken = server.add_user("ALICE@example.com", &Password::new("other-password-2")).await;
    /// assert!(matches!(taken, Err(grantor::store::AdminError::UsernameTaken)));
    /// # }
    /// ```
    pub async fn add_user(&self, username: &str, password: &Password) -> Result<User, AdminError> {
        let admin = self.user_admin()?;
        if self.inner.config.usernames.key(username).is_none() {
            return Err(AdminError::InvalidUsername);
        }
        let user = User::new(crate::mint::user_id()?, username.trim());
        check_password(password)?;
        let phc = self.inner.hashing.hash(password).await?;
        admin.insert_user(&user, &phc).await
    }

    /// Changes an account's password, hashed as [`add_user`](Self::add_user) hashes; `false`
    /// if there is no such account.
    pub async fn set_password(
        &self,
        user: &UserId,
        password: &Password,
    ) -> Result<bool, AdminError> {
        let admin = self.user_admin()?;
        check_password(password)?;
        let phc = self.inner.hashing.hash(password).await?;
        Ok(admin.set_password_hash(user, &phc).await?)
    }

    /// Replaces an account's claims (OIDC Core §5.1), which userinfo and ID tokens release by
    /// scope; `false` if there is no such account. [`AdminError::ClaimsTooLarge`] past
    /// [`MAX_CLAIMS_BYTES`](crate::store::MAX_CLAIMS_BYTES) of JSON.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use grantor::store::UserClaims;
    /// use grantor::{AuthorizationServer, MemoryStore, Password};
    ///
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// let alice = server.add_user("alice@example.com", &Password::new("alice-password-1")).await.unwrap();
    /// let claims = UserClaims::new().name("Alice Example").email("alice@example.com", true);
    /// assert!(server.set_user_claims(alice.id(), &claims).await.unwrap());
    /// # }
    /// ```
    pub async fn set_user_claims(
        &self,
        user: &UserId,
        claims: &UserClaims,
    ) -> Result<bool, AdminError> {
        let admin = self.user_admin()?;
        if !claims.fits() {
            return Err(AdminError::ClaimsTooLarge);
        }
        Ok(admin.set_claims(user, claims).await?)
    }

    /// Checks `username`'s password as grantor's sign-in page does, for a host that runs its own
    /// sign-in steps ([`finish_sign_in`](Self::finish_sign_in)): the username rule, the
    /// account's throttle (counted before the hash, shared by every node), the
    /// [verifier](crate::AuthorizationServerBuilder::password_verifier) on the hashing lane, a
    /// dummy check for an unknown username, and the upgrade of an old hash. The user, or why
    /// not (never saying whether the username or the password was wrong); `Err` when the
    /// store or the hashing lane failed (a 503 [`OAuthError`](crate::OAuthError) when busy).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use grantor::signin::SignInProblem;
    /// use grantor::{AuthorizationServer, MemoryStore, Password};
    ///
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// server.add_user("alice@example.com", &Password::new("alice-password-1")).await.unwrap();
    /// let right = Password::new("alice-password-1");
    /// let alice = server.verify_password("alice@example.com", &right).await;
    /// assert_eq!(alice.unwrap().unwrap().username(), "alice@example.com");
    /// let wrong = server.verify_password("alice@example.com", &Password::new("guess")).await;
    /// assert!(matches!(wrong, Ok(Err(SignInProblem::WrongCredentials))));
    /// # }
    /// ```
    pub async fn verify_password(
        &self,
        username: &str,
        password: &Password,
    ) -> Result<Result<User, crate::grant::password::SignInProblem>, crate::error::OAuthError> {
        use crate::grant::password::Failure;
        let now = self.inner.now();
        let sign_in = self.inner.sign_in();
        match sign_in.authenticate(None, username, password, now).await {
            Ok(user) => Ok(Ok(user)),
            Err(Failure::Problem(problem)) => Ok(Err(problem)),
            Err(Failure::Store(error)) => Err(error),
        }
    }

    /// Deletes every self-registered client unused for the registration policy's
    /// [idle lifetime](crate::settings::RegistrationPolicy::idle_lifetime), with its tokens
    /// (an [`EventKind::ClientExpired`](crate::events::EventKind::ClientExpired) event each);
    /// answers how many went. A client that comes back is refused and deleted at its next
    /// request anyway: this is for those that never do. Call it now and then (hourly, say,
    /// beside [`Purge::purge_expired`](crate::store::Purge::purge_expired)), from one node or
    /// from all; it reads the store's index of last uses, a batch at a time. Zero when the
    /// policy keeps clients forever or there is no registration.
    pub async fn forget_idle_clients(&self) -> Result<u64, crate::error::StoreError> {
        match self.inner.idle_clients() {
            Some(idle) => idle.sweep(self.inner.now()).await,
            None => Ok(0),
        }
    }

    /// Forgets `user`'s remembered approval of the client `client_id` (the person's "remove
    /// access" in an account page, or the host's): their next authorization request from that
    /// client shows the approval page again. `false` when none was remembered. Tokens already
    /// issued stay valid; revoke them apart.
    pub async fn forget_consent(
        &self,
        user: &UserId,
        client_id: &ClientId,
    ) -> Result<bool, StoreError> {
        self.inner.consents.forget_consent(user, client_id).await
    }

    /// Ends every single sign-on session of `user` (an administrator's "sign out everywhere":
    /// a lost device, a compromised account) as logout ends one: each client issued tokens in
    /// them that registered a `backchannel_logout_uri` loses the refresh tokens of the session
    /// and is sent a logout token (OpenID Connect Back-Channel Logout 1.0) through the
    /// server's outbound, which delivers off this call. Answers how many sessions ended. A
    /// server that is no OpenID Connect provider ends the sessions alone (no logout tokens,
    /// no revocation). The user's tokens issued outside a session, and remembered approvals,
    /// stay.
    pub async fn end_user_sessions(
        &self,
        user: &UserId,
    ) -> Result<usize, crate::error::OAuthError> {
        let now = self.inner.now();
        let ended = self
            .inner
            .user_sessions
            .end_user_sessions(user, now)
            .await?;
        if let Some(logout) = self.inner.logout() {
            for session in &ended {
                logout.ended(session, now).await?;
            }
        }
        Ok(ended.len())
    }

    /// The approvals `user` gave clients that are remembered now, by client id (what
    /// [`forget_consent`](Self::forget_consent) forgets one of).
    pub async fn consents(
        &self,
        user: &UserId,
    ) -> Result<Vec<(ClientId, crate::store::Consent)>, StoreError> {
        self.inner.consents.consents(user, self.inner.now()).await
    }

    /// The seams the administrator's command writes through: where users are read, where
    /// clients are registered, where tokens are kept.
    #[cfg(feature = "cli")]
    pub(crate) fn admin_seams(
        &self,
    ) -> (
        &dyn crate::store::UserStore,
        Option<&dyn crate::store::Admin>,
        &dyn crate::store::TokenIssuer,
    ) {
        let inner = &*self.inner;
        (&*inner.users, inner.registry.as_deref(), &*inner.tokens)
    }

    /// The key seam the server reads its keys through (sealed under its key-encryption key,
    /// when it has one): what `grantor keys list` and `keys rotate` use, mounted.
    #[cfg(feature = "cli")]
    pub(crate) fn key_seam(&self) -> &dyn crate::store::KeyStore {
        &*self.inner.keys
    }

    /// Whether accounts can be added ([`AdminError::NoUserAdmin`] otherwise), asked before a
    /// command reads a password it could not keep.
    #[cfg(feature = "cli")]
    pub(crate) fn can_add_users(&self) -> Result<(), AdminError> {
        self.user_admin().map(|_| ())
    }

    fn user_admin(&self) -> Result<&dyn UserAdmin, AdminError> {
        self.inner
            .user_admin
            .as_deref()
            .ok_or(AdminError::NoUserAdmin)
    }
}
