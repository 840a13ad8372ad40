//! The JWT signing keys the key seam holds, as an administrator sees them: listed (`grantor
//! keys list`) and rotated early (`grantor keys rotate`), read from the names and expiries
//! [`RotatingKeys`](super::RotatingKeys) keeps them under, so the command needs no setting of
//! the server's.
//!
//! A period's own key is kept under `grantor:jwk:<alg>:<period>` until `period + 3` periods, so
//! its expiry says the rotation period. An early rotation's key is kept under
//! `grantor:jwk:<alg>:<period>.<n>` for three periods from the moment it was made, so its
//! expiry says when.

use std::sync::Arc;

use super::keys::{SigningAlgorithm, SigningKey};
use super::rotation::generate;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::store::{KeyStore, namespace};

/// What a signing key does at the moment it is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyState {
    /// It signs now (and is published).
    Current,
    /// Published ahead of its period, so that verifiers already know it when it signs.
    Next,
    /// Published so that what it signed still verifies; it signs no more.
    Retiring,
    /// Kept a while longer, no longer published.
    Retired,
}

impl KeyState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Current => "current",
            Self::Next => "next",
            Self::Retiring => "retiring",
            Self::Retired => "retired",
        }
    }
}

/// One signing key as `grantor keys list` shows it: never its material.
#[derive(Debug, Clone)]
pub(crate) struct ListedKey {
    pub(crate) kid: String,
    pub(crate) algorithm: SigningAlgorithm,
    /// When an early rotation made it, or for a key of the schedule the start of its period.
    pub(crate) created: UnixTime,
    pub(crate) state: KeyState,
}

/// A signing key's place, read from its name and expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    name: String,
    algorithm: SigningAlgorithm,
    /// The rotation period, in seconds.
    period: u64,
    /// Which period it belongs to.
    index: u64,
    /// 0 for the period's own key, `n` for the `n`th early rotation.
    generation: usize,
    expires_at: UnixTime,
}

impl Place {
    /// When it was made (an early rotation) or its period starts (the period's own).
    fn created(&self) -> UnixTime {
        let start = self.index.saturating_mul(self.period);
        let made = self
            .expires_at
            .as_secs()
            .saturating_sub(3u64.saturating_mul(self.period));
        UnixTime::from_secs(made.max(start))
    }

    fn state(&self, newest: usize, now: UnixTime) -> KeyState {
        let current = now.as_secs() / self.period;
        match self.index {
            index if index == current && self.generation == newest => KeyState::Current,
            index if index > current => KeyState::Next,
            index if index + 1 >= current => KeyState::Retiring,
            _ => KeyState::Retired,
        }
    }
}

/// `name`'s algorithm, period index and generation, when it names a signing key.
fn parse(name: &str) -> Option<(SigningAlgorithm, u64, usize)> {
    let rest = name.strip_prefix("grantor:jwk:")?;
    let (algorithm, place) = rest.split_once(':')?;
    let algorithm = SigningAlgorithm::from_name(algorithm)?;
    let (index, generation) = match place.split_once('.') {
        Some((index, generation)) => (index, generation.parse().ok()?),
        None => (place, 0),
    };
    Some((algorithm, index.parse().ok()?, generation))
}

/// Every signing key `keys` holds at `now`, placed: the period of an early rotation's key is
/// its period's own key's (a rotation whose period lost its own key is skipped).
async fn places(keys: &dyn KeyStore, now: UnixTime) -> Result<Vec<Place>, StoreError> {
    let named: Vec<(String, UnixTime, (SigningAlgorithm, u64, usize))> = keys
        .key_names(now)
        .await?
        .into_iter()
        .filter_map(|(name, expires_at)| {
            let parsed = parse(&name)?;
            Some((name, expires_at, parsed))
        })
        .collect();
    let period_of = |algorithm: SigningAlgorithm, index: u64| {
        named.iter().find_map(|(_, expires_at, (a, i, g))| {
            let periods = index.checked_add(3)?;
            (*a == algorithm && *i == index && *g == 0 && expires_at.as_secs() % periods == 0)
                .then(|| expires_at.as_secs() / periods)
                .filter(|period| *period > 0)
        })
    };
    Ok(named
        .iter()
        .filter_map(|(name, expires_at, (algorithm, index, generation))| {
            Some(Place {
                name: name.clone(),
                algorithm: *algorithm,
                period: period_of(*algorithm, *index)?,
                index: *index,
                generation: *generation,
                expires_at: *expires_at,
            })
        })
        .collect())
}

