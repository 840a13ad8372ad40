//! Password hashing and verification, run off the host's async executor: grantor's own
//! Argon2id hashes, the [`PasswordVerifier`] seam that checks what the host's user table keeps
//! ([`KnownHashes`] by default: Argon2, bcrypt, scrypt, PBKDF2), and the lanes they run on.
//!
//! Verifying an Argon2id hash takes tens of milliseconds of CPU and ~19 MiB of memory on
//! purpose. Run inline, a few concurrent sign-ins would stall every task on the executor's
//! threads, so grantor runs the work on threads of its own, in two lanes that share nothing:
//!
//! - the **user lane** checks user passwords (the sign-in page and the password grant), against
//!   the hash the [`UserStore`](crate::store::UserStore) found or, for an unknown username,
//!   against a dummy hash;
//! - the **client lane** checks client secrets hashed with Argon2id at the token endpoint.
//!
//! A flood of token requests with a wrong client secret therefore fills only the client lane:
//! users keep signing in. (And it hardly fills that: the token endpoint checks one client's
//! uncached secrets one at a time per node and stops checking them after too many failures,
//! see [`client_auth_throttle`](crate::AuthorizationServerBuilder::client_auth_throttle).) Each lane has a fixed number of threads and bounded queues; a check
//! that finds its queue full is refused at once with `temporarily_unavailable` (503) instead of
//! queueing without end, so a guessing flood cannot exhaust memory. The sizes and their
//! defaults are in [`HashingPools`], which
//! [`AuthorizationServerBuilder::hashing_pools`](crate::AuthorizationServerBuilder::hashing_pools)
//! sets. Each server has lanes of its own, started at its first check and ended when it is
//! dropped: nothing of them is process-wide.
//!
//! Inside the user lane, checks against real accounts wait in one queue and the dummy checks
//! for unknown usernames in a smaller one;
//! a thread takes a dummy check only when no real account's check waits. A flood of unknown
//! usernames thus fills the dummy queue (further unknown usernames are answered 503 at once)
//! and cannot delay a real account's check; floods at real accounts are bounded by the
//! per-account [`SignInThrottle`](crate::settings::SignInThrottle). The price: while such a
//! flood lasts, or while real accounts keep every thread busy, an unknown username's answer
//! comes later (or as a 503) than a wrong password's, so timing can tell which usernames exist
//! during it. In quiet times both cost one Argon2 verification, as before.
//!
//! A check whose job panics answers `server_error` (500) to its caller; the thread catches the
//! panic and goes on, so a lane never shrinks.
//!
//! ```
//! use grantor::hash::hash_password;
//!
//! let phc = hash_password("correct horse").unwrap();
//! assert!(phc.starts_with("$argon2id$"));
//! ```

mod formats;
mod lanes;

use std::sync::{Arc, OnceLock};

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2};

use crate::error::StoreError;
use crate::secret::random_bytes;

#[cfg(feature = "test-util")]
pub(crate) use formats::scheme as scheme_of;
pub use formats::{MAX_BCRYPT_COST, MAX_MEMORY_BYTES, MAX_PBKDF2_ITERATIONS};
pub use lanes::HashingPools;
use lanes::{Lane, Pools, Priority};

use crate::secret::Password;
use crate::store::Account;

/// What checking a password against an account found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verification {
    /// Not the account's password (or nothing the verifier could check it against).
    Mismatch,
    /// The account's password.
    Match,
    /// The account's password, and what the account keeps should be replaced: an older
    /// scheme or weaker parameters. grantor hashes the password with its own Argon2id and
    /// hands the hash to the users' [`UserAdmin::set_password_hash`](crate::store::UserAdmin::set_password_hash),
    /// when the server has that seam and
    /// [`rehash_passwords`](crate::AuthorizationServerBuilder::rehash_passwords) is on.
    MatchRehash,
}

impl Verification {
    /// Whether the password is the account's.
    pub fn is_match(self) -> bool {
        self != Self::Mismatch
    }
}

