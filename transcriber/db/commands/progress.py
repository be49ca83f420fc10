"""Writer commands of progress: the measured recognition speed, normalization progress."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.observability import RECOGNITION_SPEED_SAMPLES
from transcriber.db import queries as q
from transcriber.db.writer import Command, WriteContext

# How much one finished part moves the stored real-time factor: recent parts
# count most (the machine's load changes), one odd part does not swing it.
SPEED_WEIGHT = 0.3
# A part this long (or longer) moves the factor by the whole weight; a shorter one by
# its share of it: a 5-second voice message's time is mostly the fixed cost of a run.
FULL_WEIGHT_AUDIO_MS = 60_000
# A part shorter than this is not measured at all (its time is all fixed cost).
MIN_SAMPLE_AUDIO_MS = 1000
# A sample more than this many times off the stored factor is an outlier (a part
# that waited for the machine, a provider's bad minute): it counts as this far off
# only. Not dropped outright: a host that really became slower (or faster) is still
# learned, in a few parts.
OUTLIER_RATIO = 3.0


def sample_kind(previous: float | None, *, audio_ms: int, work_ms: int) -> str:
    """Pure: how `next_real_time_factor` takes this part: `used`, `outlier` (bounded),
    or `skipped` (too short, or no time)."""
    if audio_ms < MIN_SAMPLE_AUDIO_MS or work_ms < 0:
        return "skipped"
    sample = work_ms / audio_ms
    if previous is not None and previous > 0 and not (
            previous / OUTLIER_RATIO <= sample <= previous * OUTLIER_RATIO):
        return "outlier"
    return "used"


def next_real_time_factor(previous: float | None, *, audio_ms: int, work_ms: int) -> float | None:
    """Pure: the stored real-time factor after a part of `audio_ms` took `work_ms`
    (an exponential moving average, weighted by the part's length, outliers bounded)."""
    if audio_ms < MIN_SAMPLE_AUDIO_MS or work_ms < 0:
        return previous
    sample = work_ms / audio_ms
    if previous is None or previous <= 0:
        return sample
    bounded = min(max(sample, previous / OUTLIER_RATIO), previous * OUTLIER_RATIO)
    weight = SPEED_WEIGHT * min(audio_ms / FULL_WEIGHT_AUDIO_MS, 1.0)
    return previous + weight * (bounded - previous)


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasureSpeed(Command[float | None]):
    """A part finished: fold its speed into the provider's real-time factor."""

    name: ClassVar[str] = "measure_speed"
    provider: str
    model: str
    audio_ms: int
    work_ms: int

    async def execute(self, ctx: WriteContext) -> float | None:
        params = {"provider": self.provider, "model": self.model}
        async with ctx.conn.execute(q.progress.SELECT_SPEED, params) as cursor:
            row = await cursor.fetchone()
        previous = None if row is None else float(row["real_time_factor"])
        factor = next_real_time_factor(previous, audio_ms=self.audio_ms, work_ms=self.work_ms)
        # Seen on /metrics: a host whose parts keep coming as outliers has changed speed
        # (or its parts wait for the model) and its estimates lag for a while.
        RECOGNITION_SPEED_SAMPLES.labels(self.provider, sample_kind(
            previous, audio_ms=self.audio_ms, work_ms=self.work_ms)).inc()
        if factor is not None:
            await ctx.conn.execute(q.progress.UPSERT_SPEED,
                                   {**params, "real_time_factor": factor, "now": ctx.now()})
        return factor


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportNormalizeProgress(Command[None]):
    """How much of the record the normalize step has converted (its holder only)."""

    name: ClassVar[str] = "report_normalize_progress"
    record_id: str
    token: str
    done_ms: int
    total_ms: int

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.progress.UPSERT_NORMALIZE_PROGRESS, {
            "record_id": self.record_id, "token": self.token, "done_ms": max(self.done_ms, 0),
            "total_ms": max(self.total_ms, 0), "now": ctx.now()})
