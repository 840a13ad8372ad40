-- Pushed authorization requests (RFC 9126). A client may be required to push every
-- authorization request (`require_pushed_authorization_requests`, RFC 9126 §6). The pushed
-- requests themselves live in the single-use table until they expire.
ALTER TABLE grantor_clients ADD COLUMN par_required BOOLEAN NOT NULL DEFAULT FALSE;
