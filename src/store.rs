//! The host's seams: [`ClientStore`], [`UserStore`] and [`TokenIssuer`], and the records that
//! cross them.
//!
//! Each trait asks one question per method, is async, object-safe and `Send + Sync`, so a host
//! holds `Arc<dyn ClientStore>` and friends. `src/memory/` has in-memory implementations.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use smol_str::SmolStr;

use crate::client::{Client, ClientId};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::secret::{AccessToken, AuthorizationCode, Password, RefreshToken};

/// Looks up registered clients.
#[async_trait]
pub trait ClientStore: Send + Sync {
    /// The client registered under `client_id`, if any. Called on every request, so keep it
    /// cheap (the in-memory store answers from a map).
    async fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError>;
}

/// Authenticates and looks up user accounts.
#[async_trait]
pub trait UserStore: Send + Sync {
    /// The account whose username (an email address) and password match, or `None`.
    ///
    /// Implementations verify a slow password hash (Argon2id) off the async executor (see
    /// [`crate::hash::verify_password`]) and should spend the same time on unknown usernames
    /// ([`crate::hash::verify_against_dummy`]) so that timing does not reveal which accounts
    /// exist.
    async fn authenticate(
        &self,
        username: &str,
        password: &Password,
    ) -> Result<Option<User>, StoreError>;

    /// The account with this id, if it still exists.
    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError>;
}

/// Mints, redeems and answers for every code and token grantor hands out.
///
/// Implementations keep codes and tokens only as digests ([`AuthorizationCode::digest`] and
/// friends), generate them from the OS CSPRNG, and make the single-use steps atomic:
/// [`TokenIssuer::redeem_code`] returns [`CodeRedemption::Redeemed`] to exactly one caller, and
/// [`TokenIssuer::rotate_refresh_token`] returns [`Rotation::Rotated`] to exactly one caller per
/// refresh token.
///
/// Every code and token belongs to a *family*: the one authorization it descends from (a code
/// and everything exchanged for it and refreshed from that). A token whose family is revoked is
/// never found again.
#[async_trait]
pub trait TokenIssuer: Send + Sync {
    /// Mints a single-use authorization code for `grant`, in a new family.
    async fn issue_code(&self, grant: CodeGrant) -> Result<AuthorizationCode, StoreError>;

