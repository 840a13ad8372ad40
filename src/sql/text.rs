//! Every statement, shared by both databases (`$n` placeholders work on SQLite too). Columns
//! are named as the row types of [`super::rows`] read them.

// Clients and users.

pub(crate) const FIND_CLIENT: &str = "SELECT client_id, name, secret_verifier, redirect_uris, \
    grant_types, scopes, default_scope, approval_required, audiences, resources, \
    registration_token, dpop_bound, par_required, previous_secret_verifier, \
    previous_secret_expires_at, jwks, jwks_uri, openid \
    FROM grantor_clients WHERE client_id = $1";
/// Every client, by id (for an administrator's listing).
pub(crate) const LIST_CLIENTS: &str = "SELECT client_id, name, secret_verifier, redirect_uris, \
    grant_types, scopes, default_scope, approval_required, audiences, resources, \
    registration_token, dpop_bound, par_required, previous_secret_verifier, \
    previous_secret_expires_at, jwks, jwks_uri, openid \
    FROM grantor_clients ORDER BY client_id";
/// Registers a client unless its id is taken (then changes nothing).
pub(crate) const INSERT_CLIENT: &str = "INSERT INTO grantor_clients (client_id, name, \
    secret_verifier, redirect_uris, grant_types, scopes, default_scope, approval_required, \
    audiences, resources, registration_token, dpop_bound, par_required, \
    previous_secret_verifier, previous_secret_expires_at, jwks, jwks_uri, openid) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) \
    ON CONFLICT (client_id) DO NOTHING";
pub(crate) const REPLACE_CLIENT: &str = "UPDATE grantor_clients SET name = $2, \
    secret_verifier = $3, redirect_uris = $4, grant_types = $5, scopes = $6, \
    default_scope = $7, approval_required = $8, audiences = $9, resources = $10, \
    registration_token = $11, dpop_bound = $12, par_required = $13, \
    previous_secret_verifier = $14, previous_secret_expires_at = $15, jwks = $16, \
    jwks_uri = $17, openid = $18 \
    WHERE client_id = $1";
/// Rotates a confidential client's secret in one statement: the current verifier retires
/// (every right-hand side reads the row as it was), the new one takes its place.
pub(crate) const ROTATE_CLIENT_SECRET: &str = "UPDATE grantor_clients SET \
    previous_secret_verifier = secret_verifier, previous_secret_expires_at = $3, \
    secret_verifier = $2 \
    WHERE client_id = $1 AND secret_verifier IS NOT NULL";
pub(crate) const DELETE_CLIENT: &str = "DELETE FROM grantor_clients WHERE client_id = $1";
/// Records a use of a self-registered client, never moving it back.
pub(crate) const TOUCH_CLIENT: &str = "UPDATE grantor_clients SET last_used = $2 \
    WHERE client_id = $1 AND registration_token IS NOT NULL \
    AND (last_used IS NULL OR last_used < $2)";
/// When a self-registered client was last used, as recorded.
pub(crate) const CLIENT_LAST_USED: &str = "SELECT last_used FROM grantor_clients \
    WHERE client_id = $1 AND registration_token IS NOT NULL";
/// Self-registered clients last used before `$1`, the longest idle first, at most `$2`.
pub(crate) const IDLE_CLIENTS: &str = "SELECT client_id FROM grantor_clients \
    WHERE registration_token IS NOT NULL AND last_used < $1 \
    ORDER BY last_used, client_id LIMIT $2";

/// Adds an account unless its id or username key is taken (then changes nothing).
pub(crate) const INSERT_USER: &str = "INSERT INTO grantor_users \
    (id, username, username_key, password_hash) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
pub(crate) const SET_PASSWORD_HASH: &str =
    "UPDATE grantor_users SET password_hash = $2 WHERE id = $1";
/// An account by its lowercase username, without its password hash.
pub(crate) const FIND_USER_BY_KEY: &str =
    "SELECT id, username FROM grantor_users WHERE username_key = $1";
pub(crate) const FIND_ACCOUNT_BY_KEY: &str =
    "SELECT id, username, password_hash FROM grantor_users WHERE username_key = $1";
