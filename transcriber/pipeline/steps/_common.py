"""What the steps share: reading the claimed record and its recognitions."""

from __future__ import annotations

from transcriber.core.errors import PermanentFailure
from transcriber.db import reads
from transcriber.db.reads.recognitions import Recognition
from transcriber.db.reads.records import StepRecord
from transcriber.pipeline.step import Job

__all__ = ["StepRecord", "file_name_of", "load_recognitions", "load_record"]


async def load_record(job: Job) -> StepRecord:
    record = await reads.records.step_record(job.readers, record_id=job.record_id)
    if record is None:
        raise PermanentFailure("record row is missing")
    return record


async def load_recognitions(job: Job) -> list[Recognition]:
    return await reads.recognitions.recognitions(job.readers, record_id=job.record_id)


async def file_name_of(job: Job, file_id: str) -> str:
    name = await reads.records.file_name(job.readers, file_id=file_id)
    if name is None:
        raise PermanentFailure("a file row the record points at is missing")
    return name
