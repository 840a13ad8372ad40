//! The seams of single sign-on: a person's signed-in browser (the end-user session of OpenID
//! Connect, with its `sid` and `auth_time`) and the approvals a person gave clients, each
//! shared by every node so that a browser signed in on one node is signed in on all.

use async_trait::async_trait;

use super::records::{FamilyId, User, UserId};
use crate::audience::Audience;
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::scope::Scope;
use crate::secret::SecretDigest;

/// The most grants a user session remembers (for logout to end them); past it, the oldest is
/// forgotten.
pub const MAX_SESSION_GRANTS: usize = 64;

/// The most live sessions one user keeps: a sign-in past it ends the user's session signed in
/// longest ago (without a logout: that browser just signs in again), so that no one account,
/// signing in over and over, fills a store's bound for everyone else.
pub const MAX_SESSIONS_PER_USER: usize = 32;

/// The most bytes of a session's `sid`, of each of its authentication methods and of its
/// authentication context class (see [`UserAuthentication`](super::UserAuthentication)).
pub const MAX_SID_BYTES: usize = 64;

/// A person's signed-in browser: made by a successful sign-in, kept under the digest of the
/// browser's cookie until [`UserSession::expires_at`], and ended by logout. While it lives, an
/// authorization request from that browser needs no password (single sign-on).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserSession {
    /// Who signed in.
    pub user: User,
    /// The session's public id (`sid`, OIDC Front-/Back-Channel Logout): random, in ID tokens
    /// and logout tokens; never the cookie, which only the browser holds.
    pub sid: String,
    /// When the user signed in (`auth_time`).
    pub auth_time: UnixTime,
    /// How (`amr`, RFC 8176): `pwd` for a password.
    pub amr: Vec<String>,
    /// The authentication context class the sign-in satisfied (`acr`), when the deployment
    /// names one ([`UserSession::with_acr`]); every sign-in by this session carries it.
    pub acr: Option<String>,
    /// When the session ends by itself.
    pub expires_at: UnixTime,
    /// The grants issued in the session, oldest first, at most [`MAX_SESSION_GRANTS`]: each
    /// client and the family its tokens are in.
    pub grants: Vec<(ClientId, FamilyId)>,
}

impl UserSession {
    /// A session of `user`, signed in at `auth_time` by `amr`, known as `sid`, until
    /// `expires_at`, with no named class (`acr`) and no grant yet.
    pub fn new(
        user: User,
        sid: impl Into<String>,
        auth_time: UnixTime,
        amr: Vec<String>,
        expires_at: UnixTime,
    ) -> Self {
        Self {
            user,
            sid: sid.into(),
            auth_time,
            amr,
            acr: None,
            expires_at,
            grants: Vec::new(),
        }
    }

    /// The same session, its sign-in having satisfied the class `acr` (none: no named class).
    pub fn with_acr(mut self, acr: Option<String>) -> Self {
        self.acr = acr;
        self
    }

    /// The same session with `grants` recorded.
    pub fn with_grants(mut self, grants: Vec<(ClientId, FamilyId)>) -> Self {
        self.grants = grants;
        self
    }
}

