"""How far a record is on its way to a transcript: one answer for every door.

`progress_of` is pure (typed reads in, a `Progress` or None out);
`load_progress` reads what it needs (`transcriber.db.reads.progress`). The web card and list, the
Telegram status message and `transcriber transcribe` all call one of them.

`fraction` covers the whole way: normalization is its first
`NORMALIZE_SHARE`, recognition the rest, in proportion to the audio of the
parts whose answers are saved, plus the share of each running part that the
time since its start says is done (`estimate.running_share`, capped below the
whole part until its answer is saved): a short record's bar moves too.

`eta_seconds` is the time left until the recognition is done, for every record
queued, normalized or recognized: the work queued ahead of it (local work,
`parallel` at a time), its normalization, and its own audio not recognized yet,
all at the speed this host measured for the provider and model
(`recognition_speed`), or before any measurement the recognizer's warm-up
figure. No speed at all (a caller passing None), no ETA.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from transcriber.core.clock import parse_time
from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.progress import NormalizeProgress, PartProgress
from transcriber.domain.stages import Stage
from transcriber.pipeline.estimate import (
    NORMALIZE_REAL_TIME_FACTOR,
    elapsed_seconds,
    expected_seconds,
    queue_wait_seconds,
    running_seconds_left,
    running_share,
)
from transcriber.pipeline.parts import PartPlan, plan_parts, plans_from_offsets
from transcriber.ports import Capabilities, Runs
from transcriber.settings import Settings

NORMALIZE_SHARE = 0.05
_IN_PROGRESS = (Stage.UPLOADED.value, Stage.NORMALIZED.value, Stage.SUBMITTED.value)
# A queued record's wait reads at most this many records ahead of it (then the wait
# is a lower bound): the estimate of one card never costs more than that.
QUEUE_LOOKAHEAD = 500


class OnItsWay(Protocol):
    """What progress needs of a record (a list item, a card, a progress read…)."""

    @property
    def id(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def halted_at(self) -> str | None: ...

    @property
    def duration_ms(self) -> int: ...

    @property
    def created_at(self) -> str: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    # `queue`: waiting for a worker (nothing of it has run yet); `normalize`: ffmpeg
    # converts it; `recognize`: its parts are being recognized.
    stage: Literal["queue", "normalize", "recognize"]
    done: int
    total: int
    fraction: float
    eta_seconds: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "done": self.done, "total": self.total,
                "fraction": self.fraction, "eta_seconds": self.eta_seconds}


def part_spans(parts: Sequence[PartProgress], *, duration_ms: int,
               overlap_ms: int) -> list[PartPlan]:
    """Pure: the parts' spans from their stored offsets (as the stitch rebuilds them);
    each channel of a stereo record recognized on its own has its own parts."""
    by_channel: dict[int | None, list[tuple[int, int]]] = {}
    for p in parts:
        by_channel.setdefault(p.channel, []).append((p.part_index, p.offset_ms))
    spans = [plan for offsets in by_channel.values()
             for plan in plans_from_offsets(offsets, duration_ms=duration_ms,
                                            overlap_ms=overlap_ms)]
    return sorted(spans, key=lambda plan: plan.index)


def running_parts(parts: Sequence[PartProgress]) -> dict[int, datetime]:
    """Pure: the parts started and not answered yet, with their start."""
    return {p.part_index: parse_time(p.started_at) for p in parts
            if p.started_at is not None and p.payload_file is None}


def _recognition_seconds(spans: Sequence[PartPlan], *, speed: float, sequential: bool) -> float:
    """Pure: the recognition of these spans, none started: one after another, or side
    by side (the longest decides)."""
    each = [expected_seconds(s.length_ms, speed) for s in spans]
    return (sum(each) if sequential else max(each, default=0.0))


def _eta(seconds: float) -> int:
    """Pure: whole seconds left, at least one while anything is left (0 reads as done)."""
    return max(round(seconds), 1)


def progress_of(
    record: OnItsWay,
    parts: Sequence[PartProgress],
    *,
    real_time_factor: float | None,
    normalize: NormalizeProgress | None,
    planned: Sequence[PartPlan],
    overlap_ms: int,
    sequential: bool,
    now: datetime,
    queue_ms: int = 0,
    parallel: int = 1,
) -> Progress | None:
    """Pure: the progress of a record, or None when it is not on its way (done, halted).

    `parts` are the record's recognition parts; `planned` is the cut the
    configured recognizer would make, for a record whose parts are not registered
    yet; `sequential`: the parts are recognized one after another (local work);
    `queue_ms`: the audio queued ahead of it, recognized `parallel` at a time.
    """
    if record.halted_at is not None or record.state not in _IN_PROGRESS:
        return None
    duration_ms = record.duration_ms
    spans = part_spans(parts, duration_ms=duration_ms, overlap_ms=overlap_ms) if parts \
        else list(planned)
    speed = real_time_factor
    wait = 0.0 if speed is None else queue_wait_seconds(queue_ms, speed=speed,
                                                          parallel=parallel)
    if record.state == Stage.UPLOADED.value:
        return _normalizing(normalize, duration_ms=duration_ms, spans=spans, speed=speed,
                            sequential=sequential, wait=wait, now=now)
    saved = {p.part_index for p in parts if p.payload_file is not None}
    started = running_parts(parts)
    total_audio = sum(s.length_ms for s in spans) or 1
    done_audio = sum(s.length_ms for s in spans if s.index in saved)
    waiting = [s for s in spans if s.index not in saved]
    running = [s for s in waiting if s.index in started]
    moving = 0.0 if speed is None else sum(
        running_share(started[s.index], now, duration_ms=s.length_ms, speed=speed) * s.length_ms
        for s in running)
    fraction = NORMALIZE_SHARE + (1 - NORMALIZE_SHARE) * min(
        (done_audio + moving) / total_audio, 1.0)
    eta: int | None = None
    if speed is not None:
        lefts = [running_seconds_left(started[s.index], now, duration_ms=s.length_ms,
                                      speed=speed)
                 if s.index in started else expected_seconds(s.length_ms, speed)
                 for s in waiting]
        if not lefts:
            eta = 0
        elif sequential:
            # Nothing of it running: it waits for the local work queued ahead first.
            eta = _eta(sum(lefts) + (0.0 if running else wait))
        else:
            # Remote parts run side by side: the slowest one still running decides.
            eta = _eta(max(lefts))
    stage: Literal["queue", "recognize"] = "recognize" if running or saved else "queue"
    return Progress(stage=stage, done=len(saved & {s.index for s in spans}),
                    total=len(spans), fraction=round(fraction, 4), eta_seconds=eta)


def _normalizing(normalize: NormalizeProgress | None, *, duration_ms: int,
                 spans: Sequence[PartPlan], speed: float | None, sequential: bool,
                 wait: float, now: datetime) -> Progress:
    done_ms = 0 if normalize is None else normalize.done_ms
    total_ms = duration_ms if normalize is None else normalize.total_ms or duration_ms
    share = min(done_ms / total_ms, 1.0) if total_ms > 0 else 0.0
    expected = expected_seconds(total_ms, NORMALIZE_REAL_TIME_FACTOR)
    if normalize is None:
        normalize_left = expected  # not started: it is queued
    elif done_ms > 0:
        # ffmpeg's own pace so far is the best guess for the rest of this file.
        elapsed = elapsed_seconds(parse_time(normalize.started_at), now)
        normalize_left = elapsed * max(total_ms - done_ms, 0) / done_ms
    else:
        normalize_left = max(expected - elapsed_seconds(parse_time(normalize.started_at), now),
                             0.0)
    # No speed, or no duration (the intake could not measure it): no honest ETA.
    eta = None if speed is None or duration_ms <= 0 else _eta(
        normalize_left + wait + _recognition_seconds(spans, speed=speed, sequential=sequential))
    return Progress(stage="queue" if normalize is None else "normalize", done=0,
                    total=max(len(spans), 1), fraction=round(NORMALIZE_SHARE * share, 4),
                    eta_seconds=eta)


@dataclass(frozen=True, slots=True, kw_only=True)
class Configured:
    """What the configured recognizer means for progress."""

    provider: str
    model: str
    max_part_ms: int | None
    part_overlap_ms: int
    sequential: bool
    # Recognitions at once (local work: the recognizer's model runs).
    parallel: int
    # Seconds of work per second of audio before this host has measured any.
    warmup_real_time_factor: float

    @classmethod
    def of(cls, settings: Settings, capabilities: Capabilities) -> Configured:
        """From the recognizer's capabilities (a door that runs none passes the
        configured one's, `providers.recognizers.capabilities_of`: the same figures)."""
        return cls(provider=capabilities.provider, model=capabilities.model,
                   max_part_ms=capabilities.max_part_ms,
                   part_overlap_ms=capabilities.part_overlap_ms,
                   sequential=capabilities.runs is Runs.HERE,
                   parallel=max(settings.recognizer.concurrency, 1),
                   warmup_real_time_factor=capabilities.expected_real_time_factor)


