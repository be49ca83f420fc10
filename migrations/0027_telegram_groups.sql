-- Telegram group chats linked to a space (issue 41, docs/telegram.md "Group chats"):
-- `/link SPACE` in a group, sent by a listed sender who may file records into the
-- space (its editor or admin), makes one row; `/unlink` deletes it. Audio sent in a
-- linked group becomes a record of the space; a group with no row takes none.
-- `chat_id` is Telegram's (a group's is negative); `linked_by` is who linked it:
-- the owner of the records whose sender is not a listed member who may file them.
CREATE TABLE telegram_groups (
    chat_id    INTEGER PRIMARY KEY NOT NULL,
    space_id   TEXT NOT NULL REFERENCES spaces (id),
    linked_by  TEXT NOT NULL REFERENCES users (id),
    created_at TEXT NOT NULL
) STRICT;
