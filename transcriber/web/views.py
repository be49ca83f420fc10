"""What the API shows of a record: pure functions from typed reads to response shapes
(`web.shapes`).

Disk names never appear here: files are reached through their record's
routes. The halt message is the pipeline's reason text, with anything that
looks like a path or a URL blanked out on the way (defence in depth: the
steps already keep them out).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from transcriber.db.reads.records import ListItem, RecordCard, TimelineEvent
from transcriber.db.reads.voices import VoiceSuggestion
from transcriber.domain import transcripts
from transcriber.ports import Utterance
from transcriber.web.shapes import (
    CardBody,
    DescribedBody,
    FileCopyBody,
    FilesBody,
    HaltBody,
    LanguageBody,
    ProgressBody,
    QualityBody,
    RecordBody,
    SpeakerBody,
    SuggestionBody,
    TimelineEventBody,
    UtteranceBody,
    same_named,
)

_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_PATH_RE = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?[\\/](?:[^\s\\/]+[\\/])+[^\s\\/]*")
_MESSAGE_MAX = 500
_REDACTED = "[…]"


def safe_message(text: str | None) -> str | None:
    if text is None:
        return None
    text = _URL_RE.sub(_REDACTED, text)
    text = _PATH_RE.sub(_REDACTED, text)
    return text[:_MESSAGE_MAX]


def record_summary(item: ListItem, *,
                   progress: Mapping[str, Any] | None = None) -> RecordBody:
    return RecordBody(**_summary_fields(item, progress))


def _summary_fields(item: ListItem, progress: Mapping[str, Any] | None) -> dict[str, Any]:
    """The record's fields of the answer: those of the same name as they are read
    (`shapes.same_named`), then those shown otherwise."""
    halt = None
    if item.halted_at is not None:
        halt = HaltBody(at=item.halted_at, reason=item.halt_reason or "",
                        message=safe_message(item.error_text))
    return {
        **same_named(item, RecordBody),
        "stage": item.state,
        "halt": halt,
        "progress": None if progress is None else ProgressBody(**progress),
        "topics": list(item.topics),
        "described": DescribedBody(title=item.title_origin, brief=item.brief_origin,
                                   topics=item.topics_origin, by=item.described_by or None,
                                   state=item.describe_state),
        # The list's small mark: the transcript's verdict (null: no report).
        "quality_verdict": None if item.quality is None else item.quality.verdict,
    }


def _copy(size: int | None, fmt: str | None, duration_ms: int | None) -> FileCopyBody | None:
    if size is None:
        return None
    return FileCopyBody(size_bytes=size, format=fmt or "", duration_ms=duration_ms)


def record_card(
    record: RecordCard,
    *,
    timeline: Sequence[TimelineEvent],
    transcript: str | None,
    utterances: Sequence[Utterance] | None,
    poll_after_ms: int | None,
    progress: Mapping[str, Any] | None = None,
    original_speakers: Sequence[str] = (),
    suggestions: Sequence[VoiceSuggestion] = (),
) -> CardBody:
    suggested = {s.speaker: s for s in suggestions}
    speakers = {}
    for label, entry in transcripts.card_speakers(utterances or (), record.speaker_names,
                                                  also=original_speakers).items():
        found = suggested.get(label)
        # A named speaker needs no suggestion (the writer makes none for it either).
        speakers[label] = SpeakerBody(
            name=entry["name"], talk_ms=entry["talk_ms"],
            suggested=None if found is None or entry["name"] else SuggestionBody(
                name=found.name, profile_id=found.profile_id,
                similarity=round(found.similarity, 3)))
    # Dict literals, checked as the shapes' TypedDicts: the bulk of a long card
    # (tests/bench/card_shapes.py).
    lines: list[UtteranceBody] = [
        {"index": index, "start_ms": u.start_ms, "end_ms": u.end_ms, "channel": u.channel,
         "speaker": u.speaker, "text": u.text,
         "words": [{"start_ms": w.start_ms, "end_ms": w.end_ms, "text": w.text,
                    "probability": w.probability} for w in u.words]}
        for index, u in enumerate(utterances or ())]
    shown: dict[str, Any] = {
        **same_named(record, CardBody),
        **_summary_fields(record, progress),
        "files": FilesBody(
            original=_copy(record.original_size_bytes, record.original_format,
                           record.duration_ms),
            normalized=_copy(record.normalized_size_bytes, record.normalized_format,
                             record.normalized_duration_ms)),
        "transcript": transcript,
        "utterances": lines,
        "quality": None if record.quality is None else QualityBody.of(record.quality.as_dict()),
        "speakers": speakers,
        "language": LanguageBody(requested=record.language, detected=record.detected_language),
        "timeline": [TimelineEventBody(at=e.created_at, origin=e.origin, step=e.step,
                                       outcome=e.outcome, duration_ms=e.duration_ms)
                     for e in timeline],
        "poll_after_ms": poll_after_ms,
    }
    return CardBody(**shown)
