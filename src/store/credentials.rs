//! The credentials seam: how a password is checked against what the host's user store keeps
//! for an account, and grantor's default, which reads the hashes real user tables hold.

use super::records::Account;
use crate::error::StoreError;
use crate::hash::{Unreadable, Verification, scheme_of, verify_stored};
use crate::secret::Password;

/// Checks a password against what the host's [`UserStore`](crate::store::UserStore) keeps for
/// an account: grantor's sign-in page, the password grant and the device page ask it once the
/// store has found the account (and the throttle has counted the attempt).
///
/// The server calls it on a thread of its user hashing lane, never on the async executor, so
/// it may take its time and may block: a slow hash, a bind to an LDAP directory, a call into a
/// legacy library. The lane bounds how many run at once and how many wait
/// ([`HashingPools`](crate::hash::HashingPools)); a check that finds the queue full is answered 503 without running. An
/// unknown username never reaches it: grantor checks a dummy Argon2id hash instead, at the
/// default's cost.
///
/// [`KnownHashes`], the default, verifies the hashes real tables hold. A host with another
/// scheme, or with no hash at all (a directory), writes its own:
///
/// ```
/// use grantor::store::{KnownHashes, PasswordVerifier, Verification};
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
/// [`MAX_MEMORY_BYTES`](crate::hash::MAX_MEMORY_BYTES), [`MAX_PBKDF2_ITERATIONS`](crate::hash::MAX_PBKDF2_ITERATIONS) or [`MAX_BCRYPT_COST`](crate::hash::MAX_BCRYPT_COST), is not computed: it
/// verifies nothing, and a warning names the account's id and the scheme (never the stored
/// text), so that a row grantor cannot read is seen in the log rather than taken for a wrong
/// password. bcrypt reads at most a password's first 72 bytes, as every bcrypt does.
///
/// Until a table has moved to Argon2id, a wrong password for an account kept in another scheme
/// costs that scheme's check (a bcrypt at cost 12 takes about ten times grantor's Argon2id),
/// while an unknown username costs the dummy Argon2id check: the time of an answer can tell
/// such accounts from unknown names. Every good sign-in closes that gap for its account.
#[derive(Debug, Clone, Copy, Default)]
pub struct KnownHashes;

impl PasswordVerifier for KnownHashes {
    fn verify(&self, account: &Account, password: &Password) -> Result<Verification, StoreError> {
        let stored = account.password_hash();
        match verify_stored(stored, password.expose_secret()) {
            Ok(verification) => Ok(verification),
            Err(unreadable) => {
                let why = match unreadable {
                    Unreadable::Format => "a scheme grantor cannot read",
                    Unreadable::TooCostly => "parameters past grantor's bounds",
                };
                tracing::warn!(
                    user = %account.user().id(),
                    scheme = scheme_of(stored),
                    "the account's password hash has {why}: no password can sign it in"
                );
                Ok(Verification::Mismatch)
            }
        }
    }
}
