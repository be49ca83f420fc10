"""The describer's queue and writes (migrations/0015_describer.sql, docs/describer.md).

A job row is written in the writer transaction of `done`; its generation moves on with
every later `done` (a re-transcription), and the describer's write is conditional on
the generation it read. Only fields whose origin is not `human` are ever written.
"""

from __future__ import annotations

# In the transaction of `done`: a new job, or the record's old one pending again.
ENQUEUE = """
INSERT INTO describe_jobs (record_id, generation, state, attempts, next_attempt_at, error,
                           created_at, updated_at)
VALUES (:record_id, 1, 'pending', 0, :now, NULL, :now, :now)
ON CONFLICT (record_id) DO UPDATE SET
    generation = describe_jobs.generation + 1, state = 'pending', attempts = 0,
    next_attempt_at = excluded.next_attempt_at, error = NULL,
    updated_at = excluded.updated_at
"""

# A person corrected the transcript: the record's automatic fields describe a text it no
# longer holds, so its job (if the describer has one) is pending again, next generation.
REQUEUE = """
UPDATE describe_jobs
SET generation = generation + 1, state = 'pending', attempts = 0, next_attempt_at = :now,
    error = NULL, updated_at = :now
WHERE record_id = :record_id
"""

# The jobs whose time has come, oldest first (the partial index idx_describe_jobs_due).
DUE_JOBS = """
SELECT record_id, generation, attempts FROM describe_jobs
WHERE state = 'pending' AND next_attempt_at <= :now
ORDER BY next_attempt_at, record_id
LIMIT :limit
"""

PENDING_COUNT = """
SELECT count(*) AS pending FROM describe_jobs WHERE state = 'pending'
"""

JOB = """
SELECT record_id, generation, state, attempts FROM describe_jobs WHERE record_id = :record_id
"""

# What the describer needs to know of a record besides its transcript.
SUBJECT = """
SELECT r.id, r.owner_id, r.state, r.halted_at, r.duration_ms, r.language,
       r.detected_language, r.title_origin, r.brief_origin, r.topics_origin, r.space_id
FROM audio_records AS r WHERE r.id = :record_id
"""

# A space's topic names (docs/sharing.md): every member's, by name, at most :limit of
# them; a space's members are few, each member's topics an index range.
SPACE_TOPIC_NAMES = """
SELECT DISTINCT t.name FROM space_members AS m JOIN topics AS t ON t.owner_id = m.user_id
WHERE m.space_id = :space_id ORDER BY t.name LIMIT :limit
"""

# The owner's topic names, by name (UNIQUE (owner_id, name)), at most :limit of them.
OWNER_TOPIC_NAMES = """
SELECT t.name FROM topics AS t WHERE t.owner_id = :owner_id ORDER BY t.name LIMIT :limit
"""

# The owner's records: a range of idx_audio_records_owner_page (the owner's, not the archive).
OWNER_RECORD_COUNT = """
SELECT count(*) AS records FROM audio_records WHERE owner_id = :owner_id
"""

# How many records' transcripts hold each term (`:terms`: a JSON array of owner-keyed
# stems): fts5vocab looks each term up by its key, reading only that term's entries.
TERM_RECORDS = """
SELECT v.term, v.doc FROM record_search_terms AS v
WHERE v.col = 'transcript' AND v.term IN (SELECT value FROM json_each(:terms))
"""

# `transcriber describe --all`: the records that are done, oldest first, in keyset
# pages of the claim index (state, halted_at, created_at, id).
DONE_PAGE = """
SELECT r.id, r.created_at FROM audio_records AS r
WHERE r.state = 'done' AND r.halted_at IS NULL
  AND (r.created_at > :after_created_at
       OR (r.created_at = :after_created_at AND r.id > :after_id))
ORDER BY r.created_at, r.id
LIMIT :limit
"""

# NULL leaves a field as it is; a field written becomes 'auto'.
WRITE_TITLE_BRIEF = """
UPDATE audio_records
SET title = coalesce(:title, title),
    title_origin = CASE WHEN :title IS NULL THEN title_origin ELSE 'auto' END,
    brief = coalesce(:brief, brief),
    brief_origin = CASE WHEN :brief IS NULL THEN brief_origin ELSE 'auto' END,
    described_by = :by, updated_at = :now
WHERE id = :record_id
"""

MARK_DONE = """
UPDATE describe_jobs SET state = 'done', attempts = attempts + 1, error = NULL, updated_at = :now
WHERE record_id = :record_id AND generation = :generation AND state = 'pending'
"""

MARK_RETRY = """
UPDATE describe_jobs
SET attempts = attempts + 1, next_attempt_at = :next_attempt_at, error = :error,
    updated_at = :now
WHERE record_id = :record_id AND generation = :generation AND state = 'pending'
"""

MARK_FAILED = """
UPDATE describe_jobs SET state = 'failed', attempts = attempts + 1, error = :error,
    updated_at = :now
WHERE record_id = :record_id AND generation = :generation AND state = 'pending'
"""

# The heading of a Telegram reply, and whether its description is still coming.
REPLY_HEADING = """
SELECT r.title, r.brief, r.duration_ms,
       (SELECT j.state FROM describe_jobs AS j WHERE j.record_id = r.id) AS describe_state
FROM audio_records AS r WHERE r.id = :record_id
"""
