-- A webhook's health (issue 39, docs/api.md "Webhooks"): a target that stops
-- answering (timeouts, refused connections, a name that does not resolve) is
-- backed off as a whole, so one person's dead receiver cannot fill the
-- delivery actor with attempts that each wait out their timeout.
-- `failures`: attempts in a row that got no answer from the target (0 once it
-- answers anything); `last_error` the latest one's reason; `paused_until`:
-- none of the webhook's deliveries is tried before it (backoff over `failures`).
ALTER TABLE webhooks ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN last_error TEXT;
ALTER TABLE webhooks ADD COLUMN paused_until TEXT;
