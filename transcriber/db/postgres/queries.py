"""PostgreSQL's own statements, and the named queries whose PostgreSQL text
differs in more than spelling.

`OVERRIDES` is keyed by the SQLite text of a query of `transcriber.db.queries`,
so the service still names one query; `transcriber.db.postgres.dialect` looks
the text up here before it translates parameters.
"""

from __future__ import annotations

from transcriber.db import queries as q

# -- the search index (transcriber.db.postgres.search) -----------------------------------

STALE_SEARCH_ROWS = """
SELECT r.id, r.owner_id, r.title, r.brief, r.original_filename, r.speaker_names,
       r.topic_names, t.contents AS transcript
FROM record_search AS s
JOIN audio_records AS r ON r.id = s.record_id
LEFT JOIN texts AS t ON t.record_id = r.id AND t.kind = 'transcript'
WHERE s.stale = 1
"""

WRITE_SEARCH_TERMS = """
UPDATE record_search SET terms = :terms::tsvector, stale = 0 WHERE record_id = :record_id
"""

# -- migrations (transcriber.db.postgres.migrate) -----------------------------------------

# One key for every process migrating this database: they take turns.
MIGRATION_LOCK_KEY = 0x7472616E73  # "trans"
LOCK_MIGRATIONS = "SELECT pg_advisory_lock(:key)"
UNLOCK_MIGRATIONS = "SELECT pg_advisory_unlock(:key)"
CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    BIGINT PRIMARY KEY NOT NULL,
    name       TEXT NOT NULL,
    checksum   TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""

# -- the duty locks (transcriber.db.postgres.duties) -------------------------------------

# Session-level: held until given back or until the session ends, however it ends.
TRY_DUTY_LOCK = "SELECT pg_try_advisory_lock(:key) AS taken"
GIVE_BACK_DUTY_LOCK = "SELECT pg_advisory_unlock(:key) AS given_back"

# -- overrides -----------------------------------------------------------------------------

# FOR UPDATE SKIP LOCKED: a claimer on another host passes over the row this one
# is taking instead of waiting for it (P2 holds on both engines). Right of SET,
# columns read the row's old values, as on SQLite.
_CLAIM = f"""
UPDATE audio_records AS r
SET acquisition_id = :token,
    acquire_expires_at = {q.pipeline.LEASE_BY_STAGE},
    attempts = r.attempts + 1,
    lease_taken_over = CASE WHEN r.acquisition_id IS NULL THEN 0 ELSE 1 END
FROM (
    SELECT id FROM audio_records
    WHERE state IN ({q.pipeline.IN_CLAIMABLE})
      AND halted_at IS NULL
      AND (delay_time IS NULL OR delay_time <= :now)
      AND (acquire_expires_at IS NULL OR acquire_expires_at <= :now)
    ORDER BY created_at, id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
) AS picked
WHERE r.id = picked.id
RETURNING r.id, r.acquisition_id
"""

# `:match` is a tsquery literal of the owner's keyed terms; the score is the negated
# rank (lower is better, as bm25 on SQLite), a double so that a page cursor's score
# compares equal to itself. Weights of D, C, B, A: transcript 1, brief/speakers/topics 3,
# file name 5, title 10.
_SEARCH = """
WITH hits AS (
    SELECT s.record_id,
           (-ts_rank('{0.1, 0.3, 0.5, 1.0}', s.terms, :match::tsquery))::float8 AS score
    FROM record_search AS s
    WHERE s.terms @@ :match::tsquery
)
SELECT """ + q.archive.RECORD_COLUMNS + """, hits.score AS score
FROM hits
JOIN audio_records AS r ON r.id = hits.record_id
WHERE r.owner_id = :owner_id AFTER_CONDITION
ORDER BY hits.score, r.id DESC
LIMIT :limit
"""
_SEARCH_AFTER = ("AND (hits.score > :after_score"
                 " OR (hits.score = :after_score AND r.id < :after_id))")

