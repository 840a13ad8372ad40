//! The rows of sign-in sessions, attempt counters, single-use values and keys, and the bound
//! on each kind of single-use value.

use super::{corrupt, time, user};
use crate::clock::UnixTime;
use crate::error::StoreError;
use crate::secret::SecretDigest;
use crate::store::{Attempts, Session};

/// A live sign-in session.
pub(in crate::sql) struct SessionRow {
    request: String,
    csrf: Vec<u8>,
    user_id: Option<String>,
    username: Option<String>,
    expires_at: i64,
}

by_column_name!(SessionRow {
    request,
    csrf,
    user_id,
    username,
    expires_at
});

impl SessionRow {
    pub(in crate::sql) fn into_session(self) -> Result<Session, StoreError> {
        let csrf = <[u8; 32]>::try_from(self.csrf).map_err(|_| corrupt("CSRF token digest"))?;
        let session = Session::new(
            self.request,
            SecretDigest::from_bytes(csrf),
            time(self.expires_at),
        );
        Ok(match user(self.user_id, self.username)? {
            Some(user) => session.signed_in(user),
            None => session,
        })
    }
}

/// A key's attempts in its window.
pub(in crate::sql) struct AttemptsRow {
    count: i64,
    resets_at: i64,
}

by_column_name!(AttemptsRow { count, resets_at });

impl AttemptsRow {
    pub(in crate::sql) fn into_attempts(self) -> Attempts {
        let count = u32::try_from(self.count.max(0)).unwrap_or(u32::MAX);
        Attempts::new(count, time(self.resets_at))
    }
}

/// A single-use value.
pub(in crate::sql) struct ValueRow {
    pub(in crate::sql) value: Vec<u8>,
}

by_column_name!(ValueRow { value });

impl ValueRow {
    /// The value as the digest a signed-in browser is kept under.
    pub(in crate::sql) fn into_session_digest(self) -> Result<SecretDigest, StoreError> {
        let digest: [u8; 32] = self
            .value
            .try_into()
            .map_err(|_| corrupt("session digest"))?;
        Ok(SecretDigest::from_bytes(digest))
    }
}

/// What one kind of single-use value holds: rows, and bytes of values.
pub(in crate::sql) struct HeldRow {
    pub(in crate::sql) held: i64,
    pub(in crate::sql) bytes: i64,
}

by_column_name!(HeldRow { held, bytes });

impl HeldRow {
    /// Whether one more value of `bytes` bytes fits the bound of its kind.
    pub(in crate::sql) fn has_room_for(&self, bytes: i64) -> bool {
        let room = Room::for_value(0);
        self.held < room.max_held && self.bytes.saturating_add(bytes) <= room.max_bytes
    }
}

/// The bound of a kind of one-time value, and the bytes of the value to keep, as the insert
/// statement binds them.
#[derive(Clone, Copy)]
pub(in crate::sql) struct Room {
    pub(in crate::sql) max_held: i64,
    pub(in crate::sql) bytes: i64,
    pub(in crate::sql) max_bytes: i64,
}

impl Room {
    pub(in crate::sql) fn for_value(bytes: usize) -> Self {
        use crate::store::{SINGLE_USE_BYTES_PER_KIND, SINGLE_USE_PER_KIND};
        Self {
            max_held: i64::try_from(SINGLE_USE_PER_KIND).unwrap_or(i64::MAX),
            bytes: i64::try_from(bytes).unwrap_or(i64::MAX),
            max_bytes: i64::try_from(SINGLE_USE_BYTES_PER_KIND).unwrap_or(i64::MAX),
        }
    }
}

/// The refusal of a one-time value whose kind is full (503 `temporarily_unavailable`).
pub(in crate::sql) fn full(kind: &str) -> crate::error::StoreError {
    crate::error::StoreError::unavailable(format!(
        "too many one-time values of kind `{kind}` are held; try again later"
    ))
}

/// A key's name and expiry.
pub(in crate::sql) struct KeyNameRow {
    name: String,
    expires_at: i64,
}

by_column_name!(KeyNameRow { name, expires_at });

impl KeyNameRow {
    pub(in crate::sql) fn into_name(self) -> (String, UnixTime) {
        (self.name, time(self.expires_at))
    }
}
