"""`transcriber resume RECORD_ID`: a person resumes a halted record (P9).

Runs its own short-lived writer on the database; with a server running the
two writers take turns on SQLite's write lock (busy timeout).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from transcriber.cli.exits import EXIT_REFUSED
from transcriber.cli.storage import migrated_writer
from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import parse_id
from transcriber.db.commands.pipeline import Resume
from transcriber.settings import Settings


async def resume_command(settings: Settings, raw_id: str) -> int:
    record_id = parse_id(raw_id)
    if record_id is None:
        # A malformed id never reaches SQL; for the person it is simply unknown.
        print(f"transcriber: record {raw_id!r} not found", file=sys.stderr)
        return EXIT_REFUSED
    writer = await migrated_writer(settings)
    await writer.start()
    try:
        resumed = await writer.ask(Resume(record_id=record_id))
    except NotFound:
        print(f"transcriber: record {record_id} not found", file=sys.stderr)
        return EXIT_REFUSED
    except Conflict:
        print(f"transcriber: record {record_id} is not halted; nothing to resume",
              file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await writer.stop()
    print(f"resumed {resumed.record_id} at stage {resumed.stage.value}")
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(resume_command(settings, args.record_id))
