"""Lifecycle of the Wyoming door (`wyoming.enabled`): the server as a supervised actor.

It runs where the doors run (`--role all|web`), after the providers, with the
recognizer they built (or the one `build_app` was given). The start waits until the
socket is bound, so a port in use stops the start loudly instead of a voice assistant
finding nothing; the server's death later stops the service (`fatal.supervised`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

import transcriber
from transcriber.service.fatal import supervised
from transcriber.voice.server import WyomingServer
from transcriber.web import keys

# The running server (tests read the port it bound).
WYOMING = web.AppKey("wyoming", WyomingServer)


async def wyoming_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    recognizer = app.get(keys.RECOGNIZER)
    if not settings.wyoming.enabled or recognizer is None:
        yield
        return
    server = WyomingServer(settings.wyoming, recognizer=recognizer,
                           version=transcriber.__version__)
    app[WYOMING] = server
    async with supervised(app, server.run, name="wyoming-server", died="wyoming_died",
                          grace_seconds=settings.server.shutdown_graceful_seconds):
        waiting: list[asyncio.Future[Any]] = [server.bound, app[keys.FATAL]]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        yield
