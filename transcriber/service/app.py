"""`build_app`: one aiohttp application holding the whole service.

Startup runs the lifecycle contexts in the order listed and cleanup in
reverse: the writer, started first, is the last to close and drains its
mailbox when it does. Parts given here (a clock, a step table, a notifier, a
recognizer, a webhook transport, a describer) replace the ones the contexts would
build; tests inject fakes this way.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from transcriber import keys
from transcriber.clock import Clock, SystemClock
from transcriber.pipeline.settled import SettledRecords
from transcriber.pipeline.step import Step
from transcriber.ports import Describer, Notifier, Recognizer, WebhookTransport
from transcriber.service.describer import describer_ctx
from transcriber.service.fatal import fatal_ctx
from transcriber.service.pipeline import pipeline_ctx
from transcriber.service.providers import providers_ctx
from transcriber.service.search_index import search_index_ctx
from transcriber.service.storage import storage_ctx
from transcriber.service.telegram import bot_ctx, telegram_ctx
from transcriber.service.webhooks import webhooks_ctx
from transcriber.settings import Settings
from transcriber.web import ops
from transcriber.web.api import setup_api
from transcriber.web.spa import setup_spa


def build_app(
    settings: Settings,
    *,
    clock: Clock | None = None,
    steps: Mapping[str, Step] | None = None,
    notifier: Notifier | None = None,
    recognizer: Recognizer | None = None,
    describer: Describer | None = None,
    telegram_intake: bool = True,
    webhook_transport: WebhookTransport | None = None,
    webhook_deliveries: bool = True,
) -> web.Application:
    """The service. `telegram_intake=False` (one-shot commands) keeps the Telegram
    notifier but never polls: a second poller would take the server's messages.
    `webhook_deliveries=False` (one-shot commands too) starts no delivery actor: the
    deliveries a one-shot run writes wait for `serve`'s, and two actors on one data
    folder would send the same delivery twice."""
    # Uploads stream (request.content); only a body read whole (`request.read()`)
    # meets this cap, and none may be larger than a JSON body.
    app = web.Application(client_max_size=settings.server.json_max_bytes)
    app[keys.SETTINGS] = settings
    app[keys.CLOCK] = clock or SystemClock()
    app[keys.SETTLED] = SettledRecords()
    if steps is not None:
        app[keys.STEPS] = steps
    if notifier is not None:
        app[keys.NOTIFIER] = notifier
    if recognizer is not None:
        app[keys.RECOGNIZER] = recognizer
    if describer is not None:
        app[keys.DESCRIBER] = describer
    if webhook_transport is not None:
        app[keys.WEBHOOK_TRANSPORT] = webhook_transport
    app.cleanup_ctx.append(fatal_ctx)
    app.cleanup_ctx.append(storage_ctx)
    # The search index's rows of records indexed before migrations 0012 and 0015.
    app.cleanup_ctx.append(search_index_ctx)
    # Transcoder, recognizer, object store and the step table (unless injected).
    app.cleanup_ctx.append(providers_ctx)
    # The Telegram notifier (when a token is set) before the step actors read it;
    # its session closes after they stopped.
    app.cleanup_ctx.append(telegram_ctx)
    # The describer before the pipeline: `done` writes its job and wakes it; it stops
    # after the step actors, so a description being written still lands.
    app.cleanup_ctx.append(describer_ctx)
    app.cleanup_ctx.append(pipeline_ctx)
    # Webhook deliveries: the transport (URL checks at registration) and the actor.
    if webhook_deliveries:
        app.cleanup_ctx.append(webhooks_ctx)
    # Telegram polling: starts last, stops first (before the pipeline and the writer).
    if telegram_intake:
        app.cleanup_ctx.append(bot_ctx)
    ops.add_routes(app)
    setup_api(app)
    # The web app: `/`, its client-side routes and `/assets/<hashed name>`.
    setup_spa(app)
    return app