/// Checks a password against what the host's [`UserStore`](crate::store::UserStore) keeps for
/// an account: grantor's sign-in page, the password grant and the device page ask it once the
/// store has found the account (and the throttle has counted the attempt).
///
/// The server calls it on a thread of its user hashing lane, never on the async executor, so
/// it may take its time and may block: a slow hash, a bind to an LDAP directory, a call into a
/// legacy library. The lane bounds how many run at once and how many wait
/// ([`HashingPools`]); a check that finds the queue full is answered 503 without running. An
/// unknown username never reaches it: grantor checks a dummy Argon2id hash instead, at the
/// default's cost.
///
/// [`KnownHashes`], the default, verifies the hashes real tables hold. A host with another
/// scheme, or with no hash at all (a directory), writes its own:
///
/// ```
/// use grantor::hash::{KnownHashes, PasswordVerifier, Verification};
/// use grantor::store::{Account, StoreError};
/// use grantor::Password;
///
/// /// The legacy table's rows start with `legacy:`; everything else is a known hash.
/// struct Legacy;
///
/// impl PasswordVerifier for Legacy {
///     fn verify(&self, account: &Account, password: &Password) -> Result<Verification, StoreError> {
///         match account.password_hash().strip_prefix("legacy:") {
///             // The legacy library's own check would go here.
///             Some(_) => Ok(Verification::Mismatch),
///             None => KnownHashes.verify(account, password),
///         }
///     }
/// }
/// # let _ = Legacy;
/// ```
pub trait PasswordVerifier: Send + Sync + 'static {
    /// Whether `password` is `account`'s, and whether what it keeps should be upgraded. A
    /// failure of the verifier's own (a directory that does not answer) is a
    /// [`StoreError`]: [`StoreError::unavailable`] answers 503, anything else 500; a wrong
    /// password is [`Verification::Mismatch`], never an error.
    fn verify(&self, account: &Account, password: &Password) -> Result<Verification, StoreError>;
}

/// grantor's default [`PasswordVerifier`]: the account's hash in any scheme a user table is
/// likely to hold, verified by the maintained crate of that scheme, in constant time:
///
/// | scheme | as written by |
/// |---|---|
/// | Argon2id, Argon2i, Argon2d PHC strings (`$argon2id$v=19$m=…`) | grantor, `argon2`, argon2-cffi, libsodium, PHP's `PASSWORD_ARGON2I(D)` |
/// | bcrypt (`$2b$`, `$2a$`, `$2y$`, `$2x$`) | Rails' `has_secure_password`, Laravel, PHP's `password_hash`, Node's `bcrypt`, Spring Security |
/// | scrypt and PBKDF2 PHC strings (`$scrypt$…`, `$pbkdf2-sha256$…`, `$pbkdf2-sha512$…`) | the RustCrypto crates |
/// | Django's `pbkdf2_sha256$…` and `scrypt$…` | Django's default hasher, and its scrypt one |
/// | Werkzeug's `pbkdf2:sha256:N$…` (or `sha512`) and `scrypt:N:r:p$…` | Flask and Werkzeug |
///
/// Every scheme but an Argon2id hash at least as strong as grantor's own (m = 19 MiB, t = 2)
/// answers [`Verification::MatchRehash`] on a right password, so a table moves to Argon2id one
/// sign-in at a time. A stronger Argon2id hash is kept, never downgraded.
///
/// A hash whose scheme is unknown or malformed, or whose parameters ask for more than
/// [`MAX_MEMORY_BYTES`], [`MAX_PBKDF2_ITERATIONS`] or [`MAX_BCRYPT_COST`], is not computed: it
/// verifies nothing, and a warning names the account's id and the scheme (never the stored
/// text), so that a row grantor cannot read is seen in the log rather than taken for a wrong
/// password. bcrypt reads at most a password's first 72 bytes, as every bcrypt does.
#[derive(Debug, Clone, Copy, Default)]
pub struct KnownHashes;

