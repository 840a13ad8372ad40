-- grantor's stores on SQLite, version 22: an access token issued alone (in a family of its own
-- with no refresh token: client credentials, most of all) is kept in one row, with what its
-- family row held (the family's id, the client, the user, the sign-in), and no family row. Such a
-- token was two rows and eight B-tree entries (a family and its three indexes, the token and its
-- three); it is now one row and four entries, written by one statement. `family` is NULL for
-- these tokens and `family_id` names their family; a token in a family row has `family` set and
-- the new columns NULL. Live tokens are copied as they are, in issue order. A build from before
-- this migration does not find the tokens issued alone after it: this migration is one way.

CREATE TABLE grantor_access_tokens_alone (
    seq            INTEGER PRIMARY KEY,
    digest         BLOB    NOT NULL,
    family         INTEGER,                    -- grantor_families.seq; NULL: issued alone
    scope          TEXT    NOT NULL,
    jti            TEXT    NOT NULL,
    issued_at      INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    audience       TEXT    NOT NULL DEFAULT '',
    jkt            TEXT,
    act            TEXT,
    -- Of a token issued alone, what its family row would hold.
    family_id      BLOB,                       -- 16 bytes
    client_id      TEXT,
    user_id        TEXT,
    username       TEXT,
    authentication TEXT,
    CHECK ((family IS NULL) = (family_id IS NOT NULL AND client_id IS NOT NULL))
);
INSERT INTO grantor_access_tokens_alone (seq, digest, family, scope, jti, issued_at,
        expires_at, audience, jkt, act)
    SELECT seq, digest, family, scope, jti, issued_at, expires_at, audience, jkt, act
    FROM grantor_access_tokens ORDER BY seq;

-- The trigger of migration 21 names the table replaced here: it goes first, and comes back below.
DROP TRIGGER grantor_families_deleted;
DROP TABLE grantor_access_tokens;
ALTER TABLE grantor_access_tokens_alone RENAME TO grantor_access_tokens;

-- Lookups compare `substr(digest, 1, 8) = substr($1, 1, 8) AND digest = $1`, word for word, so
-- that SQLite uses this index.
CREATE INDEX grantor_access_tokens_digest ON grantor_access_tokens (substr(digest, 1, 8));
CREATE INDEX grantor_access_tokens_expires_at ON grantor_access_tokens (expires_at);
CREATE INDEX grantor_access_tokens_family ON grantor_access_tokens (family)
    WHERE family IS NOT NULL;
-- Revoking the family or the client of a token issued alone finds it by these; a family id is
-- taken once.
CREATE UNIQUE INDEX grantor_access_tokens_family_id ON grantor_access_tokens (family_id)
    WHERE family_id IS NOT NULL;
CREATE INDEX grantor_access_tokens_client_id ON grantor_access_tokens (client_id)
    WHERE client_id IS NOT NULL;

-- As in migration 21, no access token outlives its family's row.
CREATE TRIGGER grantor_families_deleted AFTER DELETE ON grantor_families
BEGIN
    DELETE FROM grantor_access_tokens WHERE family = OLD.seq;
END;
