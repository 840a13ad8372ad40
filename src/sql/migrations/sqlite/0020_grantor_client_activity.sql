-- When each self-registered client (a row with a registration token) last made an authorization
-- or token request, in seconds since the epoch: a client idle past the registration policy's
-- idle lifetime is deleted with its tokens. grantor records a use at most once an hour per
-- client and node. A client kept before this migration starts its clock now; NULL for the
-- others (administered clients are never idle).
ALTER TABLE grantor_clients ADD COLUMN last_used INTEGER;
UPDATE grantor_clients SET last_used = CAST(strftime('%s', 'now') AS INTEGER)
    WHERE registration_token IS NOT NULL;
CREATE INDEX IF NOT EXISTS grantor_clients_last_used ON grantor_clients (last_used)
    WHERE registration_token IS NOT NULL;
