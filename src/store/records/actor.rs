//! Who acts for a token's subject (RFC 8693 §4.1): the `act` claim of a token issued by
//! delegation, and how a store keeps it.

use std::fmt;

use serde::{Deserialize, Serialize};
use smol_str::SmolStr;

/// The actor of a token issued by delegation (RFC 8693 §4.1 `act`): the party that acts for
/// the token's subject, and the prior actors it acts through.
///
/// A chain of subjects, the current actor first; each is a `sub` as grantor writes one (a
/// user's id, or a client's id for a token without a user). Introspection and JWT access
/// tokens write it as nested `act` claims, the outermost naming the current actor. At most
/// [`Actor::MAX_DEPTH`] actors deep, so a chain of exchanges cannot grow without bound.
///
/// ```
/// use grantor::store::Actor;
///
/// let service = Actor::new("service-client").unwrap();
/// let chain = Actor::new("gateway").unwrap().then(&service).unwrap();
/// assert_eq!(chain.subject(), "gateway");
/// assert_eq!(chain.to_stored(), r#"{"sub":"gateway","act":{"sub":"service-client"}}"#);
/// assert_eq!(Actor::from_stored(&chain.to_stored()), Some(chain));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Actor {
    /// The current actor first; never empty, at most [`Actor::MAX_DEPTH`] long.
    chain: Vec<SmolStr>,
}

/// One level of the claim as RFC 8693 §4.1 writes it.
#[derive(Serialize, Deserialize)]
struct ActClaim {
    sub: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    act: Option<Box<ActClaim>>,
}

impl Actor {
    /// The most actors one chain names; a longer delegation is refused.
    pub const MAX_DEPTH: usize = 8;

    /// An actor naming `subject` alone; `None` for an empty subject.
    pub fn new(subject: &str) -> Option<Self> {
        (!subject.is_empty()).then(|| Self {
            chain: vec![SmolStr::new(subject)],
        })
    }

    /// This actor acting through `prior` (whose actors come after this one's); `None` when the
    /// chain would be deeper than [`Actor::MAX_DEPTH`].
    pub fn then(mut self, prior: &Actor) -> Option<Self> {
        if self.chain.len() + prior.chain.len() > Self::MAX_DEPTH {
            return None;
        }
        self.chain.extend(prior.chain.iter().cloned());
        Some(self)
    }

    /// The current actor's subject: the outermost `act.sub`.
    pub fn subject(&self) -> &str {
        self.chain.first().map_or("", SmolStr::as_str)
    }

    /// Every actor's subject, the current one first.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.chain.iter().map(SmolStr::as_str)
    }

    /// The claim as JSON text, what a store keeps: `{"sub":…,"act":{…}}`.
    pub fn to_stored(&self) -> String {
        // A tree of strings cannot fail to serialize.
        serde_json::to_string(&self.claim()).unwrap_or_default()
    }

    /// The actor a store kept as [`Actor::to_stored`] gave it; `None` if it is not one.
    pub fn from_stored(stored: &str) -> Option<Self> {
        let claim: ActClaim = serde_json::from_str(stored).ok()?;
        Self::from_claim(claim)
    }

    /// The nested claims, the current actor outermost.
    fn claim(&self) -> ActClaim {
        let mut claim: Option<Box<ActClaim>> = None;
        for subject in self.chain.iter().rev() {
            claim = Some(Box::new(ActClaim {
                sub: subject.to_string(),
                act: claim,
            }));
        }
        claim.map_or_else(
            || ActClaim {
                sub: String::new(),
                act: None,
            },
            |claim| *claim,
        )
    }

    fn from_claim(claim: ActClaim) -> Option<Self> {
        let mut chain = Vec::new();
        let mut next = Some(Box::new(claim));
        while let Some(claim) = next {
            if claim.sub.is_empty() || chain.len() == Self::MAX_DEPTH {
                return None;
            }
            chain.push(SmolStr::new(&claim.sub));
            next = claim.act;
        }
        Some(Self { chain })
    }
}

impl fmt::Debug for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Actor").field(&self.chain).finish()
    }
}

impl Serialize for Actor {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.claim().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Actor {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let claim = ActClaim::deserialize(deserializer)?;
        Self::from_claim(claim)
            .ok_or_else(|| serde::de::Error::custom("an act claim without sub or too deep"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_nests_the_current_actor_outermost_and_round_trips() {
        let chain = Actor::new("b")
            .unwrap()
            .then(&Actor::new("c").unwrap())
            .unwrap();
        let chain = Actor::new("a").unwrap().then(&chain).unwrap();
        let stored = chain.to_stored();
        assert_eq!(stored, r#"{"sub":"a","act":{"sub":"b","act":{"sub":"c"}}}"#);
        assert_eq!(Actor::from_stored(&stored), Some(chain.clone()));
        assert_eq!(chain.iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(serde_json::to_string(&chain).unwrap(), stored);
    }

    #[test]
    fn chains_stay_bounded_and_malformed_claims_are_refused() {
        let one = Actor::new("x").unwrap();
        let mut deep = one.clone();
        for _ in 1..Actor::MAX_DEPTH {
            deep = Actor::new("x").unwrap().then(&deep).unwrap();
        }
        assert!(Actor::new("y").unwrap().then(&deep).is_none());
        assert!(Actor::new("").is_none());
        let too_deep = format!(
            "{}\"sub\":\"z\"{}",
            "{\"sub\":\"z\",\"act\":".repeat(8) + "{",
            "}".repeat(9)
        );
        assert!(Actor::from_stored(&too_deep).is_none());
        for bad in [
            "",
            "{}",
            r#"{"sub":""}"#,
            r#"{"sub":1}"#,
            "[]",
            "{\"sub\":\"a\",\"act\":{}}",
        ] {
            assert!(Actor::from_stored(bad).is_none(), "{bad}");
        }
        assert!(Actor::from_stored(&deep.to_stored()).is_some());
    }
}
