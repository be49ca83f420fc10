"""Links for people outside: a record's list, and the link a visitor presents."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkInfo:
    """What the owner's list shows of a link: never its secret, nor its hash."""

    id: str
    record_id: str
    audio: bool
    created_at: str
    expires_at: str
    views: int
    last_opened_at: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> LinkInfo:
        return cls(**columns(cls, row, audio=bool(row["audio"]), views=int(row["views"])))


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenedLink:
    """A stored link found by the hash a visitor's secret has, with its record's owner
    (whose reads the public page then makes: the record as its owner sees it)."""

    id: str
    record_id: str
    owner_id: str
    secret_hash: str
    audio: bool
    expires_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> OpenedLink:
        return cls(**columns(cls, row, audio=bool(row["audio"])))


async def by_hash(readers: ReaderPool, *, secret_hash: str) -> OpenedLink | None:
    row = await readers.fetch_one(q.links.OPEN_BY_HASH, {"secret_hash": secret_hash})
    return None if row is None else OpenedLink.from_row(row)


async def of_record(readers: ReaderPool, *, record_id: str) -> list[LinkInfo]:
    return [LinkInfo.from_row(row)
            for row in await readers.fetch_all(q.links.OF_RECORD, {"record_id": record_id})]
