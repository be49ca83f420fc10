"""The composition root: one aiohttp application holding the whole service."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiohttp import web

from transcriber import keys
from transcriber.clock import Clock, SystemClock
from transcriber.runtime import storage_ctx
from transcriber.settings import Settings
from transcriber.web import ops


async def _fatal_ctx(app: web.Application) -> AsyncIterator[None]:
    app[keys.FATAL] = asyncio.get_running_loop().create_future()
    yield


def build_app(settings: Settings, *, clock: Clock | None = None) -> web.Application:
    app = web.Application(client_max_size=settings.server.upload_max_bytes)
    app[keys.SETTINGS] = settings
    app[keys.CLOCK] = clock or SystemClock()
    # Startup runs in this order and cleanup in reverse: the writer, started
    # first, is the last to close and drains its mailbox when it does.
    app.cleanup_ctx.append(_fatal_ctx)
    app.cleanup_ctx.append(storage_ctx)
    ops.add_routes(app)
    return app