_RECORD_SNAPSHOT = """
SELECT json_build_object(
    'id', r.id, 'title', r.title, 'original_filename', r.original_filename,
    'source', r.source, 'stage', r.state,
    'halt', CASE WHEN r.halted_at IS NULL THEN NULL
                 ELSE json_build_object('at', r.halted_at, 'reason', r.halt_reason,
                                        'message', NULL) END,
    'progress', NULL, 'duration_ms', r.duration_ms, 'size_bytes', r.size_bytes,
    'created_at', r.created_at, 'updated_at', r.updated_at, 'brief', r.brief,
    'topics', coalesce((SELECT json_agg(t.name) FROM record_topics AS rt
               JOIN topics AS t ON t.id = rt.topic_id WHERE rt.record_id = r.id), '[]'::json),
    'described', json_build_object(
        'title', r.title_origin, 'brief', r.brief_origin, 'topics', r.topics_origin,
        'by', nullif(r.described_by, ''),
        'state', (SELECT j.state FROM describe_jobs AS j WHERE j.record_id = r.id))
)::text AS record_json
FROM audio_records AS r WHERE r.id = :record_id
"""

# How many records' transcripts (weight D) hold each owner-keyed stem: one GIN lookup
# per term (SQLite reads fts5vocab). A term is letters and digits behind a hex key.
_TERM_RECORDS = """
SELECT e.term, count(s.record_id) AS doc
FROM jsonb_array_elements_text(:terms::jsonb) AS e(term)
JOIN record_search AS s ON s.terms @@ (quote_literal(e.term) || ':D')::tsquery
GROUP BY e.term
"""

# A space's newest keys (`queries.spaces._SPACE_BRANCH`): PostgreSQL reads each of the
# person's spaces' index range with its own LIMIT (LATERAL), where SQLite starts at the
# `:limit`-th newest record's time.
_SPACE_BRANCH = """
SELECT x.created_at, x.id
FROM space_members AS m
CROSS JOIN LATERAL (
    SELECT r.created_at, r.id FROM audio_records AS r
    WHERE r.space_id = m.space_id{after}
    ORDER BY r.created_at DESC, r.id DESC
    LIMIT :limit) AS x
WHERE m.user_id = :user_id"""

OVERRIDES: dict[str, str] = {
    q.spaces.VISIBLE_PAGE_FIRST: q.spaces.visible_page(_SPACE_BRANCH, after=False),
    q.spaces.VISIBLE_PAGE_AFTER: q.spaces.visible_page(_SPACE_BRANCH, after=True),
    q.pipeline.CLAIM: _CLAIM,
    # SQLite's CROSS JOIN … ON fixes the join order; PostgreSQL spells it JOIN.
    q.telegram.LIVE_STATUSES: q.telegram.LIVE_STATUSES.replace("CROSS JOIN", "JOIN"),
    # json_patch (RFC 7396) on a flat object: a null value removes the name.
    q.edits.PATCH_SPEAKER_NAMES: """
UPDATE audio_records
SET speaker_names = jsonb_strip_nulls(speaker_names::jsonb || :patch::jsonb)::text,
    updated_at = :now
WHERE id = :id AND owner_id = :owner_id
""",
    q.edits.SET_TOPIC_NAMES: """
UPDATE audio_records SET topic_names = coalesce((
    SELECT json_agg(t.name ORDER BY t.name) FROM record_topics AS rt
    JOIN topics AS t ON t.id = rt.topic_id WHERE rt.record_id = :record_id)::text, '[]')
WHERE id = :record_id
""",
    q.webhooks.RECORD_SNAPSHOT: _RECORD_SNAPSHOT,
    q.describe.TERM_RECORDS: _TERM_RECORDS,
    # The index never waits on PostgreSQL: the writer refreshes it before COMMIT.
    q.search.PENDING_COUNT: "SELECT count(*) AS pending FROM record_search WHERE stale = 1",
    q.archive.SEARCH_FIRST: _SEARCH.replace("AFTER_CONDITION", ""),
    q.archive.SEARCH_AFTER: _SEARCH.replace("AFTER_CONDITION", _SEARCH_AFTER),
    # The hits first, as on SQLite (MATERIALIZED): the planner would otherwise weigh the
    # visibility filter's ORs against reading the whole index table. Each hit's record
    # by its key (a LATERAL that OFFSET 0 keeps apart): the ORs' default estimate
    # otherwise joins the hits to a scan of audio_records' whole primary key.
    **{sqlite: _SEARCH.replace("WITH hits AS (", "WITH hits AS MATERIALIZED (").replace(
        "JOIN audio_records AS r ON r.id = hits.record_id",
        "CROSS JOIN LATERAL (SELECT * FROM audio_records AS one\n"
        "    WHERE one.id = hits.record_id OFFSET 0) AS r").replace(
        "r.owner_id = :owner_id AFTER_CONDITION",
        condition + (" " + _SEARCH_AFTER if after else ""))
       for sqlite, condition, after in (
           (q.spaces.SEARCH_VISIBLE_FIRST, q.spaces.VISIBLE_FILTER, False),
           (q.spaces.SEARCH_VISIBLE_AFTER, q.spaces.VISIBLE_FILTER, True),
           (q.spaces.SEARCH_SHARED_FIRST, q.spaces.SHARED_FILTER, False),
           (q.spaces.SEARCH_SHARED_AFTER, q.spaces.SHARED_FILTER, True),
           (q.spaces.SEARCH_SPACE_FIRST, q.spaces.SPACE_FILTER, False),
           (q.spaces.SEARCH_SPACE_AFTER, q.spaces.SPACE_FILTER, True))},
}

