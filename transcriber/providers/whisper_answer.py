"""The local recognizer's saved answer read back, and what each part's checks count.

`whisper.py` writes one JSON answer per part (docs/recognition.md, "The saved answer");
GigaAM writes the same shape (`gigaam.py`). Reading it needs no model library, so the
pipeline's parsers (`recognizers.saved_answer_formats`) import this module alone. The
counts and log lines of what the guard (`whisper_guard`) and the coverage check
(`whisper_decoding`) found in one part are here beside it: they carry no content, only
how much was rejected, decoded again or left unheard.
"""

from __future__ import annotations

from typing import Any

import orjson
import structlog

from transcriber.core.errors import PermanentFailure
from transcriber.core.observability import (
    RECOGNITION_EMPTY_CLIPS,
    RECOGNITION_REDECODED,
    RECOGNITION_REPAIRS,
    RECOGNITION_UNCLEAR_SECONDS,
    RECOGNITION_UNCOVERED_SECONDS,
)
from transcriber.ports import Answer, Span, Utterance, Word
from transcriber.providers.whisper_decoding import CoverageReport
from transcriber.providers.whisper_guard import Guarded

log = structlog.get_logger(__name__)


def read_local_payload(payload: bytes) -> Answer:
    """The saved answer of the local recognizer (our own JSON): its utterances, each
    with its words and their probability where the answer kept them, and what it says
    of its own work (docs/recognition.md, "Quality report"): the speech its VAD found
    (`speech`), the speech whose text it rejected (`unclear`), the looped lines it
    dropped (`repeats_removed`) and the language it heard (`language`). An answer saved
    before a field existed leaves it unsaid; one malformed pair of a list is skipped
    (it is not a reason to lose the rest)."""
    try:
        data = orjson.loads(payload)
        utterances = tuple(
            Utterance(start_ms=int(s["start_ms"]), end_ms=int(s["end_ms"]), channel=0,
                      text=str(s["text"]).strip(), words=_local_words(s.get("words")))
            for s in data["segments"]
            if str(s["text"]).strip()
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise PermanentFailure("the saved recognition answer is malformed") from None
    repeats = data.get("repeats_removed")
    language = data.get("language")
    model = data.get("model")
    return Answer(
        utterances=utterances, speech=_spans(data.get("speech")),
        unclear=_spans(data.get("unclear")),
        repeats_removed=repeats if isinstance(repeats, int) and not isinstance(
            repeats, bool) and repeats > 0 else 0,
        language=language if isinstance(language, str) and 0 < len(language) <= 16 else None,
        model=model if isinstance(model, str) and 0 < len(model) <= 200 else None)


def parse_local_payload(payload: bytes) -> list[Utterance]:
    """The utterances of a saved local answer (`read_local_payload`)."""
    return list(read_local_payload(payload).utterances)


def _spans(items: Any) -> tuple[Span, ...] | None:
    """`[[start_ms, end_ms], ...]` as spans (empty ones dropped); None when not a list."""
    if not isinstance(items, list):
        return None
    spans: list[Span] = []
    for item in items:
        try:
            start, end = item
            span = Span(start_ms=int(start), end_ms=int(end))
        except (TypeError, ValueError):
            continue
        if span.end_ms > span.start_ms:
            spans.append(span)
    return tuple(spans)


def _local_words(items: Any) -> tuple[Word, ...]:
    if not isinstance(items, list):
        return ()
    words = []
    for w in items:
        p = w.get("probability")
        known = isinstance(p, (int, float)) and not isinstance(p, bool)
        words.append(Word(start_ms=int(w["start_ms"]), end_ms=int(w["end_ms"]),
                          text=str(w["text"]),
                          probability=min(max(float(p), 0.0), 1.0) if known else None))
    return tuple(words)


def report_guard(guarded: Guarded) -> None:
    """Count and log what the guard of one part rejected and decoded again (no content)."""
    for reason, clips in guarded.redecoded.items():
        RECOGNITION_REDECODED.labels(reason).inc(clips)
    if guarded.unclear:
        RECOGNITION_UNCLEAR_SECONDS.inc(guarded.unclear_seconds)
    if (guarded.redecoded or guarded.unclear or guarded.repeats_removed or guarded.dropped
            or guarded.copies_heard):
        log.warning("recognition_guarded", clips=guarded.clips, redecoded=guarded.redecoded,
                    copies_heard=guarded.copies_heard,
                    repeats_removed=guarded.repeats_removed, dropped_words=guarded.dropped,
                    unclear_seconds=round(guarded.unclear_seconds, 1),
                    unclear_spans=len(guarded.unclear))


def report_coverage(report: CoverageReport, *, provider: str) -> None:
    """Count and log what the coverage check of one part found and left (no content)."""
    if not report.violated:
        return
    found = report.uncovered_seconds + report.unclipped_seconds
    RECOGNITION_UNCOVERED_SECONDS.labels(provider, "decoding").inc(found)
    RECOGNITION_EMPTY_CLIPS.labels(provider).inc(report.empty_clips)
    RECOGNITION_REPAIRS.labels(provider).inc(report.repaired_spans)
    log.warning("recognition_uncovered", clips=report.clips,
                uncovered_seconds=round(report.uncovered_seconds, 1),
                unclipped_seconds=round(report.unclipped_seconds, 1),
                empty_clips=report.empty_clips, repaired_spans=report.repaired_spans,
                left_seconds=round(report.left_seconds, 1))
    if report.left_seconds > 0:
        RECOGNITION_UNCOVERED_SECONDS.labels(provider, "repair").inc(report.left_seconds)
