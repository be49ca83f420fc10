-- Webhooks (issue 31, docs/api.md "Webhooks"): a person's HTTP receivers and
-- the durable outbox of what is sent to them.

-- `secret` is a shared secret the service signs every delivery with
-- (HMAC-SHA256), so it is stored as given: a hash could not sign. It is
-- shown once, when the webhook is made, and never answered again.
-- `events` is a JSON array of event names. A webhook whose receiver answered
-- 410 Gone is disabled (`disabled_at`) and gets nothing more.
CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY NOT NULL,
    owner_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    url             TEXT NOT NULL,
    secret          TEXT NOT NULL,
    events          TEXT NOT NULL CHECK (json_valid(events)),
    created_at      TEXT NOT NULL,
    disabled_at     TEXT,
    disabled_reason TEXT
) STRICT;
CREATE INDEX idx_webhooks_owner ON webhooks (owner_id, created_at, id);

-- One row per event per subscribed webhook, written in the same writer
-- transaction as the event (`done`, a halt, a deletion), so a crash can
-- neither lose nor invent one. No foreign key to the record: a deletion's
-- delivery outlives it, and `record_json` keeps what was known of the record
-- when the event was written. `body` is the payload as first sent: every
-- retry sends the same bytes under the same id. The delivery actor sends the
-- pending rows whose `next_attempt_at` has come.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY NOT NULL,
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event           TEXT NOT NULL
        CHECK (event IN ('record.done', 'record.halted', 'record.deleted')),
    record_id       TEXT NOT NULL,
    record_json     TEXT NOT NULL,
    body            BLOB,
    state           TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_status     INTEGER,
    last_error      TEXT,
    created_at      TEXT NOT NULL,
    finished_at     TEXT
) STRICT;
-- Only pending rows are ever looked for: the partial index is as small as the queue.
CREATE INDEX idx_webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';
-- A webhook's latest deliveries (the list, and the pruning of the oldest finished ones).
CREATE INDEX idx_webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id);
