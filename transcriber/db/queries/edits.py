"""What a person changes in the archive: title, brief, topics, corrections, deletion.

None of these statements reads or writes the claim columns
(`acquisition_id`, `acquire_expires_at`): an edit never waits for, takes or
breaks a step's claim. Deletion is the one exception by design: with the
record row gone, the holder's next token-conditional write finds nothing.
"""

from __future__ import annotations

# The head of an editable record, owner-scoped (another person's is not found).
SELECT_OWNED = """
SELECT r.id, r.owner_id, r.state, r.halted_at, r.revision, r.transcript_text_id
FROM audio_records AS r WHERE r.id = :id AND r.owner_id = :owner_id
"""

# NULL leaves a field as it is: one statement for any mix of the two. A field a person
# sets (or clears) is theirs from then on: origin 'human', which the describer never writes.
UPDATE_TITLE_BRIEF = """
UPDATE audio_records
SET title = coalesce(:title, title),
    title_origin = CASE WHEN :title IS NULL THEN title_origin ELSE 'human' END,
    brief = coalesce(:brief, brief),
    brief_origin = CASE WHEN :brief IS NULL THEN brief_origin ELSE 'human' END,
    updated_at = :now
WHERE id = :id AND owner_id = :owner_id
"""

# Merged in the statement (json_patch), so two renames of different speakers
# never overwrite each other.
PATCH_SPEAKER_NAMES = """
UPDATE audio_records SET speaker_names = json_patch(speaker_names, :patch), updated_at = :now
WHERE id = :id AND owner_id = :owner_id
"""

TOUCH_RECORD = """
UPDATE audio_records SET updated_at = :now WHERE id = :id AND owner_id = :owner_id
"""

# DO UPDATE (not DO NOTHING) so RETURNING answers for an existing topic too.
UPSERT_TOPIC = """
INSERT INTO topics (id, owner_id, name, created_at, updated_at)
VALUES (:id, :owner_id, :name, :now, :now)
ON CONFLICT (owner_id, name) DO UPDATE SET updated_at = topics.updated_at
RETURNING id
"""

# A topic the last record drops goes too (trigger record_topics_drop_unused).
DELETE_RECORD_TOPICS = """
DELETE FROM record_topics WHERE record_id = :record_id
"""

# The record's topics other than `:topic_ids` (a JSON array): those an edit drops.
DELETE_OTHER_RECORD_TOPICS = """
DELETE FROM record_topics
WHERE record_id = :record_id AND topic_id NOT IN (SELECT value FROM json_each(:topic_ids))
"""

# Only when missing: the five-topic trigger runs before any conflict clause
# would, so re-inserting a kept topic of a full record would be refused.
INSERT_RECORD_TOPIC = """
INSERT INTO record_topics (record_id, topic_id)
SELECT :record_id, :topic_id
WHERE NOT EXISTS (SELECT 1 FROM record_topics
                  WHERE record_id = :record_id AND topic_id = :topic_id)
"""

# The record's topic names as the search index reads them (sorted, a JSON array),
# written once after its topics changed: the search trigger re-indexes the row once.
SET_TOPIC_NAMES = """
UPDATE audio_records SET topic_names = (SELECT json_group_array(name) FROM (
    SELECT t.name FROM record_topics AS rt JOIN topics AS t ON t.id = rt.topic_id
    WHERE rt.record_id = :record_id ORDER BY t.name))
WHERE id = :record_id
"""

# Who set the record's topics: 'human' (an edit) or 'auto' (the describer).
SET_TOPICS_ORIGIN = """
UPDATE audio_records SET topics_origin = :origin WHERE id = :record_id
"""

RECORD_TOPICS = """
SELECT t.name FROM record_topics AS rt JOIN topics AS t ON t.id = rt.topic_id
WHERE rt.record_id = :record_id
ORDER BY t.name
"""

# The owner's topics by name, keyset pages on UNIQUE (owner_id, name), each
# with how many records carry it (the topic's range of idx_record_topics_topic).
_TOPIC_COLUMNS = """
SELECT t.name, (SELECT count(*) FROM record_topics AS rt WHERE rt.topic_id = t.id) AS records
FROM topics AS t
"""