pub(crate) const FIND_USER_BY_ID: &str = "SELECT id, username FROM grantor_users WHERE id = $1";
/// An account's claims: no row without the account, a NULL without claims.
pub(crate) const FIND_CLAIMS: &str = "SELECT claims FROM grantor_users WHERE id = $1";
pub(crate) const SET_CLAIMS: &str = "UPDATE grantor_users SET claims = $2 WHERE id = $1";

// Families, codes and tokens.

/// A new family: `$8` is how its user signed in (JSON, NULL for none).
pub(crate) const INSERT_FAMILY: &str = "INSERT INTO grantor_families \
    (id, client_id, user_id, username, scope, expires_at, audience, authentication) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
pub(crate) const REVOKE_FAMILY: &str = "UPDATE grantor_families SET revoked = TRUE WHERE id = $1";
/// Every live family of a deleted client (by the index of migration 13).
pub(crate) const REVOKE_CLIENT: &str =
    "UPDATE grantor_families SET revoked = TRUE WHERE client_id = $1 AND NOT revoked";

pub(crate) const INSERT_CODE: &str = "INSERT INTO grantor_codes (digest, family_id, \
    client_id, user_id, username, scope, redirect_uri, code_challenge, code_challenge_method, \
    issued_at, expires_at, forget_at, audience, openid, jkt, authentication) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
/// The single-use step of a code: succeeds for exactly one caller.
pub(crate) const REDEEM_CODE: &str = "UPDATE grantor_codes SET redeemed = TRUE \
    WHERE digest = $1 AND NOT redeemed AND expires_at > $2 \
    AND EXISTS (SELECT 1 FROM grantor_families f \
                WHERE f.id = grantor_codes.family_id AND NOT f.revoked) \
    RETURNING family_id, client_id, user_id, username, scope, audience, authentication, \
    redirect_uri, code_challenge, code_challenge_method, issued_at, expires_at, openid, jkt";
pub(crate) const CODE_STATE: &str =
    "SELECT family_id, redeemed FROM grantor_codes WHERE digest = $1";

pub(crate) const INSERT_REFRESH: &str = "INSERT INTO grantor_refresh_tokens \
    (digest, family_id, generation, issued_at, expires_at, jkt) VALUES ($1, $2, $3, $4, $5, $6)";
/// A live refresh token (current or rotated) with its family's authorization and generation.
pub(crate) const FIND_REFRESH: &str = "SELECT f.id AS family_id, f.client_id, f.user_id, \
    f.username, f.scope, f.audience, f.authentication, r.generation, \
    f.generation AS current_generation, \
    r.issued_at, \
    r.expires_at, f.ends_at AS family_ends_at, r.jkt \
    FROM grantor_refresh_tokens r JOIN grantor_families f ON f.id = r.family_id \
    WHERE r.digest = $1 AND r.expires_at > $2 AND NOT f.revoked \
    AND (f.ends_at IS NULL OR f.ends_at > $2)";
/// Fixes family `$1`'s end at `$2` unless it has one.
pub(crate) const END_FAMILY: &str =
    "UPDATE grantor_families SET ends_at = COALESCE(ends_at, $2) WHERE id = $1";
/// The last rotation of the live family `$3` of refresh token `$1` at `$2`, for a retry.
pub(crate) const FIND_LAST_ROTATION: &str = "SELECT r.generation, f.replaced_generation, \
    f.rotated_at, f.current_access \
    FROM grantor_refresh_tokens r JOIN grantor_families f ON f.id = r.family_id \
    WHERE r.digest = $1 AND r.expires_at > $2 AND f.id = $3 AND NOT f.revoked \
    AND (f.ends_at IS NULL OR f.ends_at > $2)";
/// A retry: moves family `$3` on once more, its current access token becoming `$5`, while its
/// last rotation still replaced refresh token `$1`'s generation, happened at or after `$6`,
/// and issued access token `$7` (so of concurrent retries, one wins); extends it to `$4`.
pub(crate) const RETRY_ROTATION: &str = "UPDATE grantor_families \
    SET generation = generation + 1, current_access = $5, \
        expires_at = CASE WHEN expires_at < $4 THEN $4 ELSE expires_at END \
    WHERE id = $3 AND NOT revoked AND (ends_at IS NULL OR ends_at > $2) \
    AND replaced_generation = (SELECT generation FROM grantor_refresh_tokens WHERE digest = $1) \
    AND rotated_at >= $6 AND current_access = $7 \
    RETURNING generation";
