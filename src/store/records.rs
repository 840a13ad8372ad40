//! The records that cross the seams, and the answers stores give. Each record is
//! `#[non_exhaustive]` with a constructor, so it can grow without breaking a host's store.

use std::fmt;

use smol_str::SmolStr;

mod actor;
mod authentication;
mod binding;
mod claims;

pub use crate::id::{FamilyId, Jti, JwkThumbprint, UserId};
pub use actor::Actor;
pub use authentication::UserAuthentication;
pub use binding::TokenBinding;
pub(crate) use claims::supported_claims;
pub use claims::{MAX_CLAIMS_BYTES, UserClaims};

use crate::audience::Audience;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::id::ClientId;
pub use crate::oidc::SignInFacts;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::secret::{Password, SecretDigest};

/// A signed-in user account: its id and its username (an email address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    id: UserId,
    username: SmolStr,
}

impl User {
    /// A user with this id and username.
    pub fn new(id: UserId, username: impl AsRef<str>) -> Self {
        Self {
            id,
            username: SmolStr::new(username),
        }
    }

    /// The stable id.
    pub fn id(&self) -> &UserId {
        &self.id
    }

    /// The username, an email address.
    pub fn username(&self) -> &str {
        &self.username
    }
}

/// A user account as the [`UserStore`](super::UserStore) finds it: the user and what the
/// host's table keeps of their password: grantor's Argon2id PHC string, or a hash in any scheme
/// the [`PasswordVerifier`](super::PasswordVerifier) reads (bcrypt, scrypt, PBKDF2…), or
/// whatever a host verifier of its own understands. Not shown by `Debug`: it is what an offline
/// guess starts from.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Account {
    user: User,
    password_hash: String,
}

impl Account {
    /// `user` with what the table keeps of their password (a hash the verifier reads).
    pub fn new(user: User, password_hash: impl Into<String>) -> Self {
        Self {
            user,
            password_hash: password_hash.into(),
        }
    }

    /// The user.
    pub fn user(&self) -> &User {
        &self.user
    }

    /// What the table keeps of the password: a hash in any scheme the verifier reads.
    pub fn password_hash(&self) -> &str {
        &self.password_hash
    }

    /// The user, the hash dropped.
    pub fn into_user(self) -> User {
        self.user
    }

    /// A new account for `username` (an email address, as [`username_key`] checks): a user id
    /// drawn from grantor's CSPRNG, and `password` hashed with Argon2id here and now. Slow by
    /// design, and synchronous: for tools and seeding, whose next step is
    /// [`UserAdmin::insert_user`](super::UserAdmin::insert_user). A server adds users with
    /// [`AuthorizationServer::add_user`](crate::AuthorizationServer::add_user), which hashes on
    /// its own threads.
    ///
    /// ```
    /// use grantor::Password;
    /// use grantor::store::{Account, AdminError};
    ///
    /// let account = Account::generate("alice@example.com", &Password::new("alice-password-1"));
    /// assert!(account.unwrap().password_hash().starts_with("$argon2id$"));
    /// let refused = Account::generate("alice", &Password::new("alice-password-1"));
    /// assert!(matches!(refused, Err(AdminError::InvalidUsername)));
    /// let weak = Account::generate("alice@example.com", &Password::new("alice"));
    /// assert!(matches!(weak, Err(AdminError::WeakPassword)));
    /// ```
    pub fn generate(username: &str, password: &Password) -> Result<Self, AdminError> {
        let user = new_user(username)?;
        check_password(password)?;
        let phc = crate::hash::hash_password(password.expose_secret())?;
        Ok(Self::new(user, phc))
    }
}

/// The fewest characters a password set by an administrator may have (NIST SP 800-63B
/// §5.1.1.2: at least 8 for a password a person chooses).
pub const MIN_PASSWORD_CHARS: usize = 8;

