"""The record card, built below the doors: `GET /app/audiorecords/{id}` answers it
and the webhooks follow-up sends it (without the transcript), so both build it here
from the readers, the settings and the clock (`Cards`), never from an aiohttp app.

What the API shows of a record: pure functions from typed reads to response shapes
(`domain.shapes`).

Disk names never appear here: files are reached through their record's
routes. The halt message is the pipeline's reason text, with anything that
looks like a path or a URL blanked out on the way (defence in depth: the
steps already keep them out).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from transcriber.core.clock import Clock
from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.records import ListItem, RecordCard, TimelineEvent
from transcriber.db.reads.voices import VoiceSuggestion
from transcriber.domain import transcripts
from transcriber.domain.shapes import (
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
from transcriber.domain.stages import Stage
from transcriber.pipeline.progress import OnItsWay, progress_for_row
from transcriber.ports import Recognizer, Utterance
from transcriber.providers.recognizers import capabilities_of
from transcriber.settings import ServerSettings, Settings

log = structlog.get_logger(__name__)

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
        "space": item.space_id,
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
                                       outcome=e.outcome, duration_ms=e.duration_ms,
                                       by=e.by_login)
                     for e in timeline],
        "poll_after_ms": poll_after_ms,
    }
    return CardBody(**shown)


def poll_after_ms(settings: ServerSettings) -> int:
    """How often a card may be polled: its share of the budget, spread over the window."""
    polls_per_window = max(settings.rate_limit_requests * settings.rate_limit_poll_share, 1e-9)
    return math.ceil(settings.rate_limit_window_seconds * 1000 / polls_per_window)


@dataclass(frozen=True, slots=True, kw_only=True)
class Cards:
    """Builds a person's record cards from what lies below the doors."""

    readers: ReaderPool
    settings: Settings
    clock: Clock
    recognizer: Callable[[], Recognizer | None] = lambda: None
    """Read at each card: the recognizer tells the progress's estimate."""

    async def card(self, record_id: str, owner_id: str, *,
                   suggest: bool = True) -> CardBody | None:
        """The owner's record card as `GET /app/audiorecords/{id}` answers it (None: no
        such record of theirs); webhook deliveries send it too."""
        readers = self.readers
        record = await reads.records.card(readers, record_id=record_id, owner_id=owner_id)
        if record is None:
            return None
        timeline = await reads.records.timeline(readers, record_id=record_id)
        text = await reads.transcripts.transcript_text(readers, record_id=record_id)
        try:
            utterances = await reads.transcripts.utterances(readers, record_id=record_id,
                                                            original=False)
            original = await reads.transcripts.utterances(readers, record_id=record_id,
                                                          original=True)
        except transcripts.BadStructure:
            log.error("card_bad_structure", record_id=record_id)
            utterances = original = None
        # A finished record still changes while its description is being written (unless
        # the describer is off now: a job left pending by an earlier run never moves).
        settings = self.settings
        describing = record.describe_state == "pending" and settings.describer.provider != "off"
        settled = (record.halted_at is not None or record.state == Stage.DONE.value) \
            and not describing
        poll = None if settled else poll_after_ms(settings.server)
        return record_card(
            record, timeline=timeline, transcript=text, utterances=utterances,
            poll_after_ms=poll, progress=await self.progress(record),
            original_speakers=transcripts.speakers_of(original or ()),
            # The owner's voice profiles are theirs alone (biometric: never shared).
            suggestions=await self.suggestions(record_id, owner_id) if suggest else (),
        )

    async def progress(self, record: OnItsWay) -> dict[str, Any] | None:
        """The record's progress (None unless it is on its way, and only then read)."""
        progress = await progress_for_row(self.readers, record, settings=self.settings,
                                          now=self.clock.now(),
                                          capabilities=capabilities_of(self.recognizer(),
                                                                       self.settings))
        return None if progress is None else progress.as_dict()

    async def suggestions(self, record_id: str, owner_id: str) -> list[VoiceSuggestion]:
        """The record's voice suggestions; none while known voices are off."""
        if not self.settings.recognizer.voice_profiles:
            return []
        return await reads.voices.suggestions(self.readers, record_id=record_id,
                                              owner_id=owner_id)
