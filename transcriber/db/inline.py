"""An aiosqlite-shaped view of a plain sqlite3 connection, run inline.

The writer actor runs commands with `await ctx.conn.execute(...)`, the same
shape as aiosqlite, but each statement executes synchronously on the event
loop instead of hopping to a thread and back. Inside the writer's
transaction the write lock is already held, so a statement never waits for
another process; it only costs its own (indexed, sub-millisecond) work. The
two calls that can block — BEGIN IMMEDIATE (busy waiting) and COMMIT (fsync)
— are run by the writer on its own thread. One batch of commands thus costs
two thread hops instead of several per statement (see tests/bench).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator, Mapping, Sequence
from types import TracebackType
from typing import Any

Params = Mapping[str, Any] | Sequence[Any]


class InlineCursor:
    __slots__ = ("_cursor",)

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    async def fetchone(self) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._cursor.fetchone()
        return row

    async def fetchall(self) -> list[sqlite3.Row]:
        return list(self._cursor.fetchall())

    async def close(self) -> None:
        self._cursor.close()


class _Executed:
    """Both awaitable and an async context manager, like aiosqlite's result."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: InlineCursor) -> None:
        self._cursor = cursor

    def __await__(self) -> Generator[Any, None, InlineCursor]:
        yield from ()  # the statement already ran: nothing to wait for
        return self._cursor

    async def __aenter__(self) -> InlineCursor:
        return self._cursor

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._cursor.close()


class InlineConnection:
    __slots__ = ("raw",)

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    @property
    def in_transaction(self) -> bool:
        return self.raw.in_transaction

    def execute(self, sql: str, params: Params | None = None) -> _Executed:
        return _Executed(InlineCursor(self.raw.execute(sql, params if params is not None else {})))
