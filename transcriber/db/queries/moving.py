"""`transcriber move-to`: an SQLite archive read whole, table by table, for PostgreSQL.

Whole-table reads on purpose, once per move, on a snapshot the mover holds (the
service is stopped: the mover holds the data folder's instance lock). The
statements are built per table from `TABLES`, never from other text.
"""

from __future__ import annotations

# Every table of the archive, parents before children, so PostgreSQL's foreign keys
# hold as the rows arrive: `files` before `audio_records` (a record names its files;
# `files.record_id` has no foreign key), `topics` before `record_topics` (and never a
# delete, which would fire `record_topics_drop_unused`), `webhooks` before their
# deliveries, `spaces` before the people (a default space) and the records in them,
# `telegram_groups` after the spaces and people it names,
# `voice_profiles` before the sources and the record voices naming them.
TABLES: tuple[str, ...] = (
    "spaces", "users", "space_members", "telegram_groups", "files", "audio_records",
    "record_shares", "topics",
    "record_topics", "texts", "structures", "structure_revisions", "recognitions",
    "record_events", "recognition_speed",
    "normalize_progress", "telegram_outbox", "telegram_status", "api_tokens", "webhooks",
    "webhook_deliveries", "describe_jobs", "voice_profiles", "voice_profile_sources",
    "record_voices", "record_voice_windows", "record_links", "ask_conversations", "ask_turns",
    "watched_files", "vocabularies", "space_vocabularies",
)
# Plain tables of SQLite that are not copied: the migration bookkeeping (PostgreSQL
# keeps its own) and the search index's key table (PostgreSQL builds `record_search`
# from the records; the FTS5 tables are virtual or shadow tables, never plain), and the
# resumable uploads still open: their bytes are partial files of this server's data
# folder, not the record files a move copies; a client starts such an upload again.
LEFT_OUT: tuple[str, ...] = ("schema_migrations", "record_search_keys", "uploads")

# name, type ('table', 'view', 'virtual', 'shadow') of every table of the main schema.
PRAGMA_TABLE_LIST = "PRAGMA main.table_list"
# One read transaction over every table: the copy is of one moment.
BEGIN_READ = "BEGIN"
END_READ = "COMMIT"


def _known(table: str) -> str:
    if table not in TABLES:
        raise ValueError("not a table of the archive")
    return table


def table_rows(table: str) -> str:
    """Every row of one table, every column (the mover reads the names from the cursor)."""
    return f"SELECT * FROM {_known(table)}"


def table_count(table: str) -> str:
    """The rows of one table (the same text on both engines)."""
    return f"SELECT count(*) AS n FROM {_known(table)}"
