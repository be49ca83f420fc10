"""The reader pool on PostgreSQL: an asyncpg pool behind `ReaderPool`'s interface.

Reads run the same named queries as on SQLite (`dialect.translate`); asyncpg
keeps each connection's prepared statements, so a query is parsed once per
connection. Rows are read by column name on both engines.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import asyncpg

from transcriber.db.postgres.connection import SERVER_SETTINGS
from transcriber.db.postgres.dialect import translate
from transcriber.db.readers import NamedParams, ReaderPool

# Every named query stays prepared (there are about 250 of them).
STATEMENT_CACHE_SIZE = 1024


class PgReaderPool(ReaderPool):
    dialect = "postgresql"

    def __init__(self, url: str, *, size: int) -> None:
        super().__init__(None, size=size)
        self._url = url
        self._pool: asyncpg.Pool | None = None

    async def open(self) -> None:
        self._pool = await asyncpg.create_pool(
            self._url, min_size=1, max_size=self._size,
            statement_cache_size=STATEMENT_CACHE_SIZE, server_settings=SERVER_SETTINGS)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[Any]:
        assert self._pool is not None, "the reader pool is not open"
        async with self._pool.acquire() as conn:
            try:
                yield conn
            except asyncio.CancelledError:
                # A read cancelled mid-statement leaves its connection busy: the pool
                # could not reset it. Closed, the pool replaces it with a fresh one.
                conn.terminate()
                raise

    async def fetch_one(self, query: str, params: NamedParams | None = None) -> Any:
        translated = translate(query)
        async with self.acquire() as conn:
            return await conn.fetchrow(translated.text, *translated.arguments(params))

    async def fetch_all(self, query: str, params: NamedParams | None = None) -> list[Any]:
        translated = translate(query)
        async with self.acquire() as conn:
            return list(await conn.fetch(translated.text, *translated.arguments(params)))