impl PasswordVerifier for KnownHashes {
    fn verify(&self, account: &Account, password: &Password) -> Result<Verification, StoreError> {
        let stored = account.password_hash();
        match formats::verify(stored, password.expose_secret()) {
            Ok(verification) => Ok(verification),
            Err(unreadable) => {
                let why = match unreadable {
                    formats::Unreadable::Format => "a scheme grantor cannot read",
                    formats::Unreadable::TooCostly => "parameters past grantor's bounds",
                };
                tracing::warn!(
                    user = %account.user().id(),
                    scheme = formats::scheme(stored),
                    "the account's password hash has {why}: no password can sign it in"
                );
                Ok(Verification::Mismatch)
            }
        }
    }
}

/// Hashes `password` with Argon2id (m = 19 MiB, t = 2, p = 1: OWASP's recommendation) and a
/// random 128-bit salt, as a PHC string. Synchronous and slow by design: for registration and
/// seeding, not per request.
pub fn hash_password(password: &str) -> Result<String, StoreError> {
    let salt = SaltString::encode_b64(&random_bytes::<16>()?).map_err(hash_error)?;
    let phc = Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(hash_error)?;
    Ok(phc.to_string())
}

/// A server's hashing lanes: sized by [`HashingPools`], started at the first check, ended
/// (once what is queued has run) when the server is dropped.
pub(crate) struct Hashing {
    sizes: HashingPools,
    pools: OnceLock<Pools>,
}

impl std::fmt::Debug for Hashing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hashing")
            .field("sizes", &self.sizes)
            .finish_non_exhaustive()
    }
}

impl Hashing {
    pub(crate) fn new(sizes: HashingPools) -> Self {
        Self {
            sizes,
            pools: OnceLock::new(),
        }
    }

    fn pools(&self) -> &Pools {
        self.pools.get_or_init(|| Pools::new(&self.sizes))
    }

    /// Hashes `password` (as [`hash_password`]) on the user lane, as a real account's check:
    /// for the administrator's calls from async code.
    pub(crate) async fn hash(
        &self,
        password: &crate::secret::Password,
    ) -> Result<String, StoreError> {
        let secret = password.expose_secret().to_owned();
        let lane = &self.pools().user;
        lane.run(Priority::Normal, move || hash_password(&secret))
            .await?
    }

    /// Verifies `password` against `account` with `verifier`, on the user lane, before any
    /// waiting dummy check.
    pub(crate) async fn verify_account(
        &self,
        verifier: &Arc<dyn PasswordVerifier>,
        account: Account,
        password: &Password,
    ) -> Result<Verification, StoreError> {
        let verifier = Arc::clone(verifier);
        let password = password.clone();
        let lane = &self.pools().user;
        lane.run(Priority::Normal, move || {
            verifier.verify(&account, &password)
        })
        .await?
    }

    /// Verifies a client secret against its Argon2id PHC string on the client lane, so client
    /// authentication never takes the threads users sign in on.
    pub(crate) async fn verify_client_secret(
        &self,
        phc: &str,
        secret: &str,
    ) -> Result<bool, StoreError> {
        verify_on(&self.pools().client, phc, secret).await
    }

    /// Whether a dummy check would be queued now rather than refused: asked before an unknown
    /// username's attempt is counted, so that an attempt refused unchecked leaves no count.
    /// (Another request may take the place in between; that one is then refused after all.)
    pub(crate) fn has_room_for_dummy(&self) -> bool {
        self.pools().user.has_room(Priority::Low)
    }

