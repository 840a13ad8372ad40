//! Argon2id password hashing, run off the host's async executor.
//!
//! Verifying an Argon2id hash takes tens of milliseconds of CPU and ~19 MiB of memory on
//! purpose. Run inline, a few concurrent sign-ins would stall every task on the executor's
//! threads, so grantor runs the work on threads of its own, in two lanes that share nothing:
//!
//! - the **user lane** checks user passwords (the sign-in page and the password grant, through
//!   [`verify_password`] and [`verify_against_dummy`]) and runs [`run_blocking`] and the
//!   hashing of [`Admin::add_user`](crate::store::Admin::add_user);
//! - the **client lane** checks client secrets hashed with Argon2id at the token endpoint.
//!
//! A flood of token requests with a wrong client secret therefore fills only the client lane:
//! users keep signing in. (And it hardly fills that: the token endpoint checks one client's
//! uncached secrets one at a time per node and stops checking them after too many failures,
//! see [`client_auth_throttle`](crate::AuthorizationServerBuilder::client_auth_throttle).) Each lane has a fixed number of threads and bounded queues; a check
//! that finds its queue full is refused at once with `temporarily_unavailable` (503) instead of
//! queueing without end, so a guessing flood cannot exhaust memory. The sizes and their
//! defaults are in [`HashingPools`]; [`configure`] sets them before the first check.
//!
//! Inside the user lane, checks against real accounts ([`verify_password`]) wait in one queue
//! and the dummy checks for unknown usernames ([`verify_against_dummy`]) in a smaller one;
//! a thread takes a dummy check only when no real account's check waits. A flood of unknown
//! usernames thus fills the dummy queue (further unknown usernames are answered 503 at once)
//! and cannot delay a real account's check; floods at real accounts are bounded by the
//! per-account [`SignInThrottle`](crate::SignInThrottle). The price: while such a
//! flood lasts, or while real accounts keep every thread busy, an unknown username's answer
//! comes later (or as a 503) than a wrong password's, so timing can tell which usernames exist
//! during it. In quiet times both cost one Argon2 verification, as before.
//!
//! A check whose job panics answers `server_error` (500) to its caller; the thread catches the
//! panic and goes on, so a lane never shrinks.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use grantor::hash::{hash_password, verify_password};
//!
//! let phc = hash_password("correct horse").unwrap();
//! assert!(phc.starts_with("$argon2id$"));
//! assert!(verify_password(&phc, "correct horse").await.unwrap());
//! assert!(!verify_password(&phc, "wrong").await.unwrap());
//! # }
//! ```

mod lanes;

use std::sync::{Mutex, OnceLock, PoisonError};

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2};

use crate::error::StoreError;
use crate::secret::random_bytes;

pub use lanes::HashingPools;
use lanes::{Lane, Pools, Priority};

/// Hashes `password` with Argon2id (m = 19 MiB, t = 2, p = 1: OWASP's recommendation) and a
/// random 128-bit salt, as a PHC string. Synchronous and slow by design: for registration and
/// seeding, not per request.
pub fn hash_password(password: &str) -> Result<String, StoreError> {
    let salt = SaltString::encode_b64(&random_bytes::<16>()?).map_err(StoreError::failed)?;
    let phc = Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(StoreError::failed)?;
    Ok(phc.to_string())
}

/// [`hash_password`] on grantor's hashing threads, for hashing from async code.
pub(crate) async fn hash_password_off_executor(
    password: &crate::secret::Password,
) -> Result<String, StoreError> {
    let secret = password.expose_secret().to_owned();
    run_blocking(move || hash_password(&secret)).await?
}

/// Verifies `password` against an Argon2id PHC string on grantor's user lane, before any
/// waiting dummy check. A malformed PHC string verifies nothing. For a host's own
/// [`UserStore`](crate::store::UserStore).
pub async fn verify_password(phc: &str, password: &str) -> Result<bool, StoreError> {
    verify_on(&pools().user, phc, password).await
}

