//! The builder's setters for the seams: where clients, users, tokens and the state every node
//! shares live, whether key material is encrypted at rest, and the client cache.

use std::sync::Arc;
use std::time::Duration;

use super::AuthorizationServerBuilder;
use crate::store::{
    Admin, AttemptCounter, ClientActivity, ClientStore, ConsentStore, KeyEncryptionKey, KeyStore,
    SessionStore, SingleUseStore, TokenIssuer, UserAdmin, UserSessionStore, UserStore,
};

impl AuthorizationServerBuilder {
    /// The client store. Required ([`store`](Self::store) sets it).
    ///
    /// Clients registered through the server (self-registration, RFC 7591) go to the
    /// [client registry](Self::client_registry), which must be the same clients: a registry that
    /// came with an earlier [`store`](Self::store) is dropped here, whatever the order of the
    /// calls, so that a registration never answers 201 for a client the server cannot find.
    /// Give the registry of these clients with [`client_registry`](Self::client_registry).
    pub fn clients(mut self, clients: Arc<dyn ClientStore>) -> Self {
        self.clients = Some(clients);
        if self.registry_from_store {
            self.registry = None;
            self.activity = None;
            self.registry_from_store = false;
        }
        self
    }

    /// The user store, the host's own accounts or grantor's. Required ([`store`](Self::store)
    /// sets it).
    ///
    /// Accounts added through the server ([`add_user`](crate::AuthorizationServer::add_user),
    /// a password upgraded at sign-in, the mounted admin command) go to the
    /// [user admin](Self::user_admin), which must keep these users: one that came with an
    /// earlier [`store`](Self::store) is dropped here, whatever the order of the calls, so that
    /// nothing is written where the server does not read. Give these users' own admin seam
    /// with [`user_admin`](Self::user_admin), or none: the server then refuses to add users
    /// ([`AdminError::NoUserAdmin`](crate::store::AdminError::NoUserAdmin)) and upgrades no
    /// hash.
    pub fn users(mut self, users: Arc<dyn UserStore>) -> Self {
        self.users = Some(users);
        if self.user_admin_from_store {
            self.user_admin = None;
            self.user_admin_from_store = false;
        }
        self
    }

    /// Where [`AuthorizationServer::add_user`](crate::AuthorizationServer::add_user),
    /// [`set_password`](crate::AuthorizationServer::set_password) and the upgrade of an old
    /// password hash at sign-in keep accounts: the store-only side of the
    /// [`users`](Self::users) seam, over the same accounts. Set by [`store`](Self::store) with
    /// the users; without it those calls are refused.
    pub fn user_admin(mut self, admin: Arc<dyn UserAdmin>) -> Self {
        self.user_admin = Some(admin);
        self.user_admin_from_store = false;
        self
    }

    /// How passwords are checked against what the [user store](Self::users) keeps:
    /// [`KnownHashes`](crate::store::KnownHashes) by default (Argon2, bcrypt, scrypt, PBKDF2 in
    /// their usual formats), or the host's own (an LDAP bind, a legacy scheme). It runs on the
    /// server's user hashing lane ([`hashing_pools`](Self::hashing_pools)).
    pub fn password_verifier(mut self, verifier: Arc<dyn crate::store::PasswordVerifier>) -> Self {
        self.password_verifier = Some(verifier);
        self
    }

    /// Whether a right password whose hash the verifier asks to upgrade
    /// ([`Verification::MatchRehash`](crate::store::Verification::MatchRehash): bcrypt, PBKDF2,
    /// an older Argon2…) is hashed again with grantor's Argon2id and kept through the
    /// [user admin](Self::user_admin). On by default; a host whose other applications still
    /// read the old hashes turns it off.
    pub fn rehash_passwords(mut self, rehash: bool) -> Self {
        self.rehash_passwords = rehash;
        self
    }

    /// The authentication context classes (`acr`) of the deployment, and which of them the
    /// password alone and the password with the [second factor](Self::second_factor) reach
    /// (none by default: sign-ins carry no `acr`). See [`AcrLevels`](crate::settings::AcrLevels).
    pub fn acr_levels(mut self, levels: crate::settings::AcrLevels) -> Self {
        self.acr = levels;
        self
    }

    /// The host's second factor: after the password, a request asking for a class only it
    /// reaches shows a page asking for its code (see
    /// [`SecondFactor`](crate::store::SecondFactor)).
    pub fn second_factor(mut self, factor: Arc<dyn crate::store::SecondFactor>) -> Self {
        self.second_factor = Some(factor);
        self
    }

