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
