"""Harness for the real steps: records with real files, one step actor driven by hand.

`drive` runs the actor's claim→run→post loop on a fake clock: when a run
finds no work (a deferral or a backoff), the clock moves forward instead of
anyone sleeping.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import pytest

from tests.factories import make_user
from transcriber.db import queries as q
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.files import RecordFiles
from transcriber.ids import new_id
from transcriber.pipeline.actor import RunReport, StepActor
from transcriber.pipeline.notify import Delivery, NullNotifier
from transcriber.pipeline.step import Step
from transcriber.providers.ffmpeg import ffmpeg_executable
from transcriber.settings import FfmpegSettings, Settings
from transcriber.stages import Stage
from transcriber.testing.clock import FakeClock

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audio"


def tone_mp3(folder: Path, seconds: int) -> Path:
    """A mono 440 Hz tone of `seconds`, as a 32 kb/s MP3 in `folder`."""
    path = folder / "tone.mp3"
    subprocess.run([ffmpeg_executable(FfmpegSettings()), "-nostdin", "-loglevel", "error",
                    "-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}", "-ac", "1",
                    "-c:a", "libmp3lame", "-b:a", "32k", str(path)], check=True)
    return path

AddRecord = Callable[[Path], Awaitable[str]]


@pytest.fixture
def add_record(writer: Writer, record_files: RecordFiles) -> AddRecord:
    """Place a copy of `source` as a record's original and accept the record."""

    async def add(source: Path) -> str:
        owner = await make_user(writer, "alice")
        record_id = new_id()
        file_id, temp = record_files.temp_path(record_id, source.suffix)
        shutil.copyfile(source, temp)
        placed = await record_files.finalize(record_id, file_id, temp)
        await writer.ask(AcceptRecord(
            record_id=record_id, owner_id=owner.id,
            original=StoredFile(id=placed.file_id, file_name=placed.file_name,
                                size_bytes=placed.size_bytes, format=placed.format,
                                duration_ms=None),
            original_filename=source.name, duration_ms=0,
        ))
        return record_id

    return add


MakeActor = Callable[[Mapping[str, Step], Settings], StepActor]


@pytest.fixture
def make_actor(clock: FakeClock, writer: Writer, readers: ReaderPool,
               record_files: RecordFiles) -> MakeActor:
    def make(steps: Mapping[str, Step], settings: Settings) -> StepActor:
        return StepActor(name="test-actor", settings=settings, clock=clock, writer=writer,
                         readers=readers, files=record_files, steps=steps,
                         delivery=Delivery(readers, NullNotifier), rng=lambda: 0.5)

    return make


async def record_row(readers: ReaderPool, record_id: str) -> sqlite3.Row:
    row = await readers.fetch_one(q.records.SELECT_RECORD, {"id": record_id})
    assert row is not None
    return row


async def drive(actor: StepActor, clock: FakeClock, readers: ReaderPool, record_id: str, *,
                until: Stage = Stage.DONE, max_runs: int = 60,
                step_seconds: float = 5.0) -> list[RunReport]:
    """Run until the record reaches `until` or is halted; returns the reports."""
    reports: list[RunReport] = []
    for _ in range(max_runs):
        row = await record_row(readers, record_id)
        if row["state"] == until.value or row["halted_at"] is not None:
            return reports
        report = await actor.run_once()
        reports.append(report)
        if report.outcome in ("empty", "deferred", "failure"):
            clock.advance(step_seconds)
    raise AssertionError(f"record did not reach {until} in {max_runs} runs: {reports[-3:]}")