    /// Which usernames accounts have: email addresses by default, or the host's own rule
    /// ([`Usernames::custom`](crate::settings::Usernames::custom)). The sign-in page, the
    /// password grant, the device page and [`add_user`](crate::AuthorizationServer::add_user)
    /// follow it.
    pub fn usernames(mut self, usernames: crate::settings::Usernames) -> Self {
        self.usernames = usernames;
        self
    }

    /// The token issuer. Required.
    pub fn tokens(mut self, tokens: Arc<dyn TokenIssuer>) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Every seam from one store that implements them all, such as
    /// [`MemoryStore`](crate::MemoryStore) or the SQL stores: clients, users, tokens, sign-in
    /// sessions, attempt counters and single-use values, and its [`Admin`] API as the
    /// [client registry](Self::client_registry).
    ///
    /// A seam set before, whatever the order of the calls, is kept: `.users(mine).store(sql)`
    /// signs users in against `mine` and keeps everything else in `sql`, as
    /// `.store(sql).users(mine)` does. The store's [`Admin`] API becomes the client registry
    /// only when its clients are the server's (no [`clients`](Self::clients) set before), and
    /// its [`UserAdmin`] the [user admin](Self::user_admin) only when its users are, so
    /// registration never writes where lookups do not read.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// let users = Arc::new(MemoryStore::new()); // the host's own user store, say
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .users(users)
    ///     .store(MemoryStore::new())
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn store<S>(mut self, store: S) -> Self
    where
        S: ClientStore
            + UserStore
            + UserAdmin
            + TokenIssuer
            + SessionStore
            + AttemptCounter
            + SingleUseStore
            + KeyStore
            + UserSessionStore
            + ConsentStore
            + Admin
            + ClientActivity
            + 'static,
    {
        let store = Arc::new(store);
        let any: Arc<dyn std::any::Any + Send + Sync> = store.clone();
        if let Ok(memory) = any.downcast::<crate::memory::MemoryStore>() {
            self.memory = Some(memory);
        }
        if self.clients.is_none() {
            self.clients = Some(store.clone());
            if self.registry.is_none() {
                self.registry = Some(store.clone());
                self.activity = Some(store.clone());
                self.registry_from_store = true;
            }
        }
        if self.users.is_none() {
            self.users = Some(store.clone());
            if self.user_admin.is_none() {
                self.user_admin = Some(store.clone());
                self.user_admin_from_store = true;
            }
        }
        self.tokens.get_or_insert(store.clone());
        self.sessions.get_or_insert(store.clone());
        self.single_use.get_or_insert(store.clone());
        self.keys.get_or_insert(store.clone());
        self.user_sessions.get_or_insert(store.clone());
        self.consents.get_or_insert(store.clone());
        self.attempts.get_or_insert(store);
        self
    }

    /// Where signed-in browsers live (single sign-on, [`session_ttl`](Self::session_ttl)).
    /// Required unless [`single_node`](Self::single_node); [`store`](Self::store) sets it.
    pub fn user_sessions(mut self, sessions: Arc<dyn UserSessionStore>) -> Self {
        self.user_sessions = Some(sessions);
        self
    }

    /// Where the approvals people gave clients are remembered
    /// ([`consent_ttl`](Self::consent_ttl)). Required unless [`single_node`](Self::single_node);
    /// [`store`](Self::store) sets it.
    pub fn consents(mut self, consents: Arc<dyn ConsentStore>) -> Self {
        self.consents = Some(consents);
        self
    }

    /// Where grantor's outbound requests go: OpenID Connect Back-Channel Logout tokens, posted
    /// to each client that registered a `backchannel_logout_uri` when a session it was issued
    /// tokens in ends. Without it, back-channel logout is not offered
    /// (`backchannel_logout_supported: false`). `grantor::outbound::HttpOutbound`
    /// (feature `outbound`) is the default implementation.
    pub fn outbound(mut self, outbound: Arc<dyn crate::outbound::Outbound>) -> Self {
        self.outbound = Some(outbound);
        self
    }

    /// Takes client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a
    /// `client_id` that is an `https` URL names the client's registration, fetched from it
    /// through the [outbound seam](Self::outbound), which this needs (else
    /// [`ConfigError::Missing`](crate::ConfigError::Missing)). The metadata says
    /// `client_id_metadata_document_supported: true`. See
    /// [`ClientIdDocuments`](crate::settings::ClientIdDocuments) for the rules and bounds.
    pub fn client_id_metadata_documents(
        mut self,
        documents: crate::settings::ClientIdDocuments,
    ) -> Self {
        self.client_documents = Some(documents);
        self
    }

