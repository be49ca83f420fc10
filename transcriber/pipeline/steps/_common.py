"""What the steps share: reading the claimed record and its recognitions."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.commands.recognition import Recognition
from transcriber.errors import PermanentFailure
from transcriber.pipeline.step import Job
from transcriber.settings import Settings


def overlap_ms_of(settings: Settings, provider: str) -> int:
    """How much neighbouring parts of a provider's recognition overlap."""
    if provider == "local":
        return settings.recognizer.part_overlap_seconds * 1000
    return settings.speechkit.part_overlap_seconds * 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRecord:
    id: str
    duration_ms: int
    source: str
    original_file_name: str | None
    normalized_file_name: str | None
    language: str = "auto"
    speakers: int | None = None
    # 2: the normalized copy kept both channels of a stereo call (a speaker on each).
    channels: int = 1

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StepRecord:
        return cls(id=row["id"], duration_ms=row["duration_ms"], source=row["source"],
                   original_file_name=row["original_file_name"],
                   normalized_file_name=row["normalized_file_name"],
                   language=row["language"], speakers=row["speakers"],
                   channels=row["normalized_channels"])


async def load_record(job: Job) -> StepRecord:
    row = await job.readers.fetch_one(q.results.SELECT_STEP_RECORD, {"record_id": job.record_id})
    if row is None:
        raise PermanentFailure("record row is missing")
    return StepRecord.from_row(row)


async def load_recognitions(job: Job) -> list[Recognition]:
    rows = await job.readers.fetch_all(q.recognition.SELECT_RECOGNITIONS,
                                       {"record_id": job.record_id})
    return [Recognition.from_row(row) for row in rows]


async def file_name_of(job: Job, file_id: str) -> str:
    row = await job.readers.fetch_one(q.records.SELECT_FILE, {"id": file_id})
    if row is None:
        raise PermanentFailure("a file row the record points at is missing")
    name: str = row["file_name"]
    return name
