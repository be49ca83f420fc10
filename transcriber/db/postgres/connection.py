"""The writer's and the readers' view of an asyncpg connection, shaped like SQLite's.

Commands and reads run `await conn.execute(named_query, params)` and read
rows by column name on both engines; here the named query is translated
(`dialect.translate`), prepared once per connection, and run. A statement's
row count comes from its status ("UPDATE 1"), as `cursor.rowcount` does on
SQLite. Integrity violations surface as the DB-API's `IntegrityError` (the
`sqlite3` module's class, which is what the commands catch on both engines),
so a command's "already exists" path is one `except` on either engine.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from types import TracebackType
from typing import Any

import asyncpg

from transcriber.db.inline import Params
from transcriber.db.postgres.dialect import translate

# Every statement planned for its own values: a generic plan of the search (`terms @@
# $1`) cannot price the GIN index for an unknown query and reads the whole index
# table instead; planning costs well under a millisecond. `application_name` names
# the service's sessions in pg_stat_activity.
SERVER_SETTINGS = {"plan_cache_mode": "force_custom_plan", "application_name": "transcriber"}


async def connect(url: str) -> asyncpg.Connection:
    return await asyncpg.connect(url, server_settings=SERVER_SETTINGS)
Row = Any  # asyncpg.Record: read by column name like sqlite3.Row


def _count(status: str | None) -> int:
    """The rows a statement touched, from its command tag ("INSERT 0 3", "UPDATE 1")."""
    if not status:
        return -1
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else -1


class PgCursor:
    __slots__ = ("_at", "_rows", "rowcount")

    def __init__(self, rows: list[Row], rowcount: int) -> None:
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount

    async def fetchone(self) -> Row | None:
        if self._at >= len(self._rows):
            return None
        row = self._rows[self._at]
        self._at += 1
        return row

    async def fetchall(self) -> list[Row]:
        rows, self._at = self._rows[self._at:], len(self._rows)
        return rows

    async def close(self) -> None:
        self._rows = []


class _PgExecuted:
    """Awaitable and an async context manager, like aiosqlite's result."""

    __slots__ = ("_conn", "_params", "_sql")

    def __init__(self, conn: PgConnection, sql: str, params: Params | None) -> None:
        self._conn, self._sql, self._params = conn, sql, params

    def __await__(self) -> Generator[Any, None, PgCursor]:
        return self._conn.run(self._sql, self._params).__await__()

    async def __aenter__(self) -> PgCursor:
        return await self._conn.run(self._sql, self._params)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class PgConnection:
    """One asyncpg connection with the named-query interface of `InlineConnection`."""

    __slots__ = ("_prepared", "changes", "raw")

    def __init__(self, raw: asyncpg.Connection) -> None:
        self.raw = raw
        self._prepared: dict[str, Any] = {}
        # Rows changed through this connection (SQLite's total_changes): what the
        # claim's memo of an empty queue compares.
        self.changes = 0

    @property
    def in_transaction(self) -> bool:
        return bool(self.raw.is_in_transaction())

    def execute(self, sql: str, params: Params | None = None) -> _PgExecuted:
        return _PgExecuted(self, sql, params)

    async def run(self, sql: str, params: Params | None) -> PgCursor:
        translated = translate(sql)
        statement = self._prepared.get(sql)
        try:
            if statement is None:
                statement = await self.raw.prepare(translated.text)
                self._prepared[sql] = statement
            rows = await statement.fetch(*translated.arguments(params))
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise sqlite3.IntegrityError(type(exc).__name__) from exc
        status = statement.get_statusmsg()
        count = _count(status)
        if count > 0 and status is not None and not status.startswith("SELECT"):
            self.changes += count
        return PgCursor(list(rows), count)

    async def run_script(self, sql: str) -> None:
        """Several statements without parameters (a migration file)."""
        await self.raw.execute(sql)

    def forget_statements(self) -> None:
        """Prepared statements die with a failed transaction's connection state
        only on reconnect; a schema change (a migration) makes them stale."""
        self._prepared.clear()
