"""The watched folder's remembered files: was a file with these bytes taken before?"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns


@dataclass(frozen=True, slots=True, kw_only=True)
class TakenFile:
    sha256: str
    record_id: str
    taken_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TakenFile:
        return cls(**columns(cls, row))


async def taken(readers: ReaderPool, *, sha256: str) -> TakenFile | None:
    row = await readers.fetch_one(q.watch.TAKEN, {"sha256": sha256})
    return None if row is None else TakenFile.from_row(row)
