"""`uploaded → normalized`: the original becomes OGG Opus mono; its duration is measured."""

from __future__ import annotations

import asyncio

from transcriber.errors import PermanentFailure
from transcriber.pipeline.effects import AddFile, SetColumns
from transcriber.pipeline.step import Advanced, Job, Outcome
from transcriber.pipeline.steps._common import load_record
from transcriber.ports import Transcoder

NORMALIZED_EXT = ".ogg"


class NormalizeStep:
    name = "normalize"

    def __init__(self, transcoder: Transcoder) -> None:
        self._transcoder = transcoder

    def time_limit_seconds(self, job: Job) -> float | None:
        return None

    async def run(self, job: Job) -> Outcome:
        record = await load_record(job)
        if not record.original_file_name:
            raise PermanentFailure("the record has no original file")
        source = job.files.path_of(job.record_id, record.original_file_name)
        if not await asyncio.to_thread(source.exists):
            raise PermanentFailure("the original file is missing")
        file_id, temp = job.files.temp_path(job.record_id, NORMALIZED_EXT)
        try:
            # The cut bounds what a header declaring days of audio can cost downstream;
            # the duration measured on the copy is what recognizers' limits follow.
            await self._transcoder.normalize(
                source, temp, max_seconds=job.settings.server.record_max_seconds)
            duration_ms = await self._transcoder.probe_duration_ms(temp)
            placed = await job.files.finalize(job.record_id, file_id, temp)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        return Advanced(effects=(
            AddFile.of(placed, duration_ms=duration_ms),
            SetColumns(values={"normalized_file_id": placed.file_id, "duration_ms": duration_ms}),
        ))
