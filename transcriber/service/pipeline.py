"""Lifecycle of the step actors: they start after storage, the providers (which put
the step table on the app) and the outbox (`service.outbox`, which their replies go
to) and stop before the writer drains. Only the roles `all` and `worker` run them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber import keys
from transcriber.followups.describe import DescriberActor
from transcriber.pipeline.engine import Engine
from transcriber.service.fatal import fail_service
from transcriber.service.outbox import OUTBOX, notifier_of

log = structlog.get_logger(__name__)

ENGINE = web.AppKey("pipeline_engine", Engine)
# Set by the describer's context (`service.describer`) when a describer runs.
DESCRIBER_ACTOR = web.AppKey("describer_actor", DescriberActor)


async def pipeline_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    steps = app.get(keys.STEPS)
    if steps is None:
        if settings.pipeline.workers > 0:
            log.error("pipeline_without_steps", workers=settings.pipeline.workers)
        yield
        return
    # The describer's context, started before this one, is asked to wake on every `done`.
    describer = app.get(DESCRIBER_ACTOR)
    engine = Engine(
        settings=settings, clock=app[keys.CLOCK], writer=app[keys.WRITER],
        readers=app[keys.READERS], files=app[keys.FILES], steps=steps,
        notifier=lambda: notifier_of(app), settled=app[keys.SETTLED],
        wake_describer=None if describer is None else describer.wake, outbox=app[OUTBOX],
    )
    app[ENGINE] = engine
    engine.start(on_death=lambda exc: fail_service(app, exc))
    try:
        yield
    finally:
        await engine.stop()
