//! The statements on access tokens in SQLite's own form: where PostgreSQL's
//! (`postgres/access.rs`) find a token by its digest and its family by the family's id,
//! SQLite's schema (migration 21) keeps the table in the order tokens are issued and names the
//! family by its `seq`.
//!
//! A token is found through the index on the first 8 bytes of its digest, and the full digest
//! is compared in the row: the index stays narrow (about a quarter of the digest's), and a new
//! token writes one random page of it rather than one of a table keyed by the digest. Each
//! lookup spells the indexed expression `substr(digest, 1, 8)` exactly as the index does, or
//! SQLite would not use the index.

use crate::sql::text;

/// Keeps an access token of family id `$2`, with the parameters of PostgreSQL's
/// `INSERT_ACCESS`; inserts nothing when there is no such family.
pub(super) const INSERT_ACCESS: &str = "INSERT INTO grantor_access_tokens \
    (digest, family, scope, jti, issued_at, expires_at, audience, jkt, act) \
    SELECT $1, seq, $3, $4, $5, $6, $7, $8, $9 FROM grantor_families WHERE id = $2";

/// An active access token with the rest of its authorization (PostgreSQL's `FIND_ACCESS`).
pub(super) const FIND_ACCESS: &str = "SELECT f.id AS family_id, f.client_id, f.user_id, \
    f.username, a.scope, a.audience, f.authentication, a.issued_at, a.expires_at, a.jkt, a.act \
    FROM grantor_access_tokens a JOIN grantor_families f ON f.seq = a.family \
    WHERE substr(a.digest, 1, 8) = substr($1, 1, 8) AND a.digest = $1 \
    AND a.expires_at > $2 AND NOT f.revoked";

/// Deletes an access token (PostgreSQL's `DELETE_ACCESS`).
pub(super) const DELETE_ACCESS: &str = "DELETE FROM grantor_access_tokens \
    WHERE substr(digest, 1, 8) = substr($1, 1, 8) AND digest = $1";

/// The access tokens of revoked families, found by the index on `family`.
const PURGE_REVOKED_ACCESS: &str = "DELETE FROM grantor_access_tokens \
    WHERE family IN (SELECT seq FROM grantor_families WHERE revoked)";

/// [`text::PURGE`], with its statement on revoked families' access tokens (the second) in this
/// schema's form.
pub(super) const PURGE: [&str; text::PURGE.len()] = {
    let mut purge = text::PURGE;
    purge[1] = PURGE_REVOKED_ACCESS;
    purge
};

#[cfg(test)]
mod tests {
    use super::{PURGE, PURGE_REVOKED_ACCESS};
    use crate::sql::text;

    /// Only the shared statement on revoked families' access tokens is replaced, and it is the
    /// one replaced.
    #[test]
    fn the_purge_differs_only_in_its_access_token_statement() {
        assert!(text::PURGE[1].contains("grantor_access_tokens"));
        assert!(text::PURGE[1].contains("revoked"));
        for (index, (lite, shared)) in PURGE.iter().zip(text::PURGE).enumerate() {
            if index == 1 {
                assert_eq!(*lite, PURGE_REVOKED_ACCESS);
            } else {
                assert_eq!(*lite, shared);
            }
        }
    }
}
