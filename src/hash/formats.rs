//! The password hashes real user tables hold, recognised by their text and verified by the
//! maintained crates of the field: Argon2 (every variant, PHC), scrypt and PBKDF2 (PHC, and the
//! forms Django and Werkzeug write), and bcrypt's modular crypt. grantor parses only the
//! framing (which scheme, which parameters); every hash is computed by `argon2`, `scrypt`,
//! `pbkdf2` or `bcrypt`, and every comparison is constant-time.
//!
//! A stored hash is the host's data, not the caller's, but its parameters decide what a check
//! costs: a hash asking for more than [`MAX_MEMORY_BYTES`] of memory or more than the work
//! bounds below is not computed (it verifies nothing, and a warning names the account and the
//! scheme), so one odd row cannot take a hashing thread for minutes or its memory for gigabytes.

use argon2::password_hash::{PasswordHash, PasswordVerifier as _};
use argon2::{Algorithm, Argon2};
use base64::Engine as _;
use sha2::{Sha256, Sha512};
use subtle::ConstantTimeEq as _;

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

/// The most memory a stored hash's parameters may ask of one check (Argon2's `m`, scrypt's
/// `128·r·N`): 256 MiB.
pub const MAX_MEMORY_BYTES: u64 = 256 * 1024 * 1024;

/// The most PBKDF2 iterations a stored hash may ask (Django 5.2 writes 1,000,000).
pub const MAX_PBKDF2_ITERATIONS: u32 = 10_000_000;

/// The highest bcrypt cost a stored hash may ask (each step doubles the work; 12 is common).
pub const MAX_BCRYPT_COST: u32 = 16;

/// The most passes Argon2 (`t`) and the most lanes (`p`) a stored hash may ask.
const MAX_ARGON2_PASSES: u32 = 64;
const MAX_PARALLELISM: u32 = 16;

/// grantor's own Argon2id parameters (OWASP's): m = 19 MiB, t = 2. An Argon2id hash doing at
/// least this much work (memory × passes) is kept; a weaker one is upgraded.
const OWN_MEMORY_KIB: u32 = 19 * 1024;
const OWN_PASSES: u32 = 2;

/// Why a stored hash was not computed: its scheme is unknown or malformed, or it asks for more
/// than the bounds above. Logged (with the scheme only, never the hash), never shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// No scheme grantor knows, or a known one malformed.
    Format,
    /// Parameters past the bounds.
    TooCostly,
}

/// Verifies `password` against `stored`, whatever known scheme it is in.
pub(crate) fn verify(stored: &str, password: &str) -> Result<Verification, Unreadable> {
    let stored = stored.trim();
    if stored.starts_with("$2") {
        return bcrypt_verify(stored, password);
    }
    if stored.starts_with('$') {
        return phc_verify(stored, password);
    }
    if let Some(rest) = stored.strip_prefix("pbkdf2_sha256$") {
        return django_pbkdf2(rest, password);
    }
    if let Some(rest) = stored.strip_prefix("scrypt$") {
        return django_scrypt(rest, password);
    }
    if let Some(rest) = stored.strip_prefix("pbkdf2:") {
        return werkzeug_pbkdf2(rest, password);
    }
    if let Some(rest) = stored.strip_prefix("scrypt:") {
        return werkzeug_scrypt(rest, password);
    }
    Err(Unreadable::Format)
}

/// The scheme of `stored`, for a log line: a name from a fixed list, never the stored text
/// (a table may hold a password in the clear).
pub(crate) fn scheme(stored: &str) -> &'static str {
    let stored = stored.trim();
    let phc = [
        ("$2", "bcrypt"),
        ("$argon2id$", "argon2id"),
        ("$argon2i$", "argon2i"),
        ("$argon2d$", "argon2d"),
        ("$scrypt$", "scrypt"),
        ("$pbkdf2-sha256$", "pbkdf2-sha256"),
        ("$pbkdf2-sha512$", "pbkdf2-sha512"),
        ("pbkdf2_sha256$", "django pbkdf2_sha256"),
        ("scrypt$", "django scrypt"),
        ("pbkdf2:", "werkzeug pbkdf2"),
        ("scrypt:", "werkzeug scrypt"),
    ];
    match phc.iter().find(|(prefix, _)| stored.starts_with(prefix)) {
        Some((_, name)) => name,
        None if stored.starts_with('$') => "an unknown PHC scheme",
        None => "an unknown scheme",
    }
}