    /// How long a browser stays signed in after a sign-in (default a day): while it does, an
    /// authorization request from it needs no password, for any client (single sign-on), and
    /// ID tokens carry the session's `sid` and `auth_time`. Zero: no single sign-on; every
    /// authorization asks for the password.
    pub fn session_ttl(mut self, ttl: Duration) -> Self {
        self.session_ttl = ttl;
        self
    }

    /// How long a person's approval of a client and scopes is remembered (default a year): an
    /// authorization request from a signed-in browser (single sign-on) asking for no more than
    /// was approved skips the approval page, unless it says `prompt=consent`; a fresh sign-in
    /// shows it. Zero: the page is shown every time.
    /// [`AuthorizationServer::forget_consent`](crate::AuthorizationServer::forget_consent)
    /// revokes one.
    pub fn consent_ttl(mut self, ttl: Duration) -> Self {
        self.consent_ttl = ttl;
        self
    }

    /// This server is the deployment's only node: the [sessions](Self::sessions),
    /// [attempt counter](Self::attempt_counter), [single-use values](Self::single_use) and
    /// [key material](Self::keys) not given may live in this process's memory. Without it, [`build`](Self::build) refuses
    /// ([`ConfigError::SharedState`](crate::ConfigError::SharedState)) to start with any of them missing, since a second node
    /// would see none of it: a form sealed by one node would not open on another, and each
    /// node would count password guesses on its own. [`store`](Self::store) sets them all.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use grantor::{AuthorizationServer, ConfigError, MemoryStore};
    ///
    /// let store = Arc::new(MemoryStore::new()); // say, the host's own durable stores
    /// let builder = || {
    ///     AuthorizationServer::builder()
    ///         .issuer("https://auth.example")
    ///         .clients(store.clone())
    ///         .users(store.clone())
    ///         .tokens(store.clone())
    /// };
    /// assert_eq!(builder().build().unwrap_err(), ConfigError::SharedState("sessions"));
    /// assert!(builder().single_node().build().is_ok());
    /// ```
    pub fn single_node(mut self) -> Self {
        self.single_node = true;
        self
    }

    /// Where single-use values live: the marks that make each sign-in form, DPoP proof and
    /// client assertion serve once, pushed requests, device flows. Required unless
    /// [`single_node`](Self::single_node) (then this process's memory by default); give every
    /// node the same shared store, or a proof spent on one node is fresh on another.
    pub fn single_use(mut self, single_use: Arc<dyn SingleUseStore>) -> Self {
        self.single_use = Some(single_use);
        self
    }

    /// Where key material lives: the keys that seal sign-in forms, the JWT signing keys of
    /// `JwtAccessTokens::rotating` (feature `jwt`), the DPoP nonces.
    /// Required unless [`single_node`](Self::single_node) (then this process's memory by
    /// default); give every node the same shared store, or a form sealed by one node does not
    /// open on another. What it keeps is secret at rest: see
    /// [`encrypt_keys_at_rest`](Self::encrypt_keys_at_rest).
    pub fn keys(mut self, keys: Arc<dyn KeyStore>) -> Self {
        self.keys = Some(keys);
        self
    }

    /// Encrypts every piece of key material under `key` (XChaCha20-Poly1305, bound to its
    /// name) before it reaches the [key seam](Self::keys), so that whoever reads the database
    /// without `key` can neither open sign-in forms nor sign tokens, and whoever writes it
    /// cannot plant a key. Keep `key` outside the database. Over a durable key store (the SQL
    /// stores, a host's own), this or [`keys_in_clear`](Self::keys_in_clear) is required
    /// ([`ConfigError::KeysAtRest`](crate::ConfigError::KeysAtRest)).
    ///
    /// **Turning it on for a database that has keys in the clear** needs nothing more: material
    /// found in the clear is never used, and fresh material is made and kept encrypted beside
    /// it (logged once per key at `warn`): a key rotation. Sign-in forms in flight are asked
    /// again, and tokens signed with a clear key (JWT access tokens, ID tokens) stop verifying,
    /// so their clients refresh or sign in again; no request fails for it. The clear material
    /// goes when it expires, or at once if deleted from the key table (`grantor_keys`).
    ///
    /// Material sealed under **another key** (a wrong or old key-encryption key given, or none:
    /// see [`keys_in_clear`](Self::keys_in_clear)) is never used nor replaced: each request that
    /// needs it answers 503, and the log names the key and what to do (give the key it was
    /// sealed with, or delete it from `grantor_keys` so that a fresh one is made).
    ///
    /// ```
    /// use grantor::store::KeyEncryptionKey;
    /// use grantor::{AuthorizationServer, MemoryStore};
    ///
    /// // In a deployment, read from a secret the database never sees.
    /// let key = KeyEncryptionKey::from_base64(&KeyEncryptionKey::generate_base64().unwrap()).unwrap();
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(MemoryStore::new())
    ///     .encrypt_keys_at_rest(key)
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn encrypt_keys_at_rest(mut self, key: KeyEncryptionKey) -> Self {
        self.key_encryption = Some(key);
        self
    }

