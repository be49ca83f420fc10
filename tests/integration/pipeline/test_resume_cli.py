"""`transcriber resume RECORD_ID` and the `Resume` command's refusals (P9, P15)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.factories import make_record, make_user
from tests.helpers.pipeline import claim_ok, events_of, state_of
from transcriber.cli.resume import resume_command
from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import new_id
from transcriber.db.commands.pipeline import Halt, Resume
from transcriber.db.commands.users import User
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason
from transcriber.settings import Settings


async def _halted(writer: Writer, settings: Settings, user: User) -> str:
    record_id = await make_record(writer, user)
    held = await claim_ok(writer, settings)
    assert held.record_id == record_id
    await writer.ask(Halt(record_id=record_id, token=held.token, reason=HaltReason.STUCK,
                          error_text="stuck"))
    return record_id


async def test_p09_resume_command_refuses_unknown_foreign_and_running_records(
    writer: Writer, settings: Settings, user: User,
) -> None:
    halted = await _halted(writer, settings, user)
    running = await make_record(writer, user)
    with pytest.raises(Conflict):
        await writer.ask(Resume(record_id=running))
    with pytest.raises(NotFound):
        await writer.ask(Resume(record_id=new_id()))
    other = await make_user(writer, "mallory")
    with pytest.raises(NotFound):
        await writer.ask(Resume(record_id=halted, owner_id=other.id))
    resumed = await writer.ask(Resume(record_id=halted, owner_id=user.id))
    assert resumed.record_id == halted


async def test_p15_cli_resume_writes_the_human_event(
    writer: Writer, settings: Settings, user: User, readers: ReaderPool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record_id = await _halted(writer, settings, user)
    assert await resume_command(settings, record_id.upper()) == 0
    assert f"resumed {record_id} at stage uploaded" in capsys.readouterr().out
    row = await state_of(readers, record_id)
    assert (row["halted_at"], row["attempts"]) == (None, 0)
    assert [(e["origin"], e["outcome"]) for e in await events_of(readers, record_id)] == [
        ("pipeline", "halted"), ("human", "resumed")]


async def test_p09_cli_resume_refuses_a_record_that_is_not_halted(
    writer: Writer, settings: Settings, user: User, readers: ReaderPool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record_id = await make_record(writer, user)
    assert await resume_command(settings, record_id) == 1
    assert "is not halted" in capsys.readouterr().err
    assert await events_of(readers, record_id) == []
    assert await resume_command(settings, new_id()) == 1
    assert "not found" in capsys.readouterr().err
    assert await resume_command(settings, "../../etc/passwd") == 1
    assert "not found" in capsys.readouterr().err


def test_cli_resume_is_wired_as_a_subcommand(data_dir: Path) -> None:
    env = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir)}
    done = subprocess.run([sys.executable, "-m", "transcriber.cli", "resume", "nope"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "record 'nope' not found" in done.stderr
