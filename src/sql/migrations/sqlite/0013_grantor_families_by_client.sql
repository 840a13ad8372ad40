-- Families by client: deleting a client (RFC 7592 §2.3) revokes every family it has, found by
-- this index rather than a scan.
CREATE INDEX IF NOT EXISTS grantor_families_client_id ON grantor_families (client_id);
