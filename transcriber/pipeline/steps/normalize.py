"""`uploaded → normalized`: the original becomes OGG Opus; its duration is measured.

The duration that counts is the converted stream's, not the header's: intake
refuses what a header declares over `server.record_max_seconds`, but a header
can lie (a FLAC whose STREAMINFO says 10 s over hours of constant samples, a
few KB). So the copy is made a little past the limit, and a copy longer than
the limit halts the record (`step_failed`, permanent) instead of being
recognized for hours.

The copy is mono, or keeps both channels of an original whose two channels
carry two different signals (a call, a speaker on each: measured by
`providers.speakers.channels`); the channel count lands on the copy's `files`
row, where submit and poll read it.
"""

from __future__ import annotations

import asyncio

from transcriber.core.errors import PermanentFailure
from transcriber.db.commands.progress import ReportNormalizeProgress
from transcriber.pipeline.effects import AddFile, SetColumns
from transcriber.pipeline.step import Advanced, Job, Outcome
from transcriber.pipeline.steps._common import load_record
from transcriber.ports import Transcoder

NORMALIZED_EXT = ".ogg"
# The copy runs this far past the limit, so a stream longer than the limit shows as
# a copy over it; one within this of the limit passes (container rounding: an Opus
# copy of exactly N s measures N s and a few ms).
PAST_LIMIT_SECONDS = 1
PAST_LIMIT_TOLERANCE_MS = 500


def too_long(duration_ms: int, max_seconds: int) -> bool:
    """Pure: whether a converted copy is longer than the longest accepted recording."""
    return duration_ms > max_seconds * 1000 + PAST_LIMIT_TOLERANCE_MS


def too_long_reason(max_seconds: int) -> str:
    return (f"the audio is longer than {max_seconds} s, the longest accepted "
            "(measured on the converted stream; its header declared less)")
# A long conversion reports its progress at most this often (and so at least
# every PROGRESS_PERIOD_SECONDS of ffmpeg plus this).
REPORT_EVERY_SECONDS = 10.0


def due(last_report: float | None, now: float, *, every: float = REPORT_EVERY_SECONDS) -> bool:
    """Pure: whether a progress report is due (the first one always is)."""
    return last_report is None or now - last_report >= every


class _Reporter:
    """Writes the normalize progress of a record, throttled by the clock."""

    def __init__(self, job: Job, total_ms: int) -> None:
        self._job = job
        self._total_ms = total_ms
        self._last: float | None = None

    async def __call__(self, done_ms: int) -> None:
        now = self._job.clock.monotonic()
        if not due(self._last, now):
            return
        self._last = now
        await self._job.writer.ask(ReportNormalizeProgress(
            record_id=self._job.record_id, token=self._job.token, done_ms=done_ms,
            total_ms=self._total_ms))


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
        try:
            source = await job.files.local_path(job.record_id, record.original_file_name)
        except FileNotFoundError:
            source = None
        if source is None or not await asyncio.to_thread(source.exists):
            raise PermanentFailure("the original file is missing")
        file_id, temp = job.files.temp_path(job.record_id, NORMALIZED_EXT)
        try:
            # The cut bounds what a stream longer than its header can cost here; the
            # duration measured on the copy is what decides, and what recognizers'
            # limits follow.
            max_seconds = job.settings.server.record_max_seconds
            channels = await self._transcoder.kept_channels(source, max_seconds=max_seconds)
            await self._transcoder.normalize(
                source, temp, max_seconds=max_seconds + PAST_LIMIT_SECONDS, channels=channels,
                on_progress=_Reporter(job, min(record.duration_ms, max_seconds * 1000)))
            duration_ms = await self._transcoder.probe_duration_ms(temp)
            if too_long(duration_ms, max_seconds):
                raise PermanentFailure(too_long_reason(max_seconds))
            placed = await job.files.finalize(job.record_id, file_id, temp)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        return Advanced(effects=(
            AddFile.of(placed, duration_ms=duration_ms, channels=channels),
            SetColumns(values={"normalized_file_id": placed.file_id, "duration_ms": duration_ms}),
        ))
