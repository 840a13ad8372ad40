//! The token and client seams as grantor's steps call them: a store that answers in place,
//! called at once, or the host's store through its trait object.
//!
//! The seams are `async_trait` traits, so every call through `dyn TokenIssuer` or
//! `dyn ClientStore` allocates its future on the heap. A store that never waits (grantor's
//! memory store) computes its answers in place, and a boxed future per call (three per token
//! request) was pure cost on the hot paths. Such a store also implements the synchronous
//! [`TokensInPlace`] and [`ClientsInPlace`]; when the server's seam *is* that store (checked
//! by identity when the server is built), these call it at once and hand back its answer,
//! ready: one dynamic call, no allocation, and no future that keeps the call's arguments (a
//! [`NewTokens`] is 384 bytes) inside the caller's.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::{
    AccessGrant, ClientStore, CodeGrant, CodeRedemption, FamilyId, NewTokens, RefreshGrant,
    Rotation, TokenIssuer,
};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;

/// [`TokenIssuer`] answered in place, by a store that never waits: each method answers as its
/// namesake there does, with the records borrowed rather than moved.
pub(crate) trait TokensInPlace: Send + Sync {
    /// [`TokenIssuer::insert_code`].
    fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError>;

    /// [`TokenIssuer::redeem_code`].
    fn redeem_code(&self, code: &SecretDigest, now: UnixTime)
    -> Result<CodeRedemption, StoreError>;

    /// [`TokenIssuer::insert_tokens`].
    fn insert_tokens(&self, tokens: &NewTokens) -> Result<(), StoreError>;

    /// [`TokenIssuer::find_refresh_token`].
    fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError>;

    /// [`TokenIssuer::rotate_refresh_token`].
    fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: &NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError>;

    /// [`TokenIssuer::find_access_token`]; a store called in place is the one copy there is,
    /// with no replica, so it answers [`TokenIssuer::check_access_token`] too.
    fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError>;

    /// [`TokenIssuer::revoke_access_token`].
    fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError>;

    /// [`TokenIssuer::revoke_family`].
    fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError>;

    /// [`TokenIssuer::revoke_client`].
    fn revoke_client(&self, client_id: &str) -> Result<u64, StoreError>;
}

/// [`ClientStore`] answered in place, by a store that never waits.
pub(crate) trait ClientsInPlace: Send + Sync {
    /// [`ClientStore::find_client`].
    fn find_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, StoreError>;
}

/// A seam: a store called in place, through `P`, or the host's, through `T`.
pub(crate) enum Seam<'a, T: ?Sized, P: ?Sized> {
    InPlace(&'a P),
    Host(&'a T),
}

// Derived `Clone` and `Copy` would ask `T: Copy`, which a trait object is not.
impl<T: ?Sized, P: ?Sized> Clone for Seam<'_, T, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized, P: ?Sized> Copy for Seam<'_, T, P> {}

/// The token seam ([`TokenIssuer`]).
pub(crate) type TokenSeam<'a> = Seam<'a, dyn TokenIssuer, dyn TokensInPlace>;

/// The client seam ([`ClientStore`]).
pub(crate) type ClientSeam<'a> = Seam<'a, dyn ClientStore, dyn ClientsInPlace>;

impl<'a, T: ?Sized, P: ?Sized> Seam<'a, T, P> {
    /// The seam `host`, called through `in_place` when that is given: the same store,
    /// answering at once.
    pub(crate) fn of(host: &'a T, in_place: Option<&'a P>) -> Self {
        match in_place {
            Some(in_place) => Self::InPlace(in_place),
            None => Self::Host(host),
        }
    }
}

/// A seam's answer: the in-place store's, ready, or the host store's future. Awaited as it is,
/// or, where a large answer should not sit in the caller's future, taken [`Answer::now`] and
/// only the host's future awaited.
pub(crate) enum Answer<'f, T> {
    Ready(T),
    Pending(Later<'f, T>),
}

/// The host store's future.
pub(crate) type Later<'f, T> = Pin<Box<dyn Future<Output = T> + Send + 'f>>;

impl<'f, T> Answer<'f, T> {
    /// The in-place store's answer, or the host's future to await.
    pub(crate) fn now(self) -> Result<T, Later<'f, T>> {
        match self {
            Self::Ready(answer) => Ok(answer),
            Self::Pending(later) => Err(later),
        }
    }
}

impl<'f, T: Unpin> IntoFuture for Answer<'f, T> {
    type Output = T;
    type IntoFuture = Awaited<'f, T>;

    fn into_future(self) -> Awaited<'f, T> {
        match self {
            Self::Ready(answer) => Awaited::Ready(Some(answer)),
            Self::Pending(later) => Awaited::Pending(later),
        }
    }
}

