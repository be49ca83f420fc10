"""Lifecycle of the step actors: they start after storage, the providers (which put
the step table on the app) and the follow-ups' workers (`service.followups`, which
they tell after `done` and halts) and stop before the writer drains. Only the roles
`all` and `worker` run them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber.followups.after import FollowUps, running_notifier
from transcriber.pipeline.engine import Engine
from transcriber.service.fatal import fail_service
from transcriber.service.followups import WORKERS, notifier_of
from transcriber.web import keys

log = structlog.get_logger(__name__)

ENGINE = web.AppKey("pipeline_engine", Engine)


async def pipeline_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    steps = app.get(keys.STEPS)
    if steps is None:
        if settings.pipeline.workers > 0:
            log.error("pipeline_without_steps", workers=settings.pipeline.workers)
        yield
        return
    # The follow-ups' workers, built before this context: written and told at `done`.
    followups = FollowUps(app[WORKERS],
                          notifier=running_notifier(lambda: notifier_of(app)))
    engine = Engine(
        settings=settings, clock=app[keys.CLOCK], writer=app[keys.WRITER],
        readers=app[keys.READERS], files=app[keys.FILES], steps=steps,
        notifier=lambda: notifier_of(app), settled=app[keys.SETTLED], followups=followups,
    )
    app[ENGINE] = engine
    engine.start(on_death=lambda exc: fail_service(app, exc))
    try:
        yield
    finally:
        await engine.stop()
