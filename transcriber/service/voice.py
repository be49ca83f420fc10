"""Lifecycle of the Wyoming door (`wyoming.enabled`): the server as a supervised actor.

It runs where the doors run (`--role all|web`), after the providers, with the
recognizer they built (or the one `build_app` was given). The start waits until the
socket is bound, so a port in use stops the start loudly instead of a voice assistant
finding nothing; the server's death later stops the service (`fatal.supervised`).
With `wyoming.archive`, each answered command is stored as a record of
`wyoming.archive_login` (`_archive`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import structlog
from aiohttp import web

import transcriber
from transcriber.db.commands.users import EnsureUser
from transcriber.pipeline.intake import AudioLimits, Intake, accept_stream
from transcriber.service.fatal import supervised
from transcriber.web import keys

if TYPE_CHECKING:
    from transcriber.voice.server import WyomingServer
    from transcriber.voice.session import Archive

log = structlog.get_logger(__name__)

# The running server (tests read the port it bound).
WYOMING: web.AppKey[WyomingServer] = web.AppKey("wyoming")


def _archive(app: web.Application) -> Archive:
    """`wyoming.archive`: a transcribed command stored as a WAV upload of
    `wyoming.archive_login` through the upload's own intake (its limits and quota),
    so the pipeline recognizes it again as any record (speakers, search, the card)."""
    from transcriber.voice.session import wav_bytes  # noqa: PLC0415 - see wyoming_ctx

    settings = app[keys.SETTINGS]

    async def keep(pcm: bytes, language: str | None) -> None:
        user = await app[keys.WRITER].ask(EnsureUser(login=settings.wyoming.archive_login))

        async def chunks() -> AsyncIterator[bytes]:
            yield wav_bytes(pcm)

        accepted = await accept_stream(
            Intake(owner_id=user.id, original_name="voice-command.wav",
                   language=language or "auto"),
            chunks(), files=app[keys.FILES], writer=app[keys.WRITER],
            transcoder=app[keys.TRANSCODER], limit=settings.server.upload_max_bytes,
            limits=AudioLimits.of(settings.server))
        log.info("wyoming_archived", record_id=accepted.record_id)

    return keep


async def wyoming_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    recognizer = app.get(keys.RECOGNIZER)
    if not settings.wyoming.enabled or recognizer is None:
        yield
        return
    # The protocol's package (~50 ms of imports) only where the door is on.
    from transcriber.voice.server import WyomingServer  # noqa: PLC0415
    server = WyomingServer(settings.wyoming, recognizer=recognizer,
                           version=transcriber.__version__,
                           archive=_archive(app) if settings.wyoming.archive else None)
    app[WYOMING] = server
    async with supervised(app, server.run, name="wyoming-server", died="wyoming_died",
                          grace_seconds=settings.server.shutdown_graceful_seconds):
        waiting: list[asyncio.Future[Any]] = [server.bound, app[keys.FATAL]]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        yield
