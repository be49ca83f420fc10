"""What the progress of a record is computed from (`transcriber.pipeline.progress`):
the record, its parts, the measured speed, the normalization's report."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressRecord:
    id: str
    state: str
    halted_at: str | None
    duration_ms: int
    state_entered_at: str
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ProgressRecord:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class PartProgress:
    """One part of a recognition, as far as progress is concerned."""

    part_index: int
    offset_ms: int
    channel: int | None
    provider: str
    model: str
    payload_file: str | None
    started_at: str | None
    finished_at: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> PartProgress:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalizeProgress:
    """ffmpeg's last report of the normalization of a record."""

    record_id: str
    done_ms: int
    total_ms: int
    started_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> NormalizeProgress:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueAhead:
    """The recognition work before a record in claim order (`SELECT_QUEUE_AHEAD`)."""

    records: int
    audio_ms: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> QueueAhead:
        return cls(records=int(row["records"]), audio_ms=round(float(row["audio_ms"])))


async def progress_record(readers: ReaderPool, *, record_id: str) -> ProgressRecord | None:
    row = await readers.fetch_one(q.progress.SELECT_PROGRESS_RECORD, {"record_id": record_id})
    return None if row is None else ProgressRecord.from_row(row)


async def parts(readers: ReaderPool, *, record_id: str) -> list[PartProgress]:
    rows = await readers.fetch_all(q.progress.SELECT_PROGRESS_PARTS, {"record_id": record_id})
    return [PartProgress.from_row(row) for row in rows]


async def real_time_factor(readers: ReaderPool, *, provider: str, model: str) -> float | None:
    """Seconds of work per second of audio measured on this machine; None: not measured."""
    row = await readers.fetch_one(q.progress.SELECT_SPEED, {"provider": provider, "model": model})
    return None if row is None else float(row["real_time_factor"])


async def queue_ahead(readers: ReaderPool, *, record_id: str, created_at: str,
                      limit: int) -> QueueAhead:
    """The work queued before this record (at most `limit` records of it are read)."""
    row = await readers.fetch_one(q.progress.SELECT_QUEUE_AHEAD, {
        "record_id": record_id, "created_at": created_at, "limit": limit})
    return QueueAhead(records=0, audio_ms=0) if row is None else QueueAhead.from_row(row)


async def normalize_progress(readers: ReaderPool, *,
                             record_id: str) -> NormalizeProgress | None:
    row = await readers.fetch_one(q.progress.SELECT_NORMALIZE_PROGRESS, {"record_id": record_id})
    return None if row is None else NormalizeProgress.from_row(row)
