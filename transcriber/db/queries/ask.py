"""Conversations with the archive: a person's questions and answers (docs/ask.md).

Every read is one conversation's, by its key and its owner: another person's
conversation is simply not found.
"""

from __future__ import annotations

CONVERSATION = """
SELECT c.id, c.created_at FROM ask_conversations AS c
WHERE c.id = :id AND c.owner_id = :owner_id
"""

TURNS = """
SELECT t.position, t.question, t.answer, t.citations, t.asked_at
FROM ask_turns AS t
WHERE t.conversation_id = :conversation_id
ORDER BY t.position
"""

INSERT_CONVERSATION = """
INSERT INTO ask_conversations (id, owner_id, created_at, updated_at)
VALUES (:id, :owner_id, :now, :now)
"""

TOUCH_CONVERSATION = """
UPDATE ask_conversations SET updated_at = :now WHERE id = :id AND owner_id = :owner_id
"""

NEXT_POSITION = """
SELECT coalesce(max(t.position) + 1, 0) AS position FROM ask_turns AS t
WHERE t.conversation_id = :conversation_id
"""

INSERT_TURN = """
INSERT INTO ask_turns (conversation_id, position, question, answer, citations, asked_at)
VALUES (:conversation_id, :position, :question, :answer, :citations, :now)
"""

DELETE_CONVERSATION = """
DELETE FROM ask_conversations WHERE id = :id AND owner_id = :owner_id
"""

# A person's conversations, the latest used first, keyset pages on (updated_at, id)
# through idx_ask_conversations_owner; each with its first question (the turn at
# position 0, by its key) and its turns' count (that conversation's own rows).
_LISTED = """
SELECT c.id, c.created_at, c.updated_at,
       (SELECT t.question FROM ask_turns AS t
        WHERE t.conversation_id = c.id AND t.position = 0) AS first_question,
       (SELECT count(*) FROM ask_turns AS t WHERE t.conversation_id = c.id) AS turns
FROM ask_conversations AS c
"""

CONVERSATIONS_FIRST = _LISTED + """
WHERE c.owner_id = :owner_id
ORDER BY c.updated_at DESC, c.id DESC
LIMIT :limit
"""

CONVERSATIONS_AFTER = _LISTED + """
WHERE c.owner_id = :owner_id
  AND (c.updated_at < :after_updated_at
       OR (c.updated_at = :after_updated_at AND c.id < :after_id))
ORDER BY c.updated_at DESC, c.id DESC
LIMIT :limit
"""
