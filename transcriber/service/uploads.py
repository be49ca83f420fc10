"""The resumable uploads' sweeper: an upload no `PATCH` renewed before its
`Upload-Expires` is removed, its row and its partial file (docs/api.md,
"Resumable uploads").

It runs beside the doors (each process that takes uploads), as the named,
supervised task `uploads-sweeper`: every `SWEEP_SECONDS` it removes the expired
uploads a batch at a time, by the expiry index, skipping one that a request of
this process is writing. Each round it also removes partial files that have
no upload any more (a process stopped between the row's removal and the
file's, or another process removed the row): the promise that an abandoned
upload's bytes leave the disk is checked, and each repair counted
(`transcriber_resumable_uploads_total`, outcome `orphan`).

Beside it, where this process has a recognizer that takes audio in memory, the
actor of text while recording (`web/live_text.py`) runs as the supervised task
`live-text`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber.core.clock import Clock, rest, stamp
from transcriber.core.ids import parse_id
from transcriber.core.observability import RESUMABLE_UPLOADS
from transcriber.db import reads
from transcriber.db.commands.uploads import DeleteUpload
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.service.fatal import supervised
from transcriber.web import keys
from transcriber.web.live_text import LIVE_TEXT, setup_live_text
from transcriber.web.live_text import TASK_NAME as LIVE_TASK_NAME
from transcriber.web.partials import PARTIALS, Partials

log = structlog.get_logger(__name__)

TASK_NAME = "uploads-sweeper"
SWEEP_SECONDS = 300.0
BATCH = 100


class UploadSweeper:
    def __init__(self, *, readers: ReaderPool, writer: Writer, partials: Partials,
                 clock: Clock, every_seconds: float = SWEEP_SECONDS) -> None:
        self._readers = readers
        self._writer = writer
        self._partials = partials
        self._clock = clock
        self._every = every_seconds

    async def run(self, stopping: asyncio.Event) -> None:
        while not stopping.is_set():
            await self.sweep()
            # Each round: another process of the service may have removed the row of
            # an upload whose bytes are on this host (the folder holds uploads in
            # flight only, so listing it is cheap).
            await self.remove_orphans()
            await rest(self._clock, self._every, stopping)

    async def sweep(self) -> int:
        """Remove every expired upload not being written; how many were removed."""
        removed = 0
        while True:
            found = await reads.uploads.expired(self._readers, now=stamp(self._clock),
                                                batch=BATCH)
            due = [upload for upload in found if upload.id not in self._partials.busy]
            for upload in due:
                if await self._writer.ask(DeleteUpload(upload_id=upload.id)):
                    removed += 1
                    RESUMABLE_UPLOADS.labels("expired").inc()
                self._partials.remove(upload.id)
            if not due or len(found) < BATCH:
                break
        if removed:
            log.info("uploads_expired", count=removed)
        return removed

    async def remove_orphans(self) -> int:
        """Partial files whose upload is gone (or never was one of ours): removed."""
        removed = 0
        for name in self._partials.ids():
            upload_id = parse_id(name)
            if upload_id == name and await reads.uploads.exists(self._readers,
                                                                upload_id=upload_id):
                continue
            (self._partials.root / f"{name}.part").unlink(missing_ok=True)
            removed += 1
            RESUMABLE_UPLOADS.labels("orphan").inc()
        if removed:
            log.warning("upload_orphans_removed", count=removed)
        return removed


async def uploads_ctx(app: web.Application) -> AsyncIterator[None]:
    sweeper = UploadSweeper(readers=app[keys.READERS], writer=app[keys.WRITER],
                            partials=app[PARTIALS], clock=app[keys.CLOCK])
    grace = app[keys.SETTINGS].server.shutdown_graceful_seconds
    # Text while recording, on the recognizer and transcoder the providers built.
    setup_live_text(app)
    live = app.get(LIVE_TEXT)
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(supervised(
            app, sweeper.run, name=TASK_NAME, died="uploads_sweeper_died",
            grace_seconds=grace))
        if live is not None:
            await stack.enter_async_context(supervised(
                app, live.run, name=LIVE_TASK_NAME, died="live_text_died",
                grace_seconds=grace))
        yield
