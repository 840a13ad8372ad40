-- One-time values are bounded per kind (`grantor:par:…` is `par`; the kinds are grantor's own,
-- computed by the store as each value is kept), as the in-memory store bounds them: a flood of
-- one kind (pushed requests through self-registered clients, say) fills only its own share. A
-- value kept before this migration counts as kind `other` until it goes. What each kind holds
-- (rows and bytes of values) is kept up to date by triggers, so checking room before an insert
-- reads one row instead of counting the table.
ALTER TABLE grantor_single_use ADD COLUMN kind TEXT NOT NULL DEFAULT 'other';
CREATE INDEX IF NOT EXISTS grantor_single_use_kind_expires_at
    ON grantor_single_use (kind, expires_at);
CREATE TABLE IF NOT EXISTS grantor_single_use_kinds (
    kind  TEXT    NOT NULL,
    slot  INTEGER NOT NULL,
    held  INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (kind, slot)
) WITHOUT ROWID;
INSERT INTO grantor_single_use_kinds (kind, slot, held, bytes)
    SELECT kind, 0, COUNT(*), COALESCE(SUM(length(value)), 0)
    FROM grantor_single_use GROUP BY kind;
CREATE TRIGGER IF NOT EXISTS grantor_single_use_inserted
    AFTER INSERT ON grantor_single_use
BEGIN
    INSERT OR IGNORE INTO grantor_single_use_kinds (kind, slot, held, bytes)
        VALUES (NEW.kind, 0, 0, 0);
    UPDATE grantor_single_use_kinds
        SET held = held + 1, bytes = bytes + length(NEW.value)
        WHERE kind = NEW.kind AND slot = 0;
END;
CREATE TRIGGER IF NOT EXISTS grantor_single_use_deleted
    AFTER DELETE ON grantor_single_use
BEGIN
    UPDATE grantor_single_use_kinds
        SET held = held - 1, bytes = bytes - length(OLD.value)
        WHERE kind = OLD.kind AND slot = 0;
END;
CREATE TRIGGER IF NOT EXISTS grantor_single_use_replaced
    AFTER UPDATE OF value ON grantor_single_use
BEGIN
    UPDATE grantor_single_use_kinds
        SET bytes = bytes - length(OLD.value) + length(NEW.value)
        WHERE kind = OLD.kind AND slot = 0;
END;
