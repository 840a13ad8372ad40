//! Argon2id password hashing, run off the host's async executor.
//!
//! Verifying an Argon2id hash takes tens of milliseconds of CPU and ~19 MiB of memory on
//! purpose. Run inline, a few concurrent sign-ins would stall every task on the executor's
//! threads, so grantor runs the work on a small pool of its own threads (one per core), with a
//! bounded queue: past it, requests fail fast with `temporarily_unavailable` instead of queueing
//! without end (a password-guessing flood cannot exhaust memory).
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

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2};

use crate::error::StoreError;
use crate::secret::random_bytes;

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

/// Verifies `password` against an Argon2id PHC string on grantor's hashing threads. A malformed
/// PHC string verifies nothing.
pub async fn verify_password(phc: &str, password: &str) -> Result<bool, StoreError> {
    let phc = phc.to_owned();
    let password = password.to_owned();
    run_blocking(move || verify_now(&phc, &password)).await
}

/// Verifies against a hash of a random password: same cost as a real check, always `false`.
/// Used for unknown usernames so their answer takes as long as a wrong password.
pub async fn verify_against_dummy(password: &str) -> Result<bool, StoreError> {
    static DUMMY: OnceLock<Option<String>> = OnceLock::new();
    let dummy = DUMMY.get_or_init(|| {
        let random = random_bytes::<16>().ok()?;
        hash_password(&format!("{random:?}")).ok()
    });
    let Some(dummy) = dummy else {
        return Err(StoreError::failed(
            "the dummy password hash could not be made",
        ));
    };
    verify_password(dummy, password).await.map(|_| false)
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

type Job = Box<dyn FnOnce() + Send>;

/// Jobs that may wait per hashing thread before new ones are refused.
const QUEUE_PER_THREAD: usize = 64;

struct Pool {
    jobs: SyncSender<Job>,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = thread::available_parallelism().map_or(1, |n| n.get());
        let (jobs, queue) = sync_channel::<Job>(threads * QUEUE_PER_THREAD);
        let queue = Arc::new(Mutex::new(queue));
        for i in 0..threads {
            let queue = Arc::clone(&queue);
            // If no thread can be spawned, jobs stay queued and callers see `Unavailable` once
            // the queue is full; nothing panics.
            let _ = thread::Builder::new()
                .name(format!("grantor-hash-{i}"))
                .spawn(move || work(&queue));
        }
        Pool { jobs }
    })
}

fn work(queue: &Mutex<Receiver<Job>>) {
    loop {
        // A poisoned lock only means another worker panicked while waiting; the receiver
        // itself is intact.
        let job = match queue.lock() {
            Ok(receiver) => receiver.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

/// Runs CPU-heavy `work` on grantor's hashing threads and awaits its result, on any executor.
pub async fn run_blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, StoreError> {
    let (done, result) = futures_channel::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = done.send(work());
    });
    match pool().jobs.try_send(job) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            return Err(StoreError::unavailable(
                "the password hashing queue is full",
            ));
        }
        Err(TrySendError::Disconnected(_)) => {
            return Err(StoreError::failed("the password hashing threads are gone"));
        }
    }
    result
        .await
        .map_err(|_| StoreError::failed("a password hashing job was dropped"))
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
}
