"""The fatal stop: any part of the service may ask the serving loop to end with exit 70.

`serve` waits on `keys.FATAL` beside the signals; the writer's death, a step
actor's death and the Telegram door's loud stop set it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiohttp import web

from transcriber import keys


def fail_service(app: web.Application, error: BaseException) -> None:
    """Ask the serving loop to stop with a non-zero exit (the first error wins)."""
    fatal = app[keys.FATAL]
    if not fatal.done():
        fatal.set_result(error)


async def fatal_ctx(app: web.Application) -> AsyncIterator[None]:
    app[keys.FATAL] = asyncio.get_running_loop().create_future()
    yield