    /// Verifies against a hash of a random password: same cost as a real check, always
    /// `false`. Used for unknown usernames so their answer takes as long as a wrong password.
    ///
    /// Runs on the user lane after every waiting check of a real account, from a smaller queue
    /// of its own; when that queue is full it answers [`StoreError::unavailable`] at once (see
    /// the module docs for what that trades).
    pub(crate) async fn verify_against_dummy(&self, password: &str) -> Result<bool, StoreError> {
        static DUMMY: OnceLock<Option<String>> = OnceLock::new();
        let password = password.to_owned();
        let run = self.pools().user.run(Priority::Low, move || {
            // Made on the hashing thread, so the first unknown username does not hash on the
            // executor.
            let dummy = DUMMY.get_or_init(|| {
                let random = random_bytes::<16>().ok()?;
                hash_password(&format!("{random:?}")).ok()
            });
            let Some(dummy) = dummy else {
                return Err(StoreError::failed(
                    "the dummy password hash could not be made",
                ));
            };
            std::hint::black_box(verify_password(dummy, &password));
            Ok(false)
        });
        run.await?
    }
}

async fn verify_on(lane: &Lane, phc: &str, secret: &str) -> Result<bool, StoreError> {
    let phc = phc.to_owned();
    let secret = secret.to_owned();
    lane.run(Priority::Normal, move || verify_argon2(&phc, &secret))
        .await
}

/// Whether `secret` verifies against an Argon2 PHC string: a client secret's verifier, which
/// grantor made itself (no other scheme is taken for clients).
fn verify_argon2(phc: &str, secret: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|hash| {
        Argon2::default()
            .verify_password(secret.as_bytes(), &hash)
            .is_ok()
    })
}

/// argon2's error as a store failure (without its `std` feature it is no `std::error::Error`;
/// that feature would bring a second `getrandom` into every host's build).
fn hash_error(error: argon2::password_hash::Error) -> StoreError {
    StoreError::failed(error.to_string())
}

pub(crate) fn is_argon2id_phc(phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| h.algorithm == Algorithm::Argon2id.ident())
}

/// Whether `password` verifies against a stored hash in any scheme [`KnownHashes`] reads,
/// here and now: synchronous and slow by design, for tools and tests (a server verifies on its
/// own hashing threads). A malformed or unknown hash verifies nothing.
///
/// ```
/// use grantor::hash::{hash_password, verify_password};
///
/// let phc = hash_password("correct horse").unwrap();
/// assert!(verify_password(&phc, "correct horse"));
/// assert!(!verify_password(&phc, "wrong"));
/// ```
pub fn verify_password(phc: &str, password: &str) -> bool {
    formats::verify(phc, password).is_ok_and(Verification::is_match)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_argon2id_and_salted() {
        let a = hash_password("pw").unwrap();
        let b = hash_password("pw").unwrap();
        assert!(is_argon2id_phc(&a));
        assert_ne!(a, b);
        assert!(verify_password(&a, "pw"));
        assert!(!verify_password(&a, "pw2"));
        assert!(!verify_password("not a phc", "pw"));
        assert!(!is_argon2id_phc(
            "$argon2i$v=19$m=16,t=2,p=1$c29tZXNhbHQ$aGFzaA"
        ));
    }

    #[test]
    fn a_servers_lanes_verify_what_was_hashed() {
        let hashing = Hashing::new(HashingPools::default());
        let phc = hash_password("pw").unwrap();
        let account = Account::new(
            crate::store::User::new(crate::store::UserId::new("u1"), "a@b.c"),
            phc,
        );
        let verifier: Arc<dyn PasswordVerifier> = Arc::new(KnownHashes);
        let verify = |pw: &str| {
            let password = Password::new(pw);
            futures_executor_block_on(hashing.verify_account(&verifier, account.clone(), &password))
        };
        assert_eq!(verify("pw").unwrap(), Verification::Match);
        assert_eq!(verify("other").unwrap(), Verification::Mismatch);
        let dummy = futures_executor_block_on(hashing.verify_against_dummy("pw"));
        assert!(!dummy.unwrap());
    }

    /// Polls `future` to completion on this thread (the lanes answer from their own threads).
    fn futures_executor_block_on<F: std::future::Future>(future: F) -> F::Output {
        let waker = std::task::Waker::noop();
        let mut context = std::task::Context::from_waker(waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
                return output;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