fn matched(right: bool, current: bool) -> Verification {
    match (right, current) {
        (false, _) => Verification::Mismatch,
        (true, true) => Verification::Match,
        (true, false) => Verification::MatchRehash,
    }
}

/// A PHC string (`$argon2id$…`, `$scrypt$…`, `$pbkdf2-sha256$…`).
fn phc_verify(stored: &str, password: &str) -> Result<Verification, Unreadable> {
    let hash = PasswordHash::new(stored).map_err(|_| Unreadable::Format)?;
    let param = |name: &str| hash.params.get_decimal(name);
    let ident = hash.algorithm.as_str();
    let password = password.as_bytes();
    match ident {
        "argon2id" | "argon2i" | "argon2d" => {
            let memory_kib = param("m").ok_or(Unreadable::Format)?;
            let passes = param("t").ok_or(Unreadable::Format)?;
            let lanes = param("p").ok_or(Unreadable::Format)?;
            if u64::from(memory_kib) * 1024 > MAX_MEMORY_BYTES
                || passes > MAX_ARGON2_PASSES
                || lanes > MAX_PARALLELISM
            {
                return Err(Unreadable::TooCostly);
            }
            let right = Argon2::default().verify_password(password, &hash).is_ok();
            // Kept when it is Argon2id of the current version doing at least grantor's work.
            let current = ident == Algorithm::Argon2id.ident().as_str()
                && hash.version.is_none_or(|v| v == 0x13)
                && u64::from(memory_kib) * u64::from(passes)
                    >= u64::from(OWN_MEMORY_KIB) * u64::from(OWN_PASSES);
            Ok(matched(right, current))
        }
        "scrypt" => {
            let log_n = param("ln").ok_or(Unreadable::Format)?;
            let r = param("r").ok_or(Unreadable::Format)?;
            let p = param("p").ok_or(Unreadable::Format)?;
            scrypt_bounds(log_n, r, p)?;
            let right = scrypt::Scrypt.verify_password(password, &hash).is_ok();
            Ok(matched(right, false))
        }
        "pbkdf2-sha256" | "pbkdf2-sha512" => {
            let rounds = param("i").ok_or(Unreadable::Format)?;
            if rounds > MAX_PBKDF2_ITERATIONS {
                return Err(Unreadable::TooCostly);
            }
            let right = pbkdf2::Pbkdf2.verify_password(password, &hash).is_ok();
            Ok(matched(right, false))
        }
        _ => Err(Unreadable::Format),
    }
}

fn scrypt_bounds(log_n: u32, r: u32, p: u32) -> Result<(), Unreadable> {
    if log_n == 0 || log_n >= 32 || r == 0 || p == 0 || p > MAX_PARALLELISM {
        return Err(Unreadable::Format);
    }
    let memory = 128u64 * u64::from(r) * (1u64 << log_n);
    if memory > MAX_MEMORY_BYTES {
        return Err(Unreadable::TooCostly);
    }
    Ok(())
}

/// bcrypt's modular crypt: `$2a$`, `$2b$`, `$2x$` or `$2y$`, cost, 22 characters of salt and
/// 31 of hash. Like every bcrypt, it reads at most the password's first 72 bytes.
fn bcrypt_verify(stored: &str, password: &str) -> Result<Verification, Unreadable> {
    let cost: u32 = stored
        .get(4..6)
        .and_then(|cost| cost.parse().ok())
        .ok_or(Unreadable::Format)?;
    if stored.len() != 60 || stored.as_bytes().get(6) != Some(&b'$') {
        return Err(Unreadable::Format);
    }
    if cost > MAX_BCRYPT_COST {
        return Err(Unreadable::TooCostly);
    }
    let right = bcrypt::verify(password, stored).map_err(|_| Unreadable::Format)?;
    Ok(matched(right, false))
}

