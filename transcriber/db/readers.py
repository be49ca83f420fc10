"""The reader pool: read-only connections; in WAL mode they never block the writer."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiosqlite

from transcriber.db.connection import open_reader

NamedParams = Mapping[str, Any]


class ReaderPool:
    # Which engine's reads these are (`transcriber.db.postgres.readers` says "postgresql").
    dialect = "sqlite"

    def __init__(self, path: Path | None, *, size: int, busy_timeout_ms: int = 5000) -> None:
        self._path = path
        self._size = size
        self._busy_timeout_ms = busy_timeout_ms
        self._idle: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all: list[aiosqlite.Connection] = []

    @property
    def size(self) -> int:
        return self._size

    async def open(self) -> None:
        assert self._path is not None
        for _ in range(self._size):
            conn = await open_reader(self._path, busy_timeout_ms=self._busy_timeout_ms)
            self._all.append(conn)
            self._idle.put_nowait(conn)

    async def close(self) -> None:
        for conn in self._all:
            await conn.close()
        self._all.clear()

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[aiosqlite.Connection]:
        conn = await self._idle.get()
        try:
            yield conn
        finally:
            self._idle.put_nowait(conn)

    async def fetch_one(self, query: str, params: NamedParams | None = None) -> sqlite3.Row | None:
        async with self.acquire() as conn, conn.execute(query, params or {}) as cursor:
            row: sqlite3.Row | None = await cursor.fetchone()
            return row

    async def fetch_all(self, query: str, params: NamedParams | None = None) -> list[sqlite3.Row]:
        async with self.acquire() as conn, conn.execute(query, params or {}) as cursor:
            return list(await cursor.fetchall())
