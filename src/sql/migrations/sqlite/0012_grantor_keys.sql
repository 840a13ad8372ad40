-- grantor's stores on SQLite, version 12: key material (the keys that seal sign-in forms, JWT
-- signing keys, DPoP nonces) in a table of its own, apart from the single-use values. What it
-- holds is secret at rest: whoever reads it can sign tokens, unless the server encrypts it under
-- a key-encryption key the host keeps elsewhere (then it holds ciphertext only). Names are
-- strings grantor builds (`grantor:seal:<day>`, `grantor:jwk:<alg>:<period>`,
-- `grantor:dpop-nonce:<period>`); the material in place moves here, so tokens signed before the
-- upgrade keep verifying.
CREATE TABLE IF NOT EXISTS grantor_keys (
    name       TEXT    NOT NULL PRIMARY KEY,
    material   BLOB    NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grantor_keys_expires_at ON grantor_keys (expires_at);

INSERT INTO grantor_keys (name, material, expires_at)
    SELECT key, value, expires_at FROM grantor_single_use
    WHERE key LIKE 'grantor:seal:%' OR key LIKE 'grantor:jwk:%' OR key LIKE 'grantor:dpop-nonce:%'
    ON CONFLICT (name) DO NOTHING;
DELETE FROM grantor_single_use
    WHERE key LIKE 'grantor:seal:%' OR key LIKE 'grantor:jwk:%' OR key LIKE 'grantor:dpop-nonce:%';
