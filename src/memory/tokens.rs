//! The in-memory token seam: codes and tokens under their SHA-256 digests in sharded maps.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::sharded::{ShardKey, Sharded};

mod rotation;
mod terms;

use crate::audience::Audience;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::store::{
    AccessGrant, Actor, Authorization, CodeGrant, CodeRedemption, Family, FamilyId, JwkThumbprint,
    NewTokens, RefreshGrant, SignInFacts, TokenBinding, User, UserAuthentication,
};
use rotation::LastRotation;
use terms::{Interned, Terms};

/// How long a redeemed code is remembered after its expiry, so that a late replay still revokes
/// what the first redemption issued (RFC 6749 §4.1.2).
pub(crate) const REPLAY_MEMORY: Duration = Duration::from_secs(3600);

/// Codes, tokens and families. Entries past their expiry are swept as the maps grow, and
/// [`Tokens::purge_expired`] sweeps everything at once.
pub(crate) struct Tokens {
    codes: Sharded<Key, CodeEntry>,
    access: Sharded<Key, AccessEntry>,
    refresh: Sharded<Key, RefreshEntry>,
    families: Sharded<FamilyId, Arc<FamilyEntry>>,
    /// The client, scope and audience of families, each kept once.
    terms: Interned,
}

impl Default for Tokens {
    fn default() -> Self {
        Self {
            codes: Sharded::new(),
            access: Sharded::new(),
            refresh: Sharded::new(),
            families: Sharded::new(),
            terms: Interned::default(),
        }
    }
}

/// One authorization and everything descending from it. Every client-credentials token has
/// one of its own, so it is kept small (72 bytes with its reference counts): the client, scope
/// and audience shared with every family that has the same three, the user and their sign-in
/// (which client-credentials families lack) boxed, 32-bit times, and the rotation state only
/// once the family has a refresh token.
///
/// `repr(C)` keeps the fields a lookup reads (id, terms, subject) together at the front.
#[repr(C)]
struct FamilyEntry {
    id: [u8; 16],
    terms: Arc<Terms>,
    /// `None` when the family has neither a user nor a sign-in.
    subject: Option<Box<Subject>>,
    /// Set with the family's first refresh token.
    refresh: OnceLock<Box<RefreshState>>,
    /// The latest expiry of anything in the family, in [`Secs`], for sweeping.
    expires_at: AtomicU32,
    revoked: AtomicBool,
}

/// Whom a family is for and how they signed in: its own, never shared (a sign-in's time
/// differs from every other's), beside the shared terms.
struct Subject {
    user: Option<User>,
    authentication: Option<UserAuthentication>,
}

/// What a family with refresh tokens keeps for their rotation.
struct RefreshState {
    /// The generation of the family's current refresh token; older ones are rotated.
    generation: AtomicU32,
    /// The family's absolute end in [`Secs`]; 0 while it has none.
    ends_at: AtomicU32,
    /// The last rotation, for a retry of it; `None` before the first. Rotations of one family
    /// happen under this lock.
    rotation: Mutex<Option<LastRotation>>,
}

impl FamilyEntry {
    fn new(id: FamilyId, terms: Arc<Terms>, authorization: &Authorization) -> Arc<Self> {
        Arc::new(Self {
            id: id.to_bytes(),
            terms,
            subject: match (&authorization.user, &authorization.authentication) {
                (None, None) => None,
                (user, authentication) => Some(Box::new(Subject {
                    user: user.clone(),
                    authentication: authentication.clone(),
                })),
            },
            refresh: OnceLock::new(),
            expires_at: AtomicU32::new(0),
            revoked: AtomicBool::new(false),
        })
    }

    /// The rotation state, made with the first refresh token.
    fn refresh_state(&self) -> &RefreshState {
        self.refresh.get_or_init(|| {
            Box::new(RefreshState {
                generation: AtomicU32::new(0),
                ends_at: AtomicU32::new(0),
                rotation: Mutex::new(None),
            })
        })
    }

