-- grantor's stores on SQLite, version 21: families and access tokens laid out in the order they
-- are issued. Each table was keyed by a random value (a family's id, a token's digest), so every
-- issued token wrote to a random page of each table and of the index by family, and every commit
-- copied those pages to the write-ahead log. Now each row is appended under an increasing `seq`
-- (the rowid), so the tokens of one commit share their last pages; a lookup goes through a narrow
-- index instead: a family by its id (16 bytes), an access token by the first 8 bytes of its
-- digest, the full digest compared in the row. An access token names its family by `seq`, which
-- also grows with time, so the index of tokens by family is appended to as well. Live tokens and
-- families are copied as they are. Older builds of grantor cannot use these tables: this
-- migration is one way.

CREATE TABLE grantor_families_by_issue (
    seq                 INTEGER PRIMARY KEY,
    id                  BLOB    NOT NULL,      -- 16 random bytes
    client_id           TEXT    NOT NULL,
    user_id             TEXT,
    username            TEXT,
    scope               TEXT    NOT NULL,
    generation          INTEGER NOT NULL DEFAULT 0,
    revoked             BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at          INTEGER NOT NULL,
    ends_at             INTEGER,
    replaced_generation INTEGER,
    rotated_at          INTEGER,
    current_access      BLOB,
    audience            TEXT    NOT NULL DEFAULT '',
    authentication      TEXT
);
INSERT INTO grantor_families_by_issue (id, client_id, user_id, username, scope, generation,
        revoked, expires_at, ends_at, replaced_generation, rotated_at, current_access, audience,
        authentication)
    SELECT id, client_id, user_id, username, scope, generation, revoked, expires_at, ends_at,
        replaced_generation, rotated_at, current_access, audience, authentication
    FROM grantor_families;

CREATE TABLE grantor_access_tokens_by_issue (
    seq        INTEGER PRIMARY KEY,
    digest     BLOB    NOT NULL,
    family     INTEGER NOT NULL,               -- grantor_families.seq
    scope      TEXT    NOT NULL,
    jti        TEXT    NOT NULL,
    issued_at  INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    audience   TEXT    NOT NULL DEFAULT '',
    jkt        TEXT,
    act        TEXT
);
-- A token of a family that is gone was never found again; it is not copied.
INSERT INTO grantor_access_tokens_by_issue (digest, family, scope, jti, issued_at, expires_at,
        audience, jkt, act)
    SELECT a.digest, f.seq, a.scope, a.jti, a.issued_at, a.expires_at, a.audience, a.jkt, a.act
    FROM grantor_access_tokens a JOIN grantor_families_by_issue f ON f.id = a.family_id
    ORDER BY a.issued_at;

DROP TABLE grantor_access_tokens;
DROP TABLE grantor_families;
ALTER TABLE grantor_families_by_issue RENAME TO grantor_families;
ALTER TABLE grantor_access_tokens_by_issue RENAME TO grantor_access_tokens;

CREATE UNIQUE INDEX grantor_families_id ON grantor_families (id);
CREATE INDEX grantor_families_expires_at ON grantor_families (expires_at);
CREATE INDEX grantor_families_revoked ON grantor_families (id) WHERE revoked;
CREATE INDEX grantor_families_client_id ON grantor_families (client_id);

-- Lookups compare `substr(digest, 1, 8) = substr($1, 1, 8) AND digest = $1`, word for word, so
-- that SQLite uses this index.
CREATE INDEX grantor_access_tokens_digest ON grantor_access_tokens (substr(digest, 1, 8));
CREATE INDEX grantor_access_tokens_expires_at ON grantor_access_tokens (expires_at);
CREATE INDEX grantor_access_tokens_family ON grantor_access_tokens (family);

-- No access token outlives its family's row, so a `seq` SQLite hands out again (the largest
-- one, once deleted) never finds an older family's tokens. Purging deletes the tokens first;
-- this keeps it so whatever deletes a family.
CREATE TRIGGER grantor_families_deleted AFTER DELETE ON grantor_families
BEGIN
    DELETE FROM grantor_access_tokens WHERE family = OLD.seq;
END;
