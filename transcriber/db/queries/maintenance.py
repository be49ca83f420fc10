"""Backup, restore and verify: whole-archive reads on a snapshot or a copy.

None of these runs in the writer: the backup reads its own copy of the
database, verify a folder nobody writes (or a snapshot). They read every row
on purpose; the query-plan test lists each as an exception with its reason.
"""

from __future__ import annotations

from transcriber.db.queries.search import COLUMN_NAMES, INDEXED_COLUMNS

PRAGMA_INTEGRITY_CHECK = "PRAGMA integrity_check"
PRAGMA_FOREIGN_KEY_CHECK = "PRAGMA foreign_key_check"
PRAGMA_JOURNAL_DELETE = "PRAGMA journal_mode = DELETE"

# Every file the snapshot names, in folder order (the copy walks it once).
SNAPSHOT_FILES = """
SELECT record_id, file_name, size_bytes FROM files ORDER BY record_id, file_name
"""

COUNTS = """
SELECT (SELECT count(*) FROM audio_records) AS records,
       (SELECT count(*) FROM files) AS files,
       (SELECT coalesce(sum(size_bytes), 0) FROM files) AS file_bytes,
       (SELECT count(*) FROM texts WHERE kind = 'transcript') AS transcripts,
       (SELECT count(*) FROM users) AS users
"""

RECORDS_WITHOUT_SEARCH_KEY = """
SELECT r.id AS record_id
FROM audio_records AS r
LEFT JOIN record_search_keys AS k ON k.record_id = r.id
WHERE k.id IS NULL
"""

SEARCH_KEYS_WITHOUT_RECORD = """
SELECT k.record_id AS record_id
FROM record_search_keys AS k
LEFT JOIN audio_records AS r ON r.id = k.record_id
WHERE r.id IS NULL
"""

# The index as it should be, rebuilt from the records into a temporary FTS5
# table with the same tokenizer, is compared term by term with the real one
# through fts5vocab (a contentless index cannot be read back any other way).
# Records still waiting for their row under the terms of migrations 0012 and 0015
# (`indexed = 0`) have no row in either.
CREATE_EXPECTED_INDEX = """
CREATE VIRTUAL TABLE temp.expected_search USING fts5 (
    title, brief, original_filename, transcript, speakers, topics, forms, content = '',
    tokenize = 'unicode61 remove_diacritics 2'
)
"""

FILL_EXPECTED_INDEX = f"""
INSERT INTO temp.expected_search (rowid, {COLUMN_NAMES})
SELECT k.id, {INDEXED_COLUMNS}
FROM record_search_keys AS k
JOIN audio_records AS r ON r.id = k.record_id
LEFT JOIN texts AS t ON t.record_id = r.id AND t.kind = 'transcript'
WHERE k.indexed = 1
"""

CREATE_VOCABULARIES = (
    "CREATE VIRTUAL TABLE temp.actual_terms USING fts5vocab(main, record_search, instance)",
    "CREATE VIRTUAL TABLE temp.expected_terms USING fts5vocab(temp, expected_search, instance)",
)

# Record keys whose indexed terms differ from what their record says.
SEARCH_DIFFERENCES = """
SELECT DISTINCT k.record_id AS record_id
FROM (
    SELECT doc FROM (
        SELECT term, doc, col, "offset" FROM temp.actual_terms
        EXCEPT
        SELECT term, doc, col, "offset" FROM temp.expected_terms
    )
    UNION
    SELECT doc FROM (
        SELECT term, doc, col, "offset" FROM temp.expected_terms
        EXCEPT
        SELECT term, doc, col, "offset" FROM temp.actual_terms
    )
) AS d
LEFT JOIN record_search_keys AS k ON k.id = d.doc
"""
