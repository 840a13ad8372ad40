-- A client that registered itself (RFC 7591) keeps the SHA-256 digest of its registration
-- access token (RFC 7592 §1.1), 32 bytes, never the token; NULL for a client an administrator
-- registered, which cannot be managed through the client configuration endpoint.
ALTER TABLE grantor_clients ADD COLUMN registration_token BLOB;
