-- Client secret rotation. After a rotation a confidential client keeps the verifier of its
-- previous secret (`sha256:…` or an Argon2id PHC string, never the secret) and the Unix second
-- from which it no longer authenticates; both NULL for a client never rotated.
ALTER TABLE grantor_clients ADD COLUMN previous_secret_verifier TEXT;
ALTER TABLE grantor_clients ADD COLUMN previous_secret_expires_at INTEGER;
