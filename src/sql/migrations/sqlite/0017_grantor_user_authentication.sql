-- How a token's user signed in (RFC 9470, OIDC Core §2): a family's `auth_time`, `acr` and `amr`
-- as one JSON object (`{"auth_time":…,"acr":…,"amr":[…]}`), which every code and token of the
-- family answers; a code keeps its own copy, as it does of the rest of its authorization. NULL:
-- no user sign-in (client credentials), or a family kept before this migration. A signed-in
-- browser's session keeps the authentication context class its sign-in satisfied (`acr`), NULL
-- when the deployment names none.
ALTER TABLE grantor_families ADD COLUMN authentication TEXT;
ALTER TABLE grantor_codes ADD COLUMN authentication TEXT;
ALTER TABLE grantor_user_sessions ADD COLUMN acr TEXT;