/// The newest generation of `place`'s period among `places`.
fn newest(places: &[Place], place: &Place) -> usize {
    places
        .iter()
        .filter(|p| p.algorithm == place.algorithm && p.period == place.period)
        .filter(|p| p.index == place.index)
        .map(|p| p.generation)
        .max()
        .unwrap_or_default()
}

/// Every signing key `keys` (the server's key seam, which opens sealed material) holds at
/// `now`, by algorithm and age.
pub(crate) async fn list(keys: &dyn KeyStore, now: UnixTime) -> Result<Vec<ListedKey>, StoreError> {
    let places = places(keys, now).await?;
    let mut listed = Vec::with_capacity(places.len());
    for place in &places {
        let Some(stored) = keys.find_key(&place.name, now).await? else {
            continue;
        };
        let key = SigningKey::from_stored(&stored).map_err(StoreError::failed)?;
        listed.push(ListedKey {
            kid: key.kid().to_owned(),
            algorithm: place.algorithm,
            created: place.created(),
            state: place.state(newest(&places, place), now),
        });
    }
    listed.sort_by_key(|key| (key.algorithm.as_str(), key.created));
    Ok(listed)
}

/// Rotates early every schedule in use at `now`: for the current period and the next (whose
/// key is published already, and so was as exposed as the current one), a fresh key that signs
/// in their own key's place, kept for three periods. The keys they replace stay published for
/// as long as a normal rotation keeps them. Answers the new current keys.
///
/// Refused past [`MAX_EARLY_ROTATIONS`](namespace::MAX_EARLY_ROTATIONS) in one period, so
/// that the published keys stay bounded.
pub(crate) async fn rotate(
    keys: &dyn KeyStore,
    now: UnixTime,
) -> Result<Vec<ListedKey>, StoreError> {
    let places = places(keys, now).await?;
    let mut rotated = Vec::new();
    for place in &places {
        let current = now.as_secs() / place.period;
        let due = place.index == current || place.index == current + 1;
        if place.generation != 0 || !due {
            continue;
        }
        let key = rotate_period(keys, place, newest(&places, place), now).await?;
        if place.index == current {
            rotated.push(ListedKey {
                kid: key.kid().to_owned(),
                algorithm: place.algorithm,
                created: now,
                state: KeyState::Current,
            });
        }
    }
    Ok(rotated)
}

