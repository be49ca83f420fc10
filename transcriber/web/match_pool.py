"""The processes that find a query's words in transcripts, off the event loop.

Marking the words of a six-hour transcript is a tenth of a second or more of
pure Python. In a thread it would hold the interpreter's lock against the
event loop: every time the loop gives the lock up (each `epoll_wait`, send or
receive) it waits up to the switch interval (5 ms) to get it back, so four
people searching made a bystander's `GET /app/me` 25 times slower (issue 39
row 4). So the work runs in a small pool of its own worker processes
(`WORKERS`; never the loop's default executor, which others share), each at
a lower CPU priority than the service (`os.nice`), so a busy pool leaves the
loop its core. What crosses over is the stored structure's JSON and the
parsed query; what comes back is the matches.

At most `WORKERS` jobs are in the pool at once; later requests wait on an
`asyncio` semaphore, which costs nothing while waiting and is left at once by
a client that hangs up. Each job has a CPU budget (`FIND_BUDGET_SECONDS`, of
the worker's own CPU time, so a loaded machine does not shrink it): past it
the scan stops and the answer is flagged `partial`. The pool starts on first
use (the `forkserver` start method: a fresh interpreter, never a fork of the
service's threads) and stops with the app.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import structlog
from aiohttp import web

from transcriber.core.observability import SEARCH_MATCHING
from transcriber.domain.search import Query
from transcriber.web.matches import FoundMatches, structure_matches

log = structlog.get_logger(__name__)

WORKERS = max(1, min(2, (os.cpu_count() or 1) - 1))
"""Worker processes: one core at most of two, two of more (the loop keeps one)."""
FIND_BUDGET_SECONDS = 0.5
"""CPU seconds one request's matching may take (all the records of a page together)."""
NICENESS = 10


def _worker_start() -> None:
    os.nice(NICENESS)


def _ready() -> int:
    return os.getpid()


class MatchPool:
    """Runs `structure_matches` in worker processes (see the module's docstring)."""

    def __init__(self, *, workers: int = WORKERS,
                 budget_seconds: float = FIND_BUDGET_SECONDS) -> None:
        self.workers = workers
        self.budget_seconds = budget_seconds
        self._executor: ProcessPoolExecutor | None = None
        self._starting = asyncio.Lock()
        self._slots = asyncio.Semaphore(workers)

    async def _running(self) -> ProcessPoolExecutor:
        async with self._starting:
            if self._executor is None:
                context = multiprocessing.get_context("forkserver")
                # Each worker forked from the server has the matching imported already.
                context.set_forkserver_preload(["transcriber.web.matches"])
                executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=context,
                                               initializer=_worker_start)
                # The first job starts the fork server and a worker (an interpreter's
                # start-up): waited for on a thread of its own, not on the loop.
                try:
                    await asyncio.to_thread(lambda: executor.submit(_ready).result())
                except BaseException:
                    executor.shutdown(wait=False, cancel_futures=True)
                    raise
                self._executor = executor
            return self._executor

    async def matches(self, contents: Sequence[str | bytes | None], query: Query, *,
                      limit: int) -> list[FoundMatches]:
        """The matches of each stored structure, in a worker within the budget."""
        if all(stored is None for stored in contents):  # no transcript: nothing to read
            return [FoundMatches(matches=[]) for _ in contents]
        executor = await self._running()
        await self._slots.acquire()
        loop = asyncio.get_running_loop()
        try:
            job: Future[list[FoundMatches]] = executor.submit(
                structure_matches, list(contents), query, limit=limit,
                budget=self.budget_seconds)
        except BaseException:
            self._slots.release()
            raise
        # The slot is given back when the worker is done, not when the caller stops
        # waiting: a cancelled request's job still runs to its budget.
        job.add_done_callback(lambda _: loop.call_soon_threadsafe(self._slots.release))
        try:
            found = await asyncio.wrap_future(job)
        except BrokenProcessPool:
            # A worker died (killed, out of memory): the next request starts a new pool.
            log.error("match_pool_broken")
            if self._executor is executor:
                self._executor = None
                executor.shutdown(wait=False, cancel_futures=True)
            raise
        SEARCH_MATCHING.labels(
            outcome="partial" if any(one.partial for one in found) else "complete").inc()
        return found

    async def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)


MATCH_POOL = web.AppKey("match_pool", MatchPool)


async def match_pool_ctx(app: web.Application) -> AsyncIterator[None]:
    """The app's pool (its processes start on the first search), closed at cleanup."""
    pool = MatchPool()
    app[MATCH_POOL] = pool
    try:
        yield
    finally:
        await pool.close()
