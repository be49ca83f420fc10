"""`transcriber move-to --database-url URL [--files s3] [--json]`: the SQLite archive
copied into PostgreSQL (and the bucket), then checked; exit 1 with a list when the
copy differs or cannot be made. Run again after an interruption: it goes on."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable

import orjson

from transcriber.cli.exits import EXIT_REFUSED
from transcriber.cli.progress import file_progress
from transcriber.maintenance.move import LIST_MAX, MoveError, MoveHooks, MoveReport, move_to
from transcriber.settings import Settings


def describe(report: MoveReport) -> str:
    moved = sum(n["postgresql"] for n in report.tables.values())
    files = report.files
    where = ("in the bucket" if report.files_at == "s3" else "stay in the data folder")
    return (f"{moved} rows in {len(report.tables)} tables; {files['files']} files "
            f"({files['bytes']} bytes; {files['copied']} copied, {files['in_place']} "
            f"already there) {where}; search index of {report.search['records']} records")


def run(args: argparse.Namespace, settings: Settings) -> int:
    try:
        with file_progress("move-to") as progress:
            bar: list[Callable[[int], None]] = []
            hooks = MoveHooks(files_total=lambda total: bar.append(progress(total)),
                              on_file=lambda _size: bar[-1](1) if bar else None)
            report = asyncio.run(move_to(settings, args.database_url,
                                         to_bucket=args.files == "s3", hooks=hooks))
    except MoveError as exc:
        print(f"transcriber: move-to stopped: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if args.json:
        sys.stdout.write(orjson.dumps(report.as_dict(), option=orjson.OPT_INDENT_2).decode()
                         + "\n")
    if not report.ok:
        print("transcriber: the copy differs from the archive:", file=sys.stderr)
        for kind, items in report.problems.items():
            print(f"  {kind}: {len(items)}", file=sys.stderr)
            for item in items[:LIST_MAX]:
                print(f"    {item}", file=sys.stderr)
        return EXIT_REFUSED
    if not args.json:
        files = ' and storage.files = "s3"' if report.files_at == "s3" else ""
        print(f"copied and checked: {describe(report)}\n"
              f"the service uses the copy once its settings say storage.database_url{files}")
    return 0