    /// The generation of the family's current refresh token (0 before the first).
    fn generation(&self) -> u32 {
        self.refresh
            .get()
            .map_or(0, |state| state.generation.load(Ordering::Acquire))
    }

    fn ends_at(&self) -> Option<UnixTime> {
        match self.refresh.get()?.ends_at.load(Ordering::Acquire) {
            0 => None,
            secs => Some(Secs(secs).into()),
        }
    }

    /// Whether the family has reached its absolute end at `now`.
    fn has_ended(&self, now: UnixTime) -> bool {
        self.ends_at().is_some_and(|end| end <= now)
    }

    fn id(&self) -> FamilyId {
        FamilyId::from_bytes(self.id)
    }

    /// The family's own authorization.
    fn authorization(&self) -> Authorization {
        self.narrowed_authorization(None)
    }

    /// The authorization, with a token's narrower scope and audience when it has them.
    fn narrowed_authorization(&self, narrowed: Option<&OwnTerms>) -> Authorization {
        let (scope, audience) = match narrowed {
            Some(narrowed) => (&narrowed.scope, &narrowed.audience),
            None => (&self.terms.scope, &self.terms.audience),
        };
        let subject = self.subject.as_deref();
        Authorization::new(
            self.terms.client_id.clone(),
            subject.and_then(|s| s.user.clone()),
            scope.clone(),
        )
        .with_audience(audience.clone())
        .with_authentication(subject.and_then(|s| s.authentication.clone()))
    }

    /// Whether nothing of the family can be used any more at `now`.
    fn is_dead(&self, now: UnixTime) -> bool {
        self.is_revoked()
            || Secs(self.expires_at.load(Ordering::Acquire)) < now.into()
            || self.has_ended(now)
    }

    fn is_revoked(&self) -> bool {
        self.revoked.load(Ordering::Acquire)
    }

    fn extend_to(&self, expires_at: UnixTime) {
        self.expires_at
            .fetch_max(Secs::from(expires_at).0, Ordering::AcqRel);
    }
}

/// A code: live, or redeemed (and remembered for replay detection).
enum CodeEntry {
    Live(LiveCode),
    Redeemed {
        family: Arc<FamilyEntry>,
        forget_at: UnixTime,
    },
}

/// What a live code is bound to besides its family's authorization, which is not kept twice.
struct LiveCode {
    family: Arc<FamilyEntry>,
    redirect_uri: String,
    code_challenge: Option<CodeChallenge>,
    issued_at: Secs,
    expires_at: Secs,
    /// An OpenID Connect code's sign-in facts, boxed: most codes have none.
    openid: Option<Box<SignInFacts>>,
    /// The DPoP key the code is bound to (RFC 9449 §10).
    dpop_jkt: Option<JwkThumbprint>,
}

impl LiveCode {
    fn is_dead(&self, now: UnixTime) -> bool {
        self.expires_at <= now.into() || self.family.is_revoked()
    }

    /// The grant the code was issued for.
    fn into_grant(self) -> CodeGrant {
        CodeGrant::new(
            self.family.authorization(),
            self.redirect_uri,
            self.code_challenge,
            self.issued_at.into(),
            self.expires_at.into(),
        )
        .with_openid(self.openid.map(|facts| *facts))
        .bound_to(self.dpop_jkt)
    }
}

struct AccessEntry {
    family: Arc<FamilyEntry>,
    /// The token's own terms when they differ from its family's (a code exchange or refresh
    /// that asked for less, or a bound token); `None`, the usual case, for the family's.
    own: Option<Box<OwnTerms>>,
    issued_at: Secs,
    expires_at: Secs,
}

/// An access token's own scope and audience (its family's, or narrower), binding and actor.
struct OwnTerms {
    scope: Scope,
    audience: Audience,
    binding: Option<TokenBinding>,
    actor: Option<Actor>,
}

struct RefreshEntry {
    family: Arc<FamilyEntry>,
    generation: u32,
    issued_at: Secs,
    expires_at: Secs,
    /// The DPoP key or certificate the token is bound to (a public client's, RFC 9449 §5,
    /// RFC 8705 §4), boxed: most refresh tokens have none, and stay the size they were.
    binding: Option<Box<TokenBinding>>,
}

