"""The outbox duty: the Telegram outbox (`pipeline.outbox`) and the webhook deliveries
(`service.webhook_delivery`), sent by one process of the service at a time.

`outbox_ctx` puts the `Outbox` on `OUTBOX` before the pipeline, whose step actors
hand their replies to it; it is inactive until the duty is held, so a process
without the duty leaves every row to the holder's rounds. `outbox_work` is the
duty's work: the outbox's actor and, where `service.webhooks` built it, the
webhook delivery actor, as the supervised tasks `telegram-outbox` and
`webhook-delivery`. The duty is installed before the pipeline, so it stops after
the step actors, and the replies of steps finishing during the stop still go out
at once.

At the stop an attempt in flight gets `server.shutdown_graceful_seconds` (a
Telegram send one second), then is cut: its row stays pending and is sent after
the next start or by the next holder (at least once).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber import keys
from transcriber.followups.after import NullNotifier, running_notifier
from transcriber.followups.reply import Outbox
from transcriber.ports import Notifier
from transcriber.service.duties import DutyWork
from transcriber.service.fatal import supervised
from transcriber.service.webhooks import DELIVERY
from transcriber.service.webhooks import TASK_NAME as WEBHOOKS_TASK_NAME

log = structlog.get_logger(__name__)

OUTBOX = web.AppKey("outbox", Outbox)
OUTBOX_TASK = "telegram-outbox"
# A Telegram send in flight at the stop: its row stays pending when cut.
OUTBOX_GRACE_SECONDS = 1.0


def notifier_of(app: web.Application) -> Notifier:
    # Read at each delivery: the Telegram context may set the notifier after this one.
    return app.get(keys.NOTIFIER) or NullNotifier()


async def outbox_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    outbox = Outbox(writer=app[keys.WRITER], readers=app[keys.READERS], clock=app[keys.CLOCK],
                    notifier=running_notifier(lambda: notifier_of(app)),
                    settings=settings.telegram,
                    # A reply waits for its record's title while a describer runs.
                    reply_wait_seconds=0.0 if settings.describer.provider == "off"
                    else settings.describer.reply_wait_seconds)
    outbox.active = False
    app[OUTBOX] = outbox
    yield


def outbox_work(app: web.Application) -> DutyWork:
    outbox, delivery = app[OUTBOX], app.get(DELIVERY)
    grace = app[keys.SETTINGS].server.shutdown_graceful_seconds

    @contextlib.asynccontextmanager
    async def work() -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as running:
            await running.enter_async_context(supervised(
                app, outbox.run, name=OUTBOX_TASK, died="outbox_died",
                grace_seconds=min(grace, OUTBOX_GRACE_SECONDS)))
            if delivery is not None:
                await running.enter_async_context(supervised(
                    app, delivery.run, name=WEBHOOKS_TASK_NAME, died="webhook_delivery_died",
                    grace_seconds=grace))
            outbox.active = True
            try:
                yield
            finally:
                outbox.active = False

    return work
