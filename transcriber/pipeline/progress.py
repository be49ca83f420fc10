"""How far a record is on its way to a transcript: one answer for every door.

`progress_of` is pure (typed reads in, a `Progress` or None out);
`load_progress` reads what it needs (`transcriber.db.reads.progress`). The web card and list, the
Telegram status message and `transcriber transcribe` all call one of them.

`fraction` covers the whole way: normalization is its first
`NORMALIZE_SHARE`, recognition the rest, in proportion to the audio of the
parts whose answers are saved. Both only grow (a normalization report never
moves back, a saved part stays saved), so `fraction` never goes backwards.
The ETA of recognition is the audio left times the real-time factor
measured on this machine (`recognition_speed`); no measurement, no ETA.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from transcriber.clock import parse_time
from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.progress import NormalizeProgress, PartProgress
from transcriber.pipeline.parts import PartPlan, plan_parts, plans_from_offsets
from transcriber.pipeline.steps._common import overlap_ms_of
from transcriber.ports import Recognizer
from transcriber.settings import Settings
from transcriber.stages import Stage

NORMALIZE_SHARE = 0.05
_IN_PROGRESS = (Stage.UPLOADED.value, Stage.NORMALIZED.value, Stage.SUBMITTED.value)


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    stage: Literal["normalize", "recognize"]
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


def _seconds_since(moment: str | None, now: datetime) -> float:
    return 0.0 if moment is None else max((now - parse_time(moment)).total_seconds(), 0.0)


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
) -> Progress | None:
    """Pure: the progress of a record, or None when it is not on its way (done, halted).

    `parts` are the record's recognition parts; `planned` is the cut the
    configured recognizer would make, for a record whose parts are not registered
    yet; `sequential`: the parts are recognized one after another (local work).
    """
    if record.halted_at is not None or record.state not in _IN_PROGRESS:
        return None
    duration_ms = record.duration_ms
    if record.state == Stage.UPLOADED.value:
        return _normalizing(normalize, duration_ms=duration_ms, total_parts=len(planned),
                            now=now)
    spans = part_spans(parts, duration_ms=duration_ms, overlap_ms=overlap_ms) if parts \
        else list(planned)
    saved = {p.part_index for p in parts if p.payload_file is not None}
    started = {p.part_index: p.started_at for p in parts}
    total_audio = sum(s.length_ms for s in spans) or 1
    done_audio = sum(s.length_ms for s in spans if s.index in saved)
    waiting = [s for s in spans if s.index not in saved]
    fraction = NORMALIZE_SHARE + (1 - NORMALIZE_SHARE) * min(done_audio / total_audio, 1.0)
    eta: int | None = None
    if real_time_factor is not None:
        if not waiting:
            eta = 0
        elif sequential:
            eta = round(sum(s.length_ms for s in waiting) / 1000 * real_time_factor)
        else:
            # Remote parts run side by side: the slowest one still running decides.
            eta = round(max(
                max(s.length_ms / 1000 * real_time_factor
                    - _seconds_since(started.get(s.index), now), 0.0)
                for s in waiting))
    return Progress(stage="recognize", done=len(saved & {s.index for s in spans}),
                    total=len(spans), fraction=round(fraction, 4), eta_seconds=eta)


def _normalizing(normalize: NormalizeProgress | None, *, duration_ms: int, total_parts: int,
                 now: datetime) -> Progress:
    done_ms = 0 if normalize is None else normalize.done_ms
    total_ms = duration_ms if normalize is None else normalize.total_ms or duration_ms
    share = min(done_ms / total_ms, 1.0) if total_ms > 0 else 0.0
    eta: int | None = None
    if normalize is not None and done_ms > 0:
        # ffmpeg's own pace so far is the best guess for the rest of this file.
        elapsed = _seconds_since(normalize.started_at, now)
        eta = round(elapsed * max(total_ms - done_ms, 0) / done_ms)
    return Progress(stage="normalize", done=0, total=max(total_parts, 1),
                    fraction=round(NORMALIZE_SHARE * share, 4), eta_seconds=eta)


@dataclass(frozen=True, slots=True, kw_only=True)
class Configured:
    """What the configured recognizer means for progress."""

    provider: str
    model: str
    max_part_ms: int | None
    sequential: bool

    @classmethod
    def of(cls, settings: Settings, recognizer: Recognizer | None) -> Configured:
        if recognizer is not None:
            return cls(provider=recognizer.provider, model=recognizer.model,
                       max_part_ms=recognizer.max_part_ms,
                       sequential=recognizer.finishes_in_submit)
        # A door without the recognizer object (it runs elsewhere) reads the settings.
        options = settings.recognizer
        if options.provider == "local":
            model = options.model_dir.name if options.model_dir else "whisper-base"
            return cls(provider="local", model=model, max_part_ms=options.part_seconds * 1000,
                       sequential=True)
        return cls(provider=options.provider, model=settings.speechkit.model,
                   max_part_ms=settings.speechkit.max_part_seconds * 1000, sequential=False)


async def load_progress(readers: ReaderPool, record_id: str, *, settings: Settings,
                        now: datetime, recognizer: Recognizer | None = None) -> Progress | None:
    """The progress of one record, read through the typed reads (any door may call it)."""
    record = await reads.progress.progress_record(readers, record_id=record_id)
    if record is None:
        return None
    return await progress_for_row(readers, record, settings=settings, now=now,
                                  recognizer=recognizer)


async def progress_for_row(readers: ReaderPool, record: OnItsWay, *, settings: Settings,
                           now: datetime, recognizer: Recognizer | None = None
                           ) -> Progress | None:
    """As `load_progress`, for a record already read (a list item, a card…)."""
    if record.halted_at is not None or record.state not in _IN_PROGRESS:
        return None
    configured = Configured.of(settings, recognizer)
    parts = await reads.progress.parts(readers, record_id=record.id)
    provider = parts[0].provider if parts else configured.provider
    model = parts[0].model if parts else configured.model
    speed = await reads.progress.real_time_factor(readers, provider=provider, model=model)
    normalize = None
    if record.state == Stage.UPLOADED.value:
        normalize = await reads.progress.normalize_progress(readers, record_id=record.id)
    overlap_ms = overlap_ms_of(settings, provider)
    planned = plan_parts(record.duration_ms, max_part_ms=configured.max_part_ms,
                         overlap_ms=overlap_ms)
    return progress_of(
        record, parts, real_time_factor=speed, normalize=normalize, planned=planned,
        overlap_ms=overlap_ms, sequential=configured.sequential, now=now)
