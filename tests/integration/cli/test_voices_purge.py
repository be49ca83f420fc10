"""`transcriber voices purge`: the prints go, and out of the files too; a checkpoint a
running service's reader kept short is said on stderr (docs/storage.md, "What a
deletion leaves")."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from tests.helpers.factories import make_user
from tests.helpers.settings import SettingsFactory
from transcriber.cli.storage import migrated_writer
from transcriber.cli.voices import purge_command
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.connection import database_path, reader_uri
from transcriber.db.writer import Command, WriteContext


class _Profile(Command[None]):
    """A voice profile, as the known-voice commands write it (the same statement)."""

    name = "test_profile"

    def __init__(self, owner_id: str) -> None:
        self.owner_id = owner_id

    async def execute(self, ctx: WriteContext) -> None:
        vector = bytes(range(256)) * 4
        await ctx.conn.execute(q.voices.UPSERT_PROFILE, {
            "id": new_id(), "owner_id": self.owner_id, "name": "Anna", "centroid": vector,
            "exemplars": vector, "now": ctx.now()})


async def test_a_purge_kept_short_by_a_reader_says_so(
        make_settings: SettingsFactory, capsys: pytest.CaptureFixture[str]) -> None:
    settings = make_settings(storage={"busy_timeout_ms": 50})
    writer = await migrated_writer(settings)
    await writer.start()
    try:
        await writer.ask(_Profile((await make_user(writer)).id))
    finally:
        await writer.stop()
    path = database_path(settings.storage.data_dir)
    with contextlib.closing(sqlite3.connect(reader_uri(path), uri=True,
                                            isolation_level=None)) as reader:
        reader.execute("BEGIN")
        reader.execute(q.voices.USER_BY_LOGIN, {"login": "alice"}).fetchall()  # a snapshot
        assert await purge_command(settings, "alice") == 0
        kept_short = capsys.readouterr()
        reader.execute("COMMIT")
    assert "may stay in the -wal file" in kept_short.err
    assert "purged the user's voices: 1 voice profiles" in kept_short.out
    assert await purge_command(settings, "alice") == 0
    assert capsys.readouterr().err == ""  # nobody reading: the checkpoint completes
