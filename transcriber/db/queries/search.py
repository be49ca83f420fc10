"""The search index's own upkeep: the records still to index under the word forms of
migration 0012 (and again after 0015 added the topics), their terms computed by a reader
and written in batches by the writer, and the index as the records say it should be
(what `transcriber verify` compares).

The terms of a record come from `INDEXED_COLUMNS` over `r` (the record) and `t` (its
transcript row, if any); the triggers of migration 0015 compute the same values.
"""

from __future__ import annotations

SPEAKER_NAMES = "(SELECT group_concat(value, ' ') FROM json_each(r.speaker_names))"
TOPIC_NAMES = "(SELECT group_concat(value, ' ') FROM json_each(r.topic_names))"
TRANSCRIPT = "coalesce(t.contents, '')"

COLUMN_NAMES = "title, brief, original_filename, transcript, speakers, topics, forms"
INDEXED_COLUMNS = f"""
search_stems(r.owner_id, r.title), search_stems(r.owner_id, r.brief),
search_stems(r.owner_id, r.original_filename), search_stems(r.owner_id, {TRANSCRIPT}),
search_stems(r.owner_id, {SPEAKER_NAMES}), search_stems(r.owner_id, {TOPIC_NAMES}),
search_forms(r.owner_id, r.title, r.brief, r.original_filename, {TRANSCRIPT}, {SPEAKER_NAMES},
             {TOPIC_NAMES})
"""
_ALIASED = f"""
search_stems(r.owner_id, r.title) AS title, search_stems(r.owner_id, r.brief) AS brief,
search_stems(r.owner_id, r.original_filename) AS original_filename,
search_stems(r.owner_id, {TRANSCRIPT}) AS transcript,
search_stems(r.owner_id, {SPEAKER_NAMES}) AS speakers,
search_stems(r.owner_id, {TOPIC_NAMES}) AS topics,
search_forms(r.owner_id, r.title, r.brief, r.original_filename, {TRANSCRIPT},
             {SPEAKER_NAMES}, {TOPIC_NAMES}) AS forms
"""

# The terms of the next records to index, newest first (the partial index
# idx_record_search_keys_pending), computed by a reader: the stemming runs on a
# reader's thread, not in the writer's transaction.
PENDING_TERMS = f"""
SELECT k.id AS search_key,
       {_ALIASED}
FROM (SELECT id FROM record_search_keys WHERE indexed = 0 ORDER BY id DESC LIMIT :limit) AS p
JOIN record_search_keys AS k ON k.id = p.id
JOIN audio_records AS r ON r.id = k.record_id
LEFT JOIN texts AS t ON t.record_id = r.id AND t.kind = 'transcript'
ORDER BY k.id DESC
"""

PENDING_COUNT = """
SELECT count(*) AS pending FROM record_search_keys WHERE indexed = 0
"""

# `:rows`: a JSON array of `[key, title, brief, original_filename, transcript, speakers,
# topics, forms]` from PENDING_TERMS. Only keys still waiting are written: a record changed
# since the reader computed its terms was indexed by its trigger (which set `indexed`).
INDEX_ROWS = f"""
INSERT INTO record_search (rowid, {COLUMN_NAMES})
SELECT k.id, row.value ->> 1, row.value ->> 2, row.value ->> 3, row.value ->> 4,
       row.value ->> 5, row.value ->> 6, row.value ->> 7
FROM json_each(:rows) AS row
JOIN record_search_keys AS k ON k.id = row.value ->> 0 AND k.indexed = 0
"""

MARK_INDEXED = """
UPDATE record_search_keys SET indexed = 1
WHERE id IN (SELECT value ->> 0 FROM json_each(:rows)) AND indexed = 0
"""
