"""The fatal stop: any part of the service may ask the serving loop to end with exit 70.

`serve` waits on `keys.FATAL` beside the signals; the writer's death, a step
actor's death and the Telegram door's loud stop set it, and so does the death of
an actor run by `supervised`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import structlog
from aiohttp import web

from transcriber.web import keys

log = structlog.get_logger(__name__)


def fail_service(app: web.Application, error: BaseException) -> None:
    """Ask the serving loop to stop with a non-zero exit (the first error wins)."""
    fatal = app[keys.FATAL]
    if not fatal.done():
        fatal.set_result(error)


async def fatal_ctx(app: web.Application) -> AsyncIterator[None]:
    app[keys.FATAL] = asyncio.get_running_loop().create_future()
    yield


@contextlib.asynccontextmanager
async def supervised(app: web.Application,
                     run: Callable[[asyncio.Event], Coroutine[Any, Any, None]], *,
                     name: str, died: str, grace_seconds: float) -> AsyncIterator[None]:
    """An actor's `run(stopping)` as the named task `name` while the block lasts. Ending
    on its own (an error, or returning) logs `died` at critical and stops the service;
    at the block's end `stopping` is set, the task given `grace_seconds` to finish what
    it holds, then cancelled."""
    stopping = asyncio.Event()
    task = asyncio.create_task(run(stopping), name=name)

    def on_done(finished: asyncio.Task[None]) -> None:
        if stopping.is_set() or finished.cancelled():
            return
        error = finished.exception() or RuntimeError(f"{name} ended")
        log.critical(died, error=type(error).__name__)
        fail_service(app, error)

    task.add_done_callback(on_done)
    try:
        yield
    finally:
        stopping.set()
        await asyncio.wait({task}, timeout=max(grace_seconds, 0.0))
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