# Named queries that never run on PostgreSQL, and why: a test prepares every other one.
SQLITE_ONLY: dict[str, str] = {
    q.search.PENDING_TERMS: "the search refill of SQLite's migration 0012 (FTS5 rows)",
    q.search.INDEX_ROWS: "the search refill of SQLite's migration 0012 (FTS5 rows)",
    q.search.MARK_INDEXED: "the search refill of SQLite's migration 0012 (FTS5 rows)",
    q.maintenance.RECORDS_WITHOUT_SEARCH_KEY: "verify of a SQLite file's FTS5 index",
    q.maintenance.SEARCH_KEYS_WITHOUT_RECORD: "verify of a SQLite file's FTS5 index",
    q.maintenance.FILL_EXPECTED_INDEX: "verify of a SQLite file's FTS5 index",
    q.maintenance.SEARCH_DIFFERENCES: "verify of a SQLite file's FTS5 index",
}

# -- `transcriber move-to` (transcriber.db.move) ------------------------------------------
# An SQLite archive copied in: rows in batches, each skipped when its key is already here
# (a copy run again after an interruption goes on where it stopped), then the search
# index of the copied records refreshed and compared with what their columns give.

# The columns of one table here (a table of SQLite's with a column PostgreSQL lacks is
# refused before a row moves).
MOVE_TABLE_COLUMNS = """
SELECT column_name AS name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = :table
"""


def move_insert_rows(table: str, columns: tuple[str, ...]) -> str:
    """One row of `table` (a name of `queries.moving.TABLES`), skipped when a row with
    its key (or another unique value of it) is here already."""
    q.moving.table_count(table)  # refuses a name that is not the archive's
    names = ", ".join(f'"{column}"' for column in columns)
    values = ", ".join(f"${n}" for n in range(1, len(columns) + 1))
    return f"INSERT INTO {table} ({names}) VALUES ({values}) ON CONFLICT DO NOTHING"


# STALE_SEARCH_ROWS a batch at a time (the partial index of stale rows, in key order).
MOVE_STALE_SEARCH_BATCH = STALE_SEARCH_ROWS.rstrip() + "\nORDER BY s.record_id\nLIMIT :limit\n"

MOVE_STALE_SEARCH_COUNT = "SELECT count(*) AS n FROM record_search WHERE stale = 1"

# The indexed text of a page of records, in key order, to compute their terms again.
MOVE_INDEXED_PAGE = """
SELECT r.id, r.owner_id, r.title, r.brief, r.original_filename, r.speaker_names,
       r.topic_names, t.contents AS transcript
FROM audio_records AS r
LEFT JOIN texts AS t ON t.record_id = r.id AND t.kind = 'transcript'
WHERE r.id > :after_id
ORDER BY r.id
LIMIT :limit
"""

# The records of a page whose search row is missing, stale, or holds other terms than
# the literal computed from their columns.
MOVE_SEARCH_DIFFERENCES = """
SELECT e.record_id,
       CASE WHEN s.record_id IS NULL THEN 'missing'
            WHEN s.stale <> 0 THEN 'stale'
            ELSE 'differs' END AS problem
FROM unnest(:ids::text[], :literals::text[]) AS e(record_id, literal)
LEFT JOIN record_search AS s ON s.record_id = e.record_id
WHERE s.record_id IS NULL OR s.stale <> 0 OR s.terms <> e.literal::tsvector
ORDER BY e.record_id
"""
