-- Conversations with the archive: migrations/0025_ask_conversations.sql says what and why.
CREATE TABLE ask_conversations (
    id         TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    owner_id   TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX idx_ask_conversations_owner ON ask_conversations (owner_id, updated_at);

CREATE TABLE ask_turns (
    conversation_id TEXT COLLATE "C" NOT NULL
        REFERENCES ask_conversations (id) ON DELETE CASCADE,
    position        BIGINT NOT NULL,
    question        TEXT NOT NULL,
    answer          TEXT,
    citations       TEXT NOT NULL DEFAULT '[]',
    asked_at        TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (conversation_id, position)
);
