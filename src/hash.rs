//! Password hashing and verification, run off the host's async executor: grantor's own
//! Argon2id hashes, the schemes a host's user table may keep (read by
//! [`KnownHashes`](crate::store::KnownHashes), the default
//! [`PasswordVerifier`](crate::store::PasswordVerifier)), and the lanes they run on.
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

use std::sync::OnceLock;

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2};

use crate::error::StoreError;
use crate::secret::random_bytes;

pub use formats::Verification;
pub use formats::{MAX_BCRYPT_COST, MAX_MEMORY_BYTES, MAX_PBKDF2_ITERATIONS};
pub(crate) use formats::{Unreadable, scheme as scheme_of, verify as verify_stored};
pub use lanes::HashingPools;
use lanes::{Lane, Pools, Priority};

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

    /// Runs `job` on the user lane (a password check the verifier does), before any waiting
    /// dummy check; refused at once (`unavailable`) when the lane's queue is full.
    pub(crate) async fn on_user_lane<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        self.pools().user.run(Priority::Normal, job).await
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

/// Whether `password` verifies against a stored hash in any scheme [`KnownHashes`](crate::store::KnownHashes) reads,
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
        let verify = |pw: &str| {
            let (phc, pw) = (phc.clone(), pw.to_owned());
            futures_executor_block_on(hashing.on_user_lane(move || verify_password(&phc, &pw)))
        };
        assert!(verify("pw").unwrap());
        assert!(!verify("other").unwrap());
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
