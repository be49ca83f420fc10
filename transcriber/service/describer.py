"""Lifecycle of the describer (docs/describer.md): the provider `describer.provider` names
and its fallback, on `DESCRIBERS`.

`describer_ctx` builds them before the follow-ups' workers (`service.followups`:
the describe follow-up's worker, `followups.describe`, is built from them and runs
under the describer duty) and closes the provider after everything stopped. With
`off` nothing is built, no describe worker either, and `done` writes no job. A
describer on the app (`keys.DESCRIBER`, given to `build_app` by a test) is used as
it is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber.ports import Describer
from transcriber.providers.describe.extractive import ExtractiveDescriber
from transcriber.settings import Settings
from transcriber.web import keys

log = structlog.get_logger(__name__)

DESCRIBERS = web.AppKey("describers", tuple[Describer, Describer | None])


def build_describer(settings: Settings) -> tuple[Describer, Describer | None] | None:
    """The provider and its fallback (the extractive describer behind a language model);
    None when `describer.provider` is `off`."""
    provider = settings.describer.provider
    if provider == "off":
        return None
    extractive = ExtractiveDescriber()
    if provider == "extractive":
        return extractive, None
    from transcriber.providers.describe.openai import OpenAIDescriber  # noqa: PLC0415

    return OpenAIDescriber(settings.describer), extractive


async def describer_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    built = build_describer(settings)
    if built is None:
        log.info("describer_off")
        yield
        return
    describer, fallback = built
    describer = app.get(keys.DESCRIBER, describer)
    app[DESCRIBERS] = (describer, fallback)
    log.info("describer_started", provider=describer.name.split(":", 1)[0])
    try:
        yield
    finally:
        for part in (describer, fallback):
            close = getattr(part, "close", None)
            if close is not None:
                await close()