/// The single-use step of rotation: moves family `$3` past the generation of the refresh token
/// `$1` while that is still the current one, remembers the rotation (at `$2`, the successor's
/// access token `$5`), and extends the family to `$4`; succeeds for exactly one caller per token.
pub(crate) const ROTATE: &str = "UPDATE grantor_families \
    SET generation = generation + 1, replaced_generation = generation, rotated_at = $2, \
        current_access = $5, \
        expires_at = CASE WHEN expires_at < $4 THEN $4 ELSE expires_at END \
    WHERE id = $3 AND NOT revoked AND (ends_at IS NULL OR ends_at > $2) \
    AND id = (SELECT family_id FROM grantor_refresh_tokens \
              WHERE digest = $1 AND expires_at > $2) \
    AND generation = (SELECT generation FROM grantor_refresh_tokens WHERE digest = $1) \
    RETURNING generation";

// Sign-in sessions, attempt counters, single-use values.

pub(crate) const UPSERT_SESSION: &str = "INSERT INTO grantor_sessions \
    (id, request, csrf, user_id, username, expires_at) VALUES ($1, $2, $3, $4, $5, $6) \
    ON CONFLICT (id) DO UPDATE SET request = excluded.request, csrf = excluded.csrf, \
    user_id = excluded.user_id, username = excluded.username, expires_at = excluded.expires_at";
pub(crate) const FIND_SESSION: &str = "SELECT request, csrf, user_id, username, expires_at \
    FROM grantor_sessions WHERE id = $1 AND expires_at > $2";
/// Removes a live session and answers it: one caller gets the row.
pub(crate) const TAKE_SESSION: &str = "DELETE FROM grantor_sessions \
    WHERE id = $1 AND expires_at > $2 \
    RETURNING request, csrf, user_id, username, expires_at";

/// Counts an attempt against `$1` at `$3`: the first of a new window (ending at `$2`) when
/// there is none or it is over, else one more in the current one.
pub(crate) const RECORD_ATTEMPT: &str = "INSERT INTO grantor_attempts (key, count, resets_at) \
    VALUES ($1, 1, $2) \
    ON CONFLICT (key) DO UPDATE SET \
    count = CASE WHEN grantor_attempts.resets_at <= $3 THEN 1 \
                 ELSE grantor_attempts.count + 1 END, \
    resets_at = CASE WHEN grantor_attempts.resets_at <= $3 THEN $2 \
                     ELSE grantor_attempts.resets_at END \
    RETURNING count, resets_at";
pub(crate) const FIND_ATTEMPTS: &str =
    "SELECT count, resets_at FROM grantor_attempts WHERE key = $1 AND resets_at > $2";
pub(crate) const CLEAR_ATTEMPTS: &str = "DELETE FROM grantor_attempts WHERE key = $1";

/// Keeps a value of kind `$5` under `$1` unless a live one (expiring after `$4`) holds the key
/// or the kind's counters say it holds `$6` values or would pass `$8` bytes with these `$7`:
/// changes one row for exactly one of concurrent callers, and none when the kind looks full.
/// (A value taken over keeps the kind it was counted under.)
pub(crate) const INSERT_ONCE: &str = "INSERT INTO grantor_single_use \
    (key, value, expires_at, kind) SELECT $1, $2, $3, $5 \
    WHERE (SELECT COALESCE(SUM(held), 0) FROM grantor_single_use_kinds WHERE kind = $5) < $6 \
    AND (SELECT COALESCE(SUM(bytes), 0) FROM grantor_single_use_kinds WHERE kind = $5) + $7 \
    <= $8 \
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at \
    WHERE grantor_single_use.expires_at <= $4";