/// Seconds since the Unix epoch in 32 bits (enough until 2106; later instants saturate), so
/// entries stay small: there are millions of them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Secs(u32);

impl From<UnixTime> for Secs {
    fn from(time: UnixTime) -> Self {
        Self(u32::try_from(time.as_secs()).unwrap_or(u32::MAX))
    }
}

impl From<Secs> for UnixTime {
    fn from(secs: Secs) -> Self {
        UnixTime::from_secs(u64::from(secs.0))
    }
}

/// 128 bits of a secret's digest, after the issue time a minted token's digest begins with
/// ([`SecretDigest::of_token`]): the map key, bits of SHA-256 whichever the token's shape. Half
/// the digest keeps a chance collision at 2^-128 while saving 16 bytes a token; the secret
/// itself is never kept.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key([u8; 16]);

/// Where the key starts in a digest: past the 6 bytes of a minted token's issue time.
const KEY_START: usize = 6;

impl Key {
    fn of(digest: &SecretDigest) -> Self {
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest.as_bytes()[KEY_START..KEY_START + 16]);
        Self(key)
    }
}

impl std::hash::Hash for Key {
    // Digest bits are uniformly distributed, and only digests of secrets grantor minted are
    // inserted, so eight of them are a perfect hash nobody can aim at.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(word));
    }
}

impl ShardKey for Key {
    fn shard(&self) -> usize {
        // Bytes 0..8 feed the hash; the shard comes from other bits.
        usize::from(self.0[8])
    }
}

impl ShardKey for FamilyId {
    fn shard(&self) -> usize {
        // The low 64 bits of a family id are random (the high ones start with its time).
        self.as_u128() as usize
    }
}

impl CodeEntry {
    fn is_dead(&self, now: UnixTime) -> bool {
        match self {
            Self::Live(code) => code.is_dead(now),
            Self::Redeemed { forget_at, .. } => *forget_at <= now,
        }
    }
}

impl AccessEntry {
    fn is_dead(&self, now: UnixTime) -> bool {
        self.expires_at <= now.into() || self.family.is_revoked()
    }
}

impl RefreshEntry {
    fn is_dead(&self, now: UnixTime) -> bool {
        self.expires_at <= now.into() || self.family.is_revoked() || self.family.has_ended(now)
    }
}

impl Tokens {
    /// Removes every expired or revoked code, token and family; answers how many entries went.
    pub(crate) fn purge_expired(&self, now: UnixTime) -> usize {
        self.codes.retain_live(|e| e.is_dead(now))
            + self.access.retain_live(|e| e.is_dead(now))
            + self.refresh.retain_live(|e| e.is_dead(now))
            + self.families.retain_live(|f| f.is_dead(now))
            + self.terms.sweep()
    }

    /// How many live access tokens, refresh tokens and codes (including remembered redeemed
    /// ones) are held, in that order.
    pub(crate) fn len(&self) -> (usize, usize, usize) {
        (self.access.len(), self.refresh.len(), self.codes.len())
    }

    fn remember_family(&self, family: &Arc<FamilyEntry>, now: UnixTime) {
        self.families
            .insert(family.id(), Arc::clone(family), |f| f.is_dead(now));
    }

    fn find_family(&self, id: FamilyId) -> Option<Arc<FamilyEntry>> {
        self.families.with(&id, |m| m.get(&id).cloned())
    }

