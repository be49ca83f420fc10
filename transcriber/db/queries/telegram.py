"""The Telegram outbox and status messages (migrations/0007_telegram_outbox.sql)."""

# In the writer's transaction of `done` or a halt: one row for a Telegram
# record with a chat, none otherwise (an HTTP record, a record without a chat).
ENQUEUE = """
INSERT INTO telegram_outbox (
    id, record_id, chat_id, reply_to, kind, halt_reason, language, state, attempts,
    next_attempt_at, created_at
)
SELECT :id, r.id, r.tg_chat_id, r.tg_message_id, :kind, :halt_reason,
       coalesce((SELECT s.language FROM telegram_status s WHERE s.record_id = r.id), ''),
       'pending', 0, :now, :now
FROM audio_records r
WHERE r.id = :record_id AND r.source = 'telegram' AND r.tg_chat_id IS NOT NULL
"""

# Chats with a row whose time has come (the delivery actor's round).
DUE_CHATS = """
SELECT DISTINCT chat_id FROM telegram_outbox
WHERE state = 'pending' AND next_attempt_at <= :now
LIMIT :limit
"""

# A chat's pending rows, oldest first: sent in this order, none overtakes another.
PENDING_OF_CHAT = """
SELECT id, record_id, chat_id, reply_to, kind, halt_reason, language, attempts,
       next_attempt_at, created_at
FROM telegram_outbox
WHERE state = 'pending' AND chat_id = :chat_id
ORDER BY created_at, id
LIMIT :limit
"""

CHAT_OF_RECORD = """
SELECT chat_id FROM telegram_outbox WHERE record_id = :record_id AND state = 'pending' LIMIT 1
"""

OUTBOX_DEPTH = """
SELECT count(*) AS n FROM telegram_outbox WHERE state = 'pending'
"""

MARK_SENT = """
UPDATE telegram_outbox
SET state = 'sent', sent_at = :now, tg_message_id = :message_id, attempts = attempts + 1
WHERE id = :id AND state = 'pending'
"""

MARK_RETRY = """
UPDATE telegram_outbox
SET attempts = attempts + 1, next_attempt_at = :next_attempt_at
WHERE id = :id AND state = 'pending'
"""

MARK_ENDED = """
UPDATE telegram_outbox
SET state = 'ended', end_reason = :reason, attempts = attempts + 1
WHERE id = :id AND state = 'pending'
"""

OUTBOX_OF_RECORD = """
SELECT id, kind, state, attempts, tg_message_id, end_reason, language
FROM telegram_outbox WHERE record_id = :record_id ORDER BY created_at, id
"""

# -- the living status message -------------------------------------------------------

UPSERT_STATUS = """
INSERT INTO telegram_status (record_id, chat_id, message_id, language, shown_text, live,
                             updated_at)
VALUES (:record_id, :chat_id, :message_id, :language, :shown_text, 1, :now)
ON CONFLICT (record_id) DO UPDATE SET
    message_id = coalesce(excluded.message_id, telegram_status.message_id),
    shown_text = CASE WHEN excluded.message_id IS NULL THEN telegram_status.shown_text
                      ELSE excluded.shown_text END,
    updated_at = excluded.updated_at
"""

# The status messages still to follow, with what their records are doing now.
# CROSS JOIN keeps the live statuses (a partial index: records on their way)
# as the outer loop; the planner, given statistics, would otherwise scan the archive.
LIVE_STATUSES = """
SELECT s.record_id, s.chat_id, s.message_id, s.language, s.shown_text,
       r.state, r.halted_at, r.halt_reason
FROM telegram_status s CROSS JOIN audio_records r ON r.id = s.record_id
WHERE s.live = 1 AND s.message_id IS NOT NULL
LIMIT :limit
"""

MARK_STATUS_SHOWN = """
UPDATE telegram_status SET shown_text = :shown_text, live = :live, updated_at = :now
WHERE record_id = :record_id
"""

STATUS_OF_RECORD = """
SELECT record_id, chat_id, message_id, language, shown_text, live
FROM telegram_status WHERE record_id = :record_id
"""

# -- commands -------------------------------------------------------------------------

# The sender's latest records (/status), newest first, by the owner's page index.
LATEST_OF_OWNER = """
SELECT id, title, original_filename, state, halted_at, halt_reason, created_at
FROM audio_records WHERE owner_id = :owner_id
ORDER BY created_at DESC, id DESC
LIMIT :limit
"""

# The sender's latest transcript (/last).
LATEST_TRANSCRIPT_OF_OWNER = """
SELECT r.id, r.tg_chat_id, t.contents
FROM audio_records r JOIN texts t ON t.id = r.transcript_text_id
WHERE r.owner_id = :owner_id AND r.transcript_text_id IS NOT NULL AND r.state = 'done'
ORDER BY r.created_at DESC, r.id DESC
LIMIT 1
"""

# A space's latest records (/status in a group linked to it), by the space's page index.
LATEST_OF_SPACE = """
SELECT id, title, original_filename, state, halted_at, halt_reason, created_at
FROM audio_records WHERE space_id = :space_id
ORDER BY created_at DESC, id DESC
LIMIT :limit
"""

# -- group chats linked to a space (migrations/0027_telegram_groups.sql) -----------------

# The group's link with the space's name and the role its linker holds there now: a
# link whose linker may no longer file records into the space has lapsed
# (`LinkedGroup.live` decides), so a member removed from the space takes the group's view with them.
GROUP_OF_CHAT = """
SELECT g.chat_id, g.space_id, s.name AS space_name, g.linked_by, g.created_at,
       (SELECT m.role FROM space_members AS m
        WHERE m.space_id = g.space_id AND m.user_id = g.linked_by) AS linker_role
FROM telegram_groups AS g JOIN spaces AS s ON s.id = g.space_id
WHERE g.chat_id = :chat_id
"""

LINK_GROUP = """
INSERT INTO telegram_groups (chat_id, space_id, linked_by, created_at)
VALUES (:chat_id, :space_id, :linked_by, :now)
ON CONFLICT (chat_id) DO UPDATE
SET space_id = excluded.space_id, linked_by = excluded.linked_by,
    created_at = excluded.created_at
"""

UNLINK_GROUP = "DELETE FROM telegram_groups WHERE chat_id = :chat_id\n"