/// The values kind `$1` holds, live or not yet purged, and their bytes: one row per slot, kept
/// by triggers (migration 0019), summed.
pub(crate) const SINGLE_USE_HELD: &str = "SELECT \
    CAST(COALESCE(SUM(held), 0) AS BIGINT) AS held, \
    CAST(COALESCE(SUM(bytes), 0) AS BIGINT) AS bytes \
    FROM grantor_single_use_kinds WHERE kind = $1";
/// Drops the values of kind `$1` expired at `$2`, to make room in a full kind.
pub(crate) const PURGE_KIND: &str =
    "DELETE FROM grantor_single_use WHERE kind = $1 AND expires_at <= $2";
pub(crate) const PEEK: &str =
    "SELECT value FROM grantor_single_use WHERE key = $1 AND expires_at > $2";
/// Removes a live value and answers it: one caller gets the row.
pub(crate) const TAKE: &str = "DELETE FROM grantor_single_use \
    WHERE key = $1 AND expires_at > $2 RETURNING value";

/// Keeps key material under `$1` unless live material (expiring after `$4`) holds the name:
/// changes one row for exactly one of concurrent callers.
pub(crate) const INSERT_KEY: &str = "INSERT INTO grantor_keys (name, material, expires_at) \
    VALUES ($1, $2, $3) \
    ON CONFLICT (name) DO UPDATE SET material = excluded.material, \
    expires_at = excluded.expires_at \
    WHERE grantor_keys.expires_at <= $4";
/// Every name holding live material at `$1`, with its expiry, by name.
pub(crate) const KEY_NAMES: &str = "SELECT name, expires_at FROM grantor_keys \
    WHERE expires_at > $1 ORDER BY name";
/// Replaces the live material under `$1` with `$2`, its expiry unchanged.
pub(crate) const REPLACE_KEY: &str = "UPDATE grantor_keys SET material = $2 \
    WHERE name = $1 AND expires_at > $3";
pub(crate) const FIND_KEY: &str =
    "SELECT material AS value FROM grantor_keys WHERE name = $1 AND expires_at > $2";

// Single sign-on: signed-in browsers and the grants issued in them, remembered approvals.

/// Keeps a signed-in browser under `$1`, replacing one kept there before (whose grants
/// [`FORGET_SESSION_GRANTS`] deletes first); `$8` is how many grants it arrives with, numbered
/// from 1; `$9` its `acr` (NULL for none).
pub(crate) const UPSERT_USER_SESSION: &str = "INSERT INTO grantor_user_sessions \
    (digest, user_id, username, sid, auth_time, amr, expires_at, last_grant, acr) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
    ON CONFLICT (digest) DO UPDATE SET user_id = excluded.user_id, \
    username = excluded.username, sid = excluded.sid, auth_time = excluded.auth_time, \
    amr = excluded.amr, expires_at = excluded.expires_at, last_grant = excluded.last_grant, \
    acr = excluded.acr";
/// Forgets user `$1`'s sessions other than `$2` but the `$4` live at `$3` signed in most
/// recently (expired ones with them), answering their digests (as `value`) so that their grants
/// follow: what keeps a user at [`MAX_SESSIONS_PER_USER`](crate::store::MAX_SESSIONS_PER_USER).
pub(crate) const FORGET_OLDEST_USER_SESSIONS: &str = "DELETE FROM grantor_user_sessions \
    WHERE user_id = $1 AND digest <> $2 AND digest NOT IN (\
    SELECT digest FROM grantor_user_sessions \
    WHERE user_id = $1 AND digest <> $2 AND expires_at > $3 \
    ORDER BY auth_time DESC, digest DESC LIMIT $4) \
    RETURNING digest AS value";
/// A live signed-in browser, once per grant in the order they were issued (the grant's columns
/// NULL when it has none): one statement, so the session and its grants are read at one
/// instant.
pub(crate) const FIND_USER_SESSION: &str = "SELECT s.user_id, s.username, s.sid, \
    s.auth_time, s.amr, s.acr, s.expires_at, g.client_id, g.family_id \
    FROM grantor_user_sessions s \
    LEFT JOIN grantor_session_grants g ON g.session = s.digest \
    WHERE s.digest = $1 AND s.expires_at > $2 ORDER BY g.seq";