/// The rule every password an administrator sets passes ([`Account::generate`],
/// [`AuthorizationServer::add_user`](crate::AuthorizationServer::add_user) and
/// [`set_password`](crate::AuthorizationServer::set_password), the `grantor` command):
/// at least [`MIN_PASSWORD_CHARS`] characters, else [`AdminError::WeakPassword`].
///
/// ```
/// use grantor::Password;
/// use grantor::store::{AdminError, check_password};
///
/// assert!(check_password(&Password::new("correct horse")).is_ok());
/// assert!(matches!(check_password(&Password::new("12345")), Err(AdminError::WeakPassword)));
/// ```
pub fn check_password(password: &Password) -> Result<(), AdminError> {
    if password.expose_secret().chars().count() < MIN_PASSWORD_CHARS {
        return Err(AdminError::WeakPassword);
    }
    Ok(())
}

/// A new user for `username`, its id minted; [`AdminError::InvalidUsername`] unless it is an
/// email address.
pub(crate) fn new_user(username: &str) -> Result<User, AdminError> {
    if username_key(username).is_none() {
        return Err(AdminError::InvalidUsername);
    }
    Ok(User::new(crate::mint::user_id()?, username))
}

impl fmt::Debug for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Account")
            .field("user", &self.user)
            .field("password_hash", &"<redacted>")
            .finish()
    }
}

/// Why a store refused an administrator's change ([`Admin`](super::Admin)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdminError {
    /// The username is not one an account can have: not an email address, unless the server's
    /// [`usernames`](crate::AuthorizationServerBuilder::usernames) say otherwise (grantor's own
    /// stores keep email addresses only).
    #[error("the username must be an email address (or follow the server's username rule)")]
    InvalidUsername,
    /// The password is shorter than [`MIN_PASSWORD_CHARS`] characters ([`check_password`]).
    #[error("a password must have at least 8 characters")]
    WeakPassword,
    /// An account with this username (in any case), or this id, exists.
    #[error("an account with this username exists")]
    UsernameTaken,
    /// A client with this id is registered.
    #[error("a client with this id is registered")]
    ClientIdTaken,
    /// The server has no [`UserAdmin`](super::UserAdmin) seam to keep accounts in: its users
    /// come from a store of the host's own and the builder was not given that store's
    /// [`user_admin`](crate::AuthorizationServerBuilder::user_admin). Nothing was written: add
    /// the account in the host's own application, or give the builder the admin seam of the
    /// store the server reads users from.
    #[error(
        "this server reads users from a store that has no user admin seam, so it cannot add or \
         change accounts: add them in the host's application, or give the builder \
         .user_admin(...) of the store given to .users(...)"
    )]
    NoUserAdmin,
    /// The user's claims take more than [`MAX_CLAIMS_BYTES`] as JSON.
    #[error("the user's claims take more than 8 KiB")]
    ClaimsTooLarge,
    /// The store or hashing failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The lookup key of a username: the email address lowercased; `None` if it does not look like
/// one. Every user store grantor ships matches usernames by this key, and the store contract
/// holds a store of your own to it: two usernames are one account when their keys are equal.
///
/// ```
/// use grantor::store::username_key;
///
/// assert_eq!(username_key("Alice@Example.com").as_deref(), Some("alice@example.com"));
/// assert_eq!(username_key("not-an-email"), None);
/// ```
pub fn username_key(username: &str) -> Option<String> {
    let (local, domain) = username.rsplit_once('@')?;
    let plausible = !local.is_empty()
        && !domain.is_empty()
        && username.len() <= 254
        && !username
            .chars()
            .any(|c| c.is_whitespace() || c.is_control());
    plausible.then(|| username.to_lowercase())
}

/// Who authorized what: the client, the user (none for `client_credentials`), the scope, the
/// audience, and how the user signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Authorization {
    /// The client the grant is for.
    pub client_id: ClientId,
    /// The user who authorized it; `None` when the client acts for itself.
    pub user: Option<User>,
    /// The scope granted.
    pub scope: Scope,
    /// The resources the grant is for (RFC 8707). Like the scope, an access token's may be
    /// narrower than its family's. Every authorization grantor hands a store has one; a store
    /// keeps it and gives it back ([`Authorization::with_audience`]).
    pub audience: Audience,
    /// How the user signed in for it (`auth_time`, `acr`, `amr`): a property of the family,
    /// which every token descending from the sign-in shares (a refresh keeps the original,
    /// OIDC Core §12.2). `None` without a user sign-in (client credentials). A store keeps the
    /// one a family starts with (a code's, or a new family's tokens') and gives it back with
    /// each of the family's codes and tokens ([`Authorization::with_authentication`]).
    pub authentication: Option<UserAuthentication>,
}