/// Keeps signed-in browsers (single sign-on), keyed by the digest of the browser's cookie.
///
/// Only a successful sign-in makes a session, so what an unauthenticated party can make this
/// store keep is nothing. A store still bounds what it holds: each user at
/// [`MAX_SESSIONS_PER_USER`] (a contract rule, so that one account signing in over and over
/// cannot fill the rest), and the in-memory store in all at
/// [`MemoryStore::MAX_USER_SESSIONS`](crate::MemoryStore::MAX_USER_SESSIONS), answering
/// [`StoreError::unavailable`] past it (grantor then signs the person in without single
/// sign-on). It drops what expired at
/// [`Purge::purge_expired`](super::Purge::purge_expired). A session past its `expires_at` is
/// never answered.
/// In memory (unbounded in all here for brevity; a real store bounds it and drops what expired):
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// use grantor::async_trait;
/// use grantor::client::ClientId;
/// use grantor::clock::UnixTime;
/// use grantor::store::{
///     FamilyId, MAX_SESSION_GRANTS, MAX_SESSIONS_PER_USER, SecretDigest, StoreError, UserSession,
///     UserSessionStore,
/// };
///
/// #[derive(Default)]
/// struct SignedIn(Mutex<HashMap<SecretDigest, UserSession>>);
///
/// #[async_trait]
/// impl UserSessionStore for SignedIn {
///     async fn insert_user_session(&self, id: &SecretDigest, session: UserSession, now: UnixTime)
///         -> Result<(), StoreError> {
///         let mut sessions = self.0.lock().unwrap();
///         sessions.retain(|_, kept| kept.expires_at > now);
///         let user = session.user.id().clone();
///         let mut mine: Vec<_> = sessions.iter().filter(|(_, s)| *s.user.id() == user)
///             .map(|(digest, s)| (s.auth_time, *digest)).collect();
///         mine.sort_by_key(|(auth_time, _)| *auth_time); // the oldest sign-in first
///         let over = (mine.len() + 1).saturating_sub(MAX_SESSIONS_PER_USER);
///         for (_, oldest) in mine.into_iter().take(over) {
///             sessions.remove(&oldest);
///         }
///         sessions.insert(*id, session);
///         Ok(())
///     }
///     async fn find_user_session(&self, id: &SecretDigest, now: UnixTime)
///         -> Result<Option<UserSession>, StoreError> {
///         let sessions = self.0.lock().unwrap();
///         Ok(sessions.get(id).filter(|s| s.expires_at > now).cloned())
///     }
///     async fn add_session_grant(&self, id: &SecretDigest, client: &ClientId, family: FamilyId,
///         now: UnixTime) -> Result<bool, StoreError> {
///         let mut sessions = self.0.lock().unwrap();
///         let Some(session) = sessions.get_mut(id).filter(|s| s.expires_at > now) else {
///             return Ok(false);
///         };
///         session.grants.push((client.clone(), family));
///         let over = session.grants.len().saturating_sub(MAX_SESSION_GRANTS);
///         session.grants.drain(..over); // the oldest go first
///         Ok(true)
///     }
///     async fn end_user_session(&self, id: &SecretDigest, now: UnixTime)
///         -> Result<Option<UserSession>, StoreError> {
///         let ended = self.0.lock().unwrap().remove(id);
///         Ok(ended.filter(|s| s.expires_at > now))
///     }
/// }
/// # let _ = SignedIn::default();
/// ```
#[async_trait]
pub trait UserSessionStore: Send + Sync {
    /// Keeps a new session under `id`. Should its user hold [`MAX_SESSIONS_PER_USER`] live
    /// sessions besides it, the one with the oldest `auth_time` is forgotten, its grants with
    /// it.
    async fn insert_user_session(
        &self,
        id: &SecretDigest,
        session: UserSession,
        now: UnixTime,
    ) -> Result<(), StoreError>;

    /// The live session under `id`, if any, with its grants.
    async fn find_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError>;

    /// Records that `client` was issued tokens of `family` in the live session `id` (the
    /// oldest grant forgotten past [`MAX_SESSION_GRANTS`]); `false` when there is no such live
    /// session. Concurrent calls for one session each keep their grant.
    async fn add_session_grant(
        &self,
        id: &SecretDigest,
        client: &ClientId,
        family: FamilyId,
        now: UnixTime,
    ) -> Result<bool, StoreError>;