/// Numbers the next grant of the live session `$1` at `$2` and answers its number and the
/// session's expiry; no row without such a session. The row stays locked until the write
/// commits, so grants to one session are numbered and bounded one at a time, and a logout
/// racing them either waits for them (and ends them too) or comes first (and they find no
/// session).
pub(crate) const NEXT_SESSION_GRANT: &str = "UPDATE grantor_user_sessions \
    SET last_grant = last_grant + 1 WHERE digest = $1 AND expires_at > $2 \
    RETURNING last_grant, expires_at";
/// Grant `$2` of session `$1`: client `$3`, family `$4`, gone with the session at `$5`.
pub(crate) const INSERT_SESSION_GRANT: &str = "INSERT INTO grantor_session_grants \
    (session, seq, client_id, family_id, expires_at) VALUES ($1, $2, $3, $4, $5)";
/// Forgets session `$1`'s grants numbered `$2` or less: those older than the newest
/// [`MAX_SESSION_GRANTS`](crate::store::MAX_SESSION_GRANTS).
pub(crate) const FORGET_OLD_SESSION_GRANTS: &str =
    "DELETE FROM grantor_session_grants WHERE session = $1 AND seq <= $2";
/// Forgets every grant of session `$1` (before another session takes its digest).
pub(crate) const FORGET_SESSION_GRANTS: &str =
    "DELETE FROM grantor_session_grants WHERE session = $1";
/// Removes a live signed-in browser and answers it: one caller gets the row (its grants
/// follow with [`TAKE_SESSION_GRANTS`] in the same write).
pub(crate) const END_USER_SESSION: &str = "DELETE FROM grantor_user_sessions \
    WHERE digest = $1 AND expires_at > $2 \
    RETURNING user_id, username, sid, auth_time, amr, acr, expires_at";
/// The digests (as `value`) of user `$1`'s sessions live at `$2`: what ending them all ends
/// one by one.
pub(crate) const USER_SESSION_DIGESTS: &str = "SELECT digest AS value \
    FROM grantor_user_sessions WHERE user_id = $1 AND expires_at > $2";
/// Removes every grant of session `$1` and answers them (in no order: `seq` orders them).
pub(crate) const TAKE_SESSION_GRANTS: &str = "DELETE FROM grantor_session_grants \
    WHERE session = $1 RETURNING seq, client_id, family_id";

/// Keeps user `$1`'s approval of scope `$3` and audience `$5` for client `$2` until `$4`,
/// replacing the one before.
pub(crate) const UPSERT_CONSENT: &str = "INSERT INTO grantor_consents \
    (user_id, client_id, scope, expires_at, audience) VALUES ($1, $2, $3, $4, $5) \
    ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, \
    expires_at = excluded.expires_at, audience = excluded.audience";
pub(crate) const FIND_CONSENT: &str = "SELECT scope, audience FROM grantor_consents \
    WHERE user_id = $1 AND client_id = $2 AND expires_at > $3";
/// User `$1`'s approvals live at `$2`, by client id.
pub(crate) const USER_CONSENTS: &str = "SELECT client_id, scope, audience \
    FROM grantor_consents WHERE user_id = $1 AND expires_at > $2 ORDER BY client_id";
pub(crate) const FORGET_CONSENT: &str =
    "DELETE FROM grantor_consents WHERE user_id = $1 AND client_id = $2";

/// `purge_expired`, in this order; those with `$1` bind now. Each answers how many entries
/// went.
pub(crate) const PURGE: [&str; 15] = [
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
    "DELETE FROM grantor_sessions WHERE expires_at <= $1",
    "DELETE FROM grantor_attempts WHERE resets_at <= $1",
    "DELETE FROM grantor_single_use WHERE expires_at <= $1",
    "DELETE FROM grantor_keys WHERE expires_at <= $1",
    "DELETE FROM grantor_user_sessions WHERE expires_at <= $1",
    "DELETE FROM grantor_consents WHERE expires_at <= $1",
];

/// `purge_expired` too, after [`PURGE`], binding now as `$1`: rows that are parts of an entry
/// counted there (a session's grants, which expire with it), so not counted again.
pub(crate) const PURGE_PARTS: [&str; 1] =
    ["DELETE FROM grantor_session_grants WHERE expires_at <= $1"];