/// Django's `pbkdf2_sha256$<iterations>$<salt>$<base64 of the 32-byte key>`.
fn django_pbkdf2(rest: &str, password: &str) -> Result<Verification, Unreadable> {
    let mut parts = rest.split('$');
    let (Some(iterations), Some(salt), Some(key), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Unreadable::Format);
    };
    let iterations = pbkdf2_iterations(iterations)?;
    let expected = base64::engine::general_purpose::STANDARD
        .decode(key)
        .map_err(|_| Unreadable::Format)?;
    if expected.len() != 32 {
        return Err(Unreadable::Format);
    }
    let mut derived = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(
        password.as_bytes(),
        salt.as_bytes(),
        iterations,
        &mut derived,
    );
    Ok(matched(derived.ct_eq(&expected).into(), false))
}

/// Django's `scrypt$<N>$<salt>$<r>$<p>$<base64 of the 64-byte key>`.
fn django_scrypt(rest: &str, password: &str) -> Result<Verification, Unreadable> {
    let parts: Vec<&str> = rest.split('$').collect();
    let [n, salt, r, p, key] = parts[..] else {
        return Err(Unreadable::Format);
    };
    let number = |text: &str| text.parse::<u32>().map_err(|_| Unreadable::Format);
    let expected = base64::engine::general_purpose::STANDARD
        .decode(key)
        .map_err(|_| Unreadable::Format)?;
    scrypt_key(
        number(n)?,
        number(r)?,
        number(p)?,
        salt,
        &expected,
        password,
    )
}

/// Whether scrypt with `N`, `r`, `p` and `salt` derives `expected` (64 bytes) from `password`.
fn scrypt_key(
    n: u32,
    r: u32,
    p: u32,
    salt: &str,
    expected: &[u8],
    password: &str,
) -> Result<Verification, Unreadable> {
    if !n.is_power_of_two() {
        return Err(Unreadable::Format);
    }
    let log_n = n.trailing_zeros();
    scrypt_bounds(log_n, r, p)?;
    if expected.len() != 64 {
        return Err(Unreadable::Format);
    }
    let log_n = u8::try_from(log_n).map_err(|_| Unreadable::Format)?;
    let params = scrypt::Params::new(log_n, r, p, 64).map_err(|_| Unreadable::Format)?;
    let mut derived = [0u8; 64];
    scrypt::scrypt(password.as_bytes(), salt.as_bytes(), &params, &mut derived)
        .map_err(|_| Unreadable::Format)?;
    Ok(matched(derived.ct_eq(expected).into(), false))
}

/// Werkzeug's `pbkdf2:sha256:<iterations>$<salt>$<hex key>` (or `sha512`).
fn werkzeug_pbkdf2(rest: &str, password: &str) -> Result<Verification, Unreadable> {
    let (method, salt, expected) = werkzeug_parts(rest)?;
    let mut method = method.split(':');
    let (Some(digest), Some(iterations), None) = (method.next(), method.next(), method.next())
    else {
        return Err(Unreadable::Format);
    };
    let iterations = pbkdf2_iterations(iterations)?;
    let salt = salt.as_bytes();
    let password = password.as_bytes();
    let right = match digest {
        "sha256" if expected.len() == 32 => {
            let mut derived = [0u8; 32];
            pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut derived);
            derived.ct_eq(&expected[..]).into()
        }
        "sha512" if expected.len() == 64 => {
            let mut derived = [0u8; 64];
            pbkdf2::pbkdf2_hmac::<Sha512>(password, salt, iterations, &mut derived);
            derived.ct_eq(&expected[..]).into()
        }
        _ => return Err(Unreadable::Format),
    };
    Ok(matched(right, false))
}

/// Werkzeug's `scrypt:<N>:<r>:<p>$<salt>$<hex of the 64-byte key>` (its default since 3.0).
fn werkzeug_scrypt(rest: &str, password: &str) -> Result<Verification, Unreadable> {
    let (method, salt, expected) = werkzeug_parts(rest)?;
    let numbers: Vec<u32> = method
        .split(':')
        .map(|n| n.parse().map_err(|_| Unreadable::Format))
        .collect::<Result<_, _>>()?;
    let [n, r, p] = numbers[..] else {
        return Err(Unreadable::Format);
    };
    scrypt_key(n, r, p, salt, &expected, password)
}

