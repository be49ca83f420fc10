"""`transcriber restore SRC`: a backup into an empty, unused data folder.

The backup is untrusted (`maintenance.restore`): its paths stay inside, its files
are placed as regular files, the result is migrated to this version's schema
and verified before the folder gets its database; a refusal or a failed
verify exits 1 and leaves the folder empty.
"""

from __future__ import annotations

import argparse
import sys

from transcriber.cli.backup import describe
from transcriber.cli.exits import EXIT_REFUSED
from transcriber.cli.progress import file_progress
from transcriber.cli.storage import sqlite_only
from transcriber.cli.verify import print_problems
from transcriber.maintenance.backup import BackupError
from transcriber.maintenance.bucket import with_bucket
from transcriber.maintenance.restore import RestoreUnverified, restore
from transcriber.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    if not sqlite_only(settings, "restore"):
        return EXIT_REFUSED
    storage = settings.storage
    try:
        with file_progress("restore") as progress:
            manifest = with_bucket(settings, lambda bucket: restore(
                args.src, storage.data_dir, busy_timeout_ms=storage.busy_timeout_ms,
                progress=progress, bucket=bucket))
    except RestoreUnverified as exc:
        print(f"transcriber: restore failed: {exc}", file=sys.stderr)
        print_problems(exc.report)
        return EXIT_REFUSED
    except BackupError as exc:
        print(f"transcriber: restore refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    print(f"restored into {storage.data_dir}: {describe(manifest)}; verified")
    return 0
