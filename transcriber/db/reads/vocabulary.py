"""A person's vocabulary, and the terms a record's recognition is told."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import orjson

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.vocabulary import recognizer_terms


@dataclass(frozen=True, slots=True, kw_only=True)
class Vocabulary:
    """The terms a person keeps (empty: none kept yet)."""

    terms: tuple[str, ...]

    @classmethod
    def from_row(cls, row: sqlite3.Row | None) -> Vocabulary:
        if row is None:
            return cls(terms=())
        stored = orjson.loads(row["terms"])
        return cls(terms=tuple(t for t in stored if isinstance(t, str)))


async def of_owner(readers: ReaderPool, *, owner_id: str) -> Vocabulary:
    return Vocabulary.from_row(await readers.fetch_one(q.vocabulary.OF_OWNER,
                                                       {"owner_id": owner_id}))


async def voice_names(readers: ReaderPool, *, owner_id: str) -> tuple[str, ...]:
    """The names the person gave their known voices (joined to the vocabulary)."""
    rows = await readers.fetch_all(q.vocabulary.VOICE_NAMES, {"owner_id": owner_id})
    return tuple(str(row["name"]) for row in rows)


async def vocabulary_owner(readers: ReaderPool, *, record_id: str) -> str | None:
    """Whose vocabulary a record is recognized with: the one place that decides it (the
    record's owner; a shared space's own vocabulary would be chosen here)."""
    row = await readers.fetch_one(q.vocabulary.RECORD_OWNER, {"record_id": record_id})
    return None if row is None else str(row["owner_id"])


async def for_record(readers: ReaderPool, *, record_id: str) -> tuple[str, ...]:
    """The terms the record's recognition is told: the owner's, then their voices' names."""
    owner_id = await vocabulary_owner(readers, record_id=record_id)
    if owner_id is None:
        return ()
    own = await of_owner(readers, owner_id=owner_id)
    return recognizer_terms(own.terms, await voice_names(readers, owner_id=owner_id))