/// An [`Answer`] being awaited.
pub(crate) enum Awaited<'f, T> {
    Ready(Option<T>),
    Pending(Later<'f, T>),
}

impl<T: Unpin> Future for Awaited<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match self.get_mut() {
            // Polled again after it answered: a misuse of any future, which `async fn`s
            // answer with a panic too.
            Self::Ready(answer) => Poll::Ready(answer.take().expect("an answer is taken once")),
            Self::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

/// A seam's [`Answer`], awaiting only a host store's future: the in-place store's answer is
/// taken at once, so a large one (a grant is 200–340 bytes) is not kept in the caller's future
/// as a ready answer, as `.await` on the [`Answer`] would keep it.
macro_rules! answer_now {
    ($answer:expr) => {
        'answered: {
            let later = match $answer.now() {
                Ok(answer) => break 'answered answer,
                Err(later) => later,
            };
            later.await
        }
    };
}
pub(crate) use answer_now;

/// The in-place store's answer, or the host's future.
macro_rules! answer {
    ($seam:expr, $in_place:ident => $ready:expr, $host:ident => $pending:expr) => {
        match $seam {
            Seam::InPlace($in_place) => Answer::Ready($ready),
            Seam::Host($host) => Answer::Pending($pending),
        }
    };
}

impl<'a> ClientSeam<'a> {
    pub(crate) fn find_client<'f>(
        self,
        client_id: &'f str,
    ) -> Answer<'f, Result<Option<Arc<Client>>, StoreError>>
    where
        'a: 'f,
    {
        answer!(self, store => store.find_client(client_id),
            host => host.find_client(client_id))
    }
}

impl<'a> TokenSeam<'a> {
    pub(crate) fn insert_code<'f>(
        self,
        code: &'f SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Answer<'f, Result<(), StoreError>>
    where
        'a: 'f,
    {
        answer!(self, store => store.insert_code(code, family, grant),
            host => host.insert_code(code, family, grant))
    }

    pub(crate) fn redeem_code<'f>(
        self,
        code: &'f SecretDigest,
        now: UnixTime,
    ) -> Answer<'f, Result<CodeRedemption, StoreError>>
    where
        'a: 'f,
    {
        answer!(self, store => store.redeem_code(code, now),
            host => host.redeem_code(code, now))
    }

    pub(crate) fn insert_tokens(self, tokens: NewTokens) -> Answer<'a, Result<(), StoreError>> {
        answer!(self, store => store.insert_tokens(&tokens),
            host => host.insert_tokens(tokens))
    }

    pub(crate) fn find_refresh_token<'f>(
        self,
        token: &'f SecretDigest,
        now: UnixTime,
    ) -> Answer<'f, Result<Option<RefreshGrant>, StoreError>>
    where
        'a: 'f,
    {
        answer!(self, store => store.find_refresh_token(token, now),
            host => host.find_refresh_token(token, now))
    }

    pub(crate) fn rotate_refresh_token<'f>(
        self,
        token: &'f SecretDigest,
        successor: NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Answer<'f, Result<Rotation, StoreError>>
    where
        'a: 'f,
    {
        answer!(self,
            store => store.rotate_refresh_token(token, &successor, retry_since),
            host => host.rotate_refresh_token(token, successor, retry_since))
    }

    pub(crate) fn find_access_token<'f>(
        self,
        token: &'f SecretDigest,
        now: UnixTime,
    ) -> Answer<'f, Result<Option<AccessGrant>, StoreError>>
    where
        'a: 'f,
    {
        answer!(self, store => store.find_access_token(token, now),
            host => host.find_access_token(token, now))
    }

    /// [`TokenIssuer::check_access_token`]: a store called in place has no replica.
    pub(crate) fn check_access_token<'f>(
        self,
        token: &'f SecretDigest,
        now: UnixTime,
    ) -> Answer<'f, Result<Option<AccessGrant>, StoreError>>
    where
        'a: 'f,
    {
        match self {
            Seam::InPlace(_) => self.find_access_token(token, now),
            Seam::Host(host) => Answer::Pending(host.check_access_token(token, now)),
        }
    }

    pub(crate) fn revoke_access_token<'f>(
        self,
        token: &'f SecretDigest,
    ) -> Answer<'f, Result<(), StoreError>>
    where
        'a: 'f,
    {
        answer!(self, store => store.revoke_access_token(token),
            host => host.revoke_access_token(token))
    }

    pub(crate) fn revoke_family(self, family: FamilyId) -> Answer<'a, Result<(), StoreError>> {
        answer!(self, store => store.revoke_family(family),
            host => host.revoke_family(family))
    }

    pub(crate) fn revoke_client<'f>(self, client_id: &'f str) -> Answer<'f, Result<u64, StoreError>>
    where
        'a: 'f,
    {
        answer!(self, store => store.revoke_client(client_id),
            host => host.revoke_client(client_id))
    }
}
