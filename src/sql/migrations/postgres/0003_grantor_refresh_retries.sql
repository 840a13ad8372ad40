-- Refresh retries and absolute family lifetimes.
--
-- `ends_at`: the family's absolute end (Unix seconds), fixed by its first refresh token; NULL
-- for a family without one. `replaced_generation`, `rotated_at` and `current_access`: the last
-- rotation (the generation it replaced, when, and the digest of the access token issued with
-- the current refresh token), so that a retry of a lost answer can revoke what it issued.
ALTER TABLE grantor_families ADD COLUMN ends_at BIGINT;
ALTER TABLE grantor_families ADD COLUMN replaced_generation BIGINT;
ALTER TABLE grantor_families ADD COLUMN rotated_at BIGINT;
ALTER TABLE grantor_families ADD COLUMN current_access BYTEA;
