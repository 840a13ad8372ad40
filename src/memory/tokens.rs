//! [`MemoryTokenIssuer`]: codes and tokens as SHA-256 digests in sharded maps.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;

use super::{ShardKey, Sharded};
use crate::client::ClientId;
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::secret::{
    AccessToken, AuthorizationCode, RefreshToken, SecretDigest, base64url, base64url_into,
    base64url_len, random_bytes,
};
use crate::store::{
    AccessGrant, Authorization, CodeGrant, CodeRedemption, FamilyId, IssuedTokens, Jti, NewTokens,
    Refresh, RefreshGrant, Rotation, TokenIssuer, User,
};

/// How long a redeemed code is remembered after its expiry, so that a late replay still revokes
/// what the first redemption issued (RFC 6749 §4.1.2).
const REPLAY_MEMORY: Duration = Duration::from_secs(3600);

/// An in-memory [`TokenIssuer`].
///
/// Keeps only SHA-256 digests of codes and tokens. Entries past their expiry are swept as the
/// maps grow, and [`MemoryTokenIssuer::purge_expired`] sweeps everything at once.
#[derive(Default)]
pub struct MemoryTokenIssuer {
    state: Arc<State>,
}

struct State {
    /// Family ids need only be unique within this store, not secret: a counter, not randomness.
    next_family: AtomicU64,
    codes: Sharded<Key, CodeEntry>,
    access: Sharded<Key, AccessEntry>,
    refresh: Sharded<Key, RefreshEntry>,
    families: Sharded<FamilyId, Arc<Family>>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            next_family: AtomicU64::new(0),
            codes: Sharded::new(),
            access: Sharded::new(),
            refresh: Sharded::new(),
            families: Sharded::new(),
        }
    }
}

/// One authorization and everything descending from it. Every client-credentials token has
/// one of its own, so it is kept small: a 64-bit serial instead of the 128-bit id it spreads
/// into, the user (which client-credentials families lack) boxed, and a 32-bit expiry.
struct Family {
    serial: u64,
    client_id: ClientId,
    user: Option<Box<User>>,
    scope: Scope,
    revoked: AtomicBool,
    /// The generation of the family's current refresh token; older ones are rotated.
    generation: AtomicU32,
    /// The latest expiry of anything in the family, in [`Secs`], for sweeping.
    expires_at: AtomicU32,
}

impl Family {
    /// The id: the serial, spread over the shards by its multiplicative hash in the high half.
    fn id(&self) -> FamilyId {
        let serial = self.serial;
        FamilyId(u128::from(serial.wrapping_mul(0x9E37_79B9_7F4A_7C15)) << 64 | u128::from(serial))
    }

    /// The authorization, with `scope` (the family's own or narrower).
    fn authorization(&self, scope: &Scope) -> Authorization {
        Authorization {
            client_id: self.client_id.clone(),
            user: self.user.as_deref().cloned(),
            scope: scope.clone(),
        }
    }

    /// Whether nothing of the family can be used any more at `now`.
    fn is_dead(&self, now: UnixTime) -> bool {
        self.is_revoked() || Secs(self.expires_at.load(Ordering::Acquire)) < now.into()
    }

    fn is_revoked(&self) -> bool {
        self.revoked.load(Ordering::Acquire)
    }

    fn revoke(&self) {
        self.revoked.store(true, Ordering::Release);
    }

    fn extend_to(&self, expires_at: UnixTime) {
        self.expires_at
            .fetch_max(Secs::from(expires_at).0, Ordering::AcqRel);
    }
}

/// One draw from the OS CSPRNG, cut into the two 256-bit secrets one operation may mint (an
/// access token and a refresh token): one `getrandom` call, one ChaCha block in the kernel.
struct Draw([u8; 64]);

impl Draw {
    fn new() -> Result<Self, StoreError> {
        random_bytes::<64>().map(Self)
    }

    /// Secret `slot` (0 or 1) as 43 base64url characters.
    fn secret(&self, slot: usize) -> String {
        base64url(&self.0[slot * 32..slot * 32 + 32])
    }
}

/// A code: live, or redeemed (and remembered for replay detection).
enum CodeEntry {
    Live(LiveCode),
    Redeemed {
        family: Arc<Family>,
        forget_at: UnixTime,
    },
}

/// What a live code is bound to besides its family's authorization, which is not kept twice.
struct LiveCode {
    family: Arc<Family>,
    redirect_uri: String,
    code_challenge: Option<CodeChallenge>,
    issued_at: Secs,
    expires_at: Secs,
}

impl LiveCode {
    fn is_dead(&self, now: UnixTime) -> bool {
        self.expires_at <= now.into() || self.family.is_revoked()
    }

    /// The grant the code was issued for.
    fn into_grant(self) -> CodeGrant {
        CodeGrant {
            authorization: self.family.authorization(&self.family.scope),
            redirect_uri: self.redirect_uri,
            code_challenge: self.code_challenge,
            issued_at: self.issued_at.into(),
            expires_at: self.expires_at.into(),
        }
    }
}