    /// Ends the live session under `id` and answers it, grants included: of concurrent
    /// callers, exactly one gets it.
    async fn end_user_session(
        &self,
        id: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<UserSession>, StoreError>;

    /// Ends every live session of `user` (at most [`MAX_SESSIONS_PER_USER`]) and answers them,
    /// grants included: what an administrator's "sign this person out everywhere" takes. Of
    /// concurrent callers (this one, or [`end_user_session`](Self::end_user_session) for one of
    /// them), each session goes to exactly one. The default refuses
    /// ([`StoreError::failed`]): a store of the host's own that keeps no index by user says so
    /// rather than end nothing.
    async fn end_user_sessions(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<UserSession>, StoreError> {
        let _ = (user, now);
        Err(StoreError::failed(
            "this session store cannot find a user's sessions (end_user_sessions)",
        ))
    }
}

/// What a user approved for a client: the scope, and the resources (RFC 8707) its tokens may be
/// aimed at. A request asking for more of either asks the user again.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Consent {
    /// The scope approved.
    pub scope: Scope,
    /// The resources approved, as the server registered them; empty: the server's default
    /// audience alone (an approval a store kept before it kept resources reads so).
    pub audience: Audience,
}

impl Consent {
    /// An approval of `scope` for tokens aimed at `audience` (empty: the default audience).
    pub fn new(scope: Scope, audience: Audience) -> Self {
        Self { scope, audience }
    }
}

/// Keeps the approvals people gave clients (remembered consent): the scope and resources a user
/// approved for a client, until it expires or is forgotten.
///
/// Only a signed-in user's approval makes one, one per user and client; a store bounds what it
/// holds all the same (the in-memory one at
/// [`MemoryStore::MAX_CONSENTS`](crate::MemoryStore::MAX_CONSENTS)).
/// In memory, one approval per user and client:
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// use grantor::async_trait;
/// use grantor::client::ClientId;
/// use grantor::clock::UnixTime;
/// use grantor::store::{Consent, ConsentStore, StoreError, UserId};
///
/// #[derive(Default)]
/// struct Approvals(Mutex<HashMap<(UserId, ClientId), (Consent, UnixTime)>>);
///
/// #[async_trait]
/// impl ConsentStore for Approvals {
///     async fn remember_consent(&self, user: &UserId, client: &ClientId, consent: &Consent,
///         expires_at: UnixTime, _now: UnixTime) -> Result<(), StoreError> {
///         let key = (user.clone(), client.clone());
///         self.0.lock().unwrap().insert(key, (consent.clone(), expires_at));
///         Ok(())
///     }
///     async fn find_consent(&self, user: &UserId, client: &ClientId, now: UnixTime)
///         -> Result<Option<Consent>, StoreError> {
///         let approvals = self.0.lock().unwrap();
///         let found = approvals.get(&(user.clone(), client.clone()));
///         Ok(found.filter(|(_, until)| *until > now).map(|(consent, _)| consent.clone()))
///     }
///     async fn forget_consent(&self, user: &UserId, client: &ClientId) -> Result<bool, StoreError> {
///         Ok(self.0.lock().unwrap().remove(&(user.clone(), client.clone())).is_some())
///     }
/// }
/// # let _ = Approvals::default();
/// ```
#[async_trait]
pub trait ConsentStore: Send + Sync {
    /// Keeps `user`'s approval `consent` for `client` until `expires_at`, replacing the one
    /// before (grantor hands the union of the two when it widens).
    async fn remember_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        consent: &Consent,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<(), StoreError>;

    /// What `user` approved for `client`, while the approval lives, its scope and audience as
    /// kept.
    async fn find_consent(
        &self,
        user: &UserId,
        client: &ClientId,
        now: UnixTime,
    ) -> Result<Option<Consent>, StoreError>;

    /// Forgets `user`'s approval for `client`; `false` when there was none.
    async fn forget_consent(&self, user: &UserId, client: &ClientId) -> Result<bool, StoreError>;

    /// Every live approval of `user`, one per client, in the order of the clients' ids: what an
    /// administrator reviews before forgetting one. The default refuses
    /// ([`StoreError::failed`]): a store of the host's own that keeps no index by user says so
    /// rather than answer nothing.
    async fn consents(
        &self,
        user: &UserId,
        now: UnixTime,
    ) -> Result<Vec<(ClientId, Consent)>, StoreError> {
        let _ = (user, now);
        Err(StoreError::failed(
            "this consent store cannot list a user's approvals (consents)",
        ))
    }
}
