"""The storage as a one-shot command opens it: migrated, then one writer of its own."""

from __future__ import annotations

import sys

from transcriber.core.clock import SystemClock
from transcriber.db.engine import database_url, migrate_storage, new_writer
from transcriber.db.writer import Writer
from transcriber.settings import Settings


async def migrated_writer(settings: Settings) -> Writer:
    """The engine migrated and a writer on it (not started: the caller starts and
    stops it around its commands)."""
    clock = SystemClock()
    await migrate_storage(settings.storage, clock=clock)
    return new_writer(settings.storage, clock=clock)


def sqlite_only(settings: Settings, command: str) -> bool:
    """False, with the reason on stderr, when the archive's state is in PostgreSQL: the
    SQLite file commands (backup, restore) would read or replace a data folder the
    service no longer keeps its state in."""
    if database_url(settings.storage) is None:
        return True
    print(f"transcriber {command}: storage.database_url is set, so the archive's state is "
          "in PostgreSQL, not in the data folder; back it up with pg_dump and the bucket "
          "(docs/operations.md, \"Backups on PostgreSQL\")", file=sys.stderr)
    return False
