-- The Telegram bot, finished (docs/telegram.md): a durable outbox of replies
-- and halt notices, and the one living status message of every record.

-- A reply or halt notice: written in the same writer transaction as the
-- record reaching `done` or being halted, so a crash can neither lose it nor
-- write it twice. The delivery actor sends pending rows in order per chat.
CREATE TABLE telegram_outbox (
    id              TEXT PRIMARY KEY,
    record_id       TEXT NOT NULL REFERENCES audio_records (id) ON DELETE CASCADE,
    chat_id         INTEGER NOT NULL,
    reply_to        INTEGER,
    kind            TEXT NOT NULL CHECK (kind IN ('transcript', 'halt_notice')),
    halt_reason     TEXT,
    language        TEXT NOT NULL DEFAULT '',
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'ended')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    sent_at         TEXT,
    tg_message_id   INTEGER,
    end_reason      TEXT
) STRICT;
-- Only pending rows are ever looked for: the partial indexes stay as small as the queue.
CREATE INDEX idx_outbox_due ON telegram_outbox (next_attempt_at, chat_id) WHERE state = 'pending';
CREATE INDEX idx_outbox_chat ON telegram_outbox (chat_id, created_at, id) WHERE state = 'pending';
CREATE INDEX idx_outbox_record ON telegram_outbox (record_id);

-- The bot's first answer to a sender's message, edited as the record moves.
-- `language` is the sender's catalogue, kept for every later text of the record.
CREATE TABLE telegram_status (
    record_id  TEXT PRIMARY KEY REFERENCES audio_records (id) ON DELETE CASCADE,
    chat_id    INTEGER NOT NULL,
    message_id INTEGER,
    language   TEXT NOT NULL,
    shown_text TEXT NOT NULL DEFAULT '',
    live       INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX idx_status_live ON telegram_status (record_id) WHERE live = 1 AND message_id IS NOT NULL;
