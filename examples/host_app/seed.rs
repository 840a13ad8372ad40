//! The rows a legacy application left in the `users` table, written on the first start: Carol
//! with a bcrypt hash (as Rails or Laravel write them) and a TOTP secret, Dave with Django's
//! PBKDF2 hash and no second factor. grantor upgrades both hashes to Argon2id at their first
//! good sign-in.

use base64::Engine as _;
use grantor::sql::rusqlite::{self, params};
use rand::Rng as _;
use sha2::Sha256;

use crate::users::HostUsers;

/// Carol's password.
pub const CAROL_PASSWORD: &str = "carol-password-1";
/// Dave's password.
pub const DAVE_PASSWORD: &str = "dave-password-2";
/// Carol's TOTP secret, base32 as her authenticator app was given it: 21 bytes (168 bits), above
/// the 128 that RFC 4226 §4 asks of a shared secret.
pub const CAROL_TOTP_SECRET: &str = "KRSXG5CTMVRXEZLUKN2XAZLSKNSWG4TFOQ";

/// bcrypt's lowest cost: the legacy rows are for a demo, and grantor replaces them anyway.
const BCRYPT_COST: u32 = 4;
/// Django 3.2's PBKDF2 iteration count (later versions write more; grantor reads any up to its
/// bound).
const PBKDF2_ITERATIONS: u32 = 260_000;

/// Writes Carol and Dave when the table is empty; a table with rows is left as it is.
pub async fn legacy_rows(users: &HostUsers) -> Result<(), Box<dyn std::error::Error>> {
    // Without bcrypt's `std` feature (grantor leaves it off) its error is no `std::error::Error`.
    let carol = bcrypt::hash(CAROL_PASSWORD, BCRYPT_COST).map_err(|e| format!("bcrypt: {e}"))?;
    let dave = django_pbkdf2_sha256(DAVE_PASSWORD, PBKDF2_ITERATIONS);
    users
        .with_db(move |db| {
            let tx = db.unchecked_transaction()?;
            let rows: i64 = tx.query_row("SELECT count(*) FROM users", [], |row| row.get(0))?;
            if rows == 0 {
                insert(
                    &tx,
                    1,
                    "carol",
                    &carol,
                    "Carol Legacy",
                    Some(CAROL_TOTP_SECRET),
                )?;
                insert(&tx, 2, "dave", &dave, "Dave Legacy", None)?;
            }
            tx.commit()
        })
        .await?;
    Ok(())
}

fn insert(
    db: &rusqlite::Connection,
    id: i64,
    login: &str,
    hash: &str,
    display_name: &str,
    totp_secret: Option<&str>,
) -> rusqlite::Result<usize> {
    db.execute(
        "INSERT INTO users (id, login, password_hash, display_name, totp_secret) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, login, hash, display_name, totp_secret],
    )
}

/// Django's `pbkdf2_sha256$<iterations>$<salt>$<base64 of the 32-byte key>`, with a salt of 22
/// letters and digits as Django draws them.
fn django_pbkdf2_sha256(password: &str, iterations: u32) -> String {
    let salt: String = rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(22)
        .map(char::from)
        .collect();
    let mut key = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt.as_bytes(), iterations, &mut key);
    let key = base64::engine::general_purpose::STANDARD.encode(key);
    format!("pbkdf2_sha256${iterations}${salt}${key}")
}