/// Verifies a client secret against its Argon2id PHC string on grantor's client lane, so
/// client authentication never takes the threads users sign in on.
pub(crate) async fn verify_client_secret(phc: &str, secret: &str) -> Result<bool, StoreError> {
    verify_on(&pools().client, phc, secret).await
}

async fn verify_on(lane: &Lane, phc: &str, password: &str) -> Result<bool, StoreError> {
    let phc = phc.to_owned();
    let password = password.to_owned();
    lane.run(Priority::Normal, move || verify_now(&phc, &password))
        .await
}

/// Verifies against a hash of a random password: same cost as a real check, always `false`.
/// Used for unknown usernames so their answer takes as long as a wrong password.
///
/// Runs on the user lane after every waiting check of a real account, from a smaller queue of
/// its own; when that queue is full it answers [`StoreError::unavailable`] at once (see the
/// module docs for what that trades).
pub async fn verify_against_dummy(password: &str) -> Result<bool, StoreError> {
    static DUMMY: OnceLock<Option<String>> = OnceLock::new();
    let password = password.to_owned();
    let run = pools().user.run(Priority::Low, move || {
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
        std::hint::black_box(verify_now(dummy, &password));
        Ok(false)
    });
    run.await?
}

pub(crate) fn is_argon2id_phc(phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| h.algorithm == Algorithm::Argon2id.ident())
}

fn verify_now(phc: &str, password: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(hash) => Argon2::default()
            .verify_password(password.as_bytes(), &hash)
            .is_ok(),
        Err(_) => false,
    }
}

/// Runs CPU-heavy `work` on grantor's user lane (as a real account's check) and awaits its
/// result, on any executor. `unavailable` if the lane's queue is full; `failed` if `work`
/// panics.
pub async fn run_blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, StoreError> {
    pools().user.run(Priority::Normal, work).await
}

/// Sizes grantor's hashing lanes; call it before the first password or secret check (the
/// lanes start then, with [`HashingPools::default`] unless configured). Called again before
/// that, the last sizes win.
///
/// ```
/// use grantor::hash::{HashingPools, configure, verify_password};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let mut pools = HashingPools::default();
/// pools.user_threads = 2;
/// pools.client_threads = 1;
/// configure(pools.clone()).unwrap();
///
/// let phc = grantor::hash::hash_password("pw").unwrap();
/// assert!(verify_password(&phc, "pw").await.unwrap());
/// assert!(configure(pools).is_err()); // the lanes have started
/// # }
/// ```
pub fn configure(pools: HashingPools) -> Result<(), AlreadyRunning> {
    let mut setup = SETUP.lock().unwrap_or_else(PoisonError::into_inner);
    if setup.started {
        return Err(AlreadyRunning);
    }
    setup.chosen = Some(pools);
    Ok(())
}

/// [`configure`] came too late: the hashing lanes have started, with the sizes they had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("grantor's hashing lanes have already started; configure them before the first check")]
pub struct AlreadyRunning;

/// What [`configure`] chose, and whether the lanes have started with it. Read and set under one
/// lock, so a `configure` racing the first check either takes effect or is refused.
struct Setup {
    chosen: Option<HashingPools>,
    started: bool,
}

static SETUP: Mutex<Setup> = Mutex::new(Setup {
    chosen: None,
    started: false,
});

fn pools() -> &'static Pools {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    POOLS.get_or_init(|| {
        let mut setup = SETUP.lock().unwrap_or_else(PoisonError::into_inner);
        setup.started = true;
        Pools::new(&setup.chosen.take().unwrap_or_default())
    })
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
        assert!(verify_now(&a, "pw"));
        assert!(!verify_now(&a, "pw2"));
        assert!(!verify_now("not a phc", "pw"));
        assert!(!is_argon2id_phc(
            "$argon2i$v=19$m=16,t=2,p=1$c29tZXNhbHQ$aGFzaA"
        ));
    }

    #[test]
    fn configure_after_start_is_refused() {
        let _ = pools();
        assert_eq!(configure(HashingPools::default()), Err(AlreadyRunning));
    }
}
