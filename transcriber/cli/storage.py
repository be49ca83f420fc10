"""The storage as a one-shot command opens it: migrated, then one writer of its own."""

from __future__ import annotations

from transcriber.clock import SystemClock
from transcriber.db.engine import migrate_storage, new_writer
from transcriber.db.writer import Writer
from transcriber.settings import Settings


async def migrated_writer(settings: Settings) -> Writer:
    """The engine migrated and a writer on it (not started: the caller starts and
    stops it around its commands)."""
    clock = SystemClock()
    await migrate_storage(settings.storage, clock=clock)
    return new_writer(settings.storage, clock=clock)
