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
//!
//! An access token issued alone, in a family of its own without a refresh token (client
//! credentials, most of all), has no family row (migration 22): its own row holds its family's
//! id, client, user and sign-in, and its `family` is NULL. It is one row, four index entries and
//! one statement, where a family row and a token row were two rows and eight index entries.

use crate::sql::text;

/// Keeps an access token of family id `$2`, with the parameters of PostgreSQL's
/// `INSERT_ACCESS`; inserts nothing when there is no such family.
pub(super) const INSERT_ACCESS: &str = "INSERT INTO grantor_access_tokens \
    (digest, family, scope, jti, issued_at, expires_at, audience, jkt, act) \
    SELECT $1, seq, $3, $4, $5, $6, $7, $8, $9 FROM grantor_families WHERE id = $2";

/// Keeps an access token of the family whose `seq` is `$2` (known from the statement that
/// wrote or extended the family), with the other parameters of [`INSERT_ACCESS`].
pub(super) const INSERT_ACCESS_BY_SEQ: &str = "INSERT INTO grantor_access_tokens \
    (digest, family, scope, jti, issued_at, expires_at, audience, jkt, act) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// Keeps an access token issued alone (migration 22): in a family of its own and without a
/// refresh token, so its one row holds what a family row would (`$9`–`$13`: the family's id,
/// client, user id, username and sign-in), and no family row is written. Another token issued
/// alone in the family is refused by the unique index on `family_id`; a family row of that id,
/// by [`FAMILY_TAKEN`] beforehand. One row of `VALUES`, so SQLite keeps no statement journal
/// for it (an `INSERT … SELECT` would copy each page it changes into one first).
pub(super) const INSERT_ACCESS_ALONE: &str = "INSERT INTO grantor_access_tokens \
    (digest, scope, jti, issued_at, expires_at, audience, jkt, act, \
    family_id, client_id, user_id, username, authentication) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";

/// Whether a family row of id `$1` is kept.
pub(super) const FAMILY_TAKEN: &str =
    "SELECT EXISTS (SELECT 1 FROM grantor_families WHERE id = $1) AS taken";

/// An active access token with the rest of its authorization (PostgreSQL's `FIND_ACCESS`):
/// from its family's row, or from its own for a token issued alone.
pub(super) const FIND_ACCESS: &str = "SELECT COALESCE(f.id, a.family_id) AS family_id, \
    COALESCE(f.client_id, a.client_id) AS client_id, \
    CASE WHEN a.family IS NULL THEN a.user_id ELSE f.user_id END AS user_id, \
    CASE WHEN a.family IS NULL THEN a.username ELSE f.username END AS username, \
    a.scope, a.audience, \
    CASE WHEN a.family IS NULL THEN a.authentication ELSE f.authentication END \
    AS authentication, a.issued_at, a.expires_at, a.jkt, a.act \
    FROM grantor_access_tokens a LEFT JOIN grantor_families f ON f.seq = a.family \
    WHERE substr(a.digest, 1, 8) = substr($1, 1, 8) AND a.digest = $1 \
    AND a.expires_at > $2 AND (a.family IS NULL OR NOT f.revoked)";

/// Revokes the family `$1` of a token issued alone: the token goes (`REVOKE_FAMILY` reaches a
/// family's row).
pub(super) const REVOKE_ALONE_FAMILY: &str =
    "DELETE FROM grantor_access_tokens WHERE family_id = $1";

/// Revokes every token client `$1` was issued alone (`REVOKE_CLIENT` reaches its families'
/// rows); each was a family of its own.
pub(super) const REVOKE_ALONE_CLIENT: &str =
    "DELETE FROM grantor_access_tokens WHERE client_id = $1";

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
