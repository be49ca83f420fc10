"""The webhook transport, as an aiohttp cleanup context.

`webhooks_ctx` puts the transport on `keys.WEBHOOK_TRANSPORT` (the HTTP one
with the SSRF guard, unless a test put a fake there), which the routes use
to check a URL at registration and the webhooks follow-up's worker
(`followups.webhooks`, built and run by `service.followups`) sends with; the
transport closes after everything else stopped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber.providers.webhook_http import HttpWebhookTransport, resolves_without_threads
from transcriber.web import keys

log = structlog.get_logger(__name__)



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

    try:
        yield
    finally:
        await transport.close()