    /// Key material may rest in the clear in a durable [key seam](Self::keys): the host has
    /// chosen that whoever reads the database (a backup, a replica, another local user of the
    /// SQLite file) can sign ID tokens and access tokens this server accepts, and open sign-in
    /// forms in flight. Without this or [`encrypt_keys_at_rest`](Self::encrypt_keys_at_rest),
    /// [`build`](Self::build) refuses a durable key store
    /// ([`ConfigError::KeysAtRest`](crate::ConfigError::KeysAtRest)); the in-memory one needs
    /// neither. Giving both is refused too
    /// ([`ConfigError::KeysAtRestTwice`](crate::ConfigError::KeysAtRestTwice)).
    ///
    /// Material found sealed (encryption was on before) is not used: each request that needs
    /// it answers 503 and the log says to give the key-encryption key it was sealed with.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use grantor::{AuthorizationServer, ConfigError};
    /// use grantor::sql::SqliteStore;
    ///
    /// let dir = std::env::temp_dir().join(format!("grantor-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let store = SqliteStore::connect(&format!("sqlite:{}", dir.join("auth.db").display()))
    ///     .await
    ///     .unwrap();
    /// let builder = || {
    ///     AuthorizationServer::builder()
    ///         .issuer("https://auth.example")
    ///         .store(store.clone())
    /// };
    /// assert_eq!(builder().build().unwrap_err(), ConfigError::KeysAtRest);
    /// assert!(builder().keys_in_clear().build().is_ok());
    /// # store.close().await;
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn keys_in_clear(mut self) -> Self {
        self.keys_in_clear = true;
        self
    }

    /// Where sign-in sessions live. Required unless [`single_node`](Self::single_node) (then
    /// this process's memory by default, which needs sticky sessions behind a load balancer);
    /// give every node the same shared store.
    pub fn sessions(mut self, sessions: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// Where the throttle counts failed sign-ins. Required unless
    /// [`single_node`](Self::single_node) (then this process's memory by default, so each node
    /// would count on its own); give every node the same shared store.
    pub fn attempt_counter(mut self, attempts: Arc<dyn AttemptCounter>) -> Self {
        self.attempts = Some(attempts);
        self
    }

    /// Where self-registered clients are registered, replaced and removed (RFC 7591, RFC
    /// 7592): the [`Admin`] API of the store behind [`clients`](Self::clients). Set by
    /// [`store`](Self::store); required with a [`registration`](Self::registration) policy.
    pub fn client_registry(mut self, registry: Arc<dyn Admin>) -> Self {
        self.registry = Some(registry);
        if self.registry_from_store {
            self.activity = None;
        }
        self.registry_from_store = false;
        self
    }

    /// Where uses of self-registered clients are recorded, for the registration policy's
    /// [idle lifetime](crate::registration::RegistrationPolicy::idle_lifetime): the
    /// [`ClientActivity`] side of the [client registry](Self::client_registry)'s store. Set by
    /// [`store`](Self::store) with the registry; a registry of the host's own needs it, or an
    /// idle lifetime of `None`.
    pub fn client_activity(mut self, activity: Arc<dyn ClientActivity>) -> Self {
        self.activity = Some(activity);
        self
    }

    /// Remembers each client the client store found for `ttl`, so that a request does not look
    /// its client up again (over a database, a round trip saved on nearly every request). Off
    /// by default. Only found clients are kept, at most
    /// [`CLIENT_CACHE_CAPACITY`](crate::store::CLIENT_CACHE_CAPACITY), the least recently used going
    /// first; an unknown `client_id` always asks the store. Changes through the server
    /// (registration management, [secret
    /// rotation](crate::AuthorizationServer::rotate_client_secret)) forget the client at once;
    /// a change made past the server (in the database, by another node or process) is seen
    /// within `ttl`, so a removed client may be served for up to `ttl` more: keep it short (a
    /// second or two). A `ttl` of zero turns the cache off.
    pub fn cache_clients(mut self, ttl: Duration) -> Self {
        self.client_cache = (!ttl.is_zero()).then_some(ttl);
        self
    }
}