struct AccessEntry {
    family: Arc<Family>,
    /// The token's scope when narrower than its family's (a refresh that asked for less);
    /// `None`, the usual case, for the family's own.
    narrowed: Option<Box<Scope>>,
    issued_at: Secs,
    expires_at: Secs,
}

struct RefreshEntry {
    family: Arc<Family>,
    generation: u32,
    issued_at: Secs,
    expires_at: Secs,
}

/// An access token's `jti`: the second half of its SHA-256 digest, base64url. Unique and
/// random like the token, reveals nothing of it or of the half used as the map key, and costs
/// no storage: it is recomputed from the token whenever the token is presented.
fn jti(token: &AccessToken) -> Jti {
    let mut text = [0u8; base64url_len(16)];
    Jti::new(base64url_into(&token.digest().as_bytes()[16..], &mut text))
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

/// The first 128 bits of a secret's SHA-256 digest: the map key. Half the digest keeps a
/// chance collision at 2^-128 while saving 16 bytes a token; the secret itself is never kept.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key([u8; 16]);

impl Key {
    fn of(digest: SecretDigest) -> Self {
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest.as_bytes()[..16]);
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
        (self.0 >> 64) as usize
    }
}

impl MemoryTokenIssuer {
    /// An empty issuer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes every expired or revoked code, token and family. Optional: the maps also sweep
    /// themselves as they grow.
    pub fn purge_expired(&self, now: UnixTime) {
        let s = &self.state;
        s.codes.retain_live(|e| e.is_dead(now));
        s.access.retain_live(|e| e.is_dead(now));
        s.refresh.retain_live(|e| e.is_dead(now));
        s.families.retain_live(|f| f.is_dead(now));
    }

    /// How many live access tokens, refresh tokens and codes (including remembered redeemed
    /// ones) are held, in that order.
    pub fn len(&self) -> (usize, usize, usize) {
        let s = &self.state;
        (s.access.len(), s.refresh.len(), s.codes.len())
    }

    fn new_family(&self, authorization: &Authorization) -> Arc<Family> {
        Arc::new(Family {
            serial: self.state.next_family.fetch_add(1, Ordering::Relaxed),
            client_id: authorization.client_id.clone(),
            user: authorization.user.clone().map(Box::new),
            scope: authorization.scope.clone(),
            revoked: AtomicBool::new(false),
            generation: AtomicU32::new(0),
            expires_at: AtomicU32::new(0),
        })
    }

    fn remember_family(&self, family: &Arc<Family>, now: UnixTime) {
        self.state
            .families
            .insert(family.id(), Arc::clone(family), |f| f.is_dead(now));
    }

    fn find_family(&self, id: FamilyId) -> Option<Arc<Family>> {
        self.state.families.with(&id, |m| m.get(&id).cloned())
    }

    /// Mints an access token (and a refresh token of `generation` when asked) in `family`, all
    /// cut from one draw of the OS CSPRNG.
    fn mint(
        &self,
        family: &Arc<Family>,
        access_scope: Scope,
        issued_at: UnixTime,
        access_expires_at: UnixTime,
        refresh: Option<(u32, UnixTime)>,
        draw: &Draw,
    ) -> Result<IssuedTokens, StoreError> {
        let access_token = AccessToken::hashed(draw.secret(0));
        let refresh_token = refresh.map(|_| RefreshToken::hashed(draw.secret(1)));
        family.extend_to(access_expires_at);
        self.state.access.insert(
            Key::of(access_token.digest()),
            AccessEntry {
                family: Arc::clone(family),
                narrowed: (access_scope != family.scope).then(|| Box::new(access_scope.clone())),
                issued_at: issued_at.into(),
                expires_at: access_expires_at.into(),
            },
            |e| e.is_dead(issued_at),
        );
        if let (Some(token), Some((generation, expires_at))) = (&refresh_token, refresh) {
            family.extend_to(expires_at);
            self.state.refresh.insert(
                Key::of(token.digest()),
                RefreshEntry {
                    family: Arc::clone(family),
                    generation,
                    issued_at: issued_at.into(),
                    expires_at: expires_at.into(),
                },
                |e| e.is_dead(issued_at),
            );
        }
        Ok(IssuedTokens {
            jti: jti(&access_token),
            access_token,
            refresh_token,
            scope: access_scope,
            family: family.id(),
        })
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
        self.expires_at <= now.into() || self.family.is_revoked()
    }
}

#[async_trait]
impl TokenIssuer for MemoryTokenIssuer {
    async fn issue_code(&self, grant: CodeGrant) -> Result<AuthorizationCode, StoreError> {
        let code = AuthorizationCode::hashed(base64url(&random_bytes::<32>()?));
        let family = self.new_family(&grant.authorization);
        family.extend_to(grant.expires_at.plus(REPLAY_MEMORY));
        let now = grant.issued_at;
        self.remember_family(&family, now);
        self.state.codes.insert(
            Key::of(code.digest()),
            CodeEntry::Live(LiveCode {
                family,
                redirect_uri: grant.redirect_uri,
                code_challenge: grant.code_challenge,
                issued_at: grant.issued_at.into(),
                expires_at: grant.expires_at.into(),
            }),
            |e| e.is_dead(now),
        );
        Ok(code)
    }

