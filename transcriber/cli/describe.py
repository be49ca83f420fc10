"""`transcriber describe RECORD_ID|--all [--force-auto]`: describe records now, by hand.

The describer `describer.provider` names runs here, in this process, on finished
(`done`) records: it fills the fields nobody set yet, and with `--force-auto` also
replaces its own earlier ones (`auto`: after changing the provider, say); a record
whose transcript changed since its automatic fields were written (its describe job is
pending again: a person's correction) has those replaced without it. A person's
field (`human`, set or cleared) is never written. `--all` walks every finished record,
oldest first, a page at a time. When the provider fails (an endpoint down), the
extractive description is written instead, as the service does after its last try.
Runs its own short-lived writer; with a server running the two writers take turns on
SQLite's write lock. Prints one line per record described, never its text.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from transcriber.cli.exits import EXIT_REFUSED
from transcriber.cli.storage import migrated_writer
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.describe import SaveDescription
from transcriber.db.engine import new_readers
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.describe import Description
from transcriber.domain.transcripts import BadStructure
from transcriber.followups.describe import load_material, open_fields
from transcriber.ports import Describer, Material
from transcriber.service.describer import build_describer
from transcriber.settings import Settings

PAGE = 200


class _Run:
    def __init__(self, *, writer: Writer, readers: ReaderPool, describer: Describer,
                 fallback: Describer | None, force_auto: bool) -> None:
        self.writer, self.readers = writer, readers
        self.describer, self.fallback = describer, fallback
        self.force_auto = force_auto
        self.described = 0

    async def one(self, record_id: str, *, alone: bool) -> bool:
        """Describe one record; False when it could not be (said on stderr when `alone`)."""
        subject = await reads.describe.subject(self.readers, record_id=record_id)
        if subject is None:
            return _refuse(alone, f"record {record_id} not found")
        if subject.state != "done" or subject.halted_at is not None:
            return _refuse(alone, f"record {record_id} is not done; nothing to describe")
        # A pending job: the transcript changed (a person's correction, a re-transcription)
        # since the automatic fields were written; they are described again, as the
        # service would, and the job is answered so the service does not do it twice.
        job = await reads.describe.job(self.readers, record_id=record_id)
        pending = job is not None and job.state == "pending"
        replace_auto = self.force_auto or pending
        fields = open_fields(subject, replace_auto=replace_auto)
        if not fields:
            if alone:
                print(f"{record_id}: every field is set"
                      f"{'' if self.force_auto else ' (--force-auto replaces automatic ones)'}")
            return True
        try:
            material = await load_material(self.readers, subject)
        except BadStructure:
            return _refuse(True, f"record {record_id}: its stored transcript cannot be read")
        description = await self._describe(record_id, material)
        if description is None:
            return False
        saved = await self.writer.ask(SaveDescription(
            record_id=record_id, description=description, replace_auto=replace_auto,
            generation=job.generation if pending and job is not None else None))
        if saved.stale:  # the transcript changed again meanwhile: the service describes it
            print(f"{record_id}: nothing (its transcript changed meanwhile)")
            return True
        self.described += bool(saved.written)
        print(f"{record_id}: {', '.join(saved.written) or 'nothing'} by {description.by}")
        return True

    async def _describe(self, record_id: str, material: Material) -> Description | None:
        try:
            return await self.describer.describe(material)
        except Exception as exc:
            if self.fallback is None:
                _say(f"record {record_id}: the describer failed ({type(exc).__name__})")
                return None
            print(f"{record_id}: {self.describer.name} failed ({type(exc).__name__}); "
                  f"using {self.fallback.name}", file=sys.stderr)
        try:
            return await self.fallback.describe(material)
        except Exception as exc:
            _say(f"record {record_id}: the describer failed ({type(exc).__name__})")
            return None


def _refuse(say: bool, message: str) -> bool:
    if say:
        print(f"transcriber: {message}", file=sys.stderr)
    return False


def _say(message: str) -> None:
    print(f"transcriber: {message}", file=sys.stderr)


async def describe_command(settings: Settings, *, record: str | None, every: bool,
                           force_auto: bool) -> int:
    built = build_describer(settings)
    if built is None:
        print("transcriber: describer.provider is off; nothing describes", file=sys.stderr)
        return EXIT_REFUSED
    record_id = None
    if record is not None:
        record_id = parse_id(record)
        if record_id is None:  # a malformed id never reaches SQL
            print(f"transcriber: record {record!r} not found", file=sys.stderr)
            return EXIT_REFUSED
    writer = await migrated_writer(settings)
    readers = new_readers(settings.storage, size=1)
    describer, fallback = built
    await writer.start()
    await readers.open()
    run = _Run(writer=writer, readers=readers, describer=describer, fallback=fallback,
               force_auto=force_auto)
    try:
        if record_id is not None:
            return 0 if await run.one(record_id, alone=True) else EXIT_REFUSED
        failed = 0
        after_created_at, after_id = "", ""
        while every:
            page = await reads.describe.done_page(readers, after_created_at=after_created_at,
                                                  after_id=after_id, limit=PAGE)
            for done in page:
                failed += not await run.one(done.id, alone=False)
            if len(page) < PAGE:
                break
            after_created_at, after_id = page[-1].created_at, page[-1].id
        print(f"described {run.described} records" + (f", {failed} failed" if failed else ""))
        return EXIT_REFUSED if failed else 0
    finally:
        for part in (describer, fallback):
            close = getattr(part, "close", None)
            if close is not None:
                await close()
        await readers.close()
        await writer.stop()


def run(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(describe_command(settings, record=args.record_id, every=args.all,
                                        force_auto=args.force_auto))
