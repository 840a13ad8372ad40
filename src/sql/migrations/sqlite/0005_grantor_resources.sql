-- Resource indicators (RFC 8707). A client may be limited to some of the server's resources (a
-- JSON array of absolute URIs; empty: any). Families, codes and access tokens keep their audience:
-- the resources they are for, space-separated in canonical order. An access token's may be
-- narrower than its family's. Rows from before this migration hold '' and read as the server's
-- default audience.
ALTER TABLE grantor_clients ADD COLUMN resources TEXT NOT NULL DEFAULT '[]';
ALTER TABLE grantor_families ADD COLUMN audience TEXT NOT NULL DEFAULT '';
ALTER TABLE grantor_codes ADD COLUMN audience TEXT NOT NULL DEFAULT '';
ALTER TABLE grantor_access_tokens ADD COLUMN audience TEXT NOT NULL DEFAULT '';
