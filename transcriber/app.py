"""The composition root: one aiohttp application holding the whole service."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping

from aiohttp import web

from transcriber import keys
from transcriber.bot.lifecycle import bot_ctx, telegram_ctx
from transcriber.clock import Clock, SystemClock
from transcriber.pipeline.engine import pipeline_ctx
from transcriber.pipeline.step import Step
from transcriber.ports import Notifier
from transcriber.providers.runtime import providers_ctx
from transcriber.runtime import storage_ctx
from transcriber.settings import Settings
from transcriber.testing.steps import fake_steps_from_spec
from transcriber.web import ops
from transcriber.web.api import setup_api
from transcriber.web.spa import setup_spa


async def _fatal_ctx(app: web.Application) -> AsyncIterator[None]:
    app[keys.FATAL] = asyncio.get_running_loop().create_future()
    yield


def build_app(
    settings: Settings,
    *,
    clock: Clock | None = None,
    steps: Mapping[str, Step] | None = None,
    notifier: Notifier | None = None,
    telegram_intake: bool = True,
) -> web.Application:
    """The service. `telegram_intake=False` (one-shot commands) keeps the Telegram
    notifier but never polls: a second poller would take the server's messages."""
    app = web.Application(client_max_size=settings.server.upload_max_bytes)
    app[keys.SETTINGS] = settings
    app[keys.CLOCK] = clock or SystemClock()
    if steps is None and settings.pipeline.fake_steps:
        # A hidden test mode: fake steps, so a real process runs without ffmpeg.
        steps = fake_steps_from_spec(settings.pipeline.fake_steps)
    if steps is not None:
        app[keys.STEPS] = steps
    if notifier is not None:
        app[keys.NOTIFIER] = notifier
    # Startup runs in this order and cleanup in reverse: the writer, started
    # first, is the last to close and drains its mailbox when it does.
    app.cleanup_ctx.append(_fatal_ctx)
    app.cleanup_ctx.append(storage_ctx)
    # Transcoder, recognizer, object store and the step table (unless injected).
    app.cleanup_ctx.append(providers_ctx)
    # The Telegram notifier (when a token is set) before the step actors read it;
    # its session closes after they stopped.
    app.cleanup_ctx.append(telegram_ctx)
    # The step actors start after storage (and after any context that sets
    # the step table) and stop before the writer drains and closes.
    app.cleanup_ctx.append(pipeline_ctx)
    # Telegram polling: starts last, stops first (before the pipeline and the writer).
    if telegram_intake:
        app.cleanup_ctx.append(bot_ctx)
    ops.add_routes(app)
    setup_api(app)
    # The web app: `/`, its client-side routes and `/assets/<hashed name>`.
    setup_spa(app)
    return app
