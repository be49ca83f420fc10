"""A record as people see it (a list item, the card) and as the pipeline reads it.

Archive reads are scoped by `owner_id`: another person's record is simply
not found (None).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns
from transcriber.domain.quality import Quality, quality_from_json


def _speaker_names(stored: str | None) -> dict[str, str]:
    names = orjson.loads(stored or "{}")
    return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}


def _decoded(row: sqlite3.Row) -> dict[str, Any]:
    """The columns of every archive query (`queries.archive.RECORD_COLUMNS`) stored
    encoded; the others are read by their fields' names."""
    return {"speaker_names": _speaker_names(row["speaker_names"]),
            "topics": tuple(sorted(orjson.loads(row["topics_json"] or "[]"))),
            "quality": quality_from_json(row["quality"])}


@dataclass(frozen=True, slots=True, kw_only=True)
class ListItem:
    """A record of a page of the archive (and the head of its card)."""

    id: str
    title: str
    original_filename: str
    source: str
    via: str | None
    """How an `http` record came in: web, api, cli, folder (None before migration 0023)."""
    state: str
    halted_at: str | None
    halt_reason: str | None
    error_text: str | None
    duration_ms: int
    size_bytes: int
    created_at: str
    updated_at: str
    brief: str
    language: str
    detected_language: str | None
    revision: int
    speaker_names: Mapping[str, str]
    """The names the owner gave the record's speakers (`{"S1": "Anna"}`)."""
    speakers: int | None
    """How many speakers the uploader said the recording has (None: find out)."""
    topics: tuple[str, ...]
    """By name."""
    title_origin: str | None
    """`auto` (the describer wrote it), `human` (a person set or cleared it), None (nobody)."""
    brief_origin: str | None
    topics_origin: str | None
    described_by: str
    """The describer of the automatic fields (`extractive`, `openai:<model>`); empty: none."""
    describe_state: str | None
    """The description's job: `pending`, `done`, `failed`; None: never asked for."""
    quality: Quality | None
    """The recognizer's transcript's quality report; None: recognized before reports
    were made, or not yet recognized."""
    space_id: str | None
    """The space the record is in (None: its owner's alone, and whom it is shared with)."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ListItem:
        return cls(**columns(cls, row, **_decoded(row)))


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordCard(ListItem):
    """A record with its two copies' files (the transcript is read on its own)."""

    original_size_bytes: int | None
    original_format: str | None
    normalized_size_bytes: int | None
    normalized_format: str | None
    normalized_duration_ms: int | None
    model: str | None
    """The model(s) that made the transcript (`whisper-base`, a models folder's name)."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> RecordCard:
        return cls(**columns(cls, row, **_decoded(row)))


@dataclass(frozen=True, slots=True, kw_only=True)
class TimelineEvent:
    origin: str
    step: str
    outcome: str
    duration_ms: int | None
    created_at: str
    by_login: str | None
    """Who made the change (None: the pipeline, or a change from before it was kept)."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TimelineEvent:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordFile:
    """The file behind one copy of a record (`original` or `normalized`)."""

    record_id: str
    original_filename: str
    file_id: str
    file_name: str
    format: str
    size_bytes: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> RecordFile:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedRecord:
    """The head of a record its owner edits."""

    id: str
    owner_id: str
    state: str
    halted_at: str | None
    revision: int
    transcript_text_id: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> OwnedRecord:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordState:
    """Where a record is on its way, and why it halted if it did."""

    id: str
    state: str
    halted_at: str | None
    halt_reason: str | None
    error_text: str | None
    duration_ms: int
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> RecordState:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRecord:
    """What a step reads about its claimed record."""

    id: str
    duration_ms: int
    source: str
    original_file_name: str | None
    normalized_file_name: str | None
    language: str = "auto"
    speakers: int | None = None
    # 2: the normalized copy kept both channels of a stereo call (a speaker on each).
    channels: int = 1
    # The model a re-transcription asked for; None: the recognizer's routes choose.
    model_wanted: str | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StepRecord:
        return cls(**columns(cls, row, channels=row["normalized_channels"]))


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyTarget:
    """Where a record came from, so its answer can go back there."""

    id: str
    source: str
    tg_chat_id: int | None
    tg_message_id: int | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ReplyTarget:
        return cls(**columns(cls, row))


async def card(readers: ReaderPool, *, record_id: str, owner_id: str) -> RecordCard | None:
    row = await readers.fetch_one(q.archive.CARD, {"id": record_id, "owner_id": owner_id})
    return None if row is None else RecordCard.from_row(row)


async def quality(readers: ReaderPool, *, record_id: str) -> Quality | None:
    """The record's quality report; None when it has none (or there is no such record)."""
    row = await readers.fetch_one(q.archive.RECORD_QUALITY, {"id": record_id})
    return None if row is None else quality_from_json(row["quality"])


async def exists(readers: ReaderPool, *, record_id: str, owner_id: str) -> bool:
    row = await readers.fetch_one(q.archive.RECORD_EXISTS,
                                  {"id": record_id, "owner_id": owner_id})
    return row is not None


async def record_file(readers: ReaderPool, *, record_id: str, owner_id: str,
                      copy: str) -> RecordFile | None:
    """`copy` is `original` or `normalized`; None when the record or that copy is missing."""
    row = await readers.fetch_one(q.archive.RECORD_FILE,
                                  {"id": record_id, "owner_id": owner_id, "copy": copy})
    return None if row is None else RecordFile.from_row(row)


async def timeline(readers: ReaderPool, *, record_id: str) -> list[TimelineEvent]:
    rows = await readers.fetch_all(q.archive.TIMELINE, {"record_id": record_id})
    return [TimelineEvent.from_row(row) for row in rows]


async def owned(readers: ReaderPool, *, record_id: str, owner_id: str) -> OwnedRecord | None:
    row = await readers.fetch_one(q.edits.SELECT_OWNED, {"id": record_id, "owner_id": owner_id})
    return None if row is None else OwnedRecord.from_row(row)


async def state(readers: ReaderPool, *, record_id: str) -> RecordState | None:
    row = await readers.fetch_one(q.records.SELECT_RECORD, {"id": record_id})
    return None if row is None else RecordState.from_row(row)


async def step_record(readers: ReaderPool, *, record_id: str) -> StepRecord | None:
    row = await readers.fetch_one(q.results.SELECT_STEP_RECORD, {"record_id": record_id})
    return None if row is None else StepRecord.from_row(row)


async def reply_target(readers: ReaderPool, *, record_id: str) -> ReplyTarget | None:
    row = await readers.fetch_one(q.pipeline.SELECT_REPLY_ADDRESS, {"id": record_id})
    return None if row is None else ReplyTarget.from_row(row)


async def by_telegram_message(readers: ReaderPool, *, chat_id: int,
                              message_id: int) -> str | None:
    """The id of the record a Telegram message became, if it became one."""
    row = await readers.fetch_one(q.records.SELECT_RECORD_BY_TELEGRAM,
                                  {"chat_id": chat_id, "message_id": message_id})
    return None if row is None else str(row["id"])


async def file_name(readers: ReaderPool, *, file_id: str) -> str | None:
    """The name of a stored file in its record's folder."""
    row = await readers.fetch_one(q.records.SELECT_FILE, {"id": file_id})
    return None if row is None else str(row["file_name"])