    async fn redeem_code(
        &self,
        code: &AuthorizationCode,
        now: UnixTime,
    ) -> Result<CodeRedemption, StoreError> {
        let digest = Key::of(code.digest());
        Ok(self.state.codes.with(&digest, |codes| {
            let Some(entry) = codes.get_mut(&digest) else {
                return CodeRedemption::Invalid;
            };
            match entry {
                CodeEntry::Redeemed { family, .. } => CodeRedemption::Replayed {
                    family: family.id(),
                },
                CodeEntry::Live(code) => {
                    if code.is_dead(now) {
                        codes.remove(&digest);
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

    async fn issue_tokens(&self, request: NewTokens) -> Result<IssuedTokens, StoreError> {
        let draw = Draw::new()?;
        let family = match request.family {
            Some(id) => self
                .find_family(id)
                .ok_or_else(|| StoreError::failed("tokens asked for an unknown family"))?,
            None => {
                let family = self.new_family(&request.authorization);
                // Only a family with a refresh token can be revoked by id later (reuse,
                // revocation); one without is reached through its access token alone.
                if request.refresh_expires_at.is_some() {
                    self.remember_family(&family, request.issued_at);
                }
                family
            }
        };
        let refresh = request
            .refresh_expires_at
            .map(|at| (family.generation.load(Ordering::Acquire), at));
        self.mint(
            &family,
            request.authorization.scope,
            request.issued_at,
            request.access_expires_at,
            refresh,
            &draw,
        )
    }

    async fn find_refresh_token(
        &self,
        token: &RefreshToken,
        now: UnixTime,
    ) -> Result<Option<RefreshGrant>, StoreError> {
        let digest = Key::of(token.digest());
        Ok(self.state.refresh.with(&digest, |map| {
            let entry = map.get(&digest).filter(|e| !e.is_dead(now))?;
            let family = &entry.family;
            Some(RefreshGrant {
                authorization: family.authorization(&family.scope),
                family: family.id(),
                rotated: entry.generation != family.generation.load(Ordering::Acquire),
                issued_at: entry.issued_at.into(),
                expires_at: entry.expires_at.into(),
            })
        }))
    }

    async fn rotate_refresh_token(
        &self,
        token: &RefreshToken,
        request: Refresh,
    ) -> Result<Rotation, StoreError> {
        let digest = Key::of(token.digest());
        let found = self.state.refresh.with(&digest, |map| {
            map.get(&digest)
                .filter(|e| !e.is_dead(request.issued_at))
                .map(|e| (Arc::clone(&e.family), e.generation))
        });
        let Some((family, generation)) = found else {
            return Ok(Rotation::Invalid);
        };
        // The compare-and-swap is the single-use step: one caller moves the family past this
        // token's generation; every other caller finds it moved and is a reuse.
        let swapped = family.generation.compare_exchange(
            generation,
            generation.wrapping_add(1),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        if swapped.is_err() {
            family.revoke();
            return Ok(Rotation::Reused);
        }
        let tokens = self.mint(
            &family,
            request.access_scope,
            request.issued_at,
            request.access_expires_at,
            Some((generation.wrapping_add(1), request.refresh_expires_at)),
            &Draw::new()?,
        )?;
        Ok(Rotation::Rotated(tokens))
    }

    async fn find_access_token(
        &self,
        token: &AccessToken,
        now: UnixTime,
    ) -> Result<Option<AccessGrant>, StoreError> {
        let digest = Key::of(token.digest());
        let found = self.state.access.with(&digest, |map| {
            let entry = map.get(&digest).filter(|e| !e.is_dead(now))?;
            let family = &entry.family;
            Some(AccessGrant {
                authorization: family
                    .authorization(entry.narrowed.as_deref().unwrap_or(&family.scope)),
                jti: Jti::new(""),
                family: family.id(),
                issued_at: entry.issued_at.into(),
                expires_at: entry.expires_at.into(),
            })
        });
        // The `jti` is made outside the shard lock, and only for a token that was found.
        Ok(found.map(|grant| AccessGrant {
            jti: jti(token),
            ..grant
        }))
    }

    async fn revoke_access_token(&self, token: &AccessToken) -> Result<(), StoreError> {
        let digest = Key::of(token.digest());
        self.state.access.with(&digest, |map| map.remove(&digest));
        Ok(())
    }

    async fn revoke_family(&self, family: FamilyId) -> Result<(), StoreError> {
        if let Some(family) = self.find_family(family) {
            family.revoke();
        }
        Ok(())
    }
}

impl fmt::Debug for MemoryTokenIssuer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (access, refresh, codes) = self.len();
        f.debug_struct("MemoryTokenIssuer")
            .field("access_tokens", &access)
            .field("refresh_tokens", &refresh)
            .field("codes", &codes)
            .finish()
    }
}
