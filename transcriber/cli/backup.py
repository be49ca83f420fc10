"""`transcriber backup DEST [--json]`: an online backup of the archive.

Safe while `serve` runs: the database is copied from one snapshot, and only
the files that snapshot names (see `transcriber.maintenance.backup`).
"""

from __future__ import annotations

import argparse
import sys

from transcriber.cli.exits import EXIT_REFUSED
from transcriber.cli.progress import file_progress
from transcriber.cli.storage import sqlite_only
from transcriber.maintenance.backup import BackupError, Manifest, MissingFiles, backup
from transcriber.maintenance.bucket import with_bucket
from transcriber.settings import Settings


def describe(manifest: Manifest) -> str:
    return (f"{manifest.records} records, {manifest.transcripts} transcripts, "
            f"{manifest.files} files ({manifest.file_bytes} bytes; {manifest.linked} linked, "
            f"{manifest.copied} copied), database sha256 {manifest.database_sha256}")


def run(args: argparse.Namespace, settings: Settings) -> int:
    if not sqlite_only(settings, "backup"):
        return EXIT_REFUSED
    storage = settings.storage
    try:
        with file_progress("backup") as progress:
            manifest = with_bucket(settings, lambda bucket: backup(
                storage.data_dir, args.dest, busy_timeout_ms=storage.busy_timeout_ms,
                progress=progress, fetch=None if bucket is None else bucket.fetch))
    except MissingFiles as exc:
        if args.json:
            sys.stdout.write(exc.manifest.to_json().decode() + "\n")
        print(f"transcriber: backup failed: {exc}:", file=sys.stderr)
        for name in exc.manifest.missing:
            print(f"  {name}", file=sys.stderr)
        return EXIT_REFUSED
    except BackupError as exc:
        print(f"transcriber: backup failed: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if args.json:
        sys.stdout.write(manifest.to_json().decode() + "\n")
    else:
        print(f"backup written to {args.dest}: {describe(manifest)}")
    return 0
