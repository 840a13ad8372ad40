//! Self-registered clients nobody uses go (the registration policy's idle lifetime): a client
//! idle that long is refused at its next authorization or token request and deleted with its
//! tokens, and a sweep deletes those never heard from again. A use is recorded through the
//! [`ClientActivity`] seam at most once a [`CLIENT_TOUCH_INTERVAL`] per client and node, so a
//! busy client costs a write an hour, never one a request.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::client::{Client, ClientId, ClientTier};
use crate::clock::UnixTime;
use crate::error::{OAuthError, StoreError};
use crate::events::{Event, EventKind, Events};
use crate::store::seam::TokenSeam;
use crate::store::{Admin, CLIENT_TOUCH_INTERVAL, ClientActivity};

/// The most clients one node remembers having recorded a use of; past it the memory starts
/// over (each client then records its next use again: a write, never a refusal). Bounded by
/// entries: one client id (at most the id bound) and a time each.
pub(crate) const MAX_REMEMBERED_USES: usize = 10_000;

/// The clients this node recorded a use of, and when: what spares a write per request.
#[derive(Default)]
pub(crate) struct RecentUses(Mutex<HashMap<Box<str>, UnixTime>>);

impl RecentUses {
    fn recorded_since(&self, client_id: &str, since: UnixTime) -> bool {
        let uses = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        uses.get(client_id).is_some_and(|at| *at >= since)
    }

    fn remember(&self, client_id: &str, at: UnixTime) {
        let mut uses = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if uses.len() >= MAX_REMEMBERED_USES && !uses.contains_key(client_id) {
            uses.clear();
        }
        uses.insert(client_id.into(), at);
    }

    fn forget(&self, client_id: &str) {
        let mut uses = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        uses.remove(client_id);
    }
}

/// What expiring idle clients needs: where uses are recorded, where clients and their tokens
/// are deleted, the lifetime, and this node's memory of recent uses.
#[derive(Clone, Copy)]
pub(crate) struct IdleClients<'a> {
    pub(crate) activity: &'a dyn ClientActivity,
    pub(crate) registry: &'a dyn Admin,
    pub(crate) tokens: TokenSeam<'a>,
    pub(crate) events: &'a dyn Events,
    /// How long a self-registered client may go unused.
    pub(crate) lifetime: Duration,
    pub(crate) recent: &'a RecentUses,
}

impl std::fmt::Debug for IdleClients<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdleClients")
            .field("lifetime", &self.lifetime)
            .finish_non_exhaustive()
    }
}

/// How many idle clients one sweep deletes at most, per store call.
const SWEEP_BATCH: usize = 100;

impl IdleClients<'_> {
    /// `client`'s request at `now`: refused (`invalid_client`) if it is a self-registered
    /// client idle past the lifetime (it is deleted with its tokens first); else its use is
    /// recorded, once an interval.
    pub(crate) async fn used(&self, client: &Client, now: UnixTime) -> Result<(), OAuthError> {
        // An administrator's clients never expire; a document's are not kept (what it was
        // issued lives as long as its tokens).
        if client.tier() != ClientTier::SelfRegistered {
            return Ok(());
        }
        let id = client.id().as_str();
        let interval = CLIENT_TOUCH_INTERVAL.min(self.lifetime / 4);
        if self.recent.recorded_since(id, now.minus(interval)) {
            return Ok(());
        }
        if let Some(last) = self.activity.client_last_used(id).await?
            && last.plus(self.lifetime) <= now
        {
            self.expire(client.id(), now).await?;
            return Err(gone());
        }
        self.activity.touch_client(id, now).await?;
        self.recent.remember(id, now);
        Ok(())
    }

    /// Records a new client's registration at `now` as its first use: its clock starts.
    pub(crate) async fn registered(
        &self,
        client: &Client,
        now: UnixTime,
    ) -> Result<(), StoreError> {
        self.activity
            .touch_client(client.id().as_str(), now)
            .await?;
        self.recent.remember(client.id().as_str(), now);
        Ok(())
    }

    /// Deletes every self-registered client idle past the lifetime at `now`, with its tokens;
    /// answers how many went.
    pub(crate) async fn sweep(&self, now: UnixTime) -> Result<u64, StoreError> {
        let before = now.minus(self.lifetime).plus(Duration::from_secs(1));
        let mut deleted = 0;
        loop {
            let idle = self.activity.idle_clients(before, SWEEP_BATCH).await?;
            let batch = idle.len();
            let mut removed = 0;
            for id in idle {
                if let Ok(id) = ClientId::new(&id) {
                    removed += u64::from(self.expire(&id, now).await?);
                }
            }
            deleted += removed;
            // A short batch is the last; one that removed nothing would come back the same.
            if batch < SWEEP_BATCH || removed == 0 {
                return Ok(deleted);
            }
        }
    }

    /// Deletes `id` and revokes its tokens; answers whether it was still registered.
    async fn expire(&self, id: &ClientId, now: UnixTime) -> Result<bool, StoreError> {
        let removed = self.registry.remove_client(id.as_str()).await?;
        // After the removal, so no token can be issued to it in between.
        self.tokens.revoke_client(id.as_str()).await?;
        self.recent.forget(id.as_str());
        if removed {
            self.events
                .record(&Event::new(EventKind::ClientExpired, now).client(id));
        }
        Ok(removed)
    }
}

/// The refusal of an expired client's request.
fn gone() -> OAuthError {
    OAuthError::invalid_client(
        "this client was unused for longer than this server keeps self-registered clients, \
         and is deleted; register again",
    )
}
