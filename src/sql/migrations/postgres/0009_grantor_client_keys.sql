-- private_key_jwt (RFC 7523 §2.2): a client that authenticates with JWTs it signs keeps its
-- public keys, as a JWK Set in JSON (`jwks`) or the https URL of one (`jwks_uri`, resolved by
-- the host); both NULL for any other client.
ALTER TABLE grantor_clients ADD COLUMN jwks TEXT;
ALTER TABLE grantor_clients ADD COLUMN jwks_uri TEXT;
