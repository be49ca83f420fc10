"""The parts of webhook deliveries, as an aiohttp cleanup context.

`webhooks_ctx` puts the transport on `keys.WEBHOOK_TRANSPORT` (the HTTP one
with the SSRF guard, unless a test put a fake there), which the routes use
to check a URL at registration, and the delivery actor
(`service.webhook_delivery`) on `DELIVERY`; the transport closes after
everything else stopped. The actor runs as the task `webhook-delivery` in the
process holding the outbox duty (`service.outbox`). At the stop an attempt in
flight gets `server.shutdown_graceful_seconds`, then is cut: its delivery
stays pending and is sent after the next start (at least once). Supervision:
the actor keeps itself alive through any failure of a round, so its task
ending while the service runs is a bug: logged CRITICAL, and the service stops
loudly, like a dead writer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber import keys
from transcriber.followups.card import Cards
from transcriber.followups.webhooks import WebhookDelivery
from transcriber.providers.webhook_http import HttpWebhookTransport, resolves_without_threads

log = structlog.get_logger(__name__)

DELIVERY = web.AppKey("webhook_delivery", WebhookDelivery)
TASK_NAME = "webhook-delivery"


async def webhooks_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    if not resolves_without_threads():
        # aiodns is missing: every outbound session's lookups would take threads of the
        # loop's shared pool (a silent name server stalls downloads: hostile-input.md).
        log.error("outbound_dns_threaded")
    if keys.WEBHOOK_TRANSPORT not in app:
        hooks = settings.webhooks
        app[keys.WEBHOOK_TRANSPORT] = HttpWebhookTransport(
            allow_private=hooks.allow_private_targets,
            connect_timeout_seconds=hooks.connect_timeout_seconds,
            resolve_timeout_seconds=hooks.connect_timeout_seconds,
            request_timeout_seconds=hooks.request_timeout_seconds,
            concurrency=hooks.concurrency)
    transport = app[keys.WEBHOOK_TRANSPORT]

    cards = Cards(readers=app[keys.READERS], settings=settings, clock=app[keys.CLOCK],
                  recognizer=lambda: app.get(keys.RECOGNIZER))
    app[DELIVERY] = WebhookDelivery(writer=app[keys.WRITER], readers=app[keys.READERS],
                                    clock=app[keys.CLOCK], transport=transport,
                                    settings=settings.webhooks, card=cards.card)
    try:
        yield
    finally:
        await transport.close()
