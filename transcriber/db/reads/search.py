"""The search index's upkeep as read: the terms of records waiting for their first
indexing under the word forms (computed here, on a reader's thread)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexRow:
    """One record's row of the search index, as its columns are written."""

    search_key: int
    title: str
    brief: str
    original_filename: str
    transcript: str
    speakers: str
    topics: str
    forms: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> IndexRow:
        return cls(search_key=int(row["search_key"]), title=row["title"], brief=row["brief"],
                   original_filename=row["original_filename"], transcript=row["transcript"],
                   speakers=row["speakers"], topics=row["topics"], forms=row["forms"])

    def as_list(self) -> list[object]:
        """The order `queries.search.INDEX_ROWS` reads."""
        return [self.search_key, self.title, self.brief, self.original_filename,
                self.transcript, self.speakers, self.topics, self.forms]


async def pending_rows(readers: ReaderPool, *, limit: int) -> list[IndexRow]:
    """The index rows of up to `limit` records still waiting, newest first."""
    return [IndexRow.from_row(row)
            for row in await readers.fetch_all(q.search.PENDING_TERMS, {"limit": limit})]


async def records_to_index(readers: ReaderPool) -> int:
    """Records waiting for the search index's word forms (the partial index of the
    pending keys: its size is the work left)."""
    row = await readers.fetch_one(q.search.PENDING_COUNT)
    return 0 if row is None else int(row["pending"])