/// A Werkzeug hash after its scheme: the method's parameters, the salt, the key's bytes.
fn werkzeug_parts(rest: &str) -> Result<(&str, &str, Vec<u8>), Unreadable> {
    let mut parts = rest.split('$');
    let (Some(method), Some(salt), Some(hex), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Unreadable::Format);
    };
    Ok((method, salt, from_hex(hex).ok_or(Unreadable::Format)?))
}

fn pbkdf2_iterations(text: &str) -> Result<u32, Unreadable> {
    let iterations: u32 = text.parse().map_err(|_| Unreadable::Format)?;
    match iterations {
        0 => Err(Unreadable::Format),
        n if n > MAX_PBKDF2_ITERATIONS => Err(Unreadable::TooCostly),
        n => Ok(n),
    }
}

fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || hex.len() > 256 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hashes of "correct horse" as other software wrote them: Python's bcrypt 4, Werkzeug 3,
    // argon2-cffi and Django 5 (each library's own hashing call, with small costs).
    const PASSWORD: &str = "correct horse";
    const BCRYPT: &str = "$2b$04$We.s4GBTXoIH0XhVIkL/z.FLs5rV1.ptJCsPJncUYFWW/F42uJbsq";
    const WERKZEUG_PBKDF2: &str = "pbkdf2:sha256:1000$yv5WnhuZ$9253bb187fb1a3a92c6002f13a33198495dfa0a00db2d0acaf4706259ee92b1d";
    const WERKZEUG_SCRYPT: &str = "scrypt:1024:8:1$ZihRn8yX$bb8d4480a29398df67674093cdbc8368f08c7a6aaa4953b720474939d9714c8e6001c125d96f80f58e9099cb67573a580c2204233bdfff4227fdd43d957171b7";
    const ARGON2I: &str = "$argon2i$v=19$m=1024,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$DvOFzkGfq+KnIJd6iT3E79g7tvGBhMTX1w99hbpDw54";
    const ARGON2ID_WEAK: &str = "$argon2id$v=19$m=4096,t=1,p=2$c29tZXNhbHRzb21lc2FsdA$k2gPRXPUcKx+EFo/f0auzHjw9yrjdZaJXHqfly5shz4";
    const DJANGO_PBKDF2: &str =
        "pbkdf2_sha256$1000$seasalt$mQnueSakb748zqBAC1tmWVZsZbi2zPGZarEzTGdfmso=";
    const DJANGO_SCRYPT: &str = "scrypt$1024$seasalt$8$1$b9vqOe0B5HZh2f10Q9RPN9OFNPtmb+ezp5YOlnZsJQ0vQ5I3eq8Zt7GFMuqQ58xCxTIvVL1QCL/PTXEWr+RNHA==";

    fn check(stored: &str) -> Result<Verification, Unreadable> {
        verify(stored, PASSWORD)
    }

    fn wrong(stored: &str) -> Result<Verification, Unreadable> {
        verify(stored, "correct horsf")
    }

    #[test]
    fn hashes_other_software_wrote_verify_and_ask_to_be_upgraded() {
        for stored in [
            BCRYPT,
            WERKZEUG_PBKDF2,
            WERKZEUG_SCRYPT,
            ARGON2I,
            ARGON2ID_WEAK,
            DJANGO_PBKDF2,
            DJANGO_SCRYPT,
        ] {
            assert_eq!(check(stored), Ok(Verification::MatchRehash), "{stored}");
            assert_eq!(wrong(stored), Ok(Verification::Mismatch), "{stored}");
        }
    }

    #[test]
    fn bcrypt_verifies_under_each_prefix() {
        // PHP writes `$2y$`, older libraries `$2a$`: the same hash for bcrypt's purposes.
        for prefix in ["$2a$", "$2y$"] {
            let other = format!("{prefix}{}", &BCRYPT[4..]);
            assert_eq!(check(&other), Ok(Verification::MatchRehash), "{prefix}");
        }
    }

    #[test]
    fn grantors_own_argon2id_is_kept_and_a_stronger_one_is_not_downgraded() {
        let own = crate::hash::hash_password(PASSWORD).unwrap();
        assert_eq!(check(&own), Ok(Verification::Match));
        assert_eq!(wrong(&own), Ok(Verification::Mismatch));
        let salt = argon2::password_hash::SaltString::encode_b64(b"sixteen byte sal").unwrap();
        let params = argon2::Params::new(64 * 1024, 3, 1, None).unwrap();
        let hasher = Argon2::new(Algorithm::Argon2id, argon2::Version::V0x13, params);
        let strong = argon2::PasswordHasher::hash_password(&hasher, PASSWORD.as_bytes(), &salt)
            .unwrap()
            .to_string();
        assert_eq!(check(&strong), Ok(Verification::Match));
    }

    #[test]
    fn scrypt_and_pbkdf2_phc_strings_verify() {
        use argon2::password_hash::PasswordHasher as _;
        let salt = argon2::password_hash::SaltString::encode_b64(b"sixteen byte sal").unwrap();
        let params = scrypt::Params::new(10, 8, 1, 32).unwrap();
        let scrypt = scrypt::Scrypt
            .hash_password_customized(PASSWORD.as_bytes(), None, None, params, &salt)
            .unwrap()
            .to_string();
        assert!(scrypt.starts_with("$scrypt$"));
        assert_eq!(check(&scrypt), Ok(Verification::MatchRehash));
        assert_eq!(wrong(&scrypt), Ok(Verification::Mismatch));
        let params = pbkdf2::Params {
            rounds: 1000,
            output_length: 32,
        };
        let algorithm = Some(pbkdf2::Algorithm::Pbkdf2Sha256.ident());
        let pbkdf2 = pbkdf2::Pbkdf2
            .hash_password_customized(PASSWORD.as_bytes(), algorithm, None, params, &salt)
            .unwrap()
            .to_string();
        assert!(pbkdf2.starts_with("$pbkdf2-sha256$"));
        assert_eq!(check(&pbkdf2), Ok(Verification::MatchRehash));
        assert_eq!(wrong(&pbkdf2), Ok(Verification::Mismatch));
    }

    #[test]
    fn unknown_malformed_and_costly_hashes_compute_nothing() {
        for stored in [
            "",
            "plaintext",
            "$argon2id$",
            "$md5$abc",
            "$2b$04$short",
            "pbkdf2_sha256$x$salt$key",
            "pbkdf2_sha256$1000$salt$not base64!",
            "pbkdf2:sha256$salt$00",
            "scrypt:1000:8:1$salt$00",
            "scrypt$1024$salt$8$1$!!",
            "{SSHA}abcdef",
        ] {
            assert_eq!(check(stored), Err(Unreadable::Format), "{stored:?}");
        }
        for stored in [
            "$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$k2gPRXPUcKx+EFo/f0auzHjw9yrjdZaJXHqfly5shz4",
            "pbkdf2_sha256$99999999$salt$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U=",
            "$2b$31$We.s4GBTXoIH0XhVIkL/z.FLs5rV1.ptJCsPJncUYFWW/F42uJbsq",
            "scrypt:1048576:8:16$salt$00",
        ] {
            assert_eq!(check(stored), Err(Unreadable::TooCostly), "{stored:?}");
        }
    }

    #[test]
    fn the_scheme_named_in_logs_never_shows_the_stored_text() {
        assert_eq!(scheme(BCRYPT), "bcrypt");
        assert_eq!(scheme(ARGON2I), "argon2i");
        assert_eq!(scheme(DJANGO_PBKDF2), "django pbkdf2_sha256");
        assert_eq!(scheme(WERKZEUG_SCRYPT), "werkzeug scrypt");
        assert_eq!(scheme("$md5$abc"), "an unknown PHC scheme");
        assert_eq!(scheme("supersecretplaintextpassword"), "an unknown scheme");
    }
}
