"""The real steps driven by hand: records with real files, one step actor on a fake clock.

`drive` runs the actor's claim→run→post loop: when a run finds no work (a
deferral or a backoff), the clock moves forward instead of anyone sleeping.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

from tests.helpers.factories import make_user
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import Stage
from transcriber.pipeline.actor import RunReport, StepActor
from transcriber.pipeline.step import Step
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.speechkit import SpeechkitRecognizer
from transcriber.settings import FfmpegSettings
from transcriber.testing.clock import FakeClock

AddRecord = Callable[[Path], Awaitable[str]]


async def add_record(writer: Writer, record_files: LocalRecordFiles, source: Path, *,
                     duration_ms: int | None = None) -> str:
    """Place a copy of `source` as a record's original and accept the record (its
    duration as the doors' intake probe found it, when given)."""
    owner = await make_user(writer, "alice")
    record_id = new_id()
    file_id, temp = record_files.temp_path(record_id, source.suffix)
    shutil.copyfile(source, temp)
    placed = await record_files.finalize(record_id, file_id, temp)
    await writer.ask(AcceptRecord(
        record_id=record_id, owner_id=owner.id,
        original=StoredFile(id=placed.file_id, file_name=placed.file_name,
                            size_bytes=placed.size_bytes, format=placed.format,
                            duration_ms=duration_ms),
        original_filename=source.name, duration_ms=duration_ms or 0,
    ))
    return record_id


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


def sk_table(recognizer: SpeechkitRecognizer, store: S3ObjectStore,
                    transcoder: object | None = None) -> dict[str, Step]:
    """The real steps with SpeechKit and the object store; ffmpeg unless `transcoder`."""
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    return build_step_table(transcoder=transcoder or ffmpeg,  # type: ignore[arg-type]
                            cutter=ffmpeg, recognizer=recognizer, store=store)
