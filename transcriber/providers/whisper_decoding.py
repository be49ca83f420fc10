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
and logged, so a short transcript is never saved in silence.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from transcriber.errors import TransientFailure
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
from transcriber.settings import RecognizerSettings

RATE = 16_000

# Whisper's own guards against a decoding that runs away on long audio: a
# window whose text compresses too well (a loop) or whose tokens are unlikely
# is decoded again at a higher temperature, and a window that is probably not
# speech is skipped; the VAD keeps silence and noise out of the windows.
_TEMPERATURES = (0.0, 0.2, 0.4, 0.6)
COMPRESSION_RATIO_THRESHOLD = 2.4
LOG_PROB_THRESHOLD = -1.0
NO_SPEECH_THRESHOLD = 0.6
REPEATS_KEPT = 2
# Unclipped speech shorter than this is a rounding of the plan, not a lost word.
UNCLIPPED_MIN_SECONDS = 0.05

Planner = Callable[..., list[Clip]]


def decoding_options(settings: RecognizerSettings) -> dict[str, Any]:
    """Pure: the keyword arguments of faster-whisper's `transcribe` for these settings."""
    options: dict[str, Any] = {
        "language": settings.language or None,
        "beam_size": settings.beam_size,
        "temperature": list(_TEMPERATURES),
        "compression_ratio_threshold": COMPRESSION_RATIO_THRESHOLD,
        "log_prob_threshold": LOG_PROB_THRESHOLD,
        "no_speech_threshold": NO_SPEECH_THRESHOLD,
        "vad_filter": True,
        # Text conditioned on the previous window is what lets a loop feed itself.
        "condition_on_previous_text": False,
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
    `speakers.words` joins them)."""
    item: dict[str, Any] = {"start_ms": round((segment.start + offset) * 1000),
                            "end_ms": round((segment.end + offset) * 1000),
                            "text": segment.text.strip()}
    if getattr(segment, "words", None):
        item["words"] = [{"start_ms": round((w.start + offset) * 1000),
                          "end_ms": round((w.end + offset) * 1000), "text": w.word}
                         for w in segment.words]
    return item


def _same_words(text: str) -> str:
    return " ".join("".join(c for c in text.casefold() if c.isalnum() or c.isspace()).split())


def drop_repeats(segments: list[dict[str, Any]], *,
                 repeats_kept: int = REPEATS_KEPT) -> list[dict[str, Any]]:
    """Pure: an utterance repeating the previous one verbatim more than `repeats_kept`
    times is a decoding loop, not speech; the copies past that are dropped."""
    kept: list[dict[str, Any]] = []
    previous = ""
    run = 0
    for segment in segments:
        words = _same_words(str(segment["text"]))
        run = run + 1 if words and words == previous else 0
        previous = words
        if run > repeats_kept:
            continue
        kept.append(segment)
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
        extra = [self._sequential(span, language)
                 for span in widened(missing, duration=self._audio.size / RATE)]
        left = self._left(clips, groups, redo) + sum(
            seconds_of(found.uncovered) for found in coverage(
                self._regions, [Clip(start=s, end=e) for s, e in
                                widened(missing, duration=self._audio.size / RATE)],
                [decoded_of(group) for group in extra]))
        segments = sorted((s for group in [*groups, *extra] for s in group),
                          key=lambda s: (s["start_ms"], s["end_ms"]))
        report = CoverageReport(
            clips=len(clips), unclipped_seconds=seconds_of(missing),
            uncovered_seconds=sum(found.uncovered_seconds for found in checked),
            empty_clips=sum(found.empty for found in checked),
            repaired_spans=len(redo) + len(extra), left_seconds=left)
        return Covered(segments=segments, language=language,
                       language_probability=probability, report=report)

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
        if self._cancel.is_set():
            raise TransientFailure("recognition cancelled")
        start, end = span
        piece = self._audio[int(start * RATE):int(end * RATE)]
        segments, _ = self._model.transcribe(
            piece, **sequential_options(self._options, language=language))
        kept: list[dict[str, Any]] = []
        for segment in segments:
            if self._cancel.is_set():
                raise TransientFailure("recognition cancelled")
            kept.append(segment_dict(segment, offset=start))
        return kept

    def _left(self, clips: list[Clip], groups: list[list[dict[str, Any]]],
              redone: list[int]) -> float:
        """Speech the repaired clips still leave unheard (with their new neighbours)."""
        if not redone:
            return 0.0
        again: list[ClipCoverage] = coverage(self._regions, clips,
                                             [decoded_of(group) for group in groups])
        return sum(again[index].uncovered_seconds for index in redone)
