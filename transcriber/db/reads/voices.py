"""Known voices as people see them: the card's suggestions and the list of voices.

Names and counts only: no read here answers a vector (the embeddings are read by
the writer alone, `transcriber.db.commands.voices`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns


@dataclass(frozen=True, slots=True, kw_only=True)
class VoiceSuggestion:
    """A record speaker's suggested name: the owner's profile it sounds like."""

    speaker: str
    profile_id: str
    name: str
    similarity: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> VoiceSuggestion:
        return cls(**columns(cls, row, similarity=float(row["similarity"])))


@dataclass(frozen=True, slots=True, kw_only=True)
class VoiceProfile:
    """One of the owner's known voices: its name and what it was learned from."""

    id: str
    name: str
    records: int
    talk_ms: int
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> VoiceProfile:
        return cls(**columns(cls, row))


async def suggestions(readers: ReaderPool, *, record_id: str,
                      owner_id: str) -> list[VoiceSuggestion]:
    rows = await readers.fetch_all(q.voices.RECORD_SUGGESTIONS,
                                   {"record_id": record_id, "owner_id": owner_id})
    return sorted((VoiceSuggestion.from_row(row) for row in rows), key=lambda s: s.speaker)


async def profiles(readers: ReaderPool, *, owner_id: str) -> list[VoiceProfile]:
    rows = await readers.fetch_all(q.voices.OWNER_VOICES, {"owner_id": owner_id})
    return [VoiceProfile.from_row(row) for row in rows]


async def profile(readers: ReaderPool, *, profile_id: str, owner_id: str) -> VoiceProfile | None:
    row = await readers.fetch_one(q.voices.OWNED_PROFILE, {"id": profile_id, "owner_id": owner_id})
    return None if row is None else VoiceProfile.from_row(row)
