//! Every statement, shared by both databases (`$n` placeholders work on SQLite too).

pub(crate) const FIND_CLIENT: &str = "SELECT client_id, name, secret_verifier, redirect_uris, \
    grant_types, scopes, default_scope, approval_required \
    FROM grantor_clients WHERE client_id = $1";
pub(crate) const UPSERT_CLIENT: &str = "INSERT INTO grantor_clients (client_id, name, \
    secret_verifier, redirect_uris, grant_types, scopes, default_scope, approval_required) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
    ON CONFLICT (client_id) DO UPDATE SET name = excluded.name, \
    secret_verifier = excluded.secret_verifier, redirect_uris = excluded.redirect_uris, \
    grant_types = excluded.grant_types, scopes = excluded.scopes, \
    default_scope = excluded.default_scope, approval_required = excluded.approval_required";
pub(crate) const DELETE_CLIENT: &str = "DELETE FROM grantor_clients WHERE client_id = $1";

pub(crate) const INSERT_USER: &str = "INSERT INTO grantor_users \
    (id, username, username_key, password_hash) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
pub(crate) const FIND_USER_BY_KEY: &str =
    "SELECT id, username, password_hash FROM grantor_users WHERE username_key = $1";
pub(crate) const FIND_USER_BY_ID: &str = "SELECT id, username FROM grantor_users WHERE id = $1";

pub(crate) const INSERT_FAMILY: &str = "INSERT INTO grantor_families \
    (id, client_id, user_id, username, scope, expires_at) VALUES ($1, $2, $3, $4, $5, $6)";
/// Extends an existing family to `$2` and answers its current refresh generation.
pub(crate) const EXTEND_FAMILY: &str = "UPDATE grantor_families \
    SET expires_at = CASE WHEN expires_at < $2 THEN $2 ELSE expires_at END \
    WHERE id = $1 RETURNING generation";
pub(crate) const REVOKE_FAMILY: &str = "UPDATE grantor_families SET revoked = TRUE WHERE id = $1";

pub(crate) const INSERT_CODE: &str = "INSERT INTO grantor_codes (digest, family_id, \
    client_id, user_id, username, scope, redirect_uri, code_challenge, code_challenge_method, \
    issued_at, expires_at, forget_at) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
/// The single-use step: succeeds for exactly one caller.
pub(crate) const REDEEM_CODE: &str = "UPDATE grantor_codes SET redeemed = TRUE \
    WHERE digest = $1 AND NOT redeemed AND expires_at > $2 \
    AND EXISTS (SELECT 1 FROM grantor_families f \
                WHERE f.id = grantor_codes.family_id AND NOT f.revoked) \
    RETURNING family_id, client_id, user_id, username, scope, redirect_uri, code_challenge, \
    code_challenge_method, issued_at, expires_at";
pub(crate) const CODE_STATE: &str =
    "SELECT family_id, redeemed FROM grantor_codes WHERE digest = $1";

pub(crate) const INSERT_ACCESS: &str = "INSERT INTO grantor_access_tokens \
    (digest, family_id, scope, jti, issued_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)";
pub(crate) const FIND_ACCESS: &str = "SELECT f.id, f.client_id, f.user_id, f.username, \
    a.scope, a.jti, a.issued_at, a.expires_at \
    FROM grantor_access_tokens a JOIN grantor_families f ON f.id = a.family_id \
    WHERE a.digest = $1 AND a.expires_at > $2 AND NOT f.revoked";
pub(crate) const DELETE_ACCESS: &str = "DELETE FROM grantor_access_tokens WHERE digest = $1";

pub(crate) const INSERT_REFRESH: &str = "INSERT INTO grantor_refresh_tokens \
    (digest, family_id, generation, issued_at, expires_at) VALUES ($1, $2, $3, $4, $5)";
pub(crate) const FIND_REFRESH: &str = "SELECT f.id, f.client_id, f.user_id, f.username, \
    f.scope, r.generation, f.generation, r.issued_at, r.expires_at \
    FROM grantor_refresh_tokens r JOIN grantor_families f ON f.id = r.family_id \
    WHERE r.digest = $1 AND r.expires_at > $2 AND NOT f.revoked";
/// The single-use step of rotation: moves the family past the presented token's generation
/// while that is still the current one; succeeds for exactly one caller per token.
pub(crate) const ROTATE: &str = "UPDATE grantor_families \
    SET generation = generation + 1, \
        expires_at = CASE WHEN expires_at < $3 THEN $3 ELSE expires_at END \
    WHERE NOT revoked \
    AND id = (SELECT family_id FROM grantor_refresh_tokens \
              WHERE digest = $1 AND expires_at > $2) \
    AND generation = (SELECT generation FROM grantor_refresh_tokens WHERE digest = $1) \
    RETURNING id, client_id, user_id, username, scope, generation";
pub(crate) const REFRESH_STATE: &str = "SELECT f.id, r.generation, f.generation \
    FROM grantor_refresh_tokens r JOIN grantor_families f ON f.id = r.family_id \
    WHERE r.digest = $1 AND r.expires_at > $2 AND NOT f.revoked";

/// `purge_expired`, in this order; each binds `$1` = now (or none).
pub(crate) const PURGE: [&str; 9] = [
    "DELETE FROM grantor_access_tokens WHERE expires_at <= $1",
    "DELETE FROM grantor_access_tokens \
     WHERE family_id IN (SELECT id FROM grantor_families WHERE revoked)",
    "DELETE FROM grantor_refresh_tokens WHERE expires_at <= $1",
    "DELETE FROM grantor_refresh_tokens \
     WHERE family_id IN (SELECT id FROM grantor_families WHERE revoked)",
    "DELETE FROM grantor_codes WHERE forget_at <= $1",
    "DELETE FROM grantor_codes WHERE expires_at <= $1 AND NOT redeemed",
    "DELETE FROM grantor_codes WHERE NOT redeemed \
     AND family_id IN (SELECT id FROM grantor_families WHERE revoked)",
    "DELETE FROM grantor_families WHERE expires_at <= $1",
    "DELETE FROM grantor_families WHERE revoked",
];
