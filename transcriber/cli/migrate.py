"""`transcriber migrate`: apply the engine's pending migrations and exit (SQLite's set
in the data folder, or PostgreSQL's with `storage.database_url`)."""

from __future__ import annotations

import argparse
import asyncio

from transcriber.core.clock import SystemClock
from transcriber.db.engine import migrate_storage
from transcriber.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    applied = asyncio.run(migrate_storage(settings.storage, clock=SystemClock()))
    print(f"applied {len(applied)} migration(s)")
    return 0
