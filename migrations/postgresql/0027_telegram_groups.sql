-- Telegram group chats linked to a space: migrations/0027_telegram_groups.sql says
-- what and why.
CREATE TABLE telegram_groups (
    chat_id    BIGINT PRIMARY KEY NOT NULL,
    space_id   TEXT COLLATE "C" NOT NULL REFERENCES spaces (id),
    linked_by  TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    created_at TEXT COLLATE "C" NOT NULL
);
