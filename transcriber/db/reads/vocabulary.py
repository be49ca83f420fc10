"""A person's and a space's vocabulary, and the terms a record's recognition is told."""

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


async def of_space(readers: ReaderPool, *, space_id: str) -> Vocabulary:
    return Vocabulary.from_row(await readers.fetch_one(q.vocabulary.OF_SPACE,
                                                       {"space_id": space_id}))


@dataclass(frozen=True, slots=True, kw_only=True)
class VocabularyHolders:
    """Whose vocabularies a record is recognized with: its owner's, and its space's
    when it is in one."""

    owner_id: str
    space_id: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> VocabularyHolders:
        space_id = row["space_id"]
        return cls(owner_id=str(row["owner_id"]),
                   space_id=None if space_id is None else str(space_id))


async def vocabulary_holders(readers: ReaderPool, *,
                             record_id: str) -> VocabularyHolders | None:
    """The one place that decides whose vocabularies a record is told (None: no record)."""
    row = await readers.fetch_one(q.vocabulary.RECORD_OWNER, {"record_id": record_id})
    return None if row is None else VocabularyHolders.from_row(row)


async def for_record(readers: ReaderPool, *, record_id: str) -> tuple[str, ...]:
    """The terms the record's recognition is told: the owner's, then its space's, then
    the owner's voices' names (`domain.vocabulary.recognizer_terms`)."""
    holders = await vocabulary_holders(readers, record_id=record_id)
    if holders is None:
        return ()
    own = await of_owner(readers, owner_id=holders.owner_id)
    space = (Vocabulary(terms=()) if holders.space_id is None
             else await of_space(readers, space_id=holders.space_id))
    names = await voice_names(readers, owner_id=holders.owner_id)
    return recognizer_terms(own.terms, space.terms, names)
