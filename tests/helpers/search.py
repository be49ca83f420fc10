"""The search index filled under its word forms, as the service does at start."""

from __future__ import annotations

import asyncio
from pathlib import Path

from transcriber.clock import SystemClock
from transcriber.db.connection import database_path
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.service.search_index import index_all


async def fill_search_index_async(data_dir: Path) -> int:
    """Run the service's indexing (`index_all`) with a writer and readers of its own."""
    path = database_path(data_dir)
    writer = Writer(path, clock=SystemClock(), busy_timeout_ms=5000, batch_max=64)
    readers = ReaderPool(path, size=1)
    await writer.start()
    await readers.open()
    try:
        return await index_all(writer, readers)
    finally:
        await readers.close()
        await writer.stop()


def fill_search_index(data_dir: Path) -> int:
    return asyncio.run(fill_search_index_async(data_dir))
