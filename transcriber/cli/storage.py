"""The data folder as a one-shot command opens it: migrated, then one writer of its own."""

from __future__ import annotations

from transcriber.clock import SystemClock
from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.writer import Writer
from transcriber.settings import Settings


def migrated_writer(settings: Settings) -> Writer:
    """The data folder migrated and a writer on it (not started: the caller starts and
    stops it around its commands)."""
    clock = SystemClock()
    storage = settings.storage
    migrate(storage.data_dir, busy_timeout_ms=storage.busy_timeout_ms, clock=clock)
    return Writer(database_path(storage.data_dir), clock=clock,
                  busy_timeout_ms=storage.busy_timeout_ms)
