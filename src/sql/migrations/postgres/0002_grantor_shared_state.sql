-- grantor's stores on PostgreSQL, version 2: the state every node shares besides codes and
-- tokens. Sign-in sessions are keyed by the SHA-256 digest of their id and keep only the digest of
-- their CSRF token; keys of attempt counters and single-use values are strings grantor builds,
-- never a secret. Each table has an index on its expiry for `purge_expired`. Times are Unix
-- seconds.

-- A browser's sign-in in progress, until `expires_at`.
CREATE TABLE IF NOT EXISTS grantor_sessions (
    id         BYTEA  NOT NULL PRIMARY KEY,    -- SHA-256 digest of the session id
    request    TEXT   NOT NULL,                -- the pending authorization, as grantor wrote it
    csrf       BYTEA  NOT NULL,                -- SHA-256 digest of the CSRF token
    user_id    TEXT,                           -- the signed-in user, once there is one
    username   TEXT,
    expires_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS grantor_sessions_expires_at ON grantor_sessions (expires_at);

-- Attempts per key in fixed windows (throttling); the window ends at `resets_at`.
CREATE TABLE IF NOT EXISTS grantor_attempts (
    key       TEXT   NOT NULL PRIMARY KEY,
    count     BIGINT NOT NULL,
    resets_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS grantor_attempts_resets_at ON grantor_attempts (resets_at);

-- Values usable once, until `expires_at` (DPoP proof ids, pushed requests, device codes).
CREATE TABLE IF NOT EXISTS grantor_single_use (
    key        TEXT   NOT NULL PRIMARY KEY,
    value      BYTEA  NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS grantor_single_use_expires_at ON grantor_single_use (expires_at);