impl Authorization {
    /// `client_id` authorized by `user` (none: the client acts for itself) for `scope`, with an
    /// empty audience (read as the server's default) until [`Authorization::with_audience`].
    pub fn new(client_id: ClientId, user: Option<User>, scope: Scope) -> Self {
        Self {
            client_id,
            user,
            scope,
            audience: Audience::default(),
            authentication: None,
        }
    }

    /// The same authorization for `audience`.
    pub fn with_audience(mut self, audience: Audience) -> Self {
        self.audience = audience;
        self
    }

    /// The same authorization, its user having signed in as `authentication` says (none: no
    /// user sign-in).
    pub fn with_authentication(mut self, authentication: Option<UserAuthentication>) -> Self {
        self.authentication = authentication;
        self
    }
}

/// Whether tokens start a family or join one (see [`NewTokens::family`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// A new family for a new authorization (password, client credentials, implicit): the
    /// store records the authorization with it.
    New(FamilyId),
    /// The family of a redeemed code or of a rotated refresh token, already kept.
    Existing(FamilyId),
}

impl Family {
    /// The family's id.
    pub fn id(self) -> FamilyId {
        match self {
            Self::New(id) | Self::Existing(id) => id,
        }
    }
}

/// What an authorization code is bound to (RFC 6749 §4.1.3, RFC 7636 §4.4).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CodeGrant {
    /// Client, user and scope.
    pub authorization: Authorization,
    /// The `redirect_uri` of the authorization request, which the token request must repeat.
    pub redirect_uri: String,
    /// The PKCE challenge, if the request carried one.
    pub code_challenge: Option<CodeChallenge>,
    /// When the code was issued.
    pub issued_at: UnixTime,
    /// When the code stops being redeemable.
    pub expires_at: UnixTime,
    /// For an OpenID Connect request: what its ID token will say of the sign-in.
    pub openid: Option<SignInFacts>,
    /// The DPoP key the code is bound to (RFC 9449 §10: the authorization request's
    /// `dpop_jkt`, or the key of the pushed request's proof): its redemption must carry a
    /// proof of that key.
    pub dpop_jkt: Option<JwkThumbprint>,
}

impl CodeGrant {
    /// A code for `authorization`, bound to `redirect_uri` and `code_challenge`, redeemable from
    /// `issued_at` until `expires_at`.
    pub fn new(
        authorization: Authorization,
        redirect_uri: impl Into<String>,
        code_challenge: Option<CodeChallenge>,
        issued_at: UnixTime,
        expires_at: UnixTime,
    ) -> Self {
        Self {
            authorization,
            redirect_uri: redirect_uri.into(),
            code_challenge,
            issued_at,
            expires_at,
            openid: None,
            dpop_jkt: None,
        }
    }

    /// The same code for an OpenID Connect request, whose ID token will say `facts`.
    pub fn with_openid(mut self, facts: Option<SignInFacts>) -> Self {
        self.openid = facts;
        self
    }

    /// The same code bound to the DPoP key `jkt` (none: unbound).
    pub fn bound_to(mut self, jkt: Option<JwkThumbprint>) -> Self {
        self.dpop_jkt = jkt;
        self
    }
}

/// The answer of [`TokenIssuer::redeem_code`](super::TokenIssuer::redeem_code).
#[derive(Debug, Clone)]
#[non_exhaustive]
#[allow(
    clippy::large_enum_variant,
    reason = "a redemption is the common answer: boxing its grant would allocate for every code"
)]
pub enum CodeRedemption {
    /// This caller consumed the code; nobody else will.
    Redeemed {
        /// What the code was bound to.
        grant: CodeGrant,
        /// The family to issue its tokens in.
        family: FamilyId,
    },
    /// The code was redeemed before: a replay. grantor revokes the family.
    Replayed {
        /// The family the first redemption issued into.
        family: FamilyId,
    },
    /// Unknown, expired or revoked.
    Invalid,
}

