"""The archive as people see it: pages, search, the card, files and transcripts.

Every query is scoped by `owner_id`: another person's record is simply not
found. Pages are keyset pages, newest first on `(created_at, id)`, served by
`idx_audio_records_owner_page`; search pages are ordered by the FTS5 rank
(best first), then newest first.
"""

from __future__ import annotations

# The columns of a record as the API shows it (a list item and the card's head).
RECORD_COLUMNS = """
r.id, r.title, r.original_filename, r.source, r.state, r.halted_at, r.halt_reason,
r.error_text, r.duration_ms, r.size_bytes, r.created_at, r.updated_at,
r.brief, r.language, r.detected_language, r.revision, r.speaker_names, r.speakers,
r.title_origin, r.brief_origin, r.topics_origin, r.described_by, r.quality, r.via, r.space_id,
(SELECT j.state FROM describe_jobs AS j WHERE j.record_id = r.id) AS describe_state,
(SELECT json_group_array(t.name) FROM record_topics AS rt JOIN topics AS t ON t.id = rt.topic_id
 WHERE rt.record_id = r.id) AS topics_json
"""

# A page's newest-first keyset condition, on `r` (the `_AFTER` pages).
PAGE_AFTER_CONDITION = """
  AND (r.created_at < :after_created_at
       OR (r.created_at = :after_created_at AND r.id < :after_id))"""


def page(source: str, *, after: bool) -> str:
    """A keyset page of records, newest first on `(created_at, id)`: every list's shape
    (the owner's, a topic's, a space's, the shared ones). `source` is the FROM and
    WHERE clauses, with `r` the records; `after` pages on from a cursor."""
    return f"""
SELECT {RECORD_COLUMNS}
{source.strip()}{PAGE_AFTER_CONDITION if after else ""}
ORDER BY r.created_at DESC, r.id DESC
LIMIT :limit
"""


_OWNER_FROM = "FROM audio_records AS r\nWHERE r.owner_id = :owner_id"
PAGE_FIRST = page(_OWNER_FROM, after=False)
PAGE_AFTER = page(_OWNER_FROM, after=True)

# One topic's records, keyset pages as above: the topic's own rows
# (idx_record_topics_topic), sorted, never the whole archive.
_TOPIC_FROM = """
FROM topics AS t
JOIN record_topics AS rt ON rt.topic_id = t.id
JOIN audio_records AS r ON r.id = rt.record_id
WHERE t.owner_id = :owner_id AND t.name = :topic AND r.owner_id = :owner_id
"""

TOPIC_PAGE_FIRST = page(_TOPIC_FROM, after=False)
TOPIC_PAGE_AFTER = page(_TOPIC_FROM, after=True)

# bm25 weights by column: title, brief, original_filename, transcript, speakers, topics,
# forms (the folded forms only serve prefixes typed in part: they weigh nothing). Lower scores are
# better matches; equal scores put the newest first. `:match` comes from
# `transcriber.db.search.owner_match`: its terms carry the owner's key, so the match
# (and bm25) reads only the owner's rows; the `owner_id` filter stays as the authority.
_SEARCH_HITS = """
WITH hits AS (
    SELECT rowid AS search_rowid, bm25(record_search, 10.0, 3.0, 5.0, 1.0, 3.0, 5.0, 0.0) AS score
    FROM record_search
    WHERE record_search MATCH :match
)
"""

_SEARCH_FROM = """
FROM hits
JOIN record_search_keys AS k ON k.id = hits.search_rowid
JOIN audio_records AS r ON r.id = k.record_id
"""

SEARCH_FIRST = f"""
{_SEARCH_HITS}
SELECT {RECORD_COLUMNS}, hits.score AS score
{_SEARCH_FROM}
WHERE r.owner_id = :owner_id
ORDER BY hits.score, r.id DESC
LIMIT :limit
"""

SEARCH_AFTER = f"""
{_SEARCH_HITS}
SELECT {RECORD_COLUMNS}, hits.score AS score
{_SEARCH_FROM}
WHERE r.owner_id = :owner_id
  AND (hits.score > :after_score OR (hits.score = :after_score AND r.id < :after_id))
ORDER BY hits.score, r.id DESC
LIMIT :limit
"""

CARD = f"""
SELECT {RECORD_COLUMNS},
       o.size_bytes AS original_size_bytes, o.format AS original_format,
       n.size_bytes AS normalized_size_bytes, n.format AS normalized_format,
       n.duration_ms AS normalized_duration_ms, r.model
FROM audio_records AS r
LEFT JOIN files AS o ON o.id = r.original_file_id
LEFT JOIN files AS n ON n.id = r.normalized_file_id
WHERE r.id = :id AND r.owner_id = :owner_id
"""

RECORD_EXISTS = """
SELECT r.id FROM audio_records AS r WHERE r.id = :id AND r.owner_id = :owner_id
"""

TIMELINE = """
SELECT e.origin, e.step, e.outcome, e.duration_ms, e.created_at, u.provider_login AS by_login
FROM record_events AS e
LEFT JOIN users AS u ON u.id = e.actor_id
WHERE e.record_id = :record_id
ORDER BY e.created_at, e.id
"""

TRANSCRIPT_TEXT = """
SELECT t.contents FROM texts AS t WHERE t.record_id = :record_id AND t.kind = 'transcript'
"""

# The owner's latest correction, when there is one (else the recognizer's structure).
CORRECTED_STRUCTURE = """
SELECT s.revision, s.contents FROM structure_revisions AS s
WHERE s.record_id = :record_id
ORDER BY s.revision DESC
LIMIT 1
"""

STRUCTURE = """
SELECT s.contents FROM structures AS s WHERE s.record_id = :record_id AND s.version = :version
"""

# The file behind one copy of a record (`copy` is 'original' or 'normalized').
RECORD_FILE = """
SELECT r.id AS record_id, r.original_filename, f.id AS file_id, f.file_name, f.format,
       f.size_bytes
FROM audio_records AS r
JOIN files AS f ON f.id = CASE :copy
    WHEN 'original' THEN r.original_file_id
    WHEN 'normalized' THEN r.normalized_file_id
END
WHERE r.id = :id AND r.owner_id = :owner_id
"""

# The transcript's quality report alone (the describer's gate, the bot's reply).
RECORD_QUALITY = """
SELECT quality FROM audio_records WHERE id = :id
"""
