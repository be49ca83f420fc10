"""Writer command of the search index's own upkeep: rows of records waiting for the word
forms of migration 0012 written, a batch at a time (`transcriber.service.search_index`
reads them with `transcriber.db.reads.search.pending_rows` and sends them here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import orjson

from transcriber.db import queries as q
from transcriber.db.reads.search import IndexRow
from transcriber.db.writer import Command, WriteContext


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexPending(Command[int]):
    """Write the rows whose records still wait (a record changed since its row was read
    was indexed by its trigger and is skipped); answers how many were written."""

    name: ClassVar[str] = "index_pending"
    rows: tuple[IndexRow, ...]

    async def execute(self, ctx: WriteContext) -> int:
        if not self.rows:
            return 0
        rows = orjson.dumps([row.as_list() for row in self.rows]).decode()
        await ctx.conn.execute(q.search.INDEX_ROWS, {"rows": rows})
        cursor = await ctx.conn.execute(q.search.MARK_INDEXED, {"rows": rows})
        return cursor.rowcount
