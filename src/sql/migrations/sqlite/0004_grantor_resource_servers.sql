-- A client may serve audiences as a resource server (RFC 7662 §4): it may introspect the
-- tokens of those audiences. A JSON array of absolute URIs; empty for an ordinary client.
ALTER TABLE grantor_clients ADD COLUMN audiences TEXT NOT NULL DEFAULT '[]';
