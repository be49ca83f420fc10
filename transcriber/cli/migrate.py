"""`transcriber migrate`: apply pending migrations and exit."""

from __future__ import annotations

import argparse

from transcriber.db.migrate import migrate
from transcriber.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    applied = migrate(settings.storage.data_dir, busy_timeout_ms=settings.storage.busy_timeout_ms)
    print(f"applied {len(applied)} migration(s)")
    return 0