    /// Keeps `tokens` in `family`, the refresh token (if any) as `generation`.
    fn keep(&self, family: &Arc<FamilyEntry>, tokens: &NewTokens, generation: u32) {
        let issued_at = tokens.issued_at;
        if tokens.refresh_token.is_some() {
            let state = family.refresh_state();
            if let Some(ends_at) = tokens.family_ends_at {
                // Fixed by the first refresh token, never moved.
                let end = Secs::from(ends_at).0.max(1);
                let _ = state
                    .ends_at
                    .compare_exchange(0, end, Ordering::AcqRel, Ordering::Acquire);
            }
        }
        let Authorization {
            scope, audience, ..
        } = &tokens.authorization;
        let differs = *scope != family.terms.scope || *audience != family.terms.audience;
        let own = (differs || tokens.binding.is_some() || tokens.actor.is_some()).then(|| {
            Box::new(OwnTerms {
                scope: scope.clone(),
                audience: audience.clone(),
                binding: tokens.binding,
                actor: tokens.actor.clone(),
            })
        });
        family.extend_to(tokens.expires_at());
        self.access.insert(
            Key::of(&tokens.access_token),
            AccessEntry {
                family: Arc::clone(family),
                own,
                issued_at: issued_at.into(),
                expires_at: tokens.access_expires_at.into(),
            },
            |e| e.is_dead(issued_at),
        );
        if let Some(refresh) = &tokens.refresh_token {
            self.refresh.insert(
                Key::of(&refresh.digest),
                RefreshEntry {
                    family: Arc::clone(family),
                    generation,
                    issued_at: issued_at.into(),
                    expires_at: refresh.expires_at.into(),
                    binding: refresh.binding.map(Box::new),
                },
                |e| e.is_dead(issued_at),
            );
        }
    }
}

/// The token seam's answers, synchronous: nothing here waits, so
/// [`MemoryStore`](super::MemoryStore)'s `TokenIssuer` calls them without a future of their own.
impl Tokens {
    pub(crate) fn insert_code(
        &self,
        code: &SecretDigest,
        family: FamilyId,
        grant: CodeGrant,
    ) -> Result<(), StoreError> {
        let terms = self.terms.of(&grant.authorization);
        let family = FamilyEntry::new(family, terms, &grant.authorization);
        family.extend_to(grant.expires_at.plus(REPLAY_MEMORY));
        let now = grant.issued_at;
        self.remember_family(&family, now);
        self.codes.insert(
            Key::of(code),
            CodeEntry::Live(LiveCode {
                family,
                redirect_uri: grant.redirect_uri,
                code_challenge: grant.code_challenge,
                issued_at: grant.issued_at.into(),
                expires_at: grant.expires_at.into(),
                openid: grant.openid.map(Box::new),
                dpop_jkt: grant.dpop_jkt,
            }),
            |e| e.is_dead(now),
        );
        Ok(())
    }

