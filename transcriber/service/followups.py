"""The follow-ups' workers (`followups.registry.FOLLOWUPS`) in the service.

`followups_ctx` builds every declared follow-up's worker this process can have
(`followups.registry.build_workers`, from the service's parts: the Telegram
notifier, the describer `service.describer` built, the webhook transport
`service.webhooks` built, the card builder) and puts them on `WORKERS` before
the pipeline, whose step actors write their rows and tell them after each
commit. A worker is inactive until its duty is held, so a process without the
duty leaves every row to the holder's rounds.

`followups_work(duty)` is a duty's work: every worker whose entry names that
duty, each the supervised task of its entry's name (`telegram-outbox`,
`webhook-delivery` under the outbox duty; `describer` under the describer duty).
The duties are installed before the pipeline, so they stop after the step
actors, and the replies of steps finishing during the stop still go out at once.
At the stop work in flight gets its entry's grace (a Telegram send one second),
else `server.shutdown_graceful_seconds`, then is cut: its row stays pending
and is sent after the next start or by the next holder (at least once).

Supervision: a worker keeps itself alive through failed rounds; a task that
ends while the service is not stopping is a programming error, logged
CRITICAL (`<name>_died`), and the service stops loudly (`fail_service`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from transcriber.followups.after import NullNotifier, running_notifier
from transcriber.followups.card import Cards
from transcriber.followups.parts import Parts
from transcriber.followups.registry import FOLLOWUPS, Workers, build_workers
from transcriber.ports import Duty, Notifier
from transcriber.service.describer import DESCRIBERS
from transcriber.service.duties import DutyWork
from transcriber.service.fatal import supervised
from transcriber.web import keys

WORKERS = web.AppKey("followup_workers", Workers)


def notifier_of(app: web.Application) -> Notifier:
    # Read at each delivery: the Telegram context may set the notifier after this one.
    return app.get(keys.NOTIFIER) or NullNotifier()


def parts_of(app: web.Application) -> Parts:
    settings = app[keys.SETTINGS]

    def wake(name: str) -> None:
        worker = app[WORKERS].get(name)
        if worker is not None:
            worker.wake()

    return Parts(
        writer=app[keys.WRITER], readers=app[keys.READERS], clock=app[keys.CLOCK],
        settings=settings, notifier=running_notifier(lambda: notifier_of(app)),
        cards=Cards(readers=app[keys.READERS], settings=settings, clock=app[keys.CLOCK],
                    recognizer=lambda: app.get(keys.RECOGNIZER)),
        describers=app.get(DESCRIBERS), webhook_transport=app.get(keys.WEBHOOK_TRANSPORT),
        wake=wake)


async def followups_ctx(app: web.Application) -> AsyncIterator[None]:
    workers = build_workers(parts_of(app))
    for name in workers:
        worker = workers.get(name)
        assert worker is not None
        worker.active = False  # until its duty is held here
    app[WORKERS] = workers
    yield


def followups_work(duty: Duty) -> Callable[[web.Application], DutyWork | None]:
    def work_of(app: web.Application) -> DutyWork | None:
        workers = app[WORKERS]
        mine = [(f, workers.get(f.name)) for f in FOLLOWUPS if f.duty is duty]
        running = [(f, w) for f, w in mine if w is not None]
        if not running:
            return None
        grace = app[keys.SETTINGS].server.shutdown_graceful_seconds

        @contextlib.asynccontextmanager
        async def work() -> AsyncIterator[None]:
            async with contextlib.AsyncExitStack() as stack:
                for followup, worker in running:
                    await stack.enter_async_context(supervised(
                        app, worker.run, name=followup.name,
                        died=f"{followup.name.replace('-', '_')}_died",
                        grace_seconds=grace if followup.grace_seconds is None
                        else min(grace, followup.grace_seconds)))
                for _, worker in running:
                    worker.active = True
                try:
                    yield
                finally:
                    for _, worker in running:
                        worker.active = False

        return work

    return work_of
