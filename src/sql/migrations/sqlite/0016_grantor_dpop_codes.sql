-- DPoP-bound authorization codes (RFC 9449 §10): a code may be bound to the key named by the
-- authorization request's `dpop_jkt` or proven on its pushed request; `jkt` holds that key's
-- SHA-256 JWK thumbprint (RFC 7638) in unpadded base64url, NULL for an unbound code. The code's
-- redemption must carry a proof of that key.
ALTER TABLE grantor_codes ADD COLUMN jkt TEXT;