    pub(crate) fn redeem_code(
        &self,
        code: &SecretDigest,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError> {
        let key = Key::of(code);
        Ok(self.codes.with(&key, |codes| {
            let Some(entry) = codes.get_mut(&key) else {
                return CodeRedemption::Invalid;
            };
            match entry {
                CodeEntry::Redeemed { family, .. } => CodeRedemption::Replayed {
                    family: family.id(),
                },
                CodeEntry::Live(code) => {
                    if code.is_dead(now) {
                        codes.remove(&key);
                        return CodeRedemption::Invalid;
                    }
                    let redeemed = CodeEntry::Redeemed {
                        family: Arc::clone(&code.family),
                        forget_at: UnixTime::from(code.expires_at).plus(REPLAY_MEMORY),
                    };
                    match std::mem::replace(entry, redeemed) {
                        CodeEntry::Live(code) => CodeRedemption::Redeemed {
                            family: code.family.id(),
                            grant: code.into_grant(),
                        },
                        // Provably unreachable: the entry was matched as `Live` above under the
                        // same lock; answering `Invalid` keeps this total without a panic.
                        CodeEntry::Redeemed { .. } => CodeRedemption::Invalid,
                    }
                }
            }
        }))
    }

    pub(crate) fn insert_tokens(&self, tokens: &NewTokens) -> Result<(), StoreError> {
        let family = match tokens.family {
            Family::Existing(id) => self
                .find_family(id)
                .ok_or_else(|| StoreError::failed("tokens asked for an unknown family"))?,
            Family::New(id) => {
                let terms = self.terms.of(&tokens.authorization);
                let family = FamilyEntry::new(id, terms, &tokens.authorization);
                // Only a family with a refresh token can be revoked by id later (reuse,
                // revocation); one without is reached through its access token alone.
                if tokens.refresh_token.is_some() {
                    self.remember_family(&family, tokens.issued_at);
                }
                family
            }
        };
        let generation = family.generation();
        self.keep(&family, tokens, generation);
        Ok(())
    }

    pub(crate) fn find_refresh_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError> {
        let key = Key::of(token);
        Ok(self.refresh.with(&key, |map| {
            let entry = map.get(&key).filter(|e| !e.is_dead(now))?;
            let family = &entry.family;
            Some(
                RefreshGrant::new(
                    family.authorization(),
                    family.id(),
                    entry.generation != family.generation(),
                    entry.issued_at.into(),
                    entry.expires_at.into(),
                )
                .with_family_end(family.ends_at())
                .bound_to(entry.binding.as_deref().copied()),
            )
        }))
    }

    pub(crate) fn find_access_token(
        &self,
        token: &SecretDigest,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        let key = Key::of(token);
        Ok(self.access.with(&key, |map| {
            let entry = map.get(&key).filter(|e| !e.is_dead(now))?;
            let family = &entry.family;
            let own = entry.own.as_deref();
            Some(
                AccessGrant::new(
                    family.narrowed_authorization(own),
                    family.id(),
                    entry.issued_at.into(),
                    entry.expires_at.into(),
                )
                .bound_to(own.and_then(|own| own.binding))
                .acting(own.and_then(|own| own.actor.clone())),
            )
        }))
    }

    pub(crate) fn revoke_access_token(&self, token: &SecretDigest) -> Result<(), StoreError> {
        let key = Key::of(token);
        self.access.with(&key, |map| map.remove(&key));
        Ok(())
    }

    /// Revokes every family of `client_id`, for a client's deletion: a scan of the families,
    /// and of the access tokens, whose families without a refresh token (client credentials)
    /// live only in them.
    pub(crate) fn revoke_client(&self, client_id: &str) -> u64 {
        let mut revoked = 0;
        let mut revoke = |family: &FamilyEntry| {
            if family.terms.client_id.as_str() == client_id
                && !family.revoked.swap(true, Ordering::AcqRel)
            {
                revoked += 1;
            }
        };
        self.families.for_each(|family| revoke(family));
        self.access.for_each(|entry| revoke(&entry.family));
        revoked
    }

    /// Revokes `family`. A family without a refresh token or a code (client credentials, the
    /// implicit grant) is in no map of families but lives in its access tokens alone (that is
    /// what keeps such a token small), so for a family the map does not know, the access tokens
    /// are scanned, as [`revoke_client`](Self::revoke_client) scans them. Grantor revokes such a
    /// family only when a signed-in user's session ends (its grants, one scan each).
    pub(crate) fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
        if let Some(family) = self.find_family(family) {
            family.revoked.store(true, Ordering::Release);
            return Ok(());
        }
        self.access.for_each(|entry| {
            if entry.family.id() == family {
                entry.family.revoked.store(true, Ordering::Release);
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_stays_72_bytes_with_its_reference_counts() {
        // What the doc of `FamilyEntry` promises: a user's sign-in rides in the box a
        // client-credentials family does without, so such a family costs what it did.
        assert_eq!(std::mem::size_of::<FamilyEntry>() + 16, 72);
    }

    #[test]
    fn a_binding_costs_an_unbound_token_nothing() {
        // A bound access token's binding rides in its boxed own terms, a refresh token's in a
        // box of its own: an unbound token's entry is the size it was with DPoP keys alone.
        use std::mem::size_of;
        assert_eq!(
            size_of::<Option<TokenBinding>>(),
            size_of::<Option<JwkThumbprint>>()
        );
        assert_eq!(size_of::<AccessEntry>(), 24);
        assert_eq!(size_of::<RefreshEntry>(), 32);
    }
}