/// Keeps a fresh key as the next generation of `place`'s period after `newest`.
async fn rotate_period(
    keys: &dyn KeyStore,
    place: &Place,
    newest: usize,
    now: UnixTime,
) -> Result<Arc<SigningKey>, StoreError> {
    let fresh = generate(place.algorithm).await?;
    let material = fresh.to_stored().unwrap_or_default();
    let until = now.plus(std::time::Duration::from_secs(
        3u64.saturating_mul(place.period),
    ));
    // A concurrent rotation may take a generation first: the next one is ours.
    for generation in newest + 1..=namespace::MAX_EARLY_ROTATIONS {
        let name =
            namespace::rotated_signing_key(place.algorithm.as_str(), place.index, generation);
        if keys.insert_key(&name, material, until, now).await? {
            return Ok(Arc::new(fresh));
        }
    }
    Err(StoreError::failed(format!(
        "the {} signing key was rotated early {} times in this period already: wait for the \
         next period",
        place.algorithm.as_str(),
        namespace::MAX_EARLY_ROTATIONS
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;
    use crate::jwt::{RotatingKeys, SigningKeys as _};

    const DAY: u64 = 86_400;

    fn at(secs: u64) -> UnixTime {
        UnixTime::from_secs(secs)
    }

    #[test]
    fn names_parse_to_their_place() {
        assert_eq!(
            parse("grantor:jwk:ES256:20000"),
            Some((SigningAlgorithm::ES256, 20_000, 0))
        );
        assert_eq!(
            parse("grantor:jwk:EdDSA:20000.2"),
            Some((SigningAlgorithm::EdDSA, 20_000, 2))
        );
        for other in [
            "grantor:jwk:ES256:20000:resealed",
            "grantor:jwk:HS256:1",
            "grantor:seal:20000",
            "grantor:jwk:ES256:x",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }

    #[tokio::test]
    async fn an_early_rotation_signs_at_once_and_the_old_key_stays_published() {
        let store: Arc<dyn KeyStore> = Arc::new(MemoryStore::new());
        let now = at(20_000 * DAY + 3_600);
        let keys = RotatingKeys::new(
            SigningAlgorithm::ES256,
            std::time::Duration::from_secs(DAY),
            Arc::clone(&store),
        );
        keys.published_keys(now).await.unwrap();
        let before = keys.signing_key(now).await.unwrap();
        let listed = list(&*store, now).await.unwrap();
        let states: Vec<(&str, KeyState)> = listed
            .iter()
            .map(|key| (key.kid.as_str(), key.state))
            .collect();
        assert_eq!(states[0], (before.kid(), KeyState::Current));
        assert_eq!(states[1].1, KeyState::Next);
        assert_eq!(listed[0].created, at(20_000 * DAY));

        let later = now.plus(std::time::Duration::from_secs(30));
        let rotated = rotate(&*store, later).await.unwrap();
        assert_eq!(rotated.len(), 1, "one schedule in use");
        assert_ne!(rotated[0].kid, before.kid());
        // A fresh process signs with the new key at once; this one within a check interval.
        let fresh = RotatingKeys::new(
            SigningAlgorithm::ES256,
            std::time::Duration::from_secs(DAY),
            Arc::clone(&store),
        );
        assert_eq!(
            fresh.signing_key(later).await.unwrap().kid(),
            rotated[0].kid
        );
        assert_eq!(keys.signing_key(later).await.unwrap().kid(), before.kid());
        let checked = now.plus(crate::jwt::ROTATION_CHECK);
        assert_eq!(
            keys.signing_key(checked).await.unwrap().kid(),
            rotated[0].kid
        );
        // The old key verifies what it signed, on both.
        for node in [&keys, &fresh] {
            let found = node.verification_key(before.kid(), checked).await.unwrap();
            assert!(found.is_some(), "the old key is still published");
        }
        let listed = list(&*store, later).await.unwrap();
        let state_of = |kid: &str| listed.iter().find(|key| key.kid == kid).map(|k| k.state);
        assert_eq!(state_of(before.kid()), Some(KeyState::Retiring));
        assert_eq!(state_of(&rotated[0].kid), Some(KeyState::Current));
        let created = listed.iter().find(|key| key.kid == rotated[0].kid);
        assert_eq!(created.map(|key| key.created), Some(later));
        // The next period's key, as exposed as the current one, was replaced too: the key
        // that signs tomorrow is no key published before the rotation.
        let tomorrow = at(20_001 * DAY + 10);
        let signs_tomorrow = fresh.signing_key(tomorrow).await.unwrap();
        let published_before = states.iter().any(|(kid, _)| *kid == signs_tomorrow.kid());
        assert!(!published_before, "tomorrow's key was rotated too");
    }

    #[tokio::test]
    async fn early_rotations_are_bounded_per_period() {
        let store: Arc<dyn KeyStore> = Arc::new(MemoryStore::new());
        let now = at(20_000 * DAY);
        let keys = RotatingKeys::new(
            SigningAlgorithm::EdDSA,
            std::time::Duration::from_secs(DAY),
            Arc::clone(&store),
        );
        keys.published_keys(now).await.unwrap();
        for _ in 0..namespace::MAX_EARLY_ROTATIONS {
            assert_eq!(rotate(&*store, now).await.unwrap().len(), 1);
        }
        let refused = rotate(&*store, now).await.unwrap_err();
        assert!(refused.to_string().contains("next period"), "{refused}");
        let checked = now.plus(crate::jwt::ROTATION_CHECK);
        let published = keys.published_keys(checked).await.unwrap();
        assert_eq!(
            published.len(),
            2 * (namespace::MAX_EARLY_ROTATIONS + 1),
            "today's and tomorrow's keys, each rotated the most times"
        );
    }
}
