-- One-time values are bounded per kind (`grantor:par:…` is `par`; the kinds are grantor's own,
-- computed by the store as each value is kept), as the in-memory store bounds them: a flood of
-- one kind (pushed requests through self-registered clients, say) fills only its own share. A
-- value kept before this migration counts as kind `other` until it goes. What each kind holds
-- (rows and bytes of values) is kept up to date by triggers, in 16 slots per kind (by the last
-- character of the key, a digest's) so that concurrent inserts of one kind rarely wait for one
-- another's row; checking room before an insert sums the kind's slots instead of counting the
-- table. Inserts and deletes are counted once per statement (a purge updates each slot once).
ALTER TABLE grantor_single_use ADD COLUMN IF NOT EXISTS kind TEXT NOT NULL DEFAULT 'other';
CREATE INDEX IF NOT EXISTS grantor_single_use_kind_expires_at
    ON grantor_single_use (kind, expires_at);
CREATE TABLE IF NOT EXISTS grantor_single_use_kinds (
    kind  TEXT    NOT NULL,
    slot  INTEGER NOT NULL,
    held  BIGINT  NOT NULL,
    bytes BIGINT  NOT NULL,
    PRIMARY KEY (kind, slot)
);
INSERT INTO grantor_single_use_kinds (kind, slot, held, bytes)
    SELECT kind, ascii(right(key, 1)) % 16, COUNT(*), COALESCE(SUM(octet_length(value)), 0)
    FROM grantor_single_use GROUP BY 1, 2
    ON CONFLICT (kind, slot) DO NOTHING;

CREATE OR REPLACE FUNCTION grantor_single_use_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO grantor_single_use_kinds AS k (kind, slot, held, bytes)
        SELECT kind, ascii(right(key, 1)) % 16, COUNT(*), SUM(octet_length(value))
        FROM inserted GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (kind, slot)
        DO UPDATE SET held = k.held + excluded.held, bytes = k.bytes + excluded.bytes;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION grantor_single_use_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE grantor_single_use_kinds AS k
        SET held = k.held - gone.held, bytes = k.bytes - gone.bytes
        FROM (SELECT kind, ascii(right(key, 1)) % 16 AS slot, COUNT(*) AS held,
                     SUM(octet_length(value)) AS bytes
              FROM deleted GROUP BY 1, 2) AS gone
        WHERE k.kind = gone.kind AND k.slot = gone.slot;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION grantor_single_use_replaced() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE grantor_single_use_kinds
        SET bytes = bytes - octet_length(OLD.value) + octet_length(NEW.value)
        WHERE kind = OLD.kind AND slot = ascii(right(OLD.key, 1)) % 16;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS grantor_single_use_inserted ON grantor_single_use;
CREATE TRIGGER grantor_single_use_inserted
    AFTER INSERT ON grantor_single_use
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION grantor_single_use_inserted();
DROP TRIGGER IF EXISTS grantor_single_use_deleted ON grantor_single_use;
CREATE TRIGGER grantor_single_use_deleted
    AFTER DELETE ON grantor_single_use
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION grantor_single_use_deleted();
DROP TRIGGER IF EXISTS grantor_single_use_replaced ON grantor_single_use;
CREATE TRIGGER grantor_single_use_replaced
    AFTER UPDATE OF value ON grantor_single_use
    FOR EACH ROW EXECUTE FUNCTION grantor_single_use_replaced();
