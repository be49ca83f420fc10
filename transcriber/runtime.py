"""Lifecycle of the storage parts, as aiohttp cleanup contexts.

Order at start: migrations → writer → readers (→ the pipeline and the doors,
added by their own contexts). aiohttp runs cleanups in reverse, so the
writer, started first, closes last and drains its mailbox before it does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber import keys
from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.files import RecordFiles

log = structlog.get_logger(__name__)


def fail_service(app: web.Application, error: BaseException) -> None:
    """Ask the serving loop to stop with a non-zero exit."""
    fatal = app[keys.FATAL]
    if not fatal.done():
        fatal.set_result(error)


async def storage_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    data_dir = settings.storage.data_dir
    await asyncio.to_thread(
        migrate, data_dir, busy_timeout_ms=settings.storage.busy_timeout_ms,
        clock=app[keys.CLOCK],
    )
    path = database_path(data_dir)
    writer = Writer(
        path,
        clock=app[keys.CLOCK],
        busy_timeout_ms=settings.storage.busy_timeout_ms,
        batch_max=settings.storage.writer_batch_max,
        on_death=lambda exc: fail_service(app, exc),
    )
    readers = ReaderPool(
        path, size=settings.storage.read_connections,
        busy_timeout_ms=settings.storage.busy_timeout_ms,
    )
    await writer.start()
    try:
        await readers.open()
        app[keys.WRITER] = writer
        app[keys.READERS] = readers
        app[keys.FILES] = RecordFiles(data_dir)
        log.info("storage_started", read_connections=readers.size)
        yield
    finally:
        await readers.close()
        await writer.stop()
        log.info("storage_stopped")
