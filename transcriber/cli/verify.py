"""`transcriber verify [FOLDER] [--json]`: exit 1 with a list when something is wrong."""

from __future__ import annotations

import argparse
import asyncio
import sys

import orjson

from transcriber.cli.exits import EXIT_REFUSED
from transcriber.db.connection import database_path
from transcriber.db.engine import database_url
from transcriber.maintenance.bucket import with_bucket
from transcriber.maintenance.verify import LIST_MAX, Report, verify
from transcriber.maintenance.verify_postgres import verify_postgres
from transcriber.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    folder = args.folder or settings.storage.data_dir
    if args.folder is None and database_url(settings.storage) is not None:
        # The archive's state is in PostgreSQL: verified there (a backup folder named
        # as FOLDER is still a SQLite copy, verified as one).
        report = asyncio.run(verify_postgres(settings))
        where = "the PostgreSQL archive"
    else:
        # A backup folder holds its files; the data folder's may be in the bucket.
        in_bucket = settings.storage.files == "s3" and folder == settings.storage.data_dir
        report = with_bucket(settings, lambda bucket: verify(
            database_path(folder), folder,
            objects=bucket.stored() if bucket is not None and in_bucket else None))
        where = str(folder)
    if args.json:
        body = {"ok": report.ok, "counts": report.counts, "problems": report.problems}
        sys.stdout.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif report.ok:
        counts = ", ".join(f"{n} {what}" for what, n in report.counts.items())
        print(f"{where}: complete and consistent ({counts})")
    else:
        print(f"{where}: problems found", file=sys.stderr)
        print_problems(report)
    return 0 if report.ok else EXIT_REFUSED


def print_problems(report: Report) -> None:
    """Each kind of problem counted, the first LIST_MAX of each shown (stderr)."""
    for kind, items in report.problems.items():
        print(f"  {kind}: {len(items)}", file=sys.stderr)
        for item in items[:LIST_MAX]:
            print(f"    {item}", file=sys.stderr)
