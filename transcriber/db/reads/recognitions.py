"""A record's recognition operations: one row per part (and per channel of a
stereo call recognized channel by channel), written before the paid call."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool


@dataclass(frozen=True, slots=True, kw_only=True)
class Recognition:
    id: str
    record_id: str
    part_index: int
    offset_ms: int
    provider: str
    model: str
    external_id: str | None
    source_uri: str | None
    payload_file: str | None
    started_at: str | None
    finished_at: str | None
    # The channel of a stereo copy this part recognizes on its own (the local
    # recognizer); None: every channel the copy has (mono, or SpeechKit's stereo).
    channel: int | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Recognition:
        return cls(
            id=row["id"], record_id=row["record_id"], part_index=row["part_index"],
            offset_ms=row["offset_ms"], provider=row["provider"], model=row["model"],
            external_id=row["external_id"], source_uri=row["source_uri"],
            payload_file=row["payload_file"], started_at=row["started_at"],
            finished_at=row["finished_at"], channel=row["channel"],
        )


async def recognitions(readers: ReaderPool, *, record_id: str) -> list[Recognition]:
    """Every part of the record, by `part_index`."""
    rows = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    return [Recognition.from_row(row) for row in rows]
