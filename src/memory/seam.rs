//! The token and client seams as grantor's steps call them: grantor's own [`MemoryStore`]
//! directly, or the host's store through its trait object.
//!
//! The seams are `async_trait` traits, so every call through `dyn TokenIssuer` or
//! `dyn ClientStore` allocates its future on the heap. The memory store never waits: its
//! answers are computed in place, and a boxed future per call (three per token request) was
//! pure cost on the hot paths. When the server's seam *is* the store handed to
//! [`AuthorizationServerBuilder::store`](crate::AuthorizationServerBuilder::store) (checked by
//! identity when the server is built), these call it at once and hand back its answer, ready:
//! no allocation, and no future that keeps the call's arguments (a [`NewTokens`] is 384 bytes)
//! inside the caller's.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::MemoryStore;
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::{
    AccessGrant, ClientStore, CodeGrant, CodeRedemption, FamilyId, NewTokens, RefreshGrant,
    Rotation, TokenIssuer,
};

/// A seam: grantor's memory store, called in place, or the host's, through `T`.
pub(crate) enum Seam<'a, T: ?Sized> {
    Memory(&'a MemoryStore),
    Host(&'a T),
}

// Derived `Clone` and `Copy` would ask `T: Copy`, which a trait object is not.
impl<T: ?Sized> Clone for Seam<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for Seam<'_, T> {}

/// The token seam ([`TokenIssuer`]).
pub(crate) type TokenSeam<'a> = Seam<'a, dyn TokenIssuer>;

/// The client seam ([`ClientStore`]).
pub(crate) type ClientSeam<'a> = Seam<'a, dyn ClientStore>;

impl<'a, T: ?Sized> Seam<'a, T> {
    /// The seam `host`, called in place when it is `memory` itself.
    pub(crate) fn of(host: &'a T, memory: Option<&'a MemoryStore>) -> Self {
        match memory {
            Some(memory) => Self::Memory(memory),
            None => Self::Host(host),
        }
    }
}

/// Whether the seam `seam` is the memory store `memory` (the same allocation).
pub(crate) fn is_store<T: ?Sized>(seam: &Arc<T>, memory: &Arc<MemoryStore>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(seam), Arc::as_ptr(memory))
}

/// A seam's answer: the memory store's, ready, or the host store's future. Awaited as it is,
/// or, where a large answer should not sit in the caller's future, taken [`Answer::now`] and
/// only the host's future awaited.
pub(crate) enum Answer<'f, T> {
    Ready(T),
    Pending(Later<'f, T>),
}

/// The host store's future.
pub(crate) type Later<'f, T> = Pin<Box<dyn Future<Output = T> + Send + 'f>>;

impl<'f, T> Answer<'f, T> {
    /// The memory store's answer, or the host's future to await.
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

/// A seam's [`Answer`], awaiting only a host store's future: the memory store's answer is
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

/// The memory store's answer, or the host's future.
macro_rules! answer {
    ($seam:expr, $memory:ident => $ready:expr, $host:ident => $pending:expr) => {
        match $seam {
            Seam::Memory($memory) => Answer::Ready($ready),
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
        answer!(self, memory => Ok(memory.parts.clients.find(client_id)),
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
        answer!(self, memory => memory.parts.tokens.insert_code(code, family, grant),
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
        answer!(self, memory => memory.parts.tokens.redeem_code(code, now),
            host => host.redeem_code(code, now))
    }

    pub(crate) fn insert_tokens(self, tokens: NewTokens) -> Answer<'a, Result<(), StoreError>> {
        answer!(self, memory => memory.parts.tokens.insert_tokens(&tokens),
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
        answer!(self, memory => memory.parts.tokens.find_refresh_token(token, now),
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
            memory => memory.parts.tokens.rotate_refresh_token(token, &successor, retry_since),
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
        answer!(self, memory => memory.parts.tokens.find_access_token(token, now),
            host => host.find_access_token(token, now))
    }

    /// [`TokenIssuer::check_access_token`]: the memory store has no replica.
    pub(crate) fn check_access_token<'f>(
        self,
        token: &'f SecretDigest,
        now: UnixTime,
    ) -> Answer<'f, Result<Option<AccessGrant>, StoreError>>
    where
        'a: 'f,
    {
        match self {
            Seam::Memory(_) => self.find_access_token(token, now),
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
        answer!(self, memory => memory.parts.tokens.revoke_access_token(token),
            host => host.revoke_access_token(token))
    }

    pub(crate) fn revoke_family(self, family: FamilyId) -> Answer<'a, Result<(), StoreError>> {
        answer!(self, memory => memory.parts.tokens.revoke_family(family),
            host => host.revoke_family(family))
    }

    pub(crate) fn revoke_client<'f>(self, client_id: &'f str) -> Answer<'f, Result<u64, StoreError>>
    where
        'a: 'f,
    {
        answer!(self, memory => Ok(memory.parts.tokens.revoke_client(client_id)),
            host => host.revoke_client(client_id))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::{AuthorizationServer, MemoryStore};

    fn builder() -> crate::AuthorizationServerBuilder {
        AuthorizationServer::builder().issuer("https://auth.example")
    }

    #[test]
    fn the_memory_store_given_as_every_seam_is_called_in_place() {
        let server = builder().store(MemoryStore::new()).build().unwrap();
        assert_eq!(server.calls_memory_in_place(), (true, true));
    }

    #[test]
    fn a_seam_set_apart_from_the_memory_store_is_called_through_its_trait() {
        let tokens = Arc::new(MemoryStore::new());
        let server = builder()
            .tokens(tokens)
            .store(MemoryStore::new())
            .build()
            .unwrap();
        assert_eq!(server.calls_memory_in_place(), (false, true));
    }

    #[test]
    fn cached_clients_are_asked_through_the_cache() {
        let server = builder()
            .store(MemoryStore::new())
            .cache_clients(Duration::from_secs(1))
            .build()
            .unwrap();
        assert_eq!(server.calls_memory_in_place(), (true, false));
    }
}