    /// Consumes `code` atomically. A code seen before answers [`CodeRedemption::Replayed`] with
    /// its family (until at least the code's expiry), so the caller can revoke what the first
    /// redemption issued; an unknown or expired code answers [`CodeRedemption::Invalid`].
    async fn redeem_code(
        &self,
        code: &AuthorizationCode,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError>;

    /// Mints an access token, and a refresh token when `request.refresh_expires_at` is set.
    async fn issue_tokens(&self, request: NewTokens) -> Result<IssuedTokens, StoreError>;

    /// Reads a refresh token without using it: current or already rotated, or `None` when it is
    /// unknown, expired or its family is revoked.
    async fn find_refresh_token(
        &self,
        token: &RefreshToken,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError>;

    /// Rotates a current refresh token atomically: retires it and mints its successor with a new
    /// access token. A token already rotated answers [`Rotation::Reused`] after revoking its
    /// family (RFC 9700 §4.14.2).
    async fn rotate_refresh_token(
        &self,
        token: &RefreshToken,
        request: Refresh,
    ) -> Result<Rotation, StoreError>;

    /// What an active access token grants, or `None` when it is unknown, expired or revoked.
    async fn find_access_token(
        &self,
        token: &AccessToken,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError>;

    /// Revokes one access token at once (RFC 7009 §2.1); other tokens of its family stay.
    async fn revoke_access_token(&self, token: &AccessToken) -> Result<(), StoreError>;

    /// Revokes every code and token of a family.
    async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError>;
}

/// Defines a public identifier that is not a secret: text held inline up to 23 bytes, so making
/// and cloning one copies bytes instead of allocating or sharing a reference count between
/// threads; `new`, `as_str`, `Display`, and a `Debug` that shows the text.
macro_rules! text_id {
    ($(#[$meta:meta])* $name:ident, $new_doc:literal) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(SmolStr);

        impl $name {
            #[doc = $new_doc]
            pub fn new(id: impl AsRef<str>) -> Self {
                Self(SmolStr::new(id))
            }

            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({:?})"), self.as_str())
            }
        }
    };
}

text_id!(
    /// A user account's stable identifier (the `sub` of its tokens). Not a secret. Held inline
    /// up to 23 bytes, as [`ClientId`] is.
    UserId,
    "An id as the host's user store knows it."
);

text_id!(
    /// An access token's `jti`: the identifier the token response and introspection give for it
    /// (RFC 7662 §2.2). Unique, and neither the token nor anything the token can be recovered
    /// from, so it may be logged. Held inline up to 23 bytes (grantor's are 22), so making and
    /// cloning one allocates nothing.
    Jti,
    "A `jti` as the host's token issuer made it."
);

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

/// Why a user store refused to add an account.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AddUserError {
    /// The username is not an email address.
    #[error("the username must be an email address")]
    InvalidUsername,
    /// An account with this username (in any case), or this id, exists.
    #[error("an account with this username exists")]
    Taken,
    /// The store or hashing failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The lookup key of a username: the email address lowercased; `None` if it does not look like
/// one. Every user store grantor ships matches usernames by this key.
pub(crate) fn username_key(username: &str) -> Option<String> {
    let (local, domain) = username.rsplit_once('@')?;
    let plausible = !local.is_empty()
        && !domain.is_empty()
        && username.len() <= 254
        && !username
            .chars()
            .any(|c| c.is_whitespace() || c.is_control());
    plausible.then(|| username.to_lowercase())
}

/// Who authorized what: the client, the user (none for `client_credentials`) and the scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    /// The client the grant is for.
    pub client_id: ClientId,
    /// The user who authorized it; `None` when the client acts for itself.
    pub user: Option<User>,
    /// The scope granted.
    pub scope: Scope,
}

/// Opaque identifier of a family of codes and tokens descending from one authorization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FamilyId(pub u128);

/// What an authorization code is bound to (RFC 6749 §4.1.3, RFC 7636 §4.4).
#[derive(Debug, Clone)]
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
}

/// The answer of [`TokenIssuer::redeem_code`].
#[derive(Debug, Clone)]
pub enum CodeRedemption {
    /// This caller consumed the code; nobody else will.
    Redeemed {
        /// What the code was bound to.
        grant: CodeGrant,
        /// The family to issue its tokens in.
        family: FamilyId,
    },
    /// The code was redeemed before: a replay. The caller revokes the family.
    Replayed {
        /// The family the first redemption issued into.
        family: FamilyId,
    },
    /// Unknown or expired.
    Invalid,
}

/// A request to mint tokens.
#[derive(Debug, Clone)]
pub struct NewTokens {
    /// Who authorized what.
    pub authorization: Authorization,
    /// The family to issue into (from a redeemed code), or `None` to start one.
    pub family: Option<FamilyId>,
    /// Issue time (`iat`).
    pub issued_at: UnixTime,
    /// Access token expiry.
    pub access_expires_at: UnixTime,
    /// Refresh token expiry, or `None` for no refresh token.
    pub refresh_expires_at: Option<UnixTime>,
}

/// Tokens just minted, in the clear, to hand to the client once.
#[derive(Debug, Clone)]
pub struct IssuedTokens {
    /// The access token.
    pub access_token: AccessToken,
    /// The access token's `jti`: random, unique, not the token.
    pub jti: Jti,
    /// The refresh token, if one was asked for.
    pub refresh_token: Option<RefreshToken>,
    /// The scope the access token carries.
    pub scope: Scope,
    /// The family the tokens belong to.
    pub family: FamilyId,
}

/// A refresh token as [`TokenIssuer::find_refresh_token`] reads it.
#[derive(Debug, Clone)]
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
}

/// A request to rotate a refresh token.
#[derive(Debug, Clone)]
pub struct Refresh {
    /// The scope of the new access token: the refresh token's or narrower (RFC 6749 §6).
    pub access_scope: Scope,
    /// Issue time.
    pub issued_at: UnixTime,
    /// The new access token's expiry.
    pub access_expires_at: UnixTime,
    /// The new refresh token's expiry.
    pub refresh_expires_at: UnixTime,
}

/// The answer of [`TokenIssuer::rotate_refresh_token`].
#[derive(Debug, Clone)]
pub enum Rotation {
    /// This caller rotated the token; here are its successors.
    Rotated(IssuedTokens),
    /// The token had been rotated already; its family is now revoked.
    Reused,
    /// Unknown, expired or revoked.
    Invalid,
}

/// What an active access token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessGrant {
    /// Client, user and the token's scope.
    pub authorization: Authorization,
    /// The token's `jti`.
    pub jti: Jti,
    /// Its family.
    pub family: FamilyId,
    /// When it was issued.
    pub issued_at: UnixTime,
    /// When it expires.
    pub expires_at: UnixTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_ids_show_their_text_and_compare_by_it() {
        let jti = Jti::new("b8nQ1vR4x2kLmP0sT7uW9y");
        assert_eq!(jti.as_str(), "b8nQ1vR4x2kLmP0sT7uW9y");
        assert_eq!(jti.to_string(), "b8nQ1vR4x2kLmP0sT7uW9y");
        assert_eq!(format!("{jti:?}"), r#"Jti("b8nQ1vR4x2kLmP0sT7uW9y")"#);
        assert_eq!(jti, Jti::new(String::from("b8nQ1vR4x2kLmP0sT7uW9y")));
        let long = "a user id longer than twenty-three bytes";
        assert_eq!(UserId::new(long).as_str(), long);
        assert_eq!(format!("{:?}", UserId::new("u1")), r#"UserId("u1")"#);
        assert!(UserId::new("a") < UserId::new("b"));
    }
}
