-- DPoP (RFC 9449). An access token, and a public client's refresh token, may be bound to the key
-- of the client's proofs: `jkt` holds that key's SHA-256 JWK thumbprint (RFC 7638) in unpadded
-- base64url, NULL for an unbound token. A client may be required to send proofs
-- (`dpop_bound_access_tokens`, RFC 9449 §5.2).
ALTER TABLE grantor_access_tokens ADD COLUMN jkt TEXT;
ALTER TABLE grantor_refresh_tokens ADD COLUMN jkt TEXT;
ALTER TABLE grantor_clients ADD COLUMN dpop_bound BOOLEAN NOT NULL DEFAULT FALSE;
