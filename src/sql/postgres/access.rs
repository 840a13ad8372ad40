//! The statements on access tokens in PostgreSQL's form: where SQLite's schema keeps the table
//! in the order tokens are issued and names each family by its `seq` (`sqlite/access.rs`),
//! PostgreSQL's finds a token by its digest and its family by the family's id. With
//! data-modifying `WITH`, a new family and its access token, a rotation with its successor
//! tokens, or tokens joining a family, are each one statement: one round trip.

/// A new family and its one access token in one statement, one round trip (the foreign key is
/// checked at the statement's end, when both rows exist). `$1`–`$7` as in
/// [`INSERT_FAMILY`](crate::sql::text::INSERT_FAMILY), `$8`–`$15` as `$1`, `$3`–`$9` of
/// [`INSERT_ACCESS`], `$16` as `$8` of [`INSERT_FAMILY`](crate::sql::text::INSERT_FAMILY).
pub(crate) const INSERT_FAMILY_WITH_ACCESS: &str = "WITH family AS (INSERT INTO grantor_families \
    (id, client_id, user_id, username, scope, expires_at, audience, authentication) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $16)) \
    INSERT INTO grantor_access_tokens \
    (digest, family_id, scope, jti, issued_at, expires_at, audience, jkt, act) \
    VALUES ($8, $1, $9, $10, $11, $12, $13, $14, $15)";
/// New families, each with its one access token, in one statement for a whole batch
/// ([`batch`](super::batch)): arrays, element `i` of each for write `i`. The families' id `$1`,
/// client `$2`, user id `$3`, username `$4`, scope `$5` (the token's too), expiry `$6`, audience
/// `$7` (the token's too); the tokens' digest `$8`, `jti` `$9`, issued `$10`, expiry `$11`, key
/// `$12`, actor `$13`; the families' sign-ins `$14`.
pub(crate) const INSERT_FAMILIES_WITH_ACCESS: &str = "WITH family AS (INSERT INTO grantor_families \
    (id, client_id, user_id, username, scope, expires_at, audience, authentication) \
    SELECT * FROM UNNEST($1::bytea[], $2::text[], $3::text[], $4::text[], $5::text[], \
    $6::int8[], $7::text[], $14::text[])) \
    INSERT INTO grantor_access_tokens \
    (digest, family_id, scope, jti, issued_at, expires_at, audience, jkt, act) \
    SELECT * FROM UNNEST($8::bytea[], $1::bytea[], $5::text[], $9::text[], $10::int8[], \
    $11::int8[], $7::text[], $12::text[], $13::text[])";
/// Keeps an access token of family `$2`.
pub(crate) const INSERT_ACCESS: &str = "INSERT INTO grantor_access_tokens \
    (digest, family_id, scope, jti, issued_at, expires_at, audience, jkt, act) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
/// An active access token: its own scope, audience, key and actor, the rest of its authorization
/// (its user's sign-in too) from its family.
pub(crate) const FIND_ACCESS: &str = "SELECT f.id AS family_id, f.client_id, f.user_id, \
    f.username, a.scope, a.audience, f.authentication, a.issued_at, a.expires_at, a.jkt, a.act \
    FROM grantor_access_tokens a JOIN grantor_families f ON f.id = a.family_id \
    WHERE a.digest = $1 AND a.expires_at > $2 AND NOT f.revoked";
/// [`FIND_ACCESS`] for many digests at once (each with its digest), live at `$2`: the batched
/// lookups of [`batch`](super::batch), which check each token's expiry against its own request's
/// time.
pub(crate) const FIND_ACCESS_MANY: &str = "SELECT a.digest, f.id AS family_id, f.client_id, \
    f.user_id, f.username, a.scope, a.audience, f.authentication, a.issued_at, a.expires_at, \
    a.jkt, a.act \
    FROM grantor_access_tokens a JOIN grantor_families f ON f.id = a.family_id \
    WHERE a.digest = ANY($1) AND a.expires_at > $2 AND NOT f.revoked";
/// Deletes an access token.
pub(crate) const DELETE_ACCESS: &str = "DELETE FROM grantor_access_tokens WHERE digest = $1";
/// [`ROTATE`](crate::sql::text::ROTATE) and, when it rotates, the successor's access and refresh
/// tokens (and the family's end, if it has none yet) in one statement, one round trip instead of
/// six (`BEGIN`, the rotation, two inserts, the end, `COMMIT`). `$1`–`$5` as in
/// [`ROTATE`](crate::sql::text::ROTATE); the access token's scope `$6`, `jti` `$7`, expiry `$8`,
/// audience `$9`, key `$10`, actor `$11`; the refresh token's digest `$12`, expiry `$13`, key
/// `$14`; the family's end `$15` (NULL for none). Answers the new generation; no row (and nothing
/// written) when the token is not its family's current one.
pub(crate) const ROTATE_WITH_TOKENS: &str = "WITH rotated AS (UPDATE grantor_families \
    SET generation = generation + 1, replaced_generation = generation, rotated_at = $2, \
        current_access = $5, \
        expires_at = CASE WHEN expires_at < $4 THEN $4 ELSE expires_at END, \
        ends_at = COALESCE(ends_at, $15) \
    WHERE id = $3 AND NOT revoked AND (ends_at IS NULL OR ends_at > $2) \
    AND id = (SELECT family_id FROM grantor_refresh_tokens \
              WHERE digest = $1 AND expires_at > $2) \
    AND generation = (SELECT generation FROM grantor_refresh_tokens WHERE digest = $1) \
    RETURNING generation), \
    access AS (INSERT INTO grantor_access_tokens \
    (digest, family_id, scope, jti, issued_at, expires_at, audience, jkt, act) \
    SELECT $5, $3, $6, $7, $2, $8, $9, $10, $11 FROM rotated) \
    INSERT INTO grantor_refresh_tokens (digest, family_id, generation, issued_at, expires_at, jkt) \
    SELECT $12, $3, generation, $2, $13, $14 FROM rotated RETURNING generation";
/// Tokens joining an existing family in one statement: the family extended to `$2` (and ended at
/// `$3` if it has no end yet; NULL for none), the access token (`$4` digest, scope `$5`, `jti`
/// `$6`, issued `$7`, expiry `$8`, audience `$9`, key `$10`, actor `$11`), and the refresh token
/// when `$12` (its digest) is not NULL (expiry `$13`, key `$14`) as the family's current
/// generation. Answers that generation; no row when there is no such family.
pub(crate) const JOIN_FAMILY_WITH_TOKENS: &str = "WITH family AS (UPDATE grantor_families \
    SET expires_at = CASE WHEN expires_at < $2 THEN $2 ELSE expires_at END, \
        ends_at = COALESCE(ends_at, $3) \
    WHERE id = $1 RETURNING generation), \
    access AS (INSERT INTO grantor_access_tokens \
    (digest, family_id, scope, jti, issued_at, expires_at, audience, jkt, act) \
    SELECT $4, $1, $5, $6, $7, $8, $9, $10, $11 FROM family), \
    refresh AS (INSERT INTO grantor_refresh_tokens \
    (digest, family_id, generation, issued_at, expires_at, jkt) \
    SELECT $12, $1, generation, $7, $13, $14 FROM family WHERE $12 IS NOT NULL) \
    SELECT generation FROM family";
