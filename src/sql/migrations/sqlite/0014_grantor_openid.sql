-- OpenID Connect: a client's OpenID members (`id_token_signed_response_alg`, …) as one JSON
-- object, a user's claims (OIDC Core §5.1) as one JSON object, and what a code's ID token
-- needs (`nonce`, `auth_time`, …) as one JSON object. NULL: none.
ALTER TABLE grantor_clients ADD COLUMN openid TEXT;
ALTER TABLE grantor_users ADD COLUMN claims TEXT;
ALTER TABLE grantor_codes ADD COLUMN openid TEXT;
