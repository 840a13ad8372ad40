-- grantor's stores on SQLite, version 1.
--
-- Codes and tokens are kept only as SHA-256 digests (32-byte BLOBs, the primary keys every
-- lookup goes through); client secrets and passwords only as verifiers (`sha256:…` or Argon2id
-- PHC strings). Every lookup on the request path is a primary-key or unique-index probe, O(log n);
-- the secondary indexes serve `purge_expired` (by expiry) and the purge of revoked families.
-- Times are Unix seconds.

CREATE TABLE IF NOT EXISTS grantor_clients (
    client_id         TEXT    NOT NULL PRIMARY KEY,
    name              TEXT    NOT NULL,
    secret_verifier   TEXT,                -- NULL for a public client
    redirect_uris     TEXT    NOT NULL,    -- a JSON array of strings
    grant_types       TEXT    NOT NULL,    -- space-separated grant type names
    scopes            TEXT    NOT NULL,
    default_scope     TEXT    NOT NULL,
    approval_required BOOLEAN NOT NULL
);

CREATE TABLE IF NOT EXISTS grantor_users (
    id            TEXT NOT NULL PRIMARY KEY,
    username      TEXT NOT NULL,           -- as registered
    username_key  TEXT NOT NULL UNIQUE,    -- lowercase: usernames match case-insensitively
    password_hash TEXT NOT NULL            -- Argon2id PHC string
);

-- One authorization and everything descending from it. `generation` is that of the family's
-- current refresh token (older ones are rotated); `expires_at` is the latest expiry of anything
-- in the family, code tombstones included.
CREATE TABLE IF NOT EXISTS grantor_families (
    id         BLOB    NOT NULL PRIMARY KEY,   -- 16 random bytes
    client_id  TEXT    NOT NULL,
    user_id    TEXT,
    username   TEXT,
    scope      TEXT    NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    revoked    BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grantor_families_expires_at ON grantor_families (expires_at);
CREATE INDEX IF NOT EXISTS grantor_families_revoked ON grantor_families (id) WHERE revoked;

-- Authorization codes; a redeemed one stays as a tombstone until `forget_at` (an hour past its
-- expiry) so that a late replay still names its family.
CREATE TABLE IF NOT EXISTS grantor_codes (
    digest                BLOB    NOT NULL PRIMARY KEY,
    family_id             BLOB    NOT NULL,
    client_id             TEXT    NOT NULL,
    user_id               TEXT,
    username              TEXT,
    scope                 TEXT    NOT NULL,
    redirect_uri          TEXT    NOT NULL,
    code_challenge        TEXT,
    code_challenge_method TEXT,
    issued_at             INTEGER NOT NULL,
    expires_at            INTEGER NOT NULL,
    forget_at             INTEGER NOT NULL,
    redeemed              BOOLEAN NOT NULL DEFAULT FALSE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grantor_codes_expires_at ON grantor_codes (expires_at);
CREATE INDEX IF NOT EXISTS grantor_codes_forget_at ON grantor_codes (forget_at);

CREATE TABLE IF NOT EXISTS grantor_access_tokens (
    digest     BLOB    NOT NULL PRIMARY KEY,
    family_id  BLOB    NOT NULL,
    scope      TEXT    NOT NULL,
    jti        TEXT    NOT NULL,
    issued_at  INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grantor_access_tokens_expires_at ON grantor_access_tokens (expires_at);
CREATE INDEX IF NOT EXISTS grantor_access_tokens_family_id ON grantor_access_tokens (family_id);

CREATE TABLE IF NOT EXISTS grantor_refresh_tokens (
    digest     BLOB    NOT NULL PRIMARY KEY,
    family_id  BLOB    NOT NULL,
    generation INTEGER NOT NULL,
    issued_at  INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grantor_refresh_tokens_expires_at ON grantor_refresh_tokens (expires_at);
CREATE INDEX IF NOT EXISTS grantor_refresh_tokens_family_id ON grantor_refresh_tokens (family_id);
