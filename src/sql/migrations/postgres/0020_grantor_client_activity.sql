-- When each self-registered client (a row with a registration token) last made an authorization
-- or token request, in seconds since the epoch: a client idle past the registration policy's
-- idle lifetime is deleted with its tokens. grantor records a use at most once an hour per
-- client and node. A client kept before this migration starts its clock now; NULL for the
-- others (administered clients are never idle).
ALTER TABLE grantor_clients ADD COLUMN IF NOT EXISTS last_used BIGINT;
UPDATE grantor_clients SET last_used = CAST(EXTRACT(EPOCH FROM now()) AS BIGINT)
    WHERE registration_token IS NOT NULL AND last_used IS NULL;
CREATE INDEX IF NOT EXISTS grantor_clients_last_used ON grantor_clients (last_used)
    WHERE registration_token IS NOT NULL;
