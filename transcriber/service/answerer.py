"""Lifecycle of the answerer (docs/ask.md): the language model `ask.provider` names,
on `keys.ANSWERER` for the doors; nothing with `offline` (the default). One given to
`build_app` (a test's) is used as it is."""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber.web import keys

log = structlog.get_logger(__name__)


async def answerer_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS].ask
    if settings.provider == "offline" or keys.ANSWERER in app:
        yield
        return
    from transcriber.providers.ask_openai import OpenAIAnswerer  # noqa: PLC0415

    answerer = OpenAIAnswerer(settings)
    app[keys.ANSWERER] = answerer
    log.info("answerer_started", provider=settings.provider)
    try:
        yield
    finally:
        await answerer.close()
