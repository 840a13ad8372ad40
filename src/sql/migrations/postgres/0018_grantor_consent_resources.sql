-- The resources (RFC 8707) a remembered approval covers, space-separated as a family's audience
-- is: a request for another resource asks the user again. NULL: an approval kept before this
-- migration, which covers the server's default audience only.
ALTER TABLE grantor_consents ADD COLUMN audience TEXT;
