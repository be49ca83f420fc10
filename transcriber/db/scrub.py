"""Deleted bytes leave the disk: the WAL checkpointed and truncated after a deletion.

With `secure_delete` (every connection, `transcriber.db.connection`) a deleted row's
page is written back zeroed, but in WAL mode that new page goes to the `-wal` file and
the old one stays in the database file and in earlier WAL frames until a checkpoint,
which SQLite runs on its own only every 1000 pages: after `voices purge`, 103 of 103
sampled pieces of the embeddings were still readable after 60 s of normal running. A
command that deletes what must not stay (`Command.scrubs`) makes the writer run
`PRAGMA wal_checkpoint(TRUNCATE)` after its commit: the zeroed pages are copied into
the database file and the WAL is cut to nothing.

A reader holding an older snapshot can keep the checkpoint short (SQLite answers
busy = 1); then the writer counts it (`transcriber_db_wal_scrubs_total{outcome="busy"}`),
logs `wal_scrub_busy`, and tries again after each later batch and when it stops, until
one completes. PostgreSQL has no such file to cut: docs/storage.md says what the
operator runs (VACUUM).
"""

from __future__ import annotations

import sqlite3

import structlog

from transcriber.core.observability import WAL_SCRUBS
from transcriber.db import queries as q

log = structlog.get_logger(__name__)


def checkpoint_truncate(raw: sqlite3.Connection) -> bool:
    """Checkpoint the whole WAL into the database file and truncate it; True when done,
    False when a reader kept part of it (or the checkpoint itself failed)."""
    try:
        row = raw.execute(q.control.PRAGMA_WAL_CHECKPOINT_TRUNCATE).fetchone()
    except sqlite3.OperationalError as exc:
        WAL_SCRUBS.labels("failed").inc()
        log.error("wal_scrub_failed", error=type(exc).__name__)
        return False
    busy = row is None or row[0] != 0
    WAL_SCRUBS.labels("busy" if busy else "done").inc()
    if busy:
        log.warning("wal_scrub_busy")
    return not busy