/// Tokens grantor just minted, for the store to keep: digests and what they grant.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NewTokens {
    /// The family the tokens start or join.
    pub family: Family,
    /// Client, user and the access token's scope. For a new family this is also the family's
    /// authorization; on rotation the scope may be narrower than the family's (RFC 6749 §6).
    pub authorization: Authorization,
    /// Issue time (`iat`) of both tokens.
    pub issued_at: UnixTime,
    /// The access token's digest.
    pub access_token: SecretDigest,
    /// The access token's `jti`, for stores that keep it (grantor derives it from the token
    /// again whenever the token is presented, so keeping it is optional).
    pub jti: Jti,
    /// The access token's expiry.
    pub access_expires_at: UnixTime,
    /// The refresh token, if one is issued.
    pub refresh_token: Option<NewRefreshToken>,
    /// The family's absolute end, when it has one: set when the family's first refresh token
    /// is kept, never moved afterwards; past it nothing of the family is found.
    pub family_ends_at: Option<UnixTime>,
    /// What the access token is bound to: a DPoP key (RFC 9449 `cnf.jkt`) or a client
    /// certificate (RFC 8705 `cnf.x5t#S256`); `None` for a bearer token. The store keeps it
    /// ([`TokenBinding::to_stored`]) and gives it back with the token.
    pub binding: Option<TokenBinding>,
    /// Who acts for the user (RFC 8693 §4.1 `act`): set on an access token issued by token
    /// exchange with an actor token, `None` otherwise. The store keeps it with the access token
    /// ([`Actor::to_stored`]) and gives it back.
    pub actor: Option<Actor>,
}

impl NewTokens {
    /// An access token (digest, `jti`, expiry) for `authorization` in `family`, without a
    /// refresh token; add one with [`NewTokens::with_refresh_token`].
    pub fn new(
        family: Family,
        authorization: Authorization,
        issued_at: UnixTime,
        access_token: SecretDigest,
        jti: Jti,
        access_expires_at: UnixTime,
    ) -> Self {
        Self {
            family,
            authorization,
            issued_at,
            access_token,
            jti,
            access_expires_at,
            refresh_token: None,
            family_ends_at: None,
            binding: None,
            actor: None,
        }
    }

    /// The same tokens with `actor` acting for the access token's user (RFC 8693 §4.1).
    pub fn acting(mut self, actor: Option<Actor>) -> Self {
        self.actor = actor;
        self
    }

    /// The same tokens with the access token bound to `binding` (RFC 9449, RFC 8705 §3).
    pub fn bound_to(mut self, binding: Option<TokenBinding>) -> Self {
        self.binding = binding;
        self
    }

    /// The same tokens in a family that ends at `ends_at` (if it has no end yet).
    pub fn with_family_end(mut self, ends_at: UnixTime) -> Self {
        self.family_ends_at = Some(ends_at);
        self
    }

    /// The same tokens with a refresh token.
    pub fn with_refresh_token(mut self, refresh_token: NewRefreshToken) -> Self {
        self.refresh_token = Some(refresh_token);
        self
    }

    /// The latest expiry among the tokens: how long their family must live at least.
    pub fn expires_at(&self) -> UnixTime {
        let refresh = self.refresh_token.as_ref().map(|r| r.expires_at);
        refresh.map_or(self.access_expires_at, |r| r.max(self.access_expires_at))
    }
}

/// A refresh token grantor just minted: its digest and expiry.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct NewRefreshToken {
    /// The refresh token's digest.
    pub digest: SecretDigest,
    /// Its expiry.
    pub expires_at: UnixTime,
    /// What it is bound to: a public client's refresh token is usable only with a proof of
    /// this DPoP key (RFC 9449 §5) or over a connection with this client certificate (RFC
    /// 8705 §4). `None` when unbound.
    pub binding: Option<TokenBinding>,
}

impl NewRefreshToken {
    /// A refresh token with this digest, usable until `expires_at`, unbound.
    pub fn new(digest: SecretDigest, expires_at: UnixTime) -> Self {
        Self {
            digest,
            expires_at,
            binding: None,
        }
    }

    /// The same refresh token bound to `binding`.
    pub fn bound_to(mut self, binding: Option<TokenBinding>) -> Self {
        self.binding = binding;
        self
    }
}

