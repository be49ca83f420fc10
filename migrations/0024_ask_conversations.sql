-- Conversations with the archive (issue 44, docs/ask.md "Conversations"): a
-- person's questions and the answers they got, so a follow-up keeps its context.
-- Stored per person (deleted with the person), deletable one by one. A turn keeps
-- the answer's text and its citations as JSON (record id, utterance, times,
-- speaker, quote); read back, a turn citing a record the person no longer sees
-- shows no answer (the door checks, not this table).
CREATE TABLE ask_conversations (
    id         TEXT PRIMARY KEY NOT NULL,
    owner_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_ask_conversations_owner ON ask_conversations (owner_id, updated_at);

CREATE TABLE ask_turns (
    conversation_id TEXT NOT NULL REFERENCES ask_conversations (id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,
    question        TEXT NOT NULL,
    answer          TEXT,
    citations       TEXT NOT NULL DEFAULT '[]',
    asked_at        TEXT NOT NULL,
    PRIMARY KEY (conversation_id, position)
);
