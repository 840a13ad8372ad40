//! Refresh rotation in memory, and its retry: under the family's lock, one caller at a time
//! moves the family past a generation; a retry of the last rotation undoes what it issued.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{Key, Secs, Tokens};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::{NewTokens, Rotation};

/// What a family remembers of its last rotation, so that a retry can undo what it issued.
pub(super) struct LastRotation {
    /// The generation of the refresh token the rotation replaced.
    replaced: u32,
    /// When.
    at: Secs,
    /// The access token issued with the family's current refresh token.
    access: Key,
}

impl Tokens {
    pub(crate) fn rotate_refresh_token(
        &self,
        token: &SecretDigest,
        successor: &NewTokens,
        retry_since: Option<UnixTime>,
    ) -> Result<Rotation, StoreError> {
        let key = Key::of(token);
        let now = successor.issued_at;
        let found = self.refresh.with(&key, |map| {
            map.get(&key)
                .filter(|e| !e.is_dead(now))
                .map(|e| (Arc::clone(&e.family), e.generation))
        });
        let Some((family, generation)) = found else {
            return Ok(Rotation::Invalid);
        };
        if family.id() != successor.family.id() {
            return Ok(Rotation::Invalid);
        }
        // The family's lock is the single-use step: one caller at a time moves the family past
        // a generation; every other caller finds it moved.
        let state = family.refresh_state();
        let mut last = state.rotation.lock().unwrap_or_else(|p| p.into_inner());
        let current = state.generation.load(Ordering::Acquire);
        // A retry names the access token the last rotation issued, and that rotation's time
        // (the window runs from it, not from the retry).
        let retry = match last.as_ref() {
            _ if generation == current => None,
            Some(last)
                if last.replaced == generation
                    && retry_since.is_some_and(|since| UnixTime::from(last.at) >= since) =>
            {
                Some((last.access, last.at))
            }
            _ => {
                return Ok(Rotation::Reused {
                    family: family.id(),
                });
            }
        };
        let next = current.wrapping_add(1);
        state.generation.store(next, Ordering::Release);
        if let Some((lost, _)) = retry {
            // The pair the lost answer carried: its access token goes, its refresh token is
            // stale now that the family has moved on.
            self.access.with(&lost, |map| map.remove(&lost));
        }
        *last = Some(LastRotation {
            replaced: generation,
            at: retry.map_or(now.into(), |(_, at)| at),
            access: Key::of(&successor.access_token),
        });
        // Kept before the lock goes, so that a concurrent retry that removes this access
        // token finds it already there.
        self.keep(&family, successor, next);
        drop(last);
        Ok(if retry.is_some() {
            Rotation::Retried
        } else {
            Rotation::Rotated
        })
    }
}