/// A refresh token as [`TokenIssuer::find_refresh_token`](super::TokenIssuer::find_refresh_token)
/// reads it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RefreshGrant {
    /// The authorization it carries (its scope is the refresh token's scope).
    pub authorization: Authorization,
    /// Its family.
    pub family: FamilyId,
    /// `true` once it has been rotated: presenting it again is reuse.
    pub rotated: bool,
    /// When it was issued.
    pub issued_at: UnixTime,
    /// When it expires.
    pub expires_at: UnixTime,
    /// The family's absolute end, if it has one.
    pub family_ends_at: Option<UnixTime>,
    /// What it is bound to, as it was kept ([`NewRefreshToken::binding`]).
    pub binding: Option<TokenBinding>,
}

impl RefreshGrant {
    /// A refresh token of `family` carrying `authorization`, rotated or current.
    pub fn new(
        authorization: Authorization,
        family: FamilyId,
        rotated: bool,
        issued_at: UnixTime,
        expires_at: UnixTime,
    ) -> Self {
        Self {
            authorization,
            family,
            rotated,
            issued_at,
            expires_at,
            family_ends_at: None,
            binding: None,
        }
    }

    /// The same grant in a family that ends at `ends_at`.
    pub fn with_family_end(mut self, ends_at: Option<UnixTime>) -> Self {
        self.family_ends_at = ends_at;
        self
    }

    /// The same grant bound to `binding`.
    pub fn bound_to(mut self, binding: Option<TokenBinding>) -> Self {
        self.binding = binding;
        self
    }
}

/// The answer of [`TokenIssuer::rotate_refresh_token`](super::TokenIssuer::rotate_refresh_token).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rotation {
    /// This caller rotated the token; the successor is kept.
    Rotated,
    /// The token is the one the family's current refresh token replaced, rotated within the
    /// retry window: its rotation's answer was lost. The pair that rotation issued (its access
    /// token removed, its refresh token now stale) gives way to the successor, which is kept.
    Retried,
    /// The token had been rotated already: reuse. Nothing was kept; grantor revokes the family.
    Reused {
        /// The token's family.
        family: FamilyId,
    },
    /// Unknown, expired or revoked.
    Invalid,
}

/// What an active access token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessGrant {
    /// Client, user and the token's scope.
    pub authorization: Authorization,
    /// Its family.
    pub family: FamilyId,
    /// When it was issued.
    pub issued_at: UnixTime,
    /// When it expires.
    pub expires_at: UnixTime,
    /// What it is bound to (RFC 9449 `cnf.jkt`, RFC 8705 `cnf.x5t#S256`), as it was kept
    /// ([`NewTokens::binding`]); `None` for a bearer token.
    pub binding: Option<TokenBinding>,
    /// Who acts for the token's user (RFC 8693 §4.1 `act`), as it was kept
    /// ([`NewTokens::actor`]); `None` unless the token came from a delegating token exchange.
    pub actor: Option<Actor>,
    /// Set by grantor from the presented token: a store need not keep it.
    jti: Jti,
}

impl AccessGrant {
    /// An access token of `family` granting `authorization`, as a store found it.
    pub fn new(
        authorization: Authorization,
        family: FamilyId,
        issued_at: UnixTime,
        expires_at: UnixTime,
    ) -> Self {
        Self {
            authorization,
            family,
            issued_at,
            expires_at,
            binding: None,
            actor: None,
            jti: Jti::new(""),
        }
    }

    /// The same grant with `actor` acting for its user (RFC 8693 §4.1).
    pub fn acting(mut self, actor: Option<Actor>) -> Self {
        self.actor = actor;
        self
    }

    /// The same grant bound to `binding`.
    pub fn bound_to(mut self, binding: Option<TokenBinding>) -> Self {
        self.binding = binding;
        self
    }

    /// The token's `jti` (RFC 7662 §2.2), as the token response gave it.
    pub fn jti(&self) -> &Jti {
        &self.jti
    }

    /// The grant with the `jti` grantor derived from the presented token.
    pub(crate) fn with_jti(mut self, jti: Jti) -> Self {
        self.jti = jti;
        self
    }
}

#[cfg(test)]
mod tests;
