"""Plain SQL on the test's engine from synchronous test code: what a test reads or
changes behind the service's back (counts, a row's columns, a planted fault).

The statement is written once, in SQLite's words with named parameters; on
PostgreSQL it runs as the service's named queries do (`dialect.translate`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import asyncpg

from transcriber.db.connection import database_path
from transcriber.db.postgres.dialect import translate

Params = Mapping[str, Any] | Sequence[Any] | None


class TestDatabase:
    __test__ = False  # not a test class, whatever its name

    def __init__(self, data_dir: Path, url: str | None) -> None:
        self.data_dir = data_dir
        self.url = url

    @property
    def engine(self) -> str:
        return "sqlite" if self.url is None else "postgresql"

    def rows(self, sql: str, params: Params = None) -> list[tuple[Any, ...]]:
        return self._run(sql, params)[0]

    def one(self, sql: str, params: Params = None) -> tuple[Any, ...] | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def scalar(self, sql: str, params: Params = None) -> Any:
        row = self.one(sql, params)
        assert row is not None, "the statement found no row"
        return row[0]

    def execute(self, sql: str, params: Params = None) -> int:
        """Run a change; the number of rows it touched."""
        return self._run(sql, params)[1]

    def count(self, table: str) -> int:
        return int(self.scalar(f"SELECT count(*) FROM {table}"))

    def plan(self, sql: str, params: Params = None) -> str:
        """The engine's plan of a statement, one line a step: SQLite's `EXPLAIN QUERY
        PLAN` details; PostgreSQL's `EXPLAIN` planned for these values with sequential
        scans priced out (a test's few rows would make any scan the cheapest, so only
        a plan that no index can serve shows one)."""
        if self.url is None:
            lines = self.rows("EXPLAIN QUERY PLAN " + sql, params)
            return "\n".join(str(line[3]) for line in lines)
        return "\n".join(str(line[0]) for line in self._run(
            sql, params, explain=True, settings=_PRICED_OUT)[0])

    def _run(self, sql: str, params: Params, *, explain: bool = False,
             settings: Mapping[str, str] | None = None) -> tuple[list[tuple[Any, ...]], int]:
        if self.url is None:
            with sqlite3.connect(database_path(self.data_dir)) as conn:
                cursor = conn.execute(sql, {} if params is None else params)
                return [tuple(row) for row in cursor.fetchall()], cursor.rowcount
        url = self.url
        translated = translate(sql)
        text = f"EXPLAIN {translated.text}" if explain else translated.text

        async def run() -> tuple[list[tuple[Any, ...]], int]:
            conn = await asyncpg.connect(url, server_settings=dict(settings or {}))
            try:
                statement = await conn.prepare(text)
                found = await statement.fetch(*translated.arguments(params))
                status = statement.get_statusmsg() or ""
                last = status.rsplit(" ", 1)[-1]
                return [tuple(row) for row in found], int(last) if last.isdigit() else -1
            finally:
                await conn.close()

        # Its own loop on its own thread: the caller may be inside a running loop.
        with concurrent.futures.ThreadPoolExecutor(1) as thread:
            return thread.submit(asyncio.run, run()).result()


_PRICED_OUT = {"enable_seqscan": "off", "plan_cache_mode": "force_custom_plan"}
