-- Token exchange (RFC 8693). An access token issued by delegation names who acts for its user:
-- `act` holds the RFC 8693 §4.1 `act` claim as JSON text (`{"sub":…,"act":{…}}`, the current
-- actor outermost), NULL for every other token.
ALTER TABLE grantor_access_tokens ADD COLUMN act TEXT;
