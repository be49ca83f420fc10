"""Lifecycle of the describer (docs/describer.md): the provider `describer.provider` names,
and the actor that works its queue.

`describer_ctx` builds them, before the pipeline, whose advance to `done` writes a
describe job and wakes the actor, and closes the provider after everything stopped.
With `off` nothing is built and `done` writes no job. A describer on the app
(`keys.DESCRIBER`, given to `build_app` by a test) is used as it is. When a
description is stored (or has failed), the record's Telegram reply, which waits for
its title, is sent.

The actor runs under the describer duty (`describer_work`; the queue has no claims,
so one process of the service works it at a time), installed before the pipeline:
it stops after the step actors, so a description being written when the pipeline
stops still lands before the writer drains. A process without the duty still
writes the jobs of its `done`s; the holder finds them at its next poll.

Supervision: the actor keeps itself alive through failed rounds; a task that ends while
the service is not stopping is a programming error, logged CRITICAL, and the service
stops loudly (`fail_service`), like a dead step actor.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber import keys
from transcriber.followups.describe import TASK_NAME, DescriberActor
from transcriber.ports import Describer
from transcriber.providers.extractive import ExtractiveDescriber
from transcriber.service.duties import DutyWork
from transcriber.service.fatal import supervised
from transcriber.service.outbox import OUTBOX
from transcriber.service.pipeline import DESCRIBER_ACTOR
from transcriber.settings import Settings

log = structlog.get_logger(__name__)


def build_describer(settings: Settings) -> tuple[Describer, Describer | None] | None:
    """The provider and its fallback (the extractive describer behind a language model);
    None when `describer.provider` is `off`."""
    provider = settings.describer.provider
    if provider == "off":
        return None
    extractive = ExtractiveDescriber()
    if provider == "extractive":
        return extractive, None
    from transcriber.providers.openai_describer import OpenAIDescriber  # noqa: PLC0415

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

    async def described(record_id: str) -> None:
        # The outbox's own actor sends the reply that waited for the title: woken, not
        # awaited here, so a slow Telegram never holds the describer's queue.
        outbox = app.get(OUTBOX)
        if outbox is not None:
            outbox.wake()

    actor = DescriberActor(writer=app[keys.WRITER], readers=app[keys.READERS],
                           clock=app[keys.CLOCK], describer=describer, fallback=fallback,
                           settings=settings.describer, described=described)
    app[DESCRIBER_ACTOR] = actor
    log.info("describer_started", provider=describer.name.split(":", 1)[0])
    try:
        yield
    finally:
        for part in (describer, fallback):
            close = getattr(part, "close", None)
            if close is not None:
                await close()


def describer_work(app: web.Application) -> DutyWork | None:
    actor = app.get(DESCRIBER_ACTOR)
    if actor is None:
        return None
    # A description being asked for at the end is cut; its job stays pending for the
    # next start or the next holder.
    return lambda: supervised(app, actor.run, name=TASK_NAME, died="describer_died",
                              grace_seconds=app[keys.SETTINGS].server.shutdown_graceful_seconds)
