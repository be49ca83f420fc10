"""`transcriber voices purge [LOGIN]`: every voice embedding of one user, or of everybody.

Voice embeddings are biometric data (docs/speakers.md, "Known voices"): the
profiles with what they were learned from, and each record's speakers' prints
and windows, go in one transaction. The names given on records stay (they are
text a person typed). Runs its own short-lived writer, as `resume` does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from transcriber.cli.exits import EXIT_REFUSED
from transcriber.cli.storage import migrated_writer
from transcriber.core.errors import NotFound
from transcriber.db.commands.voices import PurgeVoices
from transcriber.settings import Settings


async def purge_command(settings: Settings, login: str | None) -> int:
    writer = await migrated_writer(settings)
    await writer.start()
    try:
        purged = await writer.ask(PurgeVoices(login=login))
    except NotFound:
        print("transcriber: no user has that login", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await writer.stop()
    if writer.scrub_pending:
        print("transcriber: purged, but a reader kept the WAL checkpoint short: the prints "
              "may stay in the -wal file until the service's next checkpoint", file=sys.stderr)
    whose = "everybody's" if login is None else "the user's"
    print(f"purged {whose} voices: {purged.profiles} voice profiles, "
          f"{purged.record_voices} record speakers' prints")
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(purge_command(settings, args.login))
