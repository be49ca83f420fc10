-- A space's webhooks: migrations/0026_space_webhooks.sql says what and why.
ALTER TABLE webhooks ADD COLUMN space_id TEXT COLLATE "C" REFERENCES spaces (id);
CREATE INDEX idx_webhooks_space ON webhooks (space_id, created_at, id)
    WHERE space_id IS NOT NULL;