OWNER_TOPICS_FIRST = f"""
{_TOPIC_COLUMNS}
WHERE t.owner_id = :owner_id
ORDER BY t.name
LIMIT :limit
"""

OWNER_TOPICS_AFTER = f"""
{_TOPIC_COLUMNS}
WHERE t.owner_id = :owner_id AND t.name > :after_name
ORDER BY t.name
LIMIT :limit
"""

# --- corrections ---------------------------------------------------------------

INSERT_CORRECTION = """
INSERT INTO structure_revisions (record_id, revision, contents, created_at)
VALUES (:record_id, :revision, :contents, :now)
"""

# All but the newest `:keep` revisions of the record (a range of the primary
# key). The recognizer's original lives in `structures`, untouched.
PRUNE_CORRECTIONS = """
DELETE FROM structure_revisions WHERE record_id = :record_id AND revision + :keep <= :revision
"""

# Conditional on the revision the person saw: a stale one changes nothing.
BUMP_REVISION = """
UPDATE audio_records SET revision = revision + 1, updated_at = :now
WHERE id = :id AND owner_id = :owner_id AND revision = :revision
RETURNING revision
"""

UPDATE_TRANSCRIPT_TEXT = """
UPDATE texts SET contents = :contents, updated_at = :now
WHERE record_id = :record_id AND kind = 'transcript'
"""

# A new recognizer transcript: the corrections of the old one go, the revision moves on.
CLEAR_CORRECTIONS = """
DELETE FROM structure_revisions WHERE record_id = :record_id
"""

NEXT_REVISION = """
UPDATE audio_records SET revision = revision + 1 WHERE id = :record_id
"""

# --- deletion ------------------------------------------------------------------

RECORD_PARTS = """
SELECT rc.part_index FROM recognitions AS rc WHERE rc.record_id = :record_id
"""

DELETE_TEXTS = "DELETE FROM texts WHERE record_id = :record_id"
DELETE_STRUCTURES = "DELETE FROM structures WHERE record_id = :record_id"
DELETE_RECOGNITIONS = "DELETE FROM recognitions WHERE record_id = :record_id"
DELETE_EVENTS = "DELETE FROM record_events WHERE record_id = :record_id"
# The record's links for people outside (`queries.links`): gone with it.
DELETE_LINKS = "DELETE FROM record_links WHERE record_id = :record_id"
DELETE_RECORD = "DELETE FROM audio_records WHERE id = :record_id"
DELETE_FILES = "DELETE FROM files WHERE record_id = :record_id"
DELETE_NORMALIZE_PROGRESS = "DELETE FROM normalize_progress WHERE record_id = :record_id"
# The Telegram outbox and status rows go by ON DELETE CASCADE with the record.

# Children first (they reference the record), the texts before the record
# (their search trigger reads it), the record, then its files rows (which
# the record references).
DELETE_RECORD_SHARES = "DELETE FROM record_shares WHERE record_id = :record_id"

DELETE_RECORD_IN_ORDER: tuple[str, ...] = (
    DELETE_RECORD_SHARES, DELETE_RECORD_TOPICS, CLEAR_CORRECTIONS, DELETE_TEXTS,
    DELETE_STRUCTURES, DELETE_RECOGNITIONS, DELETE_EVENTS, DELETE_LINKS,
    DELETE_NORMALIZE_PROGRESS, DELETE_RECORD, DELETE_FILES,
)

# --- re-transcription ----------------------------------------------------------

SELECT_FOR_RETRANSCRIBE = """
SELECT r.id, r.owner_id, r.state, r.halted_at, r.normalized_file_id
FROM audio_records AS r WHERE r.id = :id
"""

# Back to the stage whose step starts a recognition (or to normalization when
# there is no normalized copy yet), as a fresh entry: flag, attempts, delay
# and any claim cleared. Transcript and structure stay until the new ones land.
RETRANSCRIBE = """
UPDATE audio_records
SET state = :stage, state_entered_at = :now, halted_at = NULL, halt_reason = NULL,
    error_text = NULL, acquisition_id = NULL, acquire_expires_at = NULL, delay_time = NULL,
    attempts = 0, lease_taken_over = 0, recognition_id = NULL,
    language = coalesce(:language, language), model_wanted = :model_wanted,
    updated_at = :now
WHERE id = :id
"""