async def load_progress(readers: ReaderPool, record_id: str, *, settings: Settings,
                        now: datetime, capabilities: Capabilities) -> Progress | None:
    """The progress of one record, read through the typed reads (any door may call it)."""
    record = await reads.progress.progress_record(readers, record_id=record_id)
    if record is None:
        return None
    return await progress_for_row(readers, record, settings=settings, now=now,
                                  capabilities=capabilities)


async def progress_for_row(readers: ReaderPool, record: OnItsWay, *, settings: Settings,
                           now: datetime, capabilities: Capabilities) -> Progress | None:
    """As `load_progress`, for a record already read (a list item, a card…)."""
    if record.halted_at is not None or record.state not in _IN_PROGRESS:
        return None
    configured = Configured.of(settings, capabilities)
    parts = await reads.progress.parts(readers, record_id=record.id)
    provider = parts[0].provider if parts else configured.provider
    model = parts[0].model if parts else configured.model
    measured = await reads.progress.real_time_factor(readers, provider=provider, model=model)
    speed = configured.warmup_real_time_factor if measured is None else measured
    normalize = None
    if record.state == Stage.UPLOADED.value:
        normalize = await reads.progress.normalize_progress(readers, record_id=record.id)
    queue_ms = 0
    if configured.sequential and record.state != Stage.SUBMITTED.value \
            and not running_parts(parts):
        # Local work waits for the records before it; a remote provider runs them all.
        ahead = await reads.progress.queue_ahead(readers, record_id=record.id,
                                                 created_at=record.created_at,
                                                 limit=QUEUE_LOOKAHEAD)
        queue_ms = ahead.audio_ms
    # The configured recognizer's overlap: a record started by another provider before
    # the setting changed is estimated with it too (an estimate, not its transcript).
    overlap_ms = configured.part_overlap_ms
    planned = plan_parts(record.duration_ms, max_part_ms=configured.max_part_ms,
                         overlap_ms=overlap_ms)
    return progress_of(
        record, parts, real_time_factor=speed, normalize=normalize, planned=planned,
        overlap_ms=overlap_ms, sequential=configured.sequential, now=now,
        queue_ms=queue_ms, parallel=configured.parallel)
