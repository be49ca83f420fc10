"""`transcriber restore SRC`: a backup into an empty, unused data folder.

The restored database is migrated to this version's schema afterwards.
"""

from __future__ import annotations

import argparse
import sys

from transcriber.cli.backup import describe
from transcriber.cli.exits import EXIT_REFUSED
from transcriber.cli.progress import file_progress
from transcriber.db.migrate import migrate
from transcriber.service.backup import BackupError, restore
from transcriber.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    storage = settings.storage
    try:
        with file_progress("restore") as progress:
            manifest = restore(args.src, storage.data_dir, progress=progress)
    except BackupError as exc:
        print(f"transcriber: restore refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    migrate(storage.data_dir, busy_timeout_ms=storage.busy_timeout_ms)
    print(f"restored into {storage.data_dir}: {describe(manifest)}")
    return 0
