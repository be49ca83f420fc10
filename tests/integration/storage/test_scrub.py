"""Deleted bytes leave the disk (docs/storage.md, "What a deletion leaves"): after
`PurgeVoices` and `DeleteRecord` commit, the writer checkpoints and truncates the WAL,
and `secure_delete` has zeroed the freed cells, so neither the database file nor its
`-wal` holds the embedding's raw float bytes or the transcript's text.

Without the checkpoint the pieces stayed in the WAL (SQLite checkpoints on its own only
every 1000 pages); without secure_delete they stayed in the database file's free space."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import numpy as np

from tests.helpers.factories import make_record, make_user
from transcriber.core.clock import Clock
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.edits import DeleteRecord
from transcriber.db.commands.voices import PurgeVoices
from transcriber.db.connection import (
    _pragmas,
    open_reader,
    open_sync,
    open_writer,
    reader_uri,
)
from transcriber.db.writer import Command, WriteContext, Writer

TEXT = "The quokka ledger of Zanzibar closes on the ninth of Brumaire, said the archivist."
KEPT_TEXT = "Bob's own recording about lighthouses and the tides of the northern sea stays."


def _floats(seed: int) -> bytes:
    return np.random.default_rng(seed).standard_normal(256).astype("<f4").tobytes()


PROFILE_PRINT = _floats(1)
RECORD_PRINT = _floats(2)
KEPT_PRINT = _floats(3)


class _Store(Command[None]):
    """What the pipeline and the known-voice commands write: a transcript, a record
    speaker's print and a voice profile (the same named statements)."""

    name = "test_store"

    def __init__(self, record_id: str, owner_id: str, *, text: str, profile: bytes,
                 record: bytes) -> None:
        self.record_id, self.owner_id = record_id, owner_id
        self.text, self.profile, self.record = text, profile, record

    async def execute(self, ctx: WriteContext) -> None:
        now = ctx.now()
        await ctx.conn.execute(q.results.UPSERT_TEXT, {
            "id": new_id(), "record_id": self.record_id, "kind": "transcript",
            "contents": self.text, "now": now})
        await ctx.conn.execute(q.voices.UPSERT_RECORD_VOICE, {
            "record_id": self.record_id, "speaker": "S1", "talk_ms": 5000,
            "centroid": self.record, "exemplars": self.record})
        await ctx.conn.execute(q.voices.UPSERT_PROFILE, {
            "id": new_id(), "owner_id": self.owner_id, "name": "Anna",
            "centroid": self.profile, "exemplars": self.profile, "now": now})


def _files(database: Path) -> dict[str, bytes]:
    wal = database.with_name(database.name + "-wal")
    return {path.name: path.read_bytes() for path in (database, wal) if path.exists()}


def _pieces(blob: bytes) -> list[bytes]:
    """32-byte pieces of `blob` (8 floats each): any one found is a leak."""
    return [blob[i:i + 32] for i in range(0, len(blob), 32)]


def _found(files: dict[str, bytes], needle: bytes) -> list[str]:
    return [name for name, content in files.items()
            if any(piece in content for piece in _pieces(needle))]


def _checkpoint(database: Path) -> None:
    """What SQLite's automatic checkpoint does in normal running: the rows reach the
    database file itself (a plain connection, as the sqlite3 shell's)."""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        conn.execute(q.control.PRAGMA_WAL_CHECKPOINT_TRUNCATE)


async def test_purged_prints_and_a_deleted_transcript_leave_the_files(
        migrated: Path, clock: Clock) -> None:
    writer = Writer(migrated, clock=clock)
    await writer.start()
    try:
        alice, bob = await make_user(writer), await make_user(writer, "bob")
        record_id = await make_record(writer, alice)
        kept_id = await make_record(writer, bob)
        await writer.ask(_Store(record_id, alice.id, text=TEXT, profile=PROFILE_PRINT,
                                record=RECORD_PRINT))
        await writer.ask(_Store(kept_id, bob.id, text=KEPT_TEXT, profile=KEPT_PRINT,
                                record=KEPT_PRINT))
        _checkpoint(migrated)
        # Bob's rows share the pages with Alice's, and show the search finds what is there.
        before = _files(migrated)
        assert _found(before, PROFILE_PRINT) == ["transcriber.sqlite3"]
        assert _found(before, TEXT.encode()) == ["transcriber.sqlite3"]
        purged = await writer.ask(PurgeVoices(login="alice"))
        assert (purged.profiles, purged.record_voices) == (1, 1)
        after_purge = _files(migrated)
        assert _found(after_purge, PROFILE_PRINT) == []
        assert _found(after_purge, RECORD_PRINT) == []
        assert _found(after_purge, KEPT_PRINT)  # Bob's voices stay
        assert _found(after_purge, TEXT.encode())  # and so does the record
        assert not writer.scrub_pending
        await writer.ask(DeleteRecord(record_id=record_id, owner_id=alice.id))
        after_delete = _files(migrated)
        assert _found(after_delete, TEXT.encode()) == []
        assert _found(after_delete, KEPT_TEXT.encode())
        assert not writer.scrub_pending
    finally:
        await writer.stop()


async def test_every_connection_turns_secure_delete_on(migrated: Path) -> None:
    """Debian's SQLite is built with secure_delete on by default, so the files above are
    clean here even without the pragma; other builds default to off, and then a deleted
    row's bytes stay in its page's free space. So every connection asks for it."""
    for writes in (True, False):
        assert q.control.PRAGMA_SECURE_DELETE_ON in _pragmas(busy_timeout_ms=1, writer=writes)
    with contextlib.closing(open_sync(migrated, busy_timeout_ms=100)) as conn:
        assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    writer, reader = (await open_writer(migrated, busy_timeout_ms=100),
                      await open_reader(migrated, busy_timeout_ms=100))
    try:
        for opened in (writer, reader):
            async with opened.execute("PRAGMA secure_delete") as cursor:
                row = await cursor.fetchone()
            assert row is not None
            assert row[0] == 1
    finally:
        await writer.close()
        await reader.close()


def _pending(writer: Writer) -> bool:
    return writer.scrub_pending


async def test_a_checkpoint_kept_short_by_a_reader_is_done_after_a_later_batch(
        migrated: Path, clock: Clock) -> None:
    writer = Writer(migrated, clock=clock, busy_timeout_ms=50)
    await writer.start()
    reader = sqlite3.connect(reader_uri(migrated), uri=True, isolation_level=None)
    try:
        alice = await make_user(writer)
        record_id = await make_record(writer, alice)
        await writer.ask(_Store(record_id, alice.id, text=TEXT, profile=PROFILE_PRINT,
                                record=RECORD_PRINT))
        reader.execute("BEGIN")
        reader.execute(q.voices.USER_BY_LOGIN, {"login": "alice"}).fetchall()  # a snapshot
        await writer.ask(PurgeVoices(login="alice"))
        assert _pending(writer)  # the reader's snapshot still needs the old frames
        assert _found(_files(migrated), PROFILE_PRINT) == ["transcriber.sqlite3-wal"]
        reader.execute("COMMIT")
        await make_user(writer, "bob")  # any later batch tries again
        assert not _pending(writer)
        assert _found(_files(migrated), PROFILE_PRINT) == []
    finally:
        reader.close()
        await writer.stop()
