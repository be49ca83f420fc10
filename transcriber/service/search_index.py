"""The search index filled under its word forms, a batch at a time, beside the service.

Migration 0012 changed every indexed term (Snowball stems and folded forms), and
0015 added the topics column; each left every record's search key `indexed = 0`;
a record written since is indexed by its trigger. This context indexes the rest,
newest first, in batches: a reader computes a batch's terms on its own thread (the
stemming never runs on the event loop, where the writer's statements do), the writer
stores them, and
the batch is sized to take about `BATCH_SECONDS` in all, with a rest as long
between two, so the doors' reads and writes keep flowing. It ends when nothing
is left (at once on an archive that never saw the old index). A failure stops
the service loudly: the writer failing is not something to index around.

It is the work of the sweeps duty (`service.duties`): one process of the service
fills the index; a holder that dies leaves the rest to the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber.core.observability import SEARCH_RECORDS_TO_INDEX
from transcriber.db import reads
from transcriber.db.commands.search import IndexPending
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.ports import Duty
from transcriber.service.duties import DutyWork, duty_ctx
from transcriber.service.fatal import fail_service
from transcriber.web import keys

log = structlog.get_logger(__name__)

TASK_NAME = "search-index"
BATCH_SECONDS = 0.25
"""The time one batch aims at, its reading and writing together (a batch of long
transcripts is cut smaller)."""
WRITER_SECONDS = 0.1
"""The writer's share of it at most: the writer's statements run on the event loop, and
FTS5 merges its segments as it inserts, so the writer's part grows with the index."""
BATCH_FIRST = 32
BATCH_MIN, BATCH_MAX = 1, 500


def next_batch(size: int, seconds: float, writer_seconds: float = 0.0) -> int:
    """The next batch's size from how long a batch of `size` took in all and in the
    writer (pure): the tighter of the two aims."""
    wanted = BATCH_MAX
    if seconds > 0:
        wanted = min(wanted, int(size * BATCH_SECONDS / seconds))
    if writer_seconds > 0:
        wanted = min(wanted, int(size * WRITER_SECONDS / writer_seconds))
    return max(BATCH_MIN, wanted)


async def index_all(writer: Writer, readers: ReaderPool) -> int:
    """Index every record still waiting; answers how many were indexed."""
    left = await reads.search.records_to_index(readers)
    SEARCH_RECORDS_TO_INDEX.set(left)
    if not left:
        # Nothing waits (always so on PostgreSQL, whose writer indexes before COMMIT);
        # a record written from now on is indexed by its trigger.
        return 0
    log.info("search_index_filling", records=left)
    size, done, started = BATCH_FIRST, 0, time.monotonic()
    while True:
        began = time.monotonic()
        rows = await reads.search.pending_rows(readers, limit=size)
        if not rows:
            break
        writing = time.monotonic()
        done += await writer.ask(IndexPending(rows=tuple(rows)))
        SEARCH_RECORDS_TO_INDEX.set(max(left - done, 0))
        finished = time.monotonic()
        spent, written = finished - began, finished - writing
        log.debug("search_index_batch", records=len(rows), seconds=round(spent, 3),
                  writer_seconds=round(written, 3), total=done)
        if len(rows) < size:
            break
        size = next_batch(size, spent, written)
        await asyncio.sleep(spent)
    if done:
        log.info("search_index_filled", records=done,
                 seconds=round(time.monotonic() - started, 1))
    return done


def refill_work(app: web.Application) -> DutyWork:
    writer, readers = app[keys.WRITER], app[keys.READERS]

    @contextlib.asynccontextmanager
    async def work() -> AsyncIterator[None]:
        task = asyncio.create_task(index_all(writer, readers), name=TASK_NAME)

        def on_done(finished: asyncio.Task[int]) -> None:
            if finished.cancelled():
                return
            error = finished.exception()
            if error is None:
                SEARCH_RECORDS_TO_INDEX.set(0)
                return
            log.critical("search_index_failed", error=type(error).__name__)
            fail_service(app, error)

        task.add_done_callback(on_done)
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return work


search_index_ctx = duty_ctx(Duty.SWEEPS, refill_work)
