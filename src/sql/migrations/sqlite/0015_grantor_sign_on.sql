-- grantor's stores on SQLite, version 15: single sign-on. A signed-in browser (an
-- OpenID Connect end-user session) is keyed by the SHA-256 digest of its cookie, never the
-- cookie; the grants issued in it are rows of their own, so that concurrent grants each insert
-- theirs instead of rewriting one list; approvals people gave clients are kept per user and
-- client. Each table has an index on its expiry for `purge_expired`. Times are Unix seconds.

-- A signed-in browser, until `expires_at`. `last_grant` numbers its grants: each new grant takes
-- the next number by incrementing it, which also serializes the grants of one session.
CREATE TABLE IF NOT EXISTS grantor_user_sessions (
    digest     BLOB    NOT NULL PRIMARY KEY,   -- SHA-256 digest of the browser's cookie
    user_id    TEXT    NOT NULL,
    username   TEXT    NOT NULL,
    sid        TEXT    NOT NULL,               -- the public session id (`sid`)
    auth_time  INTEGER NOT NULL,
    amr        TEXT    NOT NULL,               -- the authentication methods, a JSON array
    expires_at INTEGER NOT NULL,
    last_grant INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grantor_user_sessions_expires_at
    ON grantor_user_sessions (expires_at);
-- A user's sessions, newest sign-in first: a sign-in past 32 forgets the oldest.
CREATE INDEX IF NOT EXISTS grantor_user_sessions_user
    ON grantor_user_sessions (user_id, auth_time);

-- The grants issued in a session, in the order `seq` gives, at most 64 (older ones deleted).
-- Each carries its session's expiry, so purging drops them by that index alone.
CREATE TABLE IF NOT EXISTS grantor_session_grants (
    session    BLOB    NOT NULL,               -- grantor_user_sessions.digest
    seq        INTEGER NOT NULL,
    client_id  TEXT    NOT NULL,
    family_id  BLOB    NOT NULL,               -- 16 bytes
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grantor_session_grants_expires_at
    ON grantor_session_grants (expires_at);

-- The scope a user approved for a client, until `expires_at` (remembered consent).
CREATE TABLE IF NOT EXISTS grantor_consents (
    user_id    TEXT    NOT NULL,
    client_id  TEXT    NOT NULL,
    scope      TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grantor_consents_expires_at ON grantor_consents (expires_at);
