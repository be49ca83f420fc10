"""Decoding a part with faster-whisper: the options, the batched decoding of planned
clips with its coverage check and repair, the saved answer's segments.

The batched decoding is fast but takes each clip as one window, and Whisper may stop
early inside a window or give nothing for a clip; so every batched decoding is checked
against the VAD's speech (`clips.coverage`, with word times, which the batched pipeline
aligns for every clip) and each clip that left speech unheard, and any speech the plan
left out, is decoded again sequentially (sliding windows with timestamps, which go on
where a window stopped) and replaces what the batch gave. The check and its repair are
counted (`transcriber_recognition_uncovered_seconds_total`,
`transcriber_recognition_empty_clips_total`, `transcriber_recognition_repairs_total`)
and logged, so a short transcript is never saved in silence. Then every clip passes
the guard against loops and invented text (`whisper_guard.guard`; the repaired clips
count as already decoded the safe way).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from transcriber.core.errors import TransientFailure
from transcriber.providers.clips import (
    Clip,
    ClipCoverage,
    Decoded,
    Loudness,
    Quietest,
    Seconds,
    coverage,
    plan_clips,
    seconds_of,
    unclipped,
    widened,
)
from transcriber.providers.whisper_guard import Guarded, guard
from transcriber.providers.whisper_repeats import RawSegment
from transcriber.settings import RecognizerSettings

RATE = 16_000

# Whisper's own guards against a decoding that runs away on long audio: a
# window whose text compresses too well (a loop) or whose tokens are unlikely
# is decoded again (the deterministic steps of `whisper_fallback.FALLBACK`, which
# replace faster-whisper's sampled temperatures), and a window that is probably not
# speech is skipped; the VAD keeps silence and noise out of the windows.
COMPRESSION_RATIO_THRESHOLD = 2.4
LOG_PROB_THRESHOLD = -1.0
NO_SPEECH_THRESHOLD = 0.6
# Whisper's temperatures: the first only, never sampled (the batched pipeline takes the
# first; the sequential fallback's steps are `whisper_fallback.FALLBACK`). Chosen against
# no fallback and faster-whisper's sampled ladder 0.0-1.0 (docs/recognition.md,
# "Temperature fallback"; `tests/bench/test_decoding_table.py`).
TEMPERATURES: tuple[float, ...] = (0.0,)
# A record whose language is not given: Whisper hears it in this many 30-s windows of
# its speech (the first whose top language is over `LANGUAGE_THRESHOLD` decides, else
# the language most windows put first), chosen on the hard-audio corpus against 2 and 3
# (docs/recognition.md, "Language-detection window"; `tests/bench/test_decoding_table.py`).
LANGUAGE_WINDOWS = 1
LANGUAGE_THRESHOLD = 0.5
# Unclipped speech shorter than this is a rounding of the plan, not a lost word.
UNCLIPPED_MIN_SECONDS = 0.05

Planner = Callable[..., list[Clip]]


def decoding_options(settings: RecognizerSettings) -> dict[str, Any]:
    """Pure: the keyword arguments of faster-whisper's `transcribe` for these settings."""
    options: dict[str, Any] = {
        "language": settings.language or None,
        "beam_size": settings.beam_size,
        # Never sampled: the batched pipeline decodes at the first temperature, and the
        # sequential fallback is deterministic (`whisper_fallback`).
        "temperature": list(TEMPERATURES),
        "compression_ratio_threshold": COMPRESSION_RATIO_THRESHOLD,
        "log_prob_threshold": LOG_PROB_THRESHOLD,
        "no_speech_threshold": NO_SPEECH_THRESHOLD,
        "vad_filter": True,
        # Text conditioned on the previous window is what lets a loop feed itself.
        "condition_on_previous_text": False,
        "language_detection_segments": LANGUAGE_WINDOWS,
        "language_detection_threshold": LANGUAGE_THRESHOLD,
    }
    if settings.batched:
        options["batch_size"] = settings.batch_size
    return options


def sequential_options(options: dict[str, Any], *, language: str | None) -> dict[str, Any]:
    """Pure: the batched `options` for a sequential decoding of one span of speech (no
    VAD of its own: the span is speech; word times for the coverage check)."""
    sequential = {key: value for key, value in options.items()
                  if key not in ("batch_size", "clip_timestamps")}
    sequential.update(language=language, vad_filter=False, word_timestamps=True)
    return sequential


