-- A webhook's health: migrations/0019_webhook_health.sql says what and why.
ALTER TABLE webhooks ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN last_error TEXT COLLATE "C";
ALTER TABLE webhooks ADD COLUMN paused_until TEXT COLLATE "C";