def segment_dict(segment: Any, *, offset: float = 0.0) -> dict[str, Any]:
    """Pure: a faster-whisper segment as the saved answer keeps it, `offset` seconds later
    (its words when it has them: each word's text keeps its leading space, as
    `speakers.words` joins them, and Whisper's probability of it to 3 decimals). Whisper's
    average log probability rides along for the guard (`whisper_guard`) under
    `avg_logprob`; `saved` leaves it out of the answer."""
    item: dict[str, Any] = {"start_ms": round((segment.start + offset) * 1000),
                            "end_ms": round((segment.end + offset) * 1000),
                            "text": segment.text.strip()}
    if getattr(segment, "words", None):
        item["words"] = [_word_dict(w, offset) for w in segment.words]
    logprob = getattr(segment, "avg_logprob", None)
    if isinstance(logprob, int | float):
        item["avg_logprob"] = float(logprob)
    return item


def _word_dict(word: Any, offset: float) -> dict[str, Any]:
    item: dict[str, Any] = {"start_ms": round((word.start + offset) * 1000),
                            "end_ms": round((word.end + offset) * 1000), "text": word.word}
    probability = getattr(word, "probability", None)
    if isinstance(probability, int | float):
        item["probability"] = round(float(probability), 3)
    return item


def saved(segments: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pure: the segments as the answer saves them (the guard's values left out)."""
    return [{k: v for k, v in s.items() if k != "avg_logprob"} for s in segments]


def decode_span(model: Any, audio: np.ndarray, span: Seconds, options: dict[str, Any], *,
                language: str | None, cancel: threading.Event) -> list[dict[str, Any]]:
    """One span of a part decoded the safe way, sequentially (sliding windows with
    timestamps, the temperature fallback, beam search, no conditioning on previous
    text, word times), its segments on the part's timeline."""
    if cancel.is_set():
        raise TransientFailure("recognition cancelled")
    start, end = span
    piece = audio[int(start * RATE):int(end * RATE)]
    segments, _ = model.transcribe(piece, **sequential_options(options, language=language))
    kept: list[dict[str, Any]] = []
    for segment in segments:
        if cancel.is_set():
            raise TransientFailure("recognition cancelled")
        kept.append(segment_dict(segment, offset=start))
    return kept


def decoded_of(group: Sequence[dict[str, Any]], no_speech: float | None = None) -> Decoded:
    """Pure: what the coverage check needs of one clip's saved segments."""
    words = tuple((w["start_ms"] / 1000, w["end_ms"] / 1000)
                  for segment in group for w in segment.get("words", ()))
    return Decoded(words=words, has_text=any(s["text"] for s in group), no_speech=no_speech)


@dataclass(frozen=True, slots=True, kw_only=True)
class CoverageReport:
    """What the check found in one part's decoding and what its repair left."""

    clips: int
    unclipped_seconds: float  # speech the plan left out of every clip
    uncovered_seconds: float  # speech the batched decoding left unheard
    empty_clips: int
    repaired_spans: int
    left_seconds: float  # speech still unheard after the sequential decoding

    @property
    def violated(self) -> bool:
        return self.repaired_spans > 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Covered:
    segments: list[dict[str, Any]]
    language: str | None
    language_probability: float | None
    report: CoverageReport
    guarded: Guarded


class CoveredDecoding:
    """One part's batched decoding, checked and repaired (runs in a model-run thread)."""

    def __init__(self, model: Any, pipeline: Any, audio: np.ndarray, *,
                 regions: Sequence[Seconds], options: dict[str, Any],
                 cancel: threading.Event, plan: Planner = plan_clips) -> None:
        self._model = model
        self._pipeline = pipeline
        self._audio = audio
        self._regions = list(regions)
        self._options = options
        self._cancel = cancel
        self._plan = plan

    def clips(self, quietest: Quietest | None = None) -> list[Clip]:
        duration = self._audio.size / RATE
        return self._plan(self._regions, duration=duration,
                          quietest=quietest or Loudness(self._audio).quietest)

    def run(self) -> Covered:
        clips = self.clips()
        missing = [span for span in unclipped(self._regions, clips)
                   if span[1] - span[0] >= UNCLIPPED_MIN_SECONDS]
        groups, no_speech, language, probability = self._batched(clips)
        checked = coverage(self._regions, clips, [
            decoded_of(group, no_speech[i]) for i, group in enumerate(groups)])
        redo = [index for index, found in enumerate(checked) if found.violated]
        if language is None and (redo or missing):
            language = self._options.get("language")
        for index in redo:
            groups[index] = self._sequential((clips[index].start, clips[index].end), language)
        # Speech no clip holds (a planning fault): decoded on its own, padded like a clip.
        spans = widened(missing, duration=self._audio.size / RATE)
        extra = [self._sequential(span, language) for span in spans]
        left = self._left(clips, groups, redo) + sum(
            seconds_of(found.uncovered) for found in coverage(
                self._regions, [Clip(start=s, end=e) for s, e in spans],
                [decoded_of(group) for group in extra]))
        # No loops, no invented text: every clip checked; the clips decoded again above
        # already were the safe decoding.
        guarded = guard([(c.start, c.end) for c in clips] + spans, [*groups, *extra],
                        regions=self._regions,
                        redecode=lambda span: self._sequential(span, language),
                        safe={*redo, *range(len(clips), len(clips) + len(extra))})
        report = CoverageReport(
            clips=len(clips), unclipped_seconds=seconds_of(missing),
            uncovered_seconds=sum(found.uncovered_seconds for found in checked),
            empty_clips=sum(found.empty for found in checked),
            repaired_spans=len(redo) + len(extra), left_seconds=left)
        return Covered(segments=guarded.segments, language=language,
                       language_probability=probability, report=report, guarded=guarded)

    def _batched(self, clips: list[Clip]) -> tuple[list[list[dict[str, Any]]],
                                                    list[float | None], str | None,
                                                    float | None]:
        groups: list[list[dict[str, Any]]] = [[] for _ in clips]
        no_speech: list[float | None] = [None] * len(clips)
        if not clips:
            return groups, no_speech, self._options.get("language"), None
        request = {**self._options, "vad_filter": False, "word_timestamps": True,
                   "clip_timestamps": [{"start": c.start, "end": c.end} for c in clips]}
        segments, info = self._pipeline.transcribe(self._audio, **request)
        starts = [clip.start for clip in clips]
        for segment in segments:
            if self._cancel.is_set():
                raise TransientFailure("recognition cancelled")
            # The pipeline gives each clip's segments in order, starting at the clip.
            index = max(bisect.bisect_right(starts, segment.start + 0.01) - 1, 0)
            groups[index].append(segment_dict(segment))
            no_speech[index] = getattr(segment, "no_speech_prob", None)
        return groups, no_speech, info.language, info.language_probability

    def _sequential(self, span: Seconds, language: str | None) -> list[dict[str, Any]]:
        return decode_span(self._model, self._audio, span, self._options, language=language,
                           cancel=self._cancel)

    def _left(self, clips: list[Clip], groups: list[list[dict[str, Any]]],
              redone: list[int]) -> float:
        """Speech the repaired clips still leave unheard (with their new neighbours)."""
        if not redone:
            return 0.0
        again: list[ClipCoverage] = coverage(self._regions, clips,
                                             [decoded_of(group) for group in groups])
        return sum(again[index].uncovered_seconds for index in redone)


def _nearest(middle: float, clips: Sequence[Seconds], starts: Sequence[float]) -> int:
    index = max(bisect.bisect_right(starts, middle) - 1, 0)
    if (index + 1 < len(clips) and middle > clips[index][1]
            and clips[index + 1][0] - middle < middle - clips[index][1]):
        index += 1
    return index


def by_clip(segments: Sequence[RawSegment], clips: Sequence[Seconds]) -> list[list[RawSegment]]:
    """Pure: the segments of a decoding of the whole part, word by word in the clip the
    word's middle is in (else the nearest): the groups `guard` checks. A segment whose
    words fall in several clips (the sequential decoding's VAD joins speech across a
    long gap) is split there. No clips: no groups."""
    groups: list[list[RawSegment]] = [[] for _ in clips]
    if not clips:
        return groups
    starts = [start for start, _ in clips]
    for segment in segments:
        words = segment.get("words") or []
        if not words:
            middle = (segment["start_ms"] + segment["end_ms"]) / 2000
            groups[_nearest(middle, clips, starts)].append(segment)
            continue
        pieces: dict[int, list[RawSegment]] = {}
        for word in words:
            middle = (word["start_ms"] + word["end_ms"]) / 2000
            pieces.setdefault(_nearest(middle, clips, starts), []).append(word)
        if len(pieces) == 1:
            groups[next(iter(pieces))].append(segment)
            continue
        for index, kept in pieces.items():
            groups[index].append({**segment, "start_ms": kept[0]["start_ms"],
                                  "end_ms": kept[-1]["end_ms"], "words": kept,
                                  "text": "".join(str(w["text"]) for w in kept).strip()})
    return groups
